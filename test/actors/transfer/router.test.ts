// The orchestrator's router relays a worker's result to the chunk's coordinator with the worker's own
// signed frame as its claim (docs/security.md#peers): the coordinator and the validator hold a delivery
// against a worker only on that. A result carrying a claim of its own, or too large to relay, is refused.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { MemoryLevel } from 'memory-level'
import { startSystem, stopActor, tell } from '../../../actors/runtime.ts'
import { LevelStore } from '../../../actors/store.ts'
import { startRouter } from '../../../actors/transfer/router.ts'
import type { Network } from '../../../actors/ports.ts'
import { MAX_WORKER_CLAIM_CHARS, type MessageBody, type MessageType, type TaskOffer } from '../../../protocol/index.ts'
import { systemClock } from '../../../node/clock.ts'
import { silentLogger } from '../../helpers/logger.ts'
import { eventually } from '../../helpers/proc.ts'

const ORCH = 'orch-1'; const COORD = 'coord-1'; const WORKER = 'worker-1'

t.test('a worker\'s result goes to its coordinator with the worker\'s signed frame as its claim', async t => {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const sent: Array<{ to: string, type: MessageType, body: any }> = []
  const net: Network = {
    self: ORCH,
    send<T extends MessageType> (to: string, type: T, body: MessageBody<T>): boolean { sent.push({ to, type, body }); return true },
    broadcast: () => 0
  }
  const store = new LevelStore(new MemoryLevel({ valueEncoding: 'json' }) as never)
  const router = startRouter(system, { env: { clock: systemClock, logger: silentLogger() }, self: ORCH, net, store })
  tell(router.ref, { type: 'attach', from: WORKER, body: { session: randomUUID(), slots: 4 } })
  const transferId = randomUUID()
  const offers: TaskOffer[] = [0, 1].map(i => ({
    taskId: randomUUID(), attemptId: randomUUID(), transferId, chunkIndex: i, length: 10, sha256: 'ab'.repeat(32),
    source: { url: 'http://127.0.0.1:1/d', path: '/d', coordinator: COORD }, target: { method: 'PUT', url: 'http://127.0.0.1:1/p', headers: {}, expiresAt: 1 }, expiresAt: 1, excludeWorkers: []
  }))
  tell(router.ref, { type: 'batch', from: COORD, body: { batchId: randomUUID(), transferId, waveKind: 'initial', offers } })
  await eventually(async () => sent.filter(s => s.type === 'task_offer').length === 2, 5000, 'both offers routed to the worker', 10)

  const said = (o: TaskOffer): MessageBody<'task_result'> =>
    ({ taskId: o.taskId, attemptId: o.attemptId, transferId, worker: WORKER, success: true, bytes: 10, durationMs: 1, sha256: o.sha256, etag: null, error: null, via: 'http', coordinator: COORD })
  const acks = (): any[] => sent.filter(s => s.type === 'task_result_ack').map(s => s.body)
  // The worker's body names a claim of its own: refused (its frame would be too large to relay whole).
  tell(router.ref, { type: 'result', from: WORKER, body: { ...said(offers[1]!), workerClaim: 'AAAA' }, claim: new Uint8Array(4) })
  // So is a delivery whose frame is too large to relay as a claim.
  tell(router.ref, { type: 'result', from: WORKER, body: said(offers[1]!), claim: new Uint8Array(MAX_WORKER_CLAIM_CHARS) })
  await eventually(async () => acks().length === 2, 5000, 'both refused', 10)
  t.match(acks(), [{ attemptId: offers[1]!.attemptId, status: 'rejected', reason: 'malformed_result' }, { status: 'rejected', reason: 'malformed_result' }])
  const frame = new Uint8Array([9, 8, 7, 6])
  tell(router.ref, { type: 'result', from: WORKER, body: said(offers[0]!), claim: frame })
  // A failure goes on without a claim: it strikes nobody, and the router reports lost workers' itself.
  tell(router.ref, { type: 'result', from: WORKER, body: { ...said(offers[1]!), success: false, sha256: null, error: 'move_stalled' }, claim: frame })
  const results = await eventually(async () => { const r = sent.filter(s => s.type === 'task_result'); return r.length === 2 ? r : undefined }, 5000, 'both results relayed', 10)
  t.same(results[0], { to: COORD, type: 'task_result', body: { ...said(offers[0]!), workerClaim: Buffer.from(frame).toString('base64') } })
  t.same(results[1], { to: COORD, type: 'task_result', body: { ...said(offers[1]!), success: false, sha256: null, error: 'move_stalled' } }, 'no claim on a failure')
})

