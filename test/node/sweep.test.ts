// The orchestrator's disk sweep over a store of transfers: what live transfers need stays (their blobs by
// reference or by chunk, their sink uploads by id or by upload state); what a terminal or unknown
// transfer left goes; it runs at start and then every interval, and not after stop.
import t from 'tap'
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import createTestnet from 'hyperdht/testnet.js'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../actors/store.ts'
import type { Table, TableName } from '../../actors/ports.ts'
import { blobRefKey } from '../../actors/transfer/blob-refs.ts'
import { keys, type TransferRow } from '../../actors/transfer/model.ts'
import { FileBlobStore } from '../../node/adapters/blob-store.ts'
import { SinkPartials, uploadIdOf } from '../../node/adapters/destinations/sink-partials.ts'
import { DiskSweep, liveTransfers, HISTORY_TABLES, MAX_HISTORY_PRUNED_PER_SWEEP, MAX_RECORDS_PRUNED_PER_SWEEP, MAX_FOREIGN_ROWS_PRUNED_PER_SWEEP, type SweepResult } from '../../node/sweep.ts'
import { BwnetNode } from '../../node/node.ts'
import { NODE_DEFAULTS, type NodeConfig } from '../../node/config.ts'
import { cryptoReady } from '../../protocol/index.ts'
import { ManualClock } from '../helpers/clock.ts'
import { capturingLogger } from '../helpers/logger.ts'
import { eventually } from '../helpers/proc.ts'

const HOUR = 3_600_000
const old = async (path: string): Promise<void> => { const when = new Date(Date.now() - 2 * HOUR); await utimes(path, when, when) }

async function setup (t: { teardown (fn: () => unknown): void }) {
  const data = await mkdtemp(join(tmpdir(), 'bwnet-sweep-'))
  t.teardown(() => rm(data, { recursive: true, force: true }))
  const store = new LevelStore(new MemoryLevel() as never)
  const blobs = new FileBlobStore(join(data, 'blobs'))
  await blobs.open()
  const partials = new SinkPartials(join(data, 'sink'))
  await mkdir(partials.partialDir, { recursive: true })
  const transfer = async (id: string, status: TransferRow['status'], extra: Partial<TransferRow> = {}): Promise<void> => {
    await store.table('transfers').put(id, { id, status, upload: null, ...extra })
  }
  /** A staged chunk: its blob (old), its chunk row, and (unless told otherwise) its reference. */
  const chunk = async (transferId: string, index: number, opts: { ref?: boolean } = {}): Promise<string> => {
    const sha = await blobs.put(randomBytes(700))
    await old(blobs.pathOf(sha))
    await store.table('chunks').put(keys.chunk(transferId, index), { transfer_id: transferId, chunk_index: index, sha256: sha })
    if (opts.ref !== false) await store.table('index').put(blobRefKey(sha, transferId, index), 1)
    return sha
  }
  const partial = async (uploadId: string): Promise<void> => {
    await writeFile(join(partials.partialDir, uploadId), randomBytes(300))
    await writeFile(join(partials.partialDir, `${uploadId}.json`), JSON.stringify({ status: 'open' }))
    for (const f of [uploadId, `${uploadId}.json`]) await old(join(partials.partialDir, f))
  }
  return { data, store, blobs, partials, transfer, chunk, partial }
}

