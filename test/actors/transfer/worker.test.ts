// A worker shares its slots between the coordinators whose chunks it holds (docs/security.md#peers):
// a coordinator of another operator whose moves go slowly cannot take every slot, so the worker's own
// orchestrator, and another coordinator, still find one, and their queued work is not struck for
// waiting behind it.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { startSystem, stopActor, tell } from '../../../actors/runtime.ts'
import { startWorker, foreignShare, nextToRun, type ChunkMover, type MoveOptions } from '../../../actors/transfer/worker.ts'
import type { Network } from '../../../actors/ports.ts'
import type { MessageBody, MessageType, TaskOffer } from '../../../protocol/index.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { silentLogger } from '../../helpers/logger.ts'
import { eventually } from '../../helpers/proc.ts'

const ORCH = 'orch-own'; const SLOW = 'coord-slow'; const OTHER = 'coord-other'; const SELF = 'worker-1'

t.test('a foreign coordinator\'s share by slots', async t => {
  t.same([1, 2, 3, 4, 8].map(foreignShare), [1, 1, 2, 2, 4])
})

t.test('the next move: fewest running first, arrival order among equals, a foreign share held while no slot would stay free', async t => {
  const w = (coordinator: string): { coordinator: string, foreign: boolean } => ({ coordinator, foreign: coordinator !== ORCH })
  const running = (by: Record<string, number>): Map<string, number> => new Map(Object.entries(by))
  t.equal(nextToRun([w(SLOW), w(SLOW), w(ORCH)], running({}), 4), 0, 'nothing running: the first offer')
  t.equal(nextToRun([w(SLOW), w(OTHER)], running({ [SLOW]: 1 }), 4), 1, 'the coordinator with fewer running goes first')
  t.equal(nextToRun([w(SLOW), w(OTHER), w(OTHER)], running({ [SLOW]: 1, [OTHER]: 1 }), 4), 0, 'the earliest offer among equals')
  t.equal(nextToRun([w(SLOW), w(SLOW)], running({ [SLOW]: 2 }), 4), 0, 'past its share while a slot stays free after it')
  t.equal(nextToRun([w(SLOW), w(SLOW)], running({ [SLOW]: 3 }), 4), -1, 'never the last free slot')
  t.equal(nextToRun([w(SLOW), w(SLOW)], running({ [SLOW]: 2, [OTHER]: 1 }), 4), -1, 'at its share, with the last slot free')
  t.equal(nextToRun([w(SLOW), w(OTHER)], running({ [SLOW]: 3 }), 4), 1, 'the last slot goes to another coordinator')
  t.equal(nextToRun([w(SLOW), w(ORCH)], running({ [SLOW]: 3 }), 4), 1, 'or to the own orchestrator')
  t.equal(nextToRun([w(ORCH), w(ORCH)], running({ [ORCH]: 3 }), 4), 0, 'the own orchestrator may use every slot')
  t.equal(nextToRun([w(SLOW)], running({}), 1), 0, 'a one-slot worker still moves a foreign chunk')
  t.equal(nextToRun([w(SLOW), w(SLOW)], running({ [SLOW]: 1 }), 2), -1, 'two slots: one for one coordinator')
  t.equal(nextToRun([w(SLOW), w(OTHER)], running({ [SLOW]: 1 }), 2), 1, 'and the other for another')
  t.equal(nextToRun([], running({}), 4), -1)
})

