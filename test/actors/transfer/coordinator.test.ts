// The coordinator actor with its destination work outside the mailbox: a destination call that hangs
// for one transfer does not hold up another, terminal transfers leave memory, and a restart (a new
// actor on the same store) drives a finalized, fully delivered transfer to completion.
import t from 'tap'
import { createHash, randomUUID } from 'node:crypto'
import { MemoryLevel } from 'memory-level'
import { startSystem, stopActor, ask, tell, type Ref } from '../../../actors/runtime.ts'
import { LevelStore } from '../../../actors/store.ts'
import { startCoordinator, type CoordinatorMsg, type Coordinator, type CoordinatorDeps } from '../../../actors/transfer/coordinator.ts'
import type { BlobStore, Network, Store } from '../../../actors/ports.ts'
import type { DestinationDriver, UploadState } from '../../../actors/destination.ts'
import type { TransferRow } from '../../../actors/transfer/model.ts'
import type { TaskOfferBatch } from '../../../protocol/index.ts'
import { systemClock } from '../../../node/clock.ts'
import { readTransferEvents } from '../../../actors/transfer/events.ts'
import type { TransferEvent } from '../../../protocol/index.ts'
import { silentLogger } from '../../helpers/logger.ts'
import { eventually } from '../../helpers/proc.ts'

const ORCH = 'orch-1'
const WORKER = 'worker-1'
const CHUNK = 4096

/** A promise the test resolves when it chooses. */
function gate (): { wait: Promise<void>, open (): void } {
  let open!: () => void
  const wait = new Promise<void>(resolve => { open = resolve })
  return { wait, open }
}

interface Harness {
  coordinator: Coordinator
  ref: Ref<CoordinatorMsg>
  store: Store
  objects: Map<string, Uint8Array>
  completed: Set<string>
  call: <T>(make: (reply: any) => CoordinatorMsg) => Promise<T>
}

/** One coordinator whose router and workers are played by the test: every offer is routed and delivered at once. */
function harness (t: { teardown (fn: () => unknown): void }, opts: { store?: Store, driver?: Partial<DestinationDriver>, blobs?: Map<string, Uint8Array>, deps?: Partial<CoordinatorDeps> } = {}): Harness {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const store = opts.store ?? new LevelStore(new MemoryLevel() as never)
  const blobs = opts.blobs ?? new Map<string, Uint8Array>()
  const blobStore: BlobStore = {
    put: async (b) => { const h = createHash('sha256').update(b).digest('hex'); blobs.set(h, b); return h },
    get: async (h) => blobs.get(h),
    has: async (h) => blobs.has(h),
    delete: async (h) => { blobs.delete(h) }
  }
  const objects = new Map<string, Uint8Array>()
  const completed = new Set<string>()
  const driver: DestinationDriver = {
    kind: 'http',
    readableBeforeComplete: true,
    begin: async (u) => { objects.set(u.transferId, new Uint8Array(u.totalSize)); return { kind: 'http', transferId: u.transferId } as UploadState },
    target: async (s, c, expiresAt) => ({ method: 'PUT', url: `http://dest.invalid/${String(s.transferId)}/${c.index}`, headers: {}, expiresAt }),
    complete: async (s) => { completed.add(String(s.transferId)) },
    abort: async (s) => { objects.delete(String(s.transferId)) },
    readRange: async (s, offset, length) => objects.get(String(s.transferId))!.slice(offset, offset + length),
    ...opts.driver
  }
  let ref!: Ref<CoordinatorMsg>
  const net: Network = {
    self: ORCH,
    send (_to, type, body) {
      if (type !== 'task_offer_batch') return true
      const batch = body as TaskOfferBatch
      setImmediate(() => {
        tell(ref, { type: 'assigned', from: ORCH, body: { transferId: batch.transferId, batchId: batch.batchId, assignments: batch.offers.map(o => ({ attemptId: o.attemptId, worker: WORKER })) } })
        for (const offer of batch.offers) {
          objects.get(offer.transferId)?.set(blobs.get(offer.sha256)!, offer.chunkIndex * CHUNK)
          tell(ref, { type: 'result', from: ORCH, body: { taskId: offer.taskId, attemptId: offer.attemptId, transferId: offer.transferId, worker: WORKER, success: true, bytes: offer.length, durationMs: 1, sha256: offer.sha256, etag: null, error: null, via: 'http' } })
        }
      })
      return true
    },
    broadcast: () => 0
  }
  const coordinator = startCoordinator(system, {
    env: { clock: systemClock, logger: silentLogger() }, self: ORCH, net, store, blobs: blobStore,
    driverFor: async () => driver,
    candidates: async () => [{ hotkey: ORCH, workers: 1, score: 1 }],
    signSource: (transferId, index) => ({ url: `http://127.0.0.1:1/data/${transferId}/${index}`, path: `/data/${transferId}/${index}` }),
    ...opts.deps
  })
  t.teardown(() => coordinator.stop())
  ref = coordinator.ref
  const call = <T>(make: (reply: any) => CoordinatorMsg): Promise<T> => ask<CoordinatorMsg, any>(ref, systemClock, 10_000, make).then(o => {
    if (!o.ok) throw new Error(`${o.code}: ${o.detail}`)
    return o.value as T
  })
  return { coordinator, ref, store, objects, completed, call }
}