t.test('what live transfers need stays; what terminal and unknown ones left goes', async t => {
  const s = await setup(t)
  // Live: a transfer delivering (its upload begun), one whose upload id is its id's hash, one not begun.
  await s.transfer('tr-live', 'in_progress', { upload: { kind: 'node', uploadId: 'up-live' } })
  const referenced = await s.chunk('tr-live', 0)
  const unreferenced = await s.chunk('tr-live', 1, { ref: false }) // a chunk row without its reference: kept all the same
  await s.partial('up-live')
  await s.transfer('tr.dotted', 'pending')
  await s.partial(uploadIdOf('tr.dotted'))
  await s.transfer('tr-new', 'pending')
  await s.partial('tr-new') // begun, the state not yet saved (a crash between)
  // Terminal: its references released (the chunk rows stay), its abort failed.
  await s.transfer('tr-failed', 'failed', { upload: { kind: 'node', uploadId: 'tr-failed' } })
  const released = await s.chunk('tr-failed', 0, { ref: false })
  await s.partial('tr-failed')
  // Unknown: bytes staged by an upload whose chunk was never recorded; a partial of a transfer long gone.
  const orphan = await s.blobs.put(randomBytes(900))
  await old(s.blobs.pathOf(orphan))
  await s.partial('tr-gone')

  const live = await liveTransfers(s.store)
  t.same([...live.uploads].sort(), ['tr-live', 'up-live', uploadIdOf('tr.dotted'), 'tr-new'].sort())
  t.same([...live.digests].sort(), [referenced, unreferenced].sort())

  const { logger, lines } = capturingLogger('info')
  const swept: SweepResult[] = []
  const sweep = new DiskSweep({ store: s.store, blobs: s.blobs, partials: s.partials, clock: new ManualClock(), logger, graceMs: HOUR, onSwept: (r) => swept.push(r) })
  const r = await sweep.run()
  t.same([r.blobs.files, r.blobTemps.files, r.partials.files, r.errors], [2, 0, 4, 0], 'two blobs, two uploads of two files each')
  t.equal(await s.blobs.has(orphan), false, 'the unrecorded blob is gone')
  t.equal(await s.blobs.has(released), false, 'the terminal transfer\'s blob is gone')
  t.ok(await s.blobs.has(referenced), 'a referenced blob stays')
  t.ok(await s.blobs.has(unreferenced), 'a blob a live chunk names stays')
  t.same((await readdir(s.partials.partialDir)).filter(f => !f.endsWith('.json')).sort(), ['tr-new', 'up-live', uploadIdOf('tr.dotted')].sort(), 'live uploads stay; terminal and unknown ones are gone')
  t.same(swept, [r], 'the hook hears the sweep')
  const line = lines.find(l => l.event === 'disk_swept')
  t.match(line, { level: 30, blobs: 2, blob_bytes: r.blobs.bytes, partials: 4, partial_bytes: r.partials.bytes }, 'logged at info with counts and bytes')
  t.ok(r.blobs.bytes > 0 && r.partials.bytes > 0)
})

t.test('a transfer created after the sweep read the table keeps its upload (asked again before the delete)', async t => {
  const s = await setup(t)
  await s.partial('tr-late')
  await old(join(s.partials.partialDir, 'tr-late'))
  // The scan does not see it (created just after); the store has it by the time its files would go.
  await s.transfer('tr-late', 'pending')
  const table = s.store.table.bind(s.store)
  s.store.table = (<V>(name: TableName): Table<V> => {
    const tb = table<V>(name)
    if (name !== 'transfers') return tb
    return { ...tb, entries: async function * (range) { for await (const e of tb.entries(range)) if (e[0] !== 'tr-late') yield e } }
  }) as typeof s.store.table
  const r = await new DiskSweep({ store: s.store, blobs: s.blobs, partials: s.partials, clock: new ManualClock(), logger: capturingLogger().logger, graceMs: HOUR }).run()
  t.equal(r.partials.files, 0)
  t.same((await readdir(s.partials.partialDir)).sort(), ['tr-late', 'tr-late.json'])
})

t.test('runs at start, then every interval, one at a time; none after stop', async t => {
  const s = await setup(t)
  const clock = new ManualClock()
  const swept: SweepResult[] = []
  let heard: () => void = () => {}
  const sweep = new DiskSweep({ store: s.store, blobs: s.blobs, partials: null, clock, logger: capturingLogger().logger, intervalMs: HOUR, graceMs: HOUR, onSwept: (r) => { swept.push(r); heard() } })
  const next = (): Promise<void> => new Promise(resolve => { heard = resolve })
  let done = next()
  sweep.start()
  await done
  t.equal(swept.length, 1, 'one sweep at start')
  const orphan = await s.blobs.put(randomBytes(100))
  await old(s.blobs.pathOf(orphan))
  done = next()
  clock.advance(HOUR)
  await done
  t.equal(swept.length, 2, 'another after the interval')
  t.equal(swept[1]!.blobs.files, 1, 'which reclaimed what appeared since')
  t.equal(sweep.run(), sweep.run(), 'a sweep asked for while one runs is that one')
  await sweep.stop()
  const count = swept.length
  clock.advance(3 * HOUR)
  await sweep.stop()
  t.equal(swept.length, count, 'no sweep after stop')
})

