// The orchestrator's router relays a worker's result to the chunk's coordinator with the worker's own
// signed frame as its claim (docs/security.md#peers): the coordinator and the validator hold a delivery
// against a worker only on that. A result carrying a claim of its own, or too large to relay, is refused.
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { MemoryLevel } from 'memory-level'
import { startSystem, stopActor, tell } from '../../../actors/runtime.ts'
import { LevelStore } from '../../../actors/store.ts'
import { startRouter, ACCEPT_RELAY_MS, ACCEPT_TIMEOUT_MS } from '../../../actors/transfer/router.ts'
import { STRIKE_LIMIT, EXCLUSION_MS } from '../../../actors/transfer/worker-standing.ts'
import { ManualClock } from '../../helpers/clock.ts'
import type { Network } from '../../../actors/ports.ts'
import { MAX_WORKER_CLAIM_CHARS, MAX_WORKER_ACCEPT_CHARS, type MessageBody, type MessageType, type TaskOffer } from '../../../protocol/index.ts'
import { systemClock } from '../../../node/clock.ts'
import { silentLogger } from '../../helpers/logger.ts'
import { eventually } from '../../helpers/proc.ts'

const ORCH = 'orch-1'; const COORD = 'coord-1'; const WORKER = 'worker-1'
const settle = async (): Promise<void> => { for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve)) }

/** A network that records what the router sends. */
function recording (): { sent: Array<{ to: string, type: MessageType, body: any }>, net: Network } {
  const sent: Array<{ to: string, type: MessageType, body: any }> = []
  return { sent, net: { self: ORCH, send<T extends MessageType> (to: string, type: T, body: MessageBody<T>): boolean { sent.push({ to, type, body }); return true }, broadcast: () => 0 } }
}