t.test('a slow foreign coordinator leaves a slot to the own orchestrator and to another coordinator', async t => {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const sent: Array<{ to: string, type: MessageType, body: any }> = []
  const net: Network = { self: SELF, send<T extends MessageType> (to: string, type: T, body: MessageBody<T>): boolean { sent.push({ to, type, body }); return true }, broadcast: () => 0 }
  // Moves that end only when the test says so.
  const started: Array<{ offer: TaskOffer, finish: () => void, signal: AbortSignal }> = []
  const mover: ChunkMover = {
    async move (offer: TaskOffer, opts: MoveOptions) {
      await new Promise<void>((resolve, reject) => {
        started.push({ offer, finish: resolve, signal: opts.signal })
        opts.signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { code: 'cancelled' })), { once: true })
      })
      return { sha256: offer.sha256, etag: null, bytes: offer.length, via: 'http' as const }
    }
  }
  const worker = startWorker(system, { env: { clock: new ManualClock(), logger: silentLogger() }, self: SELF, net, mover, slots: 4, attachTo: ORCH })
  tell(worker.ref, { type: 'orchestrator-up', hotkey: ORCH })
  const attach = await eventually(async () => sent.find(s => s.type === 'worker_attach'), 5000, 'the worker asks to attach', 10)
  tell(worker.ref, { type: 'attached', from: ORCH, session: attach.body.session })
  await eventually(async () => worker.orchestrator() === ORCH, 5000, 'attached', 10)

  const offer = (coordinator: string, i: number): TaskOffer => ({
    taskId: randomUUID(), attemptId: randomUUID(), transferId: randomUUID(), chunkIndex: i, length: 10, sha256: 'ab'.repeat(32),
    source: { url: 'http://127.0.0.1:1/d', path: '/d', coordinator }, target: { method: 'PUT', url: 'http://127.0.0.1:1/p', headers: {}, expiresAt: 1 }, expiresAt: 1, excludeWorkers: []
  })
  const give = (o: TaskOffer): void => { tell(worker.ref, { type: 'offer', from: ORCH, body: { batchId: randomUUID(), offer: o } }) }
  const settled = async (): Promise<void> => { for (let i = 0; i < 10; i++) await new Promise(resolve => setImmediate(resolve)) }

  const slow = [0, 1, 2, 3, 4].map(i => offer(SLOW, i))
  slow.forEach(give)
  await eventually(async () => sent.filter(s => s.type === 'task_accepted').length === 5, 5000, 'every offer accepted', 10)
  await settled()
  t.equal(started.length, 3, 'alone, the slow coordinator takes all but one slot')
  const other = offer(OTHER, 0)
  give(other)
  await eventually(async () => started.length === 4, 5000, 'another coordinator starts at once', 10)
  t.equal(started[3]!.offer.attemptId, other.attemptId)
  const own = offer(ORCH, 0)
  give(own)
  await eventually(async () => worker.load() === 7, 5000, 'load counts the accepted work, waiting or moving', 10)

  // A slow move ends: the slow coordinator is at its share with no slot to spare, so the own orchestrator's starts.
  started[0]!.finish()
  await eventually(async () => started.length === 5, 5000, 'the own orchestrator\'s move takes the slot', 10)
  t.equal(started[4]!.offer.attemptId, own.attemptId)
  await eventually(async () => sent.some(s => s.type === 'task_result' && s.body.attemptId === slow[0]!.attemptId), 5000, 'the result is reported', 10)

  // The own orchestrator's move ends: the slow coordinator is at its share, and the slot is its last free one.
  started[4]!.finish()
  await eventually(async () => sent.some(s => s.type === 'task_result' && s.body.attemptId === own.attemptId), 5000, 'the result is reported', 10)
  await settled()
  t.equal(started.length, 5, 'the last free slot stays free')

  // A cancelled waiting offer never starts; a cancelled running one frees its slot once it settles.
  tell(worker.ref, { type: 'cancel', from: ORCH, body: { transferId: slow[3]!.transferId, attemptIds: [slow[3]!.attemptId], reason: 'superseded' } })
  tell(worker.ref, { type: 'cancel', from: ORCH, body: { transferId: other.transferId, attemptIds: [other.attemptId], reason: 'superseded' } })
  await eventually(async () => started.length === 6, 5000, 'a slot to spare again: the slow coordinator\'s next chunk', 10)
  t.equal(started[5]!.offer.attemptId, slow[4]!.attemptId, 'the cancelled waiting offer was skipped')
  t.notOk(started.some(s => s.offer.attemptId === slow[3]!.attemptId))
  const late = offer(SLOW, 5)
  give(late)
  await eventually(async () => sent.some(s => s.type === 'task_accepted' && s.body.attemptId === late.attemptId), 5000, 'the late offer accepted', 10)
  t.equal(started.length, 6, 'three slow moves: the last slot stays free')
  started[1]!.finish()
  await eventually(async () => started.length === 7, 5000, 'one ends: the next starts', 10)
  t.equal(started[6]!.offer.attemptId, late.attemptId)
})