t.test('an orchestrator sweeps at start: what an earlier run left is reclaimed, logged and counted', async t => {
  await cryptoReady()
  const testnet = await createTestnet(3, { host: '127.0.0.1' })
  t.teardown(() => testnet.destroy())
  const data = await mkdtemp(join(tmpdir(), 'bwnet-sweep-node-'))
  t.teardown(() => rm(data, { recursive: true, force: true }))
  // Left by an earlier run: a blob whose chunk was never recorded, a partial whose abort failed.
  const bytes = randomBytes(4096)
  const sha = createHash('sha256').update(bytes).digest('hex')
  await mkdir(join(data, 'blobs', sha.slice(0, 2)), { recursive: true })
  await writeFile(join(data, 'blobs', sha.slice(0, 2), sha), bytes)
  await old(join(data, 'blobs', sha.slice(0, 2), sha))
  const partialDir = join(data, 'sink', '.partial')
  await mkdir(partialDir, { recursive: true })
  await writeFile(join(partialDir, 'tr-old'), randomBytes(2048))
  await writeFile(join(partialDir, 'tr-old.json'), JSON.stringify({ filename: 'a.bin', totalSize: 2048, chunkSize: 2048, status: 'open' }))
  for (const f of ['tr-old', 'tr-old.json']) await old(join(partialDir, f))

  const { logger, lines } = capturingLogger('info')
  const node = new BwnetNode({
    config: { ...NODE_DEFAULTS, role: 'orchestrator', data, bootstrap: testnet.bootstrap.map(b => `${b.host}:${b.port}`), dhtHost: '127.0.0.1', port: 0, metricsPort: 0, network: `sweep-${process.pid}` } as NodeConfig,
    logger, dht: testnet.createNode()
  })
  t.teardown(() => node.stop())
  await node.start()
  const line = await eventually(async () => lines.find(l => l.event === 'disk_swept'), 20_000, 'the start sweep')
  t.match(line, { blobs: 1, partials: 2 }, 'the blob and the partial file and record')
  t.same(await readdir(join(data, 'blobs', sha.slice(0, 2))), [], 'the blob is gone')
  t.same(await readdir(partialDir), [], 'the partial is gone')
  const metrics = await (await fetch(`${node.metricsUrl}/metrics`)).text()
  t.match(metrics, /bwnet_disk_reclaimed_files_total\{kind="blob",role="orchestrator"\} 1\n/)
  t.match(metrics, /bwnet_disk_reclaimed_files_total\{kind="sink_partial",role="orchestrator"\} 2\n/)
  t.match(metrics, new RegExp(`bwnet_disk_reclaimed_bytes_total\\{kind="blob",role="orchestrator"\\} ${line.blob_bytes}\\n`))
})

t.test('a finished transfer\'s delivery history goes after the retention; its record, chunks and others\' rows stay', async t => {
  const s = await setup(t)
  const DAY = 86_400_000
  const now = Date.UTC(2026, 10, 29)
  const at = (days: number): string => new Date(now - days * DAY).toISOString()
  const history = async (id: string): Promise<number> => {
    let n = 0
    for (const table of HISTORY_TABLES) for await (const entry of s.store.table(table).entries({ gte: `${id}/`, lt: `${id}/\xff` })) { n++; void entry }
    return n
  }
  const withHistory = async (id: string, status: TransferRow['status'], extra: Partial<TransferRow>): Promise<void> => {
    await s.transfer(id, status, { updated_at: extra.completed_at ?? at(0), completed_at: null, ...extra })
    await s.chunk(id, 0, { ref: false })
    for (const table of HISTORY_TABLES) for (let i = 0; i < 3; i++) await s.store.table(table).put(`${id}/${String(i).padStart(10, '0')}`, { i })
  }
  await withHistory('tr-old', 'completed', { completed_at: at(40) })
  await withHistory('tr-old-failed', 'failed', { updated_at: at(31) }) // no completion: its last change counts
  await withHistory('tr-old1', 'completed', { completed_at: at(1) }) // a key prefix of another's is not its own
  await withHistory('tr-cleaning', 'cancelled', { updated_at: at(40), cleanup_pending: true })
  await withHistory('tr-running', 'in_progress', { updated_at: at(40), created_at: at(41) })

  const { logger, lines } = capturingLogger('info')
  const sweep = new DiskSweep({ store: s.store, blobs: s.blobs, partials: null, clock: new ManualClock(), logger, graceMs: HOUR, historyRetentionMs: 30 * DAY, now: () => now })
  const r = await sweep.run()
  t.same(r.history, { transfers: 2, rows: 2 * 3 * HISTORY_TABLES.length })
  for (const id of ['tr-old', 'tr-old-failed']) {
    t.equal(await history(id), 0, `${id}: its history is gone`)
    const row = await s.store.table<TransferRow>('transfers').get(id)
    t.equal(row?.history_pruned_at, new Date(now).toISOString(), `${id}: its record stays, marked`)
    t.ok(await s.store.table('chunks').get(keys.chunk(id, 0)), `${id}: its chunks stay`)
  }
  for (const id of ['tr-old1', 'tr-cleaning', 'tr-running']) t.equal(await history(id), 3 * HISTORY_TABLES.length, `${id}: kept`)
  t.ok(lines.some(l => l.event === 'disk_swept' && l.history_transfers === 2), 'logged')
  t.same((await sweep.run()).history, { transfers: 0, rows: 0 }, 'a pruned transfer is not read again')
  t.same((await new DiskSweep({ store: s.store, blobs: s.blobs, partials: null, clock: new ManualClock(), logger, graceMs: HOUR, now: () => now + 365 * DAY }).run()).history, { transfers: 0, rows: 0 }, 'no retention: kept for ever')
})

