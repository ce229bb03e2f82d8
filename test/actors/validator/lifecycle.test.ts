// A validator's epoch machinery: started once the chain can be reached (retried every second on the
// clock), evidence held until then; after each close the published snapshots are replicated.
import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../../actors/store.ts'
import { KEYS } from '../../../actors/validator/snapshots.ts'
import { deferredEpochs, replicateSnapshots, START_RETRY_MS } from '../../../actors/validator/lifecycle.ts'
import type { ValidatorEpochs } from '../../../actors/validator/epochs.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { silentLogger } from '../../helpers/logger.ts'

const settle = async (): Promise<void> => { for (let i = 0; i < 10; i++) await Promise.resolve() }

function fakeEpochs (log: string[]): ValidatorEpochs {
  return {
    submitEvidence: async (records: unknown[]) => { log.push(`evidence:${records.length}`); return {} as never },
    submitPenalties: async (rows: unknown[]) => { log.push(`penalties:${rows.length}`) },
    flush: async () => { log.push('flush') },
    stop: async () => { log.push('stop') }
  } as unknown as ValidatorEpochs
}

t.test('not started while the chain is unreachable; evidence waits and is handed over at start', async t => {
  const clock = new ManualClock()
  const log: string[] = []
  let ready = false
  let starts = 0
  let failFirst = true
  const d = deferredEpochs({
    clock, logger: silentLogger(), ready: () => ready,
    start: async () => { starts++; if (failFirst) { failFirst = false; throw new Error('not registered yet') } return fakeEpochs(log) }
  })
  d.tryStart()
  await d.sink.submitEvidence([{} as never, {} as never])
  await d.sink.submitPenalties([{} as never])
  clock.advance(5 * START_RETRY_MS)
  await settle()
  t.equal(starts, 0, 'no start while the chain host is not connected')
  t.equal(d.epochs(), null)
  t.same(log, [], 'evidence held in memory')
  ready = true
  clock.advance(START_RETRY_MS)
  await settle()
  t.equal(starts, 1, 'tried on the next tick')
  t.equal(d.epochs(), null, 'a failed start is retried')
  clock.advance(START_RETRY_MS)
  await settle()
  t.equal(starts, 2)
  t.not(d.epochs(), null, 'started')
  t.same(log, ['penalties:1', 'evidence:2'], 'held penalties, then held evidence, handed over')
  await d.sink.submitEvidence([{} as never])
  t.same(log.at(-1), 'evidence:1', 'later evidence goes straight through')
  clock.advance(10 * START_RETRY_MS)
  await settle()
  t.equal(starts, 2, 'never started twice')
  await d.stop()
  t.equal(log.at(-1), 'stop')
})

t.test('stop before start: no more attempts', async t => {
  const clock = new ManualClock()
  let starts = 0
  const d = deferredEpochs({ clock, logger: silentLogger(), ready: () => true, start: async () => { starts++; throw new Error('no') } })
  await d.stop()
  clock.advance(10 * START_RETRY_MS)
  await settle()
  t.equal(starts, 0)
})

t.test('replication: epoch snapshots of the last 4 epochs and both sell-allowance proofs, after a flush', async t => {
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const snaps = store.table<unknown>('snapshots')
  const epochSnap = (e: number, r: number) => ({ snapshotId: `e${e}r${r}`, sourceEpoch: e, data: { revision: r } })
  for (const [e, r] of [[1, 0], [2, 0], [3, 0], [3, 1], [5, 0]] as const) await snaps.put(KEYS.epochSnapshot(e, r), epochSnap(e, r))
  await snaps.put(KEYS.sellIndex(1, 'hkOld'), 1)
  await snaps.put(KEYS.sellIndex(4, 'hkA'), 1)
  await snaps.put(KEYS.sellPaid('hkA', 4), { snapshotId: 'paid-A-4' })
  await snaps.put(KEYS.sellFree('hkA', 4), { snapshotId: 'free-A-4' })
  await snaps.put(KEYS.sellPaid('hkOld', 1), { snapshotId: 'paid-old' })
  const sent: Array<{ type: string, body: any }> = []
  const order: string[] = []
  const net = { broadcast: (type: string, body: unknown) => { order.push('send'); sent.push({ type, body }); return 1 } }
  const n = await replicateSnapshots({ store, net: net as never, epochs: { flush: async () => { order.push('flush') } } }, 5)
  t.equal(order[0], 'flush', 'the epoch machine flushes before anything is read')
  t.equal(n, sent.length)
  t.same(sent.filter(s => s.body.kind === 'epoch').map(s => s.body.snapshot.snapshotId), ['e2r0', 'e3r0', 'e3r1', 'e5r0'], 'epochs 2..5, every revision; epoch 1 is too old')
  t.same(sent.filter(s => s.body.kind !== 'epoch').map(s => [s.body.kind, s.body.epoch, s.body.hotkey, s.body.snapshot.snapshotId]), [['sell_paid', 4, 'hkA', 'paid-A-4'], ['sell_free', 4, 'hkA', 'free-A-4']])
  t.ok(sent.every(s => s.type === 'snapshot_published'))
})