function newRow (chunks: number): TransferRow {
  const iso = new Date().toISOString()
  return {
    id: randomUUID(), status: 'pending', sender_hotkey: ORCH, filename: 'f.bin', total_size: CHUNK * chunks, chunk_size: CHUNK, total_chunks: chunks,
    tier: 'STANDARD', destination_id: 'd1', api_key_id: null, org_id: null, coordinator_id: ORCH, metadata: { name: 'f' }, upload: null,
    chunks_received: 0, chunks_delivered: 0, chunks_verified: 0, bytes_received: 0, bytes_delivered: 0, finalize_requested: false,
    created_at: iso, updated_at: iso, started_at: null, finalized_at: null, completed_at: null, error_code: null, error_message: null
  }
}

async function sendAll (h: Harness, row: TransferRow, blobs: Map<string, Uint8Array>, seed: number): Promise<Buffer> {
  const all = Buffer.alloc(row.total_size)
  for (let i = 0; i < row.total_chunks; i++) {
    const bytes = Buffer.alloc(CHUNK, (seed * 31 + i) & 0xff)
    bytes.write(`${row.id}/${i}`)
    bytes.copy(all, i * CHUNK)
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    blobs.set(sha256, bytes)
    await h.call(reply => ({ type: 'chunk', transferId: row.id, index: i, sha256, md5: createHash('md5').update(bytes).digest('hex'), length: CHUNK, reply }))
  }
  return all
}

const statusOf = async (store: Store, id: string): Promise<TransferRow | undefined> => store.table<TransferRow>('transfers').get(id)