t.test('a finished transfer goes whole after the record retention: record, chunks, history and index keys; others stay', async t => {
  const s = await setup(t)
  const DAY = 86_400_000
  const now = Date.UTC(2026, 10, 29)
  const at = (days: number): string => new Date(now - days * DAY).toISOString()
  /** Every key the transfer has in any table (its prefix, its index keys, its blob references). */
  const keysOf = async (id: string): Promise<string[]> => {
    const out: string[] = []
    for (const table of ['transfers', 'chunks', ...HISTORY_TABLES] as TableName[]) {
      for await (const [key] of s.store.table(table).entries()) if (key === id || key.startsWith(`${id}/`)) out.push(`${table}:${key}`)
    }
    for await (const [key] of s.store.table('index').entries()) if (key.endsWith(`/${id}`) || key.includes(`/${id}/`)) out.push(`index:${key}`)
    return out
  }
  const shas: Record<string, string> = {}
  const shared = async (): Promise<void> => {
    // tr-gone-ref's first chunk and tr-same-bytes' share one blob: two references to one digest.
    await s.store.table('chunks').put(keys.chunk('tr-same-bytes', 0), { transfer_id: 'tr-same-bytes', chunk_index: 0, sha256: shas['tr-gone-ref'] })
    await s.store.table('index').put(blobRefKey(shas['tr-gone-ref']!, 'tr-same-bytes', 0), 1)
  }
  const whole = async (id: string, status: TransferRow['status'], extra: Partial<TransferRow>, ref = false): Promise<void> => {
    const created = extra.created_at ?? at(400)
    await s.transfer(id, status, { org_id: 'org-1', created_at: created, updated_at: extra.completed_at ?? at(0), completed_at: null, ...extra })
    await s.store.table('index').put(keys.orgTransfer('org-1', created, id), 1)
    shas[id] = await s.chunk(id, 0, { ref })
    await s.chunk(id, 1, { ref: false })
    for (const table of HISTORY_TABLES) await s.store.table(table).put(`${id}/0000000000`, { i: 0 })
  }
  await whole('tr-gone', 'completed', { completed_at: at(200), updated_at: at(10) }) // its completion counts, not its last change
  await whole('tr-gone-ref', 'failed', { updated_at: at(181) }, true) // a blob reference its cleanup left behind
  await whole('tr-gone1', 'completed', { completed_at: at(100) }) // a key prefix of another's is not its own
  await whole('tr-young', 'completed', { completed_at: at(179), updated_at: at(300) })
  // Another transfer of the same bytes: its reference to the shared blob stays when tr-gone-ref goes.
  await s.transfer('tr-same-bytes', 'in_progress', { org_id: 'org-1', created_at: at(1), updated_at: at(1) })
  // This node's sink: the upload tr-gone delivered into (its completed record, a leftover partial file).
  const sinkRecord = join(s.partials.partialDir, 'tr-gone.json')
  await writeFile(sinkRecord, JSON.stringify({ status: 'completed' }))
  await writeFile(join(s.partials.partialDir, 'tr-young.json'), JSON.stringify({ status: 'completed' }))
  await whole('tr-cleaning', 'cancelled', { updated_at: at(200), cleanup_pending: true })
  await whole('tr-running', 'in_progress', { updated_at: at(200) })
  await shared()
  const before = await keysOf('tr-gone')
  t.ok(before.length >= 2 + HISTORY_TABLES.length + 2, `the transfer had its keys (${before.length})`)

  const { logger, lines } = capturingLogger('info')
  const sweep = new DiskSweep({ store: s.store, blobs: s.blobs, partials: s.partials, clock: new ManualClock(), logger, graceMs: HOUR, historyRetentionMs: 30 * DAY, recordRetentionMs: 180 * DAY, now: () => now })
  const r = await sweep.run()
  t.equal(r.records.transfers, 2)
  t.ok(await s.store.table('index').get(blobRefKey(shas['tr-gone-ref']!, 'tr-same-bytes', 0)), 'another transfer\'s reference to the same bytes stays')
  t.same(await readdir(s.partials.partialDir), ['tr-young.json'], 'the sink record of the upload it delivered into went; a kept transfer\'s stays')
  t.equal(r.records.rows, 2 * (HISTORY_TABLES.length + 2 + 1))
  for (const id of ['tr-gone', 'tr-gone-ref']) t.same(await keysOf(id), [], `${id}: nothing of it is left`)
  t.ok(await s.store.table('transfers').get('tr-gone1'), 'a transfer whose id extends another\'s stays')
  t.equal((await keysOf('tr-gone1')).filter(k => k.startsWith('chunks:')).length, 2, 'with its chunks')
  for (const id of ['tr-young', 'tr-cleaning', 'tr-running']) {
    const left = await keysOf(id)
    t.equal(left.filter(k => k.startsWith('chunks:')).length, 2, `${id}: its chunks stay`)
    t.ok(left.includes(`index:${keys.orgTransfer('org-1', at(400), id)}`), `${id}: its organization index key stays`)
  }
  t.ok(await s.store.table('transfers').get('tr-young') && await s.store.table('transfers').get('tr-cleaning') && await s.store.table('transfers').get('tr-running'), 'young, cleaning and running records stay')
  t.equal(r.history.transfers, 2, 'the young one and the one with the same prefix lost their history only')
  t.ok(lines.some(l => l.event === 'disk_swept' && l.records_transfers === 2), 'logged')

  t.equal((await sweep.run()).records.transfers, 0, 'nothing more to delete')
  // (Blob ages are wall clock: this sweep's `now` is the real one.)
  await new DiskSweep({ store: s.store, blobs: s.blobs, partials: null, clock: new ManualClock(), logger, graceMs: HOUR }).run()
  t.equal(await s.blobs.has(shas['tr-gone-ref']!), true, 'a blob another transfer references stays')
  t.equal(await s.blobs.has(shas['tr-gone']!), false, 'one no one references is reclaimed')
  t.equal(await s.blobs.has(shas['tr-running']!), true, 'a running transfer\'s blob stays')
  t.same((await new DiskSweep({ store: s.store, blobs: s.blobs, partials: null, clock: new ManualClock(), logger, graceMs: HOUR, now: () => now + 3650 * DAY }).run()).records, { transfers: 0, rows: 0 }, 'no retention: kept for ever')
})