t.test('a worker\'s accept goes to the coordinator that offered the work with the worker\'s signed frame; any other is dropped', async t => {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const sent: Array<{ to: string, type: MessageType, body: any }> = []
  const net: Network = {
    self: ORCH,
    send<T extends MessageType> (to: string, type: T, body: MessageBody<T>): boolean { sent.push({ to, type, body }); return true },
    broadcast: () => 0
  }
  const store = new LevelStore(new MemoryLevel({ valueEncoding: 'json' }) as never)
  const router = startRouter(system, { env: { clock: systemClock, logger: silentLogger() }, self: ORCH, net, store })
  const OTHER_WORKER = 'worker-2'
  tell(router.ref, { type: 'attach', from: WORKER, body: { session: randomUUID(), slots: 1 } })
  tell(router.ref, { type: 'attach', from: OTHER_WORKER, body: { session: randomUUID(), slots: 1 } })
  const transferId = randomUUID()
  const offers: TaskOffer[] = [0, 1].map(i => ({
    taskId: randomUUID(), attemptId: randomUUID(), transferId, chunkIndex: i, length: 10, sha256: 'ab'.repeat(32),
    source: { url: 'http://127.0.0.1:1/d', path: '/d', coordinator: COORD }, target: { method: 'PUT', url: 'http://127.0.0.1:1/p', headers: {}, expiresAt: 1 }, expiresAt: 1, excludeWorkers: []
  }))
  tell(router.ref, { type: 'batch', from: COORD, body: { batchId: randomUUID(), transferId, waveKind: 'initial', offers } })
  const routed = await eventually(async () => { const o = sent.filter(s => s.type === 'task_offer'); return o.length === 2 ? o : undefined }, 5000, 'both offers routed', 10)
  const mine = routed.find(s => s.to === WORKER)!.body.offer as TaskOffer
  const theirs = routed.find(s => s.to === OTHER_WORKER)!.body.offer as TaskOffer
  const word = (o: TaskOffer, worker = WORKER): MessageBody<'task_accepted'> => ({ transferId, attemptId: o.attemptId, taskId: o.taskId, worker, coordinator: COORD })
  const frame = new Uint8Array([1, 2, 3, 4])
  tell(router.ref, { type: 'accepted', from: WORKER, body: word(theirs), word: frame }) // another worker's attempt
  tell(router.ref, { type: 'accepted', from: WORKER, body: word(theirs, OTHER_WORKER), word: frame }) // in another's name
  tell(router.ref, { type: 'accepted', from: WORKER, body: { ...word(mine), coordinator: 'coord-2' }, word: frame }) // for another coordinator
  tell(router.ref, { type: 'accepted', from: WORKER, body: { ...word(mine), taskId: randomUUID() }, word: frame }) // another task
  tell(router.ref, { type: 'accepted', from: WORKER, body: { ...word(mine), workerAccept: 'AAAA' }, word: frame }) // a relayed copy of its own
  tell(router.ref, { type: 'accepted', from: WORKER, body: word(mine), word: new Uint8Array(MAX_WORKER_CLAIM_CHARS) }) // too large to relay whole
  tell(router.ref, { type: 'accepted', from: WORKER, body: word(mine), word: frame })
  const relayed = await eventually(async () => { const r = sent.filter(s => s.type === 'task_accepted'); return r.length >= 1 ? r : undefined }, 5000, 'the accept relayed', 10)
  // The router handles its mailbox in order: everything told before the good one has been handled.
  t.same(relayed, [{ to: COORD, type: 'task_accepted', body: { ...word(mine), workerAccept: Buffer.from(frame).toString('base64') } }], 'only the worker\'s own accept of its own attempt, with its frame')
})