t.test('a hung destination call for transfer X does not delay transfer Y; terminal transfers leave memory', async t => {
  const hung = gate()
  const entered = gate()
  let hungX = ''
  const blobs = new Map<string, Uint8Array>()
  let h!: Harness
  h = harness(t, {
    blobs,
    driver: {
      // X's abort hangs until the test lets it go: a destination that stopped answering.
      abort: async (s) => { if (s.transferId === hungX) { entered.open(); await hung.wait } h.objects.delete(String(s.transferId)) }
    }
  })
  const x = newRow(3)
  hungX = x.id
  await h.call(reply => ({ type: 'create', row: x, reply }))
  await sendAll(h, x, blobs, 1)
  await eventually(async () => (await statusOf(h.store, x.id))?.chunks_delivered === 3, 10_000, 'X delivered')
  let xCancelled = false
  const cancelX = h.call<TransferRow>(reply => ({ type: 'cancel', transferId: x.id, reply })).then(r => { xCancelled = true; return r })
  await entered.wait

  // While X's abort hangs, Y runs from create to completed through the same coordinator and destination kind.
  const y = newRow(4)
  await h.call(reply => ({ type: 'create', row: y, reply }))
  const bytes = await sendAll(h, y, blobs, 2)
  await h.call(reply => ({ type: 'finalize', transferId: y.id, reply }))
  await eventually(async () => (await statusOf(h.store, y.id))?.status === 'completed', 10_000, 'Y completed')
  t.ok(h.completed.has(y.id), 'Y\'s object was completed at the destination')
  t.ok(Buffer.from(h.objects.get(y.id)!).equals(bytes), 'Y\'s bytes are right')
  t.notOk(xCancelled, 'X\'s cancel is still waiting for its abort')
  t.equal((await statusOf(h.store, x.id))?.status, 'in_progress')
  t.equal((await statusOf(h.store, x.id))?.cancel_requested, true, 'X\'s cancel is durable')
  t.equal(h.coordinator.active(), 1, 'Y left memory; X is still there')

  hung.open()
  const row = await cancelX
  t.equal(row.status, 'cancelled', 'X\'s cancel answers once its abort returns')
  t.equal(h.coordinator.active(), 0, 'no terminal transfer stays in memory')
  await eventually(async () => (await statusOf(h.store, x.id))?.cleanup_pending === false && (await statusOf(h.store, y.id))?.cleanup_pending === false, 10_000, 'cleanups recorded')
  t.equal(blobs.size, 0, 'every staged chunk was freed')
  const again = await h.call<TransferRow>(reply => ({ type: 'cancel', transferId: x.id, reply }))
  t.equal(again.status, 'cancelled', 'cancel is idempotent after X left memory')
  await t.rejects(h.call(reply => ({ type: 'cancel', transferId: y.id, reply })), /BWN_ERR_TRANSFER_CLOSED/)
  t.match(await h.call(reply => ({ type: 'finalize', transferId: y.id, reply })), { status: 'completed' }, 'finalize of a completed transfer answers with it')
})

t.test('a destination that hashes its own chunks is asked for the hash, never read back; a wrong one fails the attempt', async t => {
  const blobs = new Map<string, Uint8Array>()
  const asked: number[] = []
  let h!: Harness
  h = harness(t, {
    blobs,
    driver: {
      readRange: async () => { throw new Error('the check must not read the bytes back') },
      // The first answer for chunk 1 says other bytes are there: that attempt fails and chunk 1 goes out again.
      chunkSha256: async (s, c) => {
        asked.push(c.index)
        if (c.index === 1 && asked.filter(i => i === 1).length === 1) return '0'.repeat(64)
        const bytes = h.objects.get(String(s.transferId))!.subarray(c.index * CHUNK, c.index * CHUNK + c.length)
        return createHash('sha256').update(bytes).digest('hex')
      }
    }
  })
  const row = newRow(3)
  await h.call(reply => ({ type: 'create', row, reply }))
  const bytes = await sendAll(h, row, blobs, 3)
  await h.call(reply => ({ type: 'finalize', transferId: row.id, reply }))
  await eventually(async () => (await statusOf(h.store, row.id))?.status === 'completed', 10_000, 'completed')
  t.ok(Buffer.from(h.objects.get(row.id)!).equals(bytes), 'the bytes are right')
  t.same([...asked].sort(), [0, 1, 1, 2], 'each chunk checked by its hash; chunk 1 twice')
  const attempts: Array<{ chunk_index: number, state: string }> = []
  for await (const [, a] of h.store.table<{ chunk_index: number, state: string }>('task_attempts').entries()) attempts.push(a)
  t.same(attempts.filter(a => a.chunk_index === 1).map(a => a.state).sort(), ['failed', 'succeeded'], 'the attempt with the wrong hash failed; a new one delivered chunk 1')
})