t.test('offer batches routed for other coordinators\' transfers go after the history retention; this node\'s own stay with their transfer', async t => {
  const s = await setup(t)
  const DAY = 86_400_000
  const now = Date.UTC(2026, 10, 29)
  const at = (days: number): string => new Date(now - days * DAY).toISOString()
  const batch = async (transferId: string, batchId: string, offered: string): Promise<void> => {
    await s.store.table('task_offer_batches').put(keys.row(transferId, batchId), { id: batchId, transfer_id: transferId, orchestrator_id: 'me', coordinator_id: 'them', wave_kind: 'initial', task_ids: [], attempt_ids: [], offered_at: offered, routed: [] })
  }
  await batch('tr-foreign-old', 'b1', at(40)); await batch('tr-foreign-old', 'b2', at(35))
  await batch('tr-foreign-mixed', 'b1', at(40)); await batch('tr-foreign-mixed', 'b2', at(1)) // still routing
  await batch('tr-foreign-new', 'b1', at(2))
  await batch('tr-foreign-bad', 'b1', 'not a time')
  // This node's own transfer, still running: its rows are its history, whatever their age.
  await s.transfer('tr-own', 'in_progress', { updated_at: at(40) })
  await batch('tr-own', 'b1', at(40))
  const rows = async (): Promise<string[]> => { const out: string[] = []; for await (const [key] of s.store.table('task_offer_batches').entries()) out.push(key); return out }
  const sweep = new DiskSweep({ store: s.store, blobs: s.blobs, partials: null, clock: new ManualClock(), logger: capturingLogger().logger, graceMs: HOUR, historyRetentionMs: 30 * DAY, now: () => now })
  const r = await sweep.run()
  t.same(r.foreign, { transfers: 1, rows: 2 })
  t.same(await rows(), ['tr-foreign-bad/b1', 'tr-foreign-mixed/b1', 'tr-foreign-mixed/b2', 'tr-foreign-new/b1', 'tr-own/b1'], 'only the transfer whose every batch is past the retention went')
  t.same((await sweep.run()).foreign, { transfers: 0, rows: 0 })
  t.same((await new DiskSweep({ store: s.store, blobs: s.blobs, partials: null, clock: new ManualClock(), logger: capturingLogger().logger, graceMs: HOUR, now: () => now + 365 * DAY }).run()).foreign, { transfers: 0, rows: 0 }, 'no history retention: kept')
  // A cap per sweep: a backlog goes over several sweeps.
  await s.store.batch(Array.from({ length: MAX_FOREIGN_ROWS_PRUNED_PER_SWEEP + 10 }, (_, i) => ({ type: 'put' as const, table: 'task_offer_batches' as const, key: keys.row(`tr-bulk-${String(i).padStart(6, '0')}`, 'b'), value: { offered_at: at(60) } })))
  t.equal((await sweep.run()).foreign.rows, MAX_FOREIGN_ROWS_PRUNED_PER_SWEEP)
  t.equal((await sweep.run()).foreign.rows, 10)
  // One transfer with more batches than a sweep's budget (one coordinator can send many under one id).
  await s.store.batch(Array.from({ length: MAX_FOREIGN_ROWS_PRUNED_PER_SWEEP + 5 }, (_, i) => ({ type: 'put' as const, table: 'task_offer_batches' as const, key: keys.row('tr-huge', `b-${String(i).padStart(6, '0')}`), value: { offered_at: at(60) } })))
  t.same((await sweep.run()).foreign, { transfers: 0, rows: MAX_FOREIGN_ROWS_PRUNED_PER_SWEEP }, 'as much as the budget holds')
  t.same((await sweep.run()).foreign, { transfers: 1, rows: 5 }, 'the rest next time')
})

