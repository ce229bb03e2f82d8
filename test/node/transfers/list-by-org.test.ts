// GET /transfers reads its own organization's transfers only (docs/transfers.md): an index key per
// transfer, written with its row, so a listing's cost is the organization's, not the node's. Transfers
// stored before the index get their keys at the first listing.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { testDeps } from '../../helpers/api.ts'
import { NodeTransferService } from '../../../node/transfers/service.ts'
import { startSystem, stopActor } from '../../../actors/runtime.ts'
import { systemClock } from '../../../node/clock.ts'
import { storingCoordinator } from '../../helpers/transfer-service.ts'
import { transferRow } from '../../helpers/transfer-state.ts'
import { TransferState } from '../../../actors/transfer/state.ts'
import { keys, type TransferRow } from '../../../actors/transfer/model.ts'
import type { Store } from '../../../actors/ports.ts'
import { watchedTable } from '../../helpers/watched-store.ts'

/** A transfer service over `store`, with the transfers table watched (its full scans refused while strict). */
function serviceOver (t: { teardown (fn: () => unknown): void }, store: Store): { service: NodeTransferService, w: ReturnType<typeof watchedTable> } {
  const w = watchedTable(store, 'transfers')
  const system = startSystem()
  t.teardown(() => stopActor(system as never))
  return { w, service: new NodeTransferService({ store: w.store, blobs: {} as never, clock: systemClock, coordinator: storingCoordinator(system, store), destinations: {} as never }) }
}

t.test('a listing reads its organization\'s transfers only, newest first, paged and filtered', async t => {
  const env = testDeps()
  const { service, w } = serviceOver(t, env.store)
  const mine = 'org-a'; const theirs = 'org-b'
  const at = (i: number): string => new Date(Date.UTC(2026, 10, 1, 0, 0, i)).toISOString()
  const write = async (row: TransferRow): Promise<void> => { await env.store.batch(new TransferState({ self: 'c', newId: randomUUID }).create(row, 0).ops) }
  const ours: TransferRow[] = []
  for (let i = 0; i < 7; i++) {
    const row = transferRow(randomUUID(), 1, { org_id: mine, created_at: at(i), status: i % 3 === 0 ? 'completed' : 'in_progress' })
    ours.push(row); await write(row)
  }
  // Two at the same instant: the larger id first, as before.
  const tie = [randomUUID(), randomUUID()].sort()
  for (const id of tie) { const row = transferRow(id, 1, { org_id: mine, created_at: at(9) }); ours.push(row); await write(row) }
  for (let i = 0; i < 50; i++) await write(transferRow(randomUUID(), 1, { org_id: theirs, created_at: at(i) }))
  await service.list({ organizationId: mine } as never, { limit: 1, offset: 0 }) // the first listing indexes what came before (nothing here)
  w.strict.on = true
  w.read.length = 0

  const newest = [...ours].sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id)).map(r => r.id)
  const all = await service.list({ organizationId: mine } as never, { limit: 100, offset: 0 })
  t.equal(all.total, 9)
  t.same(all.items.map(i => i.id), newest, 'newest first, ties by id')
  const page = await service.list({ organizationId: mine } as never, { limit: 3, offset: 2 })
  t.same({ total: page.total, ids: page.items.map(i => i.id) }, { total: 9, ids: newest.slice(2, 5) })
  t.equal(w.read.length, 9 + 3, 'only the rows of each page were read')
  const completed = await service.list({ organizationId: mine } as never, { limit: 2, offset: 1, status: 'completed' })
  const completedIds = newest.filter(id => ours.find(r => r.id === id)!.status === 'completed')
  t.same({ total: completed.total, ids: completed.items.map(i => i.id) }, { total: 3, ids: completedIds.slice(1, 3) })
  const theirIds = new Set((await service.list({ organizationId: theirs } as never, { limit: 100, offset: 0 })).items.map(i => i.id))
  t.equal(theirIds.size, 50)
  w.read.length = 0
  await service.list({ organizationId: mine } as never, { limit: 100, offset: 0, status: 'in_progress' })
  t.ok(w.read.every(id => !theirIds.has(id)), 'no other organization\'s row is read')
  t.same((await service.list({ organizationId: 'org-none' } as never, { limit: 10, offset: 0 })), { items: [], total: 0 })
})