t.test('restart: a finalized transfer whose completion never ran is completed by the next coordinator', async t => {
  const store = new LevelStore(new MemoryLevel() as never)
  const blobs = new Map<string, Uint8Array>()
  const stuck = gate()
  let first!: Harness
  first = harness(t, { store, blobs, driver: { complete: async () => { await stuck.wait } } })
  const row = newRow(3)
  await first.call(reply => ({ type: 'create', row, reply }))
  const bytes = await sendAll(first, row, blobs, 3)
  await first.call(reply => ({ type: 'finalize', transferId: row.id, reply }))
  await eventually(async () => (await statusOf(store, row.id))?.chunks_delivered === 3, 10_000, 'delivered')
  t.equal((await statusOf(store, row.id))?.status, 'in_progress', 'completion hangs in the first coordinator')
  stopActor(first.ref as never)
  first.coordinator.stop()

  // The second coordinator (the node restarted) finds it on start; its destination keeps the bytes.
  const second = harness(t, { store, blobs })
  second.objects.set(row.id, first.objects.get(row.id)!)
  await eventually(async () => (await statusOf(store, row.id))?.status === 'completed', 10_000, 'completed after restart')
  t.ok(second.completed.has(row.id))
  t.ok(Buffer.from(second.objects.get(row.id)!).equals(bytes))
  t.equal(second.coordinator.active(), 0)
  stuck.open()
})

t.test('transfer events: numbered 1..N without gaps, persisted in the same batch, published once durable, continued after a restart', async t => {
  const store = new LevelStore(new MemoryLevel() as never)
  const blobs = new Map<string, Uint8Array>()
  const live: TransferEvent[] = []
  const stuck = gate()
  const first = harness(t, { store, blobs, driver: { complete: async () => { await stuck.wait } }, deps: { onTransferEvents: (es) => { live.push(...es) } } })
  const row = newRow(3)
  await first.call(reply => ({ type: 'create', row, reply }))
  await sendAll(first, row, blobs, 4)
  await first.call(reply => ({ type: 'finalize', transferId: row.id, reply }))
  await eventually(async () => (await statusOf(store, row.id))?.chunks_delivered === 3, 10_000, 'delivered')
  stopActor(first.ref as never)
  first.coordinator.stop()
  const second = harness(t, { store, blobs, deps: { onTransferEvents: (es) => { live.push(...es) } } })
  second.objects.set(row.id, first.objects.get(row.id)!)
  await eventually(async () => (await statusOf(store, row.id))?.status === 'completed', 10_000, 'completed after restart')
  await eventually(async () => live.at(-1)?.status === 'completed', 10_000, 'terminal event published')

  const stored = await readTransferEvents(store, row.id, 0)
  t.same(stored, live, 'what was published is what was stored')
  t.same(stored.map(e => e.seq), stored.map((_, i) => i + 1), 'seq 1..N, no gap and no duplicate across the restart')
  t.same(stored[0], { ...stored[0], type: 'status', status: 'pending', chunk_index: null })
  // No validator in this harness: nothing is verified, so no chunk_verified (the devnet tests see them).
  t.equal(stored.filter(e => e.type === 'chunk_verified').length, 0)
  for (const type of ['chunk_received', 'chunk_delivered'] as const) {
    t.same(stored.filter(e => e.type === type).map(e => e.chunk_index).sort(), [0, 1, 2], `one ${type} per chunk`)
  }
  t.same(stored.filter(e => e.type === 'status').map(e => e.status), ['pending', 'in_progress', 'completed'], 'each status once, in order')
  t.match(stored.at(-1), { type: 'status', status: 'completed', chunks: { delivered: 3, total: 3 }, bytes: { delivered: CHUNK * 3, total: CHUNK * 3 } })
  t.same(await readTransferEvents(store, row.id, stored.length - 2), stored.slice(-2), 'after=N-2 answers the last two')
  t.same(await readTransferEvents(store, row.id, stored.length), [], 'nothing after the last')
  stuck.open()
})

/** The store under test, with each batch counted and, while `hold` is set, held until released. */
function watchedStore (): { store: Store, sizes: number[], hold: { on: boolean, release: () => void, failNext: Error | null } } {
  const inner = new LevelStore(new MemoryLevel() as never)
  const sizes: number[] = []
  const held: Array<() => void> = []
  const hold = {
    on: false,
    failNext: null as Error | null,
    release: () => { for (const r of held.splice(0)) r() }
  }
  const store: Store = {
    table: (name) => inner.table(name),
    batch: async (ops) => {
      sizes.push(ops.length)
      if (hold.on) await new Promise<void>(resolve => { held.push(resolve) })
      const fail = hold.failNext
      if (fail !== null) { hold.failNext = null; throw fail }
      await inner.batch(ops)
    }
  }
  return { store, sizes, hold }
}