t.test('a finished transfer whose sink files cannot go keeps its record for the next sweep', async t => {
  const s = await setup(t)
  const ended = new Date(Date.now() - 400 * 86_400_000).toISOString()
  await s.transfer('tr-stuck', 'completed', { org_id: null, created_at: ended, completed_at: ended, updated_at: ended })
  let answer: 'busy' | 'fail' | 'ok' = 'busy'
  const asked: string[] = []
  const partials = { sweep: async () => ({ partials: { files: 0, bytes: 0 }, errors: 0 }), remove: async (id: string) => { asked.push(id); if (answer === 'fail') throw Object.assign(new Error('EACCES'), { code: 'EACCES' }); return answer === 'busy' ? null : { files: 1, bytes: 0 } } } as unknown as SinkPartials
  const sweep = new DiskSweep({ store: s.store, blobs: s.blobs, partials, clock: new ManualClock(), logger: capturingLogger().logger, graceMs: HOUR, recordRetentionMs: 86_400_000 })
  const busy = await sweep.run()
  t.same([busy.records.transfers, busy.errors], [0, 1], 'a write of the upload running: counted, the record kept')
  answer = 'fail'
  const failed = await sweep.run()
  t.same([failed.records.transfers, failed.errors], [0, 1], 'a file-system error: the same, and the sweep went on')
  t.ok(await s.store.table('transfers').get('tr-stuck'))
  answer = 'ok'
  t.equal((await sweep.run()).records.transfers, 1, 'deleted once its files went')
  t.same(asked, ['tr-stuck', 'tr-stuck', 'tr-stuck'], 'the upload id this node\'s sink gives the transfer')
})