t.test('transfers stored before the index are indexed once, at the first listing', async t => {
  const env = testDeps()
  const old = Array.from({ length: 1203 }, (_, i) => transferRow(randomUUID(), 1, { org_id: i % 2 === 0 ? 'org-a' : 'org-b', created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString() }))
  for (const row of old) await env.store.table('transfers').put(row.id, row) // rows only, as an older version wrote them
  const start = (): ReturnType<typeof serviceOver> => serviceOver(t, env.store)
  const first = start()
  const listed = await first.service.list({ organizationId: 'org-a' } as never, { limit: 2, offset: 0 })
  t.equal(listed.total, 602)
  t.same(listed.items.map(i => i.id), [old[1202]!.id, old[1200]!.id])
  t.equal(first.w.scans(), 1, 'one scan to index them')
  let keysStored = 0
  for await (const [key] of env.store.table('index').entries({ gte: keys.orgTransfers('org-b'), lt: keys.orgTransfers('org-b') + '\xff' })) { keysStored++; void key }
  t.equal(keysStored, 601)
  const again = start()
  again.w.strict.on = true
  t.equal((await again.service.list({ organizationId: 'org-b' } as never, { limit: 1, offset: 0 })).total, 601, 'after a restart: no scan again')
})

t.test('a destination is in use while one of its organization\'s transfers in progress writes to it', async t => {
  const env = testDeps()
  const { service, w } = serviceOver(t, env.store)
  const write = async (row: TransferRow): Promise<void> => { await env.store.batch(new TransferState({ self: 'c', newId: randomUUID }).create(row, 0).ops) }
  await write(transferRow(randomUUID(), 1, { org_id: 'org-a', destination_id: 'd1', status: 'completed' }))
  await write(transferRow(randomUUID(), 1, { org_id: 'org-a', destination_id: 'd2', status: 'in_progress' }))
  await service.list({ organizationId: 'org-a' } as never, { limit: 1, offset: 0 })
  w.strict.on = true
  t.equal(await service.activeForDestination('d1', 'org-a'), false, 'only finished transfers write to it')
  t.equal(await service.activeForDestination('d2', 'org-a'), true)
  const running = transferRow(randomUUID(), 1, { org_id: 'org-a', destination_id: 'd1', status: 'pending' })
  await write(running)
  t.equal(await service.activeForDestination('d1', 'org-a'), true, 'one pending does')
  t.equal(await service.activeForDestination('d2', 'org-b'), false, 'another organization\'s transfers are not read')
  await write(transferRow(randomUUID(), 1, { org_id: null, destination_id: 'd3', status: 'in_progress' }))
  t.equal(await service.activeForDestination('d3', 'org-b'), true, 'a transfer from before organizations is')
})

t.test('an index key whose transfer is gone is left out and deleted when a listing meets it', async t => {
  const env = testDeps()
  const { service } = serviceOver(t, env.store)
  const at = new Date(Date.UTC(2026, 10, 1)).toISOString()
  const row = transferRow(randomUUID(), 1, { org_id: 'org-a', created_at: at })
  await env.store.batch(new TransferState({ self: 'c', newId: randomUUID }).create(row, 0).ops)
  await service.list({ organizationId: 'org-a' } as never, { limit: 1, offset: 0 }) // the first listing's backfill
  // A key left behind: a backfill that read a row the disk sweep deleted meanwhile writes it again.
  const gone = randomUUID()
  const goneKey = keys.orgTransfer('org-a', at, gone)
  await env.store.table('index').put(goneKey, 1)
  const first = await service.list({ organizationId: 'org-a' } as never, { limit: 10, offset: 0 })
  t.same(first.items.map(i => i.id), [row.id], 'only the transfer that exists')
  const keyGone = async (): Promise<boolean> => await env.store.table('index').get(goneKey) === undefined
  for (let i = 0; i < 50 && !(await keyGone()); i++) await new Promise(setImmediate)
  t.ok(await keyGone(), 'the dangling key is deleted')
  t.same((await service.list({ organizationId: 'org-a' } as never, { limit: 10, offset: 0 })).total, 1, 'and counts no more')
  // The filtered path and the destination check do the same.
  await env.store.table('index').put(goneKey, 1)
  await service.list({ organizationId: 'org-a' } as never, { limit: 10, offset: 0, status: 'completed' })
  for (let i = 0; i < 50 && !(await keyGone()); i++) await new Promise(setImmediate)
  t.ok(await keyGone(), 'deleted by a filtered listing')
  await env.store.table('index').put(goneKey, 1)
  t.equal(await service.activeForDestination('dest-x', 'org-a'), false)
  for (let i = 0; i < 50 && !(await keyGone()); i++) await new Promise(setImmediate)
  t.ok(await keyGone(), 'deleted by the destination check')
  t.ok(await env.store.table('transfers').get(row.id), 'the live transfer untouched')
})