t.test('a worker\'s result goes to its coordinator with the worker\'s signed frame as its claim', async t => {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const { sent, net } = recording()
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

/** A router on a manual clock with two attached workers, and one batch of `n` offers from COORD routed to them. */
async function routed (t: Test, n: number, slots = 1): Promise<{ clock: ManualClock, sent: Array<{ to: string, type: MessageType, body: any }>, router: ReturnType<typeof startRouter>, offers: TaskOffer[], transferId: string }> {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const { sent, net } = recording()
  const clock = new ManualClock()
  const store = new LevelStore(new MemoryLevel({ valueEncoding: 'json' }) as never)
  const router = startRouter(system, { env: { clock, logger: silentLogger() }, self: ORCH, net, store })
  tell(router.ref, { type: 'attach', from: WORKER, body: { session: randomUUID(), slots } })
  tell(router.ref, { type: 'attach', from: OTHER_WORKER, body: { session: randomUUID(), slots } })
  const transferId = randomUUID()
  const offers: TaskOffer[] = Array.from({ length: n }, (_, i) => ({
    taskId: randomUUID(), attemptId: randomUUID(), transferId, chunkIndex: i, length: 10, sha256: 'ab'.repeat(32),
    source: { url: 'http://127.0.0.1:1/d', path: '/d', coordinator: COORD }, target: { method: 'PUT', url: 'http://127.0.0.1:1/p', headers: {}, expiresAt: 1 }, expiresAt: 1, excludeWorkers: []
  }))
  tell(router.ref, { type: 'batch', from: COORD, body: { batchId: randomUUID(), transferId, waveKind: 'initial', offers } })
  await eventually(async () => sent.filter(s => s.type === 'task_offer').length === n, 5000, 'the offers routed', 10)
  return { clock, sent, router, offers: sent.filter(s => s.type === 'task_offer').map(s => s.body.offer as TaskOffer), transferId }
}
const OTHER_WORKER = 'worker-2'
const offerTo = (sent: Array<{ to: string, type: MessageType, body: any }>, worker: string): TaskOffer => sent.find(s => s.type === 'task_offer' && s.to === worker)!.body.offer as TaskOffer
const word = (o: TaskOffer, worker = WORKER): MessageBody<'task_accepted'> => ({ transferId: o.transferId, attemptId: o.attemptId, taskId: o.taskId, worker, coordinator: COORD })

t.test('a worker\'s accept goes to the coordinator that offered the work with the worker\'s signed frame, once; any other is dropped', async t => {
  const { clock, sent, router, offers } = await routed(t, 4, 2)
  const to = (o: TaskOffer): string => sent.find(s => s.type === 'task_offer' && s.body.offer.attemptId === o.attemptId)!.to
  const [mine1, mine2] = offers.filter(o => to(o) === WORKER)
  const [theirs1, theirs2] = offers.filter(o => to(o) === OTHER_WORKER)
  const frame = new Uint8Array([1, 2, 3, 4])
  tell(router.ref, { type: 'accepted', from: WORKER, body: word(theirs1!), word: frame }) // another worker's attempt: nothing
  tell(router.ref, { type: 'accepted', from: WORKER, body: word(theirs1!, OTHER_WORKER), word: frame }) // in another's name: nothing
  tell(router.ref, { type: 'accepted', from: WORKER, body: word(mine1!), word: frame })
  tell(router.ref, { type: 'accepted', from: WORKER, body: word(mine1!), word: frame }) // again: relayed once
  // Its first answer takes the offer; one naming other terms is not relayed, nor a later right one.
  tell(router.ref, { type: 'accepted', from: WORKER, body: { ...word(mine2!), coordinator: 'coord-2' }, word: frame })
  tell(router.ref, { type: 'accepted', from: WORKER, body: word(mine2!), word: frame })
  tell(router.ref, { type: 'accepted', from: OTHER_WORKER, body: word(theirs1!, OTHER_WORKER) }) // the simulator's: no frame
  // A frame padded past MAX_WORKER_ACCEPT_CHARS of base64 (769 bytes: 1,028 characters) is not relayed; 768 bytes (1,024) is.
  tell(router.ref, { type: 'accepted', from: OTHER_WORKER, body: word(theirs2!, OTHER_WORKER), word: new Uint8Array(769) })
  await settle()
  clock.advance(ACCEPT_RELAY_MS)
  const relayed = await eventually(async () => sent.find(s => s.type === 'task_accepts'), 5000, 'the accepts relayed', 10)
  t.same(sent.filter(s => s.type === 'task_accepts'), [{ to: COORD, type: 'task_accepts', body: { accepts: [{ ...word(mine1!), workerAccept: Buffer.from(frame).toString('base64') }, word(theirs1!, OTHER_WORKER)] } }],
    'only each worker\'s own accept of its own attempt, once, with its frame, in one batch')
  t.ok(relayed)
  t.equal(MAX_WORKER_ACCEPT_CHARS, Buffer.from(new Uint8Array(768)).toString('base64').length, 'the limit is 768 bytes of frame')
})

t.test('offers a coordinator sends for another transfer, in another coordinator\'s name, or for an attempt already routed go to no worker', async t => {
  const { sent, router, offers, transferId } = await routed(t, 1, 4)
  const base = offers[0]!
  const fresh = (over: Partial<TaskOffer> = {}): TaskOffer => ({ ...base, taskId: randomUUID(), attemptId: randomUUID(), ...over })
  const odd = [fresh({ transferId: randomUUID() }), fresh({ source: { ...base.source, coordinator: 'coord-2' } }), { ...base }]
  tell(router.ref, { type: 'batch', from: COORD, body: { batchId: randomUUID(), transferId, waveKind: 'recovery', offers: odd } })
  const assigned = await eventually(async () => sent.filter(s => s.type === 'task_assigned')[1], 5000, 'answered', 10)
  t.same(assigned.body.assignments, odd.map(o => ({ attemptId: o.attemptId, worker: null })), 'none routed')
  t.equal(sent.filter(s => s.type === 'task_offer').length, 1, 'no offer sent on')
})

t.test('a wave of accepts goes in frames of at most 64', async t => {
  const { clock, sent, router, offers } = await routed(t, 130, 100)
  for (const o of offers) tell(router.ref, { type: 'accepted', from: sent.find(s => s.type === 'task_offer' && s.body.offer.attemptId === o.attemptId)!.to, body: word(o, sent.find(s => s.type === 'task_offer' && s.body.offer.attemptId === o.attemptId)!.to) })
  await eventually(async () => { clock.advance(ACCEPT_RELAY_MS); return sent.filter(s => s.type === 'task_accepts').reduce((n, s) => n + s.body.accepts.length, 0) === 130 }, 5000, 'all relayed', 10)
  t.same(sent.filter(s => s.type === 'task_accepts').map(s => s.body.accepts.length), [64, 64, 2], 'full frames as they fill, the rest when the wait ends')
})

/** One more offer of `transferId` from COORD, routed; returns it and who got it. */
async function offerOne (router: ReturnType<typeof startRouter>, sent: Array<{ to: string, type: MessageType, body: any }>, transferId: string, excludeWorkers: string[] = []): Promise<{ offer: TaskOffer, to: string | null }> {
  const offer: TaskOffer = { taskId: randomUUID(), attemptId: randomUUID(), transferId, chunkIndex: 7, length: 10, sha256: 'ab'.repeat(32), source: { url: 'http://127.0.0.1:1/d', path: '/d', coordinator: COORD }, target: { method: 'PUT', url: 'http://127.0.0.1:1/p', headers: {}, expiresAt: 1 }, expiresAt: 1, excludeWorkers }
  const before = sent.filter(s => s.type === 'task_assigned').length
  tell(router.ref, { type: 'batch', from: COORD, body: { batchId: randomUUID(), transferId, waveKind: 'recovery', offers: [offer] } })
  const a = await eventually(async () => sent.filter(s => s.type === 'task_assigned')[before], 5000, 'the batch answered', 10)
  return { offer, to: a.body.assignments[0].worker }
}

t.test('an offer a worker does not take in time goes back to its coordinator and is a strike here; past the limit the worker gets none for a cool-down', async t => {
  const { clock, sent, router, offers, transferId } = await routed(t, 2, 8)
  t.equal(router.workers(), 2, 'two workers to route to')
  const lapsed = offerTo(sent, OTHER_WORKER) // OTHER_WORKER never answers; WORKER takes its offers
  tell(router.ref, { type: 'accepted', from: WORKER, body: word(offerTo(sent, WORKER)) })
  await settle()
  clock.advance(ACCEPT_TIMEOUT_MS - 1)
  await settle()
  t.notOk(sent.some(s => s.type === 'task_result'), 'nothing before the deadline')
  clock.advance(1)
  const back = await eventually(async () => sent.find(s => s.type === 'task_result'), 5000, 'the untaken offer sent back', 10)
  t.same([back.to, back.body.attemptId, back.body.worker, back.body.success, back.body.error], [COORD, lapsed.attemptId, OTHER_WORKER, false, 'worker_lost'], 'failed back to its coordinator, as a lost worker\'s')
  t.same(sent.filter(s => s.type === 'task_cancel').map(s => [s.to, s.body.attemptIds, s.body.reason]), [[OTHER_WORKER, [lapsed.attemptId], 'not_accepted']], 'and dropped at the worker')
  t.equal(offers.length, 2)
  // Taken back by its coordinator before the deadline: still a strike when it falls due, unless the worker took it meanwhile.
  let last = lapsed
  for (let k = 2; k <= STRIKE_LIMIT; k++) {
    const { offer, to } = await offerOne(router, sent, transferId, [WORKER])
    t.equal(to, OTHER_WORKER, `offer ${k} routed to the silent worker`)
    tell(router.ref, { type: 'cancel', from: COORD, body: { transferId, attemptIds: [offer.attemptId], reason: 'superseded' } })
    await settle()
    clock.advance(ACCEPT_TIMEOUT_MS)
    last = offer
  }
  await settle()
  t.equal(sent.filter(s => s.type === 'task_result').length, 1, 'an offer already taken back is not sent back again')
  const { to } = await offerOne(router, sent, transferId, [WORKER])
  t.equal(to, WORKER, `after ${STRIKE_LIMIT} lapses the silent worker gets none, even where the chunk would avoid the other`)
  t.equal(router.workers(), 1, 'and heartbeats count only the worker that can take offers')
  clock.advance(EXCLUSION_MS)
  t.equal(router.workers(), 2, 'both again once the cool-down ends')
  const after = await offerOne(router, sent, transferId, [WORKER])
  t.equal(after.to, OTHER_WORKER, 'after the cool-down it is routed again')
  t.ok(last.attemptId !== lapsed.attemptId)
})

t.test('one strike per sweep, however many offers lapsed; none for an offer taken late, acted on, or waiting unread', async t => {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const { sent, net } = recording()
  const clock = new ManualClock()
  let unread: number | null = null
  const router = startRouter(system, { env: { clock, logger: silentLogger() }, self: ORCH, net, store: new LevelStore(new MemoryLevel({ valueEncoding: 'json' }) as never), unreadSince: () => unread })
  tell(router.ref, { type: 'attach', from: WORKER, body: { session: randomUUID(), slots: 64 } })
  const transferId = randomUUID()
  const many = await Promise.all(Array.from({ length: STRIKE_LIMIT + 2 }, async () => await offerOne(router, sent, transferId)))
  // One taken late (after its coordinator took it back), one acted on (a result) without an accept seen.
  tell(router.ref, { type: 'cancel', from: COORD, body: { transferId, attemptIds: [many[0]!.offer.attemptId], reason: 'superseded' } })
  tell(router.ref, { type: 'accepted', from: WORKER, body: word(many[0]!.offer) })
  tell(router.ref, { type: 'result', from: WORKER, body: { taskId: many[1]!.offer.taskId, attemptId: many[1]!.offer.attemptId, transferId, worker: WORKER, success: false, bytes: 0, durationMs: 1, sha256: null, etag: null, error: 'destination_refused', via: null } })
  await settle()
  // A frame older than the deadline waits unread: nothing is judged until it is read.
  unread = clock.now() + 1
  clock.advance(ACCEPT_TIMEOUT_MS + 50)
  await settle()
  const lapses = (): any[] => sent.filter(s => s.type === 'task_cancel' && s.body.reason === 'not_accepted')
  t.same(lapses(), [], 'nothing judged while an older frame waits unread')
  unread = null
  clock.advance(100)
  await eventually(async () => lapses().length > 0, 5000, 'judged once read', 10)
  const cancelled = lapses().flatMap(s => s.body.attemptIds)
  t.same(cancelled.sort(), many.slice(2).map(m => m.offer.attemptId).sort(), 'the lapsed offers go back; the one taken late and the one acted on do not')
  // STRIKE_LIMIT lapsed in one sweep: one strike, so the worker is still routed.
  const next = await offerOne(router, sent, transferId)
  t.equal(next.to, WORKER, 'one sweep is one strike: not excluded')

  // Offers lapsing a second apart, in their own sweeps, within ACCEPT_TIMEOUT_MS of the strike: no more
  // strikes. One the worker reports moving is taken, whatever became of its accept.
  const spaced: TaskOffer[] = []
  for (let k = 0; k < STRIKE_LIMIT; k++) { spaced.push((await offerOne(router, sent, transferId)).offer); clock.advance(1000) }
  const moving = (await offerOne(router, sent, transferId)).offer
  tell(router.ref, { type: 'progress', from: WORKER, body: { worker: WORKER, moved: 10, attempts: [{ transferId, attemptId: moving.attemptId, bytes: 10 }] } })
  await settle()
  for (let k = 0; k <= STRIKE_LIMIT + 1; k++) { clock.advance(1000 + (k === 0 ? ACCEPT_TIMEOUT_MS - STRIKE_LIMIT * 1000 : 0)); await settle() }
  const back = lapses().flatMap(s => s.body.attemptIds)
  t.ok(spaced.every(o => back.includes(o.attemptId)), 'each spaced offer went back')
  t.notOk(back.includes(moving.attemptId), 'the one it reported moving did not')
  t.equal((await offerOne(router, sent, transferId)).to, WORKER, 'and the worker is still routed: spaced lapses within the strike\'s time are not more strikes')
})