t.test('the sweep at start deletes no rows (a clock just booted may be wrong); the next ones do', async t => {
  const s = await setup(t)
  const ended = new Date(Date.now() - 400 * 86_400_000).toISOString()
  await s.transfer('tr-old', 'completed', { org_id: null, created_at: ended, completed_at: ended, updated_at: ended })
  for (const table of HISTORY_TABLES) await s.store.table(table).put('tr-old/0000000000', { i: 0 })
  const clock = new ManualClock()
  const swept: SweepResult[] = []
  const sweep = new DiskSweep({ store: s.store, blobs: s.blobs, partials: null, clock, logger: capturingLogger().logger, graceMs: HOUR, intervalMs: HOUR, historyRetentionMs: 86_400_000, recordRetentionMs: 86_400_000, onSwept: (r) => swept.push(r) })
  t.teardown(() => sweep.stop())
  sweep.start()
  await eventually(async () => swept.length === 1 ? true : undefined, 10_000, 'the sweep at start')
  t.same([swept[0]!.records, swept[0]!.history], [{ transfers: 0, rows: 0 }, { transfers: 0, rows: 0 }], 'no rows deleted at start')
  t.ok(await s.store.table('transfers').get('tr-old'), 'the finished transfer is still there')
  clock.advance(HOUR)
  await eventually(async () => swept.length === 2 ? true : undefined, 10_000, 'the next sweep')
  t.equal(swept[1]!.records.transfers, 1, 'the next sweep deletes it')
  t.equal(await s.store.table('transfers').get('tr-old'), undefined)
  t.equal((await sweep.run()).records.transfers, 0, 'a sweep run by hand deletes rows too (nothing left here)')
})

t.test('one sweep deletes at most MAX_RECORDS_PRUNED_PER_SWEEP transfers whole; the next goes on', async t => {
  const s = await setup(t)
  const now = Date.UTC(2026, 10, 29)
  const ended = new Date(now - 400 * 86_400_000).toISOString()
  await s.store.batch(Array.from({ length: MAX_RECORDS_PRUNED_PER_SWEEP + 3 }, (_, i) => ({ type: 'put' as const, table: 'transfers' as const, key: `tr-${i}`, value: { id: `tr-${i}`, status: 'completed', upload: null, org_id: null, created_at: ended, completed_at: ended, updated_at: ended } })))
  const sweep = new DiskSweep({ store: s.store, blobs: s.blobs, partials: null, clock: new ManualClock(), logger: capturingLogger().logger, graceMs: HOUR, recordRetentionMs: 86_400_000, now: () => now })
  t.equal((await sweep.run()).records.transfers, MAX_RECORDS_PRUNED_PER_SWEEP)
  t.equal((await sweep.run()).records.transfers, 3)
  t.equal((await sweep.run()).records.transfers, 0)
})

t.test('one sweep prunes at most MAX_HISTORY_PRUNED_PER_SWEEP transfers; the next goes on', async t => {
  const s = await setup(t)
  const now = Date.UTC(2026, 10, 29)
  const ended = new Date(now - 40 * 86_400_000).toISOString()
  const ops = Array.from({ length: MAX_HISTORY_PRUNED_PER_SWEEP + 3 }, (_, i) => ({ type: 'put' as const, table: 'transfers' as const, key: `tr-${i}`, value: { id: `tr-${i}`, status: 'completed', upload: null, completed_at: ended, updated_at: ended } }))
  await s.store.batch(ops)
  const sweep = new DiskSweep({ store: s.store, blobs: s.blobs, partials: null, clock: new ManualClock(), logger: capturingLogger().logger, graceMs: HOUR, historyRetentionMs: 86_400_000, now: () => now })
  t.equal((await sweep.run()).history.transfers, MAX_HISTORY_PRUNED_PER_SWEEP)
  t.equal((await sweep.run()).history.transfers, 3)
  t.equal((await sweep.run()).history.transfers, 0)
})