t.test('group commit: the messages handled while a write is in flight share the next batch, and none is answered before its rows are durable', async t => {
  const { store, sizes, hold } = watchedStore()
  const h = harness(t, { store })
  const first = newRow(1)
  await h.call(reply => ({ type: 'create', row: first, reply }))
  const rows = Array.from({ length: 20 }, () => newRow(1))
  hold.on = true
  const before = sizes.length
  let answered = 0
  const creates = rows.map(row => h.call(reply => ({ type: 'create', row, reply })).then(() => { answered++ }))
  await eventually(async () => sizes.length === before + 1 || undefined, 5_000, 'the first create\'s batch')
  await eventually(async () => (await Promise.all(rows.map(async r => await statusOf(store, r.id)))).every(r => r === undefined) || undefined, 5_000, 'nothing written yet')
  t.equal(answered, 0, 'no create answered while its batch is held')
  for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve))
  t.equal(sizes.length, before + 1, 'one batch in flight: the others wait for it')
  hold.on = false
  hold.release()
  await Promise.all(creates)
  t.equal(answered, 20, 'all answered once written')
  t.ok(sizes.length - before <= 3, `20 creates took ${sizes.length - before} batches (sizes ${sizes.slice(before).join(', ')})`)
  for (const r of rows) t.equal((await statusOf(store, r.id))?.status, 'pending', 'each create is stored')
})

t.test('a failed write answers its messages with the error and restarts the coordinator from the store', async t => {
  const { store, hold } = watchedStore()
  const h = harness(t, { store })
  const kept = newRow(2)
  await h.call(reply => ({ type: 'create', row: kept, reply }))
  const lost = newRow(1)
  hold.failNext = new Error('EIO: the disk went away')
  await t.rejects(h.call(reply => ({ type: 'create', row: lost, reply })), /EIO/, 'the create whose write failed is refused with the error')
  t.equal(await statusOf(store, lost.id), undefined, 'and nothing of it is stored')
  // The restarted coordinator knows what the store holds: the first transfer takes its chunks.
  const blobs = new Map<string, Uint8Array>()
  await eventually(async () => {
    try { await sendAll(h, kept, blobs, 3); return true } catch { return undefined }
  }, 10_000, 'the restarted coordinator taking the stored transfer\'s chunks')
  t.equal((await statusOf(store, kept.id))?.chunks_received, 2, 'the stored transfer went on')
  await t.rejects(h.call(reply => ({ type: 'chunk', transferId: lost.id, index: 0, sha256: 'a'.repeat(64), md5: 'b'.repeat(32), length: CHUNK, reply })), /NOT_FOUND|not found|unknown/i, 'the lost one is unknown')
})

t.test('what a client is told is stored is flushed to disk first: the create, each chunk, the finalize', async t => {
  const inner = new LevelStore(new MemoryLevel() as never)
  const writes: Array<{ tables: string[], sync: boolean }> = []
  const store: Store = {
    table: (name) => inner.table(name),
    batch: async (ops, opts) => { writes.push({ tables: [...new Set(ops.map(o => o.table))], sync: opts?.sync === true }); await inner.batch(ops, opts) }
  }
  const blobs = new Map<string, Uint8Array>()
  const h = harness(t, { store, blobs })
  const row = newRow(2)
  await h.call(reply => ({ type: 'create', row, reply }))
  t.ok(writes.some(w => w.sync && w.tables.includes('transfers')), 'the created transfer: a synced batch')
  await sendAll(h, row, blobs, 7)
  const chunkWrites = writes.filter(w => w.tables.includes('chunks'))
  t.ok(chunkWrites.length > 0 && chunkWrites.every(w => w.sync), 'every batch with a received chunk is synced')
  const before = writes.length
  await h.call(reply => ({ type: 'finalize', transferId: row.id, reply }))
  t.ok(writes.slice(before).some(w => w.sync), 'the finalize too')
})
