// The coordinator's pure core on a manual clock: the overseer's 15 s wave timeout and progress rule and
// their edges, terminal transfers leaving memory, and what hydration does with each state a crash can
// leave behind (docs/transfers.md#overseer, #recovery-on-start).
import t from 'tap'
import {
  TransferState, WAVE_TIMEOUT_MS, RESULT_GAP_MS, DISPATCH_DEBOUNCE_MS, CLOSED_MEMORY, OVERSEER_TICK_MS, MAX_WATCHED_STEP_MS, NO_WORKER_WAIT_MS, NO_WORKER_MAX_WAIT_MS, MAX_STALLS_PER_TASK, MAX_ATTEMPTS_PER_TASK,
  OFFER_TTL_MS, OVERDUE_FLOOR_RATE, OVERDUE_SLACK_MS, DESTINATION_FULL_MAX_WAIT_MS,
  type Step, type OfferDraft, type Hydration
} from '../../../actors/transfer/state.ts'
import type { TransferRow, AttemptRow, ChunkRow, InterventionRow } from '../../../actors/transfer/model.ts'
import type { TaskResult } from '../../../protocol/index.ts'
import type { UploadState } from '../../../actors/destination.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { FILE_PIECE_BYTES, STALL_MS } from '../../../node/adapters/file-response.ts'
import { CHUNK, UPLOAD, transferRow, sha, jobs, effects, puts, offersOf, reply, assign } from '../../helpers/transfer-state.ts'

const SELF = 'orch-self'
const OTHER = 'orch-other'
const W1 = 'worker-1'
const W2 = 'worker-2'
const BOTH = [{ hotkey: SELF, workers: 2, score: 1 }, { hotkey: OTHER, workers: 2, score: 1 }]
const ONLY_SELF = [{ hotkey: SELF, workers: 2, score: 1 }]

let seq = 0
const newId = (): string => `id-${++seq}`

/** A transfer created, `chunks` staged, its upload begun and its first wave planned over `candidates`. */
function started (clock: ManualClock, chunks: number, candidates = BOTH, config = {}, upload: UploadState = UPLOAD, attributable = true): { core: TransferState, id: string, wave: Step } {
  const core = new TransferState({ self: SELF, config, newId })
  const id = `t-${++seq}`
  core.create(transferRow(id, chunks), clock.now())
  for (let i = 0; i < chunks; i++) core.chunk({ transferId: id, index: i, sha256: sha(i), md5: 'm', length: CHUNK }, clock.now())
  clock.advance(DISPATCH_DEBOUNCE_MS)
  const d = core.dispatch(id)
  t.equal(jobs(d, 'begin').length, 1, 'the first dispatch begins the upload')
  core.begun(id, 'd1', upload, null, clock.now(), attributable)
  const wave = core.planned(id, candidates, clock.now())
  return { core, id, wave }
}

/**
 * Lets `ms` pass with the overseer ticking on time, as the node's timer does (the stall clocks count only
 * watched time: MAX_WATCHED_STEP_MS); the ticks' steps merged.
 */
function watchFor (core: TransferState, clock: ManualClock, ms: number): Step {
  const out: Step = { ops: [], effects: [] }
  for (let left = ms; left > 0; left -= OVERSEER_TICK_MS) {
    clock.advance(Math.min(OVERSEER_TICK_MS, left))
    const s = core.tick(clock.now())
    out.ops.push(...s.ops); out.effects.push(...s.effects)
  }
  return out
}

/** The worker's report on `o`, relayed by the orchestrator it went to; `validators`: the ones connected. */
function result (core: TransferState, o: OfferDraft & { to: string }, worker: string, now: number, ok = true, opts: { etag?: string, validators?: string[] } = {}): Step {
  return core.result(o.to, { taskId: o.taskId, attemptId: o.attemptId, transferId: o.transferId, worker, success: ok, bytes: o.length, durationMs: 5, sha256: ok ? o.sha256 : null, etag: opts.etag ?? null, error: ok ? null : 'boom', via: 'http' }, now, opts.validators)
}

/** Every offer of a wave accepted by `worker`. */
function acceptAll (core: TransferState, id: string, offers: ReadonlyArray<OfferDraft & { to: string }>, worker: string, now: number): Step {
  return assign(core, SELF, { transferId: id, batchId: 'b', assignments: offers.map(o => ({ attemptId: o.attemptId, worker })) }, now)
}

t.test('wave timeout: an offer nobody routed is reassigned 15 s after dispatch, not before, away from its orchestrator', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 4)
  const offers = offersOf(wave)
  t.equal(offers.length, 4)
  t.same(new Set(offers.map(o => o.to)), new Set([SELF, OTHER]), 'equal scores spread the wave')
  // OTHER routes its offers; SELF's batch was lost.
  const lost = offers.filter(o => o.to === SELF)
  const routed = offers.filter(o => o.to === OTHER)
  assign(core, OTHER, { transferId: id, batchId: 'b', assignments: routed.map(o => ({ attemptId: o.attemptId, worker: W1 })) }, clock.now())
  for (const o of routed) result(core, o, W1, clock.now() + 1) // results keep W1 fresh
  clock.advance(WAVE_TIMEOUT_MS - 1)
  let tick = core.tick(clock.now())
  t.same(tick.ops, [], '1 ms before the timeout nothing moves')
  clock.advance(1)
  tick = core.tick(clock.now())
  const superseded = puts(tick, 'task_attempts') as AttemptRow[]
  t.same(superseded.map(a => [a.state, a.failure_reason]), lost.map(() => ['superseded', 'wave_timeout']))
  t.same(effects(tick, 'send').map(s => [s.to, s.type]), [[SELF, 'task_cancel']], 'the stalled orchestrator is told to drop them')
  t.equal(effects(tick, 'candidates').length, 1, 'recovery is planned at once')
  const recovery = core.planned(id, BOTH, clock.now())
  const again = offersOf(recovery)
  t.same(again.map(o => o.to), lost.map(() => OTHER), 'recovery avoids the orchestrator whose wave stalled')
  const iv = puts(recovery, 'overseer_interventions') as InterventionRow[]
  t.match(iv, lost.map(o => ({ reason: 'wave_timeout', outcome: 'stall_redistributed', previous_attempt_id: o.attemptId, replacement_orchestrator_id: OTHER })))
  t.ok(jobs(recovery, 'offers').every(j => j.type === 'offers' && j.waveKind === 'recovery'))
})

t.test('wave timeout with no other orchestrator: reassigned to the same one', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 2, ONLY_SELF)
  clock.advance(WAVE_TIMEOUT_MS)
  core.tick(clock.now())
  const again = offersOf(core.planned(id, ONLY_SELF, clock.now()))
  t.same(again.map(o => o.to), offersOf(wave).map(() => SELF))
})

t.test('result gap: accepted work with no progress and no result for the stall window is reassigned; an accepted offer never hits the wave timeout', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 2, ONLY_SELF)
  const offers = offersOf(wave)
  clock.advance(WAVE_TIMEOUT_MS - 300) // routed late, but routed
  assign(core, SELF, { transferId: id, batchId: 'b', assignments: offers.map(o => ({ attemptId: o.attemptId, worker: W1 })) }, clock.now())
  for (const o of offers) core.accepted(SELF, { transferId: id, attemptId: o.attemptId, taskId: o.taskId, worker: W1, coordinator: SELF }) // the worker's own word
  clock.advance(500) // past the wave timeout since dispatch
  t.same(core.tick(clock.now()).ops, [], 'accepted work is not subject to the wave timeout')
  const gap = core.resultGapFor(CHUNK, 0)
  t.equal(gap, RESULT_GAP_MS, 'no delivery measured yet: the floor')
  clock.advance(gap - 500 - 1)
  t.same(core.tick(clock.now()).ops, [], '1 ms before the window nothing moves')
  clock.advance(1)
  const tick = core.tick(clock.now())
  t.same((puts(tick, 'task_attempts') as AttemptRow[]).map(a => [a.state, a.failure_reason, a.worker_id]), offers.map(() => ['superseded', 'result_gap', W1]))
  const recovery = core.planned(id, ONLY_SELF, clock.now())
  t.same(offersOf(recovery).map(o => o.excludeWorkers), offers.map(() => [W1]), 'the quiet worker is avoided for those chunks')
})

/** A transfer of `chunks` chunks of `length` bytes, planned over this orchestrator alone and given to W1. */
function heldBy (clock: ManualClock, core: TransferState, chunks: number, length: number): { id: string, offers: Array<OfferDraft & { to: string }> } {
  const id = `t-${++seq}`
  core.create(transferRow(id, chunks, { chunk_size: length, total_size: chunks * length }), clock.now())
  for (let i = 0; i < chunks; i++) core.chunk({ transferId: id, index: i, sha256: sha(i), md5: 'm', length }, clock.now())
  core.dispatch(id)
  core.begun(id, 'd1', UPLOAD, null, clock.now(), true)
  const offers = offersOf(core.planned(id, ONLY_SELF, clock.now()))
  assign(core, SELF, { transferId: id, batchId: 'b', assignments: offers.map(o => ({ attemptId: o.attemptId, worker: W1 })) }, clock.now())
  return { id, offers }
}

t.test('judged by progress, not by a rate: a slow, steady worker keeps its work for as long as its bytes move', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId })
  const MiB = 1024 * 1024
  const { id, offers } = heldBy(clock, core, 2, 16 * MiB)
  // 100 s at 0.16 MiB/s per chunk (a 2.5 Mbit/s share of a link): far below any fixed minimum rate.
  for (let s = 1; s <= 100; s++) {
    clock.advance(1000)
    const bytes = Math.floor(16 * MiB * s / 101)
    core.progress(SELF, { worker: W1, moved: 2 * bytes, attempts: offers.map(o => ({ transferId: id, attemptId: o.attemptId, bytes })) }, clock.now())
    const moved = puts(core.tick(clock.now()), 'task_attempts')
    if (moved.length > 0) { t.fail(`reassigned at ${s} s: ${JSON.stringify(moved)}`); return }
  }
  t.pass('100 s of steady progress: nothing reassigned')
  // Progress stops: the window runs from the last report that moved the bytes on.
  t.same(watchFor(core, clock, RESULT_GAP_MS - 1).ops, [], 'within the window after the last progress')
  clock.advance(1)
  t.same((puts(core.tick(clock.now()), 'task_attempts') as AttemptRow[]).map(a => a.failure_reason), ['result_gap', 'result_gap'], 'progress stopped: the work moves')
})

t.test('progress counts only from the worker holding the attempt, through its orchestrator, and only when the bytes move on', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId })
  const MiB = 1024 * 1024
  const { id, offers } = heldBy(clock, core, 1, 16 * MiB)
  const o = offers[0]!
  const report = (from: string, worker: string, bytes: number): void => { core.progress(from, { worker, moved: 0, attempts: [{ transferId: id, attemptId: o.attemptId, bytes }] }, clock.now()) }
  clock.advance(1500)
  report(OTHER, W1, 4 * MiB) // another orchestrator speaking for W1
  report(SELF, W2, 4 * MiB) // another worker
  report(SELF, W1, 32 * 1024) // under MIN_PROGRESS_BYTES
  clock.advance(500)
  t.match(puts(core.tick(clock.now()), 'task_attempts'), [{ id: o.attemptId, failure_reason: 'result_gap' }], 'none of those restarted the window')
})

t.test('a worker busy with other coordinators\' chunks keeps this one\'s queued work while its session total moves on', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId })
  const MiB = 1024 * 1024
  const { offers } = heldBy(clock, core, 2, 16 * MiB)
  // Its link carries another coordinator's chunks: none of ours move, but its total does.
  let moved = 10 * MiB
  core.progress(SELF, { worker: W1, moved, attempts: [] }, clock.now())
  for (let s = 1; s <= 30; s++) {
    clock.advance(1000)
    moved += MiB
    core.progress(SELF, { worker: W1, moved, attempts: [] }, clock.now())
    if (puts(core.tick(clock.now()), 'task_attempts').length > 0) { t.fail(`our queued chunks were taken back at ${s} s`); return }
  }
  t.pass('30 s queued behind other work: kept')
  // A total that does not move on (or restarts lower, a new session) is no progress.
  clock.advance(OVERSEER_TICK_MS)
  core.progress(SELF, { worker: W1, moved: 0, attempts: [] }, clock.now())
  t.same((puts(watchFor(core, clock, RESULT_GAP_MS), 'task_attempts') as AttemptRow[]).map(a => a.id).sort(), offers.map(o => o.attemptId).sort(), 'its total stopped: our chunks move')
})

t.test('progress that never delivers: work kept on reported progress is taken back once its offer expired and the chunk\'s time at the floor rate passed, with no strike, away from its orchestrator', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId })
  const MiB = 1024 * 1024
  const { id, offers } = heldBy(clock, core, 1, 16 * MiB)
  const o = offers[0]!
  core.read(id, o.attemptId) // its chunk was read from the data endpoint: a move may have begun
  const due = core.overdueAt(clock.now(), 16 * MiB)
  t.equal(due - clock.now(), OFFER_TTL_MS + 2 * 16 * MiB * 1000 / OVERDUE_FLOOR_RATE + OVERDUE_SLACK_MS, 'its offer\'s 10 minutes, then 16 MiB twice at the floor rate (34 minutes) and a minute for the destination\'s answer')
  t.ok(OVERDUE_FLOOR_RATE <= FILE_PIECE_BYTES * 1000 / STALL_MS, 'the floor is below the slowest pull the data endpoint keeps up')
  // Its orchestrator relays a report a second: the session total always on, the chunk's own bytes
  // creeping to one short of the whole: progress by every measure, and nothing delivered.
  let moved = 0
  let bytes = 0
  const report = (): void => {
    moved += MiB
    bytes = Math.min(16 * MiB - 1, bytes + 64 * 1024)
    core.progress(SELF, { worker: W1, moved, attempts: [{ transferId: id, attemptId: o.attemptId, bytes }] }, clock.now())
  }
  while (clock.now() + 1000 < due) {
    clock.advance(1000)
    report()
    if (puts(core.tick(clock.now()), 'task_attempts').length > 0) { t.fail(`taken back at ${clock.now()} ms, before it was overdue`); return }
  }
  t.pass('kept until it is overdue')
  clock.advance(due - clock.now())
  report()
  t.same(puts(core.tick(clock.now(), clock.now() - 500), 'task_attempts'), [], 'not while a frame from before the deadline waits unread (it may be the result)')
  clock.advance(OVERSEER_TICK_MS)
  report()
  const s = core.tick(clock.now())
  t.match(puts(s, 'task_attempts'), [{ id: o.attemptId, state: 'superseded', failure_reason: 'overdue' }], 'then taken back')
  t.equal(effects(s, 'log').filter(e => (e.obj as { event?: string }).event === 'attempt_overdue').length, 1, 'with a warning')
  t.equal(core.standingOf(W1), undefined, 'no strike: reported bytes are no proof of anything, either way')
  const again = core.planned(id, BOTH, clock.now())
  t.same(offersOf(again).map(x => x.to), [OTHER], 'the chunk goes to another orchestrator')
  t.match(puts(again, 'overseer_interventions'), [{ reason: 'overdue', previous_attempt_id: o.attemptId }], 'an intervention row says why')
})

t.test('work whose chunk was never read by its offer\'s expiry cannot move: overdue a minute after it, whatever progress is reported (not in the simulator, where reads are not reported)', async t => {
  const MiB = 1024 * 1024
  /** Holds two chunks at W1, reads one, relays rising totals every second until `until`; what was taken back. */
  const run = (config: { readsReported?: boolean }, until: (start: number) => number): { unread: string, read: string, takenBack: AttemptRow[], at: number } => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId, config })
    const start = clock.now()
    const { id, offers } = heldBy(clock, core, 2, 16 * MiB)
    core.read(id, offers[1]!.attemptId)
    let moved = 0
    core.progress(SELF, { worker: W1, moved, attempts: [] }, clock.now()) // its first total: what later ones are measured against
    while (clock.now() < until(start)) {
      clock.advance(Math.min(1000, until(start) - clock.now()))
      moved += MiB
      core.progress(SELF, { worker: W1, moved, attempts: [] }, clock.now())
      const back = puts(core.tick(clock.now()), 'task_attempts') as AttemptRow[]
      if (back.length > 0) return { unread: offers[0]!.attemptId, read: offers[1]!.attemptId, takenBack: back, at: clock.now() - start }
    }
    return { unread: offers[0]!.attemptId, read: offers[1]!.attemptId, takenBack: [], at: clock.now() - start }
  }
  const node = run({}, start => start + OFFER_TTL_MS + OVERDUE_SLACK_MS + 5000)
  t.equal(node.at, OFFER_TTL_MS + OVERDUE_SLACK_MS, 'taken back a minute after the offer expired')
  t.same(node.takenBack.map(a => [a.id, a.failure_reason]), [[node.unread, 'overdue']], 'the chunk never read; the one read keeps its longer bound')
  const sim = run({ readsReported: false }, start => start + OFFER_TTL_MS + OVERDUE_SLACK_MS + 5000)
  t.same(sim.takenBack, [], 'where reads are not reported, neither is taken back then')
})

t.test('a read being served counts as read while it lasts (a streamed move reads to its last byte only as it ends); a read cut short does not', async t => {
  const MiB = 1024 * 1024
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId })
  const start = clock.now()
  const { id, offers } = heldBy(clock, core, 3, 16 * MiB)
  const [live, cut, whole] = offers.map(o => o.attemptId) as [string, string, string]
  core.read(id, live, 'start')
  core.read(id, cut, 'start'); core.read(id, cut, 'cut')
  core.read(id, whole, 'start'); core.read(id, whole, 'done')
  let moved = 0
  core.progress(SELF, { worker: W1, moved, attempts: [] }, clock.now())
  let back: AttemptRow[] = []
  while (back.length === 0 && clock.now() < start + OFFER_TTL_MS + OVERDUE_SLACK_MS + 5000) {
    clock.advance(1000)
    moved += MiB
    core.progress(SELF, { worker: W1, moved, attempts: [] }, clock.now())
    back = puts(core.tick(clock.now()), 'task_attempts') as AttemptRow[]
  }
  t.equal(clock.now() - start, OFFER_TTL_MS + OVERDUE_SLACK_MS, 'one is taken back a minute after the offer expired')
  t.same(back.map(a => [a.id, a.failure_reason]), [[cut, 'overdue']], 'the read cut short; the one being read and the one read whole keep the longer bound')
  core.read(id, live, 'cut')
  clock.advance(OVERSEER_TICK_MS)
  moved += MiB
  core.progress(SELF, { worker: W1, moved, attempts: [] }, clock.now())
  t.same((puts(core.tick(clock.now()), 'task_attempts') as AttemptRow[]).map(a => [a.id, a.failure_reason]), [[live, 'overdue']], 'once its read is cut, the live one is past its bound too')
})

t.test('the overseer counts only time it watched: a late tick adds at most MAX_WATCHED_STEP_MS to the stall clocks', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId })
  const { offers } = heldBy(clock, core, 1, 1024 * 1024)
  core.tick(clock.now())
  const before = core.watched(clock.now())
  // The orchestrator's process was starved for 10 s: reports may be waiting unread, so nothing moves.
  clock.advance(10_000)
  t.same(core.tick(clock.now()).ops, [], 'a late tick takes nothing back')
  t.equal(core.watched(clock.now()) - before, MAX_WATCHED_STEP_MS, `the 10 s counted as ${MAX_WATCHED_STEP_MS} ms`)
  // Watched on time from here, the worker still silent: its work moves once the window is full.
  const moved = puts(watchFor(core, clock, RESULT_GAP_MS), 'task_attempts') as AttemptRow[]
  t.same(moved.map(a => [a.id, a.failure_reason]), [[offers[0]!.attemptId, 'result_gap']])
})

t.test('the stall window follows the measured rate: twice a chunk\'s time at the median of recent deliveries', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId })
  const MiB = 1024 * 1024
  const { id, offers } = heldBy(clock, core, 3, 8 * MiB)
  // Three deliveries at 4, 2 and 1 MiB/s (acceptance to result): the median is 2 MiB/s.
  clock.advance(2000); result(core, offers[2]!, W1, clock.now()) // 8 MiB in 2 s: 4 MiB/s
  clock.advance(2000); result(core, offers[1]!, W1, clock.now()) // in 4 s: 2 MiB/s
  clock.advance(4000); result(core, offers[0]!, W1, clock.now()) // in 8 s: 1 MiB/s
  t.equal(core.measuredRate(), 2 * MiB, 'the median of the three')
  t.equal(core.resultGapFor(8 * MiB, 0), 8000, 'twice 8 MiB at 2 MiB/s')
  t.equal(core.resultGapFor(1 * MiB, 0), RESULT_GAP_MS, 'a small chunk: the floor')
  t.equal(core.get(id)?.row.chunks_delivered, 0, 'the deliveries are being checked')
})

t.test('result gap is per worker: a result for any transfer keeps a worker\'s queued work', async t => {
  const clock = new ManualClock()
  const a = started(clock, 1, ONLY_SELF)
  const core = a.core
  const id2 = 't-second'
  core.create(transferRow(id2, 3), clock.now())
  for (let i = 0; i < 3; i++) core.chunk({ transferId: id2, index: i, sha256: sha(i + 10), md5: 'm', length: CHUNK }, clock.now())
  core.dispatch(id2)
  core.begun(id2, 'd1', UPLOAD, null, clock.now(), true)
  const second = offersOf(core.planned(id2, ONLY_SELF, clock.now()))
  const first = offersOf(a.wave)
  assign(core, SELF, { transferId: a.id, batchId: 'b', assignments: first.map(o => ({ attemptId: o.attemptId, worker: W1 })) }, clock.now())
  assign(core, SELF, { transferId: id2, batchId: 'b', assignments: second.map(o => ({ attemptId: o.attemptId, worker: W1 })) }, clock.now())
  // W1 works through its queue: one result every 4 s (under the gap), across both transfers.
  for (const o of [first[0]!, second[0]!, second[1]!]) {
    clock.advance(4_000)
    result(core, o, W1, clock.now())
    t.same((puts(core.tick(clock.now()), 'task_attempts') as AttemptRow[]).filter(x => x.state === 'superseded'), [], `no gap at ${clock.now()}`)
  }
  const tick = watchFor(core, clock, core.resultGapFor(CHUNK, 0))
  t.same((puts(tick, 'task_attempts') as AttemptRow[]).map(x => x.chunk_index), [2], 'only the work still held after a real gap moves')
})

t.test('the stall window doubles once the same chunk has stalled', async t => {
  const core = new TransferState({ self: SELF })
  const MiB = 1024 * 1024
  t.equal(core.resultGapFor(16 * MiB, 0), RESULT_GAP_MS, 'no rate measured: the floor, whatever the chunk')
  t.equal(core.resultGapFor(16 * MiB, 1), 2 * RESULT_GAP_MS)
  t.equal(core.resultGapFor(16 * MiB, 5), 2 * RESULT_GAP_MS, 'doubled once, not more: a dead network still fails the transfer in minutes')
  t.equal(new TransferState({ self: SELF, config: { resultGapMs: 100 } }).resultGapFor(1000, 0), 100, 'the floor is a setting')

  // On the clock: a chunk that stalled once is given twice as long the next time.
  const clock = new ManualClock()
  const s = started(clock, 1, ONLY_SELF)
  const accept = (o: OfferDraft): void => { assign(s.core, SELF, { transferId: s.id, batchId: 'b', assignments: [{ attemptId: o.attemptId, worker: W1 }] }, clock.now()) }
  accept(offersOf(s.wave)[0]!)
  t.equal(puts(watchFor(s.core, clock, s.core.resultGapFor(CHUNK, 0)), 'task_attempts').length, 1, 'first stall at one gap')
  const second = offersOf(s.core.planned(s.id, ONLY_SELF, clock.now()))[0]!
  accept(second)
  t.same(watchFor(s.core, clock, s.core.resultGapFor(CHUNK, 0)).ops, [], 'one gap is not enough the second time')
  t.match(puts(watchFor(s.core, clock, s.core.resultGapFor(CHUNK, 1) - s.core.resultGapFor(CHUNK, 0)), 'task_attempts'), [{ id: second.attemptId, failure_reason: 'result_gap' }], 'two gaps are')
})

t.test('a validator silent past its timeout is replaced by the coordinator\'s own check', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 1, ONLY_SELF)
  const [o] = offersOf(wave)
  assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: o!.attemptId, worker: W1 }] }, clock.now())
  const r = core.result(SELF, { taskId: o!.taskId, attemptId: o!.attemptId, transferId: id, worker: W1, success: true, bytes: CHUNK, durationMs: 5, sha256: o!.sha256, etag: null, error: null, via: 'http' }, clock.now(), ['validator-1'])
  t.match(jobs(r, 'verify'), [{ validator: 'validator-1', request: { attemptId: o!.attemptId } }])
  const timeout = core.verifyTimeoutFor(CHUNK)
  t.equal(timeout, 15_001)
  clock.advance(timeout - 1)
  t.same(jobs(core.tick(clock.now())), [], 'still waiting 1 ms before')
  clock.advance(1)
  t.match(jobs(core.tick(clock.now())), [{ type: 'check', attemptId: o!.attemptId }])
  t.same(core.verdict('validator-1', { transferId: id, attemptId: o!.attemptId, chunkIndex: 0, verdict: 'verified', sha256: o!.sha256, detail: null }, clock.now()).ops, [], 'a verdict after the timeout is ignored')
  t.match(puts(core.checked(id, o!.attemptId, true, null, clock.now()), 'chunks'), [{ state: 'delivered' }], 'the coordinator\'s own check settles it, unverified')
})

t.test('a result arriving before the tick wins the race: no intervention', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 1, ONLY_SELF)
  const [o] = offersOf(wave)
  assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: o!.attemptId, worker: W1 }] }, clock.now())
  clock.advance(RESULT_GAP_MS)
  result(core, o!, W1, clock.now())
  t.same(core.tick(clock.now()).ops, [], 'the attempt is being checked, not reassigned')
})

t.test('stall limit: a chunk reassigned maxStallsPerTask times fails the transfer, which leaves memory', async t => {
  const clock = new ManualClock()
  const { core, id } = started(clock, 1, ONLY_SELF, { maxStallsPerTask: 2 })
  clock.advance(WAVE_TIMEOUT_MS)
  core.tick(clock.now())
  core.planned(id, ONLY_SELF, clock.now())
  clock.advance(WAVE_TIMEOUT_MS)
  const tick = core.tick(clock.now())
  t.match(puts(tick, 'transfers').at(-1), { status: 'failed', error_code: 'delivery_failed', cleanup_pending: true })
  t.match(jobs(tick, 'cleanup'), [{ transferId: id, abort: UPLOAD, chunks: [{ index: 0, sha256: sha(0) }] }], 'the upload is aborted and staging freed')
  t.equal(core.size, 0, 'a terminal transfer leaves memory')
  t.equal(core.closedStatus(id), 'failed')
  clock.advance(WAVE_TIMEOUT_MS * 3)
  t.same(core.tick(clock.now()).ops, [], 'the overseer no longer sees it')
})

t.test('no worker available: the chunk waits, longer each time, spends no attempt, and is delivered once a worker is there', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 1, ONLY_SELF, { maxAttemptsPerTask: 2, maxStallsPerTask: 2 })
  let offer = offersOf(wave)[0]!
  // Far more answers of `no_worker` than either limit: the transfer waits, it does not fail.
  const waits: number[] = []
  for (let round = 0; round < 10; round++) {
    const none = assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: offer.attemptId, worker: null }] }, clock.now())
    t.same(effects(none, 'candidates'), [], 'no plan is asked for at once: no loop between coordinator and router')
    t.same(puts(none, 'transfers'), [], 'the transfer does not fail')
    const expected = Math.min(NO_WORKER_MAX_WAIT_MS, NO_WORKER_WAIT_MS * 2 ** round)
    t.same(effects(watchFor(core, clock, expected - OVERSEER_TICK_MS), 'candidates'), [], `round ${round}: nothing asked before ${expected} ms`)
    t.equal(effects(watchFor(core, clock, OVERSEER_TICK_MS), 'candidates').length, 1, `round ${round}: asked again at ${expected} ms`)
    waits.push(expected)
    offer = offersOf(core.planned(id, ONLY_SELF, clock.now()))[0]!
    t.ok(offer !== undefined, 'the chunk is offered again')
  }
  t.same(waits, [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000], 'doubling from 0.5 s, at most 30 s')
  t.equal(core.closedStatus(id), undefined, 'still open after 10 rounds with limits of 2')
  assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: offer.attemptId, worker: W1 }] }, clock.now())
  result(core, offer, W1, clock.now())
  core.checked(id, offer.attemptId, true, null, clock.now())
  core.finalize(id, clock.now())
  t.match(puts(core.completedUpload({ transferId: id, ok: true, retry: false, redeliver: [], error: null }, clock.now()), 'transfers'), [{ status: 'completed' }])
})

t.test('a destination out of room: the chunk waits for room, longer each time, spends no attempt, and is delivered once there is room; ten minutes of no room fail the transfer', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 1, ONLY_SELF, { maxAttemptsPerTask: 2 })
  let offer = offersOf(wave)[0]!
  const full = (o: OfferDraft & { to: string }): Step => {
    assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: o.attemptId, worker: W1 }] }, clock.now())
    core.sinkFull(UPLOAD.uploadId, o.chunkIndex, o.attemptNo) // this node's own sink answered it 507
    return core.result(SELF, { taskId: o.taskId, attemptId: o.attemptId, transferId: id, worker: W1, success: false, bytes: 0, durationMs: 5, sha256: null, etag: null, error: 'destination_full', via: 'http' }, clock.now())
  }
  const waits: number[] = []
  for (let round = 0; round < 6; round++) {
    const s = full(offer)
    t.match(puts(s, 'task_attempts'), [{ id: offer.attemptId, state: 'failed', failure_reason: 'destination_full' }], `round ${round}: the attempt ends`)
    t.same(effects(s, 'candidates'), [], 'no plan at once')
    t.same(puts(s, 'transfers').filter((r: any) => r.status === 'failed'), [], 'the transfer does not fail')
    t.same(offersOf(core.planned(id, ONLY_SELF, clock.now())), [], 'a plan asked for meanwhile (another chunk, another orchestrator) does not offer it early')
    const expected = Math.min(NO_WORKER_MAX_WAIT_MS, NO_WORKER_WAIT_MS * 2 ** round)
    t.same(effects(watchFor(core, clock, expected - OVERSEER_TICK_MS), 'candidates'), [], `round ${round}: nothing asked before ${expected} ms`)
    t.equal(effects(watchFor(core, clock, OVERSEER_TICK_MS), 'candidates').length, 1, `round ${round}: asked again at ${expected} ms`)
    waits.push(expected)
    const again = core.planned(id, ONLY_SELF, clock.now())
    if (round === 0) t.match(puts(again, 'overseer_interventions'), [{ reason: 'destination_full', outcome: 'failure_redelivered' }], 'an intervention row says why')
    offer = offersOf(again)[0]!
    if (round === 0) t.same(offer.excludeWorkers, [W1], 'the offer avoids the worker that said so (a worker lying about room does not get the chunk back while another can take it)')
  }
  t.same(waits, [500, 1000, 2000, 4000, 8000, 16_000], 'the no_worker waits')
  t.equal(core.closedStatus(id), undefined, 'six answers with an attempt limit of 2: still open')
  // Room again: delivered, and the wait is over.
  assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: offer.attemptId, worker: W1 }] }, clock.now())
  result(core, offer, W1, clock.now())
  core.checked(id, offer.attemptId, true, null, clock.now())
  core.finalize(id, clock.now())
  t.match(puts(core.completedUpload({ transferId: id, ok: true, retry: false, redeliver: [], error: null }, clock.now()), 'transfers'), [{ status: 'completed' }])

  // A destination that stays full: the transfer fails once it has had no room for DESTINATION_FULL_MAX_WAIT_MS.
  const other = started(clock, 1, ONLY_SELF)
  let o = offersOf(other.wave)[0]!
  const since = clock.now()
  let failed: unknown[] = []
  for (let round = 0; round < 100 && failed.length === 0; round++) {
    assign(other.core, SELF, { transferId: other.id, batchId: 'b', assignments: [{ attemptId: o.attemptId, worker: W1 }] }, clock.now())
    other.core.sinkFull(UPLOAD.uploadId, o.chunkIndex, o.attemptNo)
    const s = other.core.result(SELF, { taskId: o.taskId, attemptId: o.attemptId, transferId: other.id, worker: W1, success: false, bytes: 0, durationMs: 5, sha256: null, etag: null, error: 'destination_full', via: 'http' }, clock.now())
    failed = puts(s, 'transfers').filter((r: any) => r.status === 'failed')
    if (failed.length > 0) break
    watchFor(other.core, clock, NO_WORKER_MAX_WAIT_MS)
    o = offersOf(other.core.planned(other.id, ONLY_SELF, clock.now()))[0]!
  }
  t.match(failed, [{ status: 'failed', error_code: 'destination_unavailable', error_message: /no room/ }], 'failed, saying why')
  t.ok(clock.now() - since >= DESTINATION_FULL_MAX_WAIT_MS && clock.now() - since < DESTINATION_FULL_MAX_WAIT_MS + NO_WORKER_MAX_WAIT_MS + 1000, `after ${clock.now() - since} ms of no room`)
})

t.test('at this node\'s own sink a destination_full the sink never answered is a failed attempt; elsewhere, or unknowable, it stays a wait', async t => {
  const clock = new ManualClock()
  const fullResult = (core: TransferState, id: string, o: OfferDraft): Step => {
    assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: o.attemptId, worker: W1 }] }, clock.now())
    return core.result(SELF, { taskId: o.taskId, attemptId: o.attemptId, transferId: id, worker: W1, success: false, bytes: 0, durationMs: 5, sha256: null, etag: null, error: 'destination_full', via: 'http' }, clock.now())
  }
  {
    const { core, id, wave } = started(clock, 1, ONLY_SELF, { maxAttemptsPerTask: 2 })
    const first = offersOf(wave)[0]!
    // The sink refused another attempt number, and another upload's chunk: neither is this attempt's.
    core.sinkFull(UPLOAD.uploadId, first.chunkIndex, first.attemptNo + 1)
    core.sinkFull('u-other', first.chunkIndex, first.attemptNo)
    const s = fullResult(core, id, first)
    t.match(puts(s, 'task_attempts'), [{ id: first.attemptId, state: 'failed', failure_reason: 'destination_full_unconfirmed' }], 'the attempt fails, saying the claim was not confirmed')
    t.match(s.effects.filter(e => e.kind === 'log'), [{ level: 'warn', obj: { event: 'destination_full_unconfirmed', worker: W1, attemptId: first.attemptId } }], 'and warns, naming the worker')
    t.equal(effects(s, 'candidates').length, 1, 'replanned at once, as a failure is: no wait')
    const again = offersOf(core.planned(id, ONLY_SELF, clock.now()))[0]!
    t.same(again.excludeWorkers, [W1], 'the chunk avoids that worker')
    t.match(puts(fullResult(core, id, again), 'transfers').at(-1), { status: 'failed', error_code: 'delivery_failed' }, 'two such claims reach the attempt limit of 2')
  }
  {
    // Confirmed by the sink: a wait, no attempt spent.
    const { core, id, wave } = started(clock, 1, ONLY_SELF, { maxAttemptsPerTask: 1 })
    const o = offersOf(wave)[0]!
    core.sinkFull(UPLOAD.uploadId, o.chunkIndex, o.attemptNo)
    const s = fullResult(core, id, o)
    t.match(puts(s, 'task_attempts'), [{ state: 'failed', failure_reason: 'destination_full' }])
    t.same(puts(s, 'transfers').filter((r: any) => r.status === 'failed'), [], 'a confirmed refusal spends no attempt (limit 1)')
  }
  {
    // Attempt numbers are counted per chunk: the sink's refusal of chunk 1's first attempt confirms nothing of chunk 0's.
    const { core, id, wave } = started(clock, 2, ONLY_SELF, { maxAttemptsPerTask: 1 })
    const [c0, c1] = [offersOf(wave).find(o => o.chunkIndex === 0)!, offersOf(wave).find(o => o.chunkIndex === 1)!]
    t.equal(c0.attemptNo, c1.attemptNo, 'both chunks\' first attempts have the same number')
    core.sinkFull(UPLOAD.uploadId, 1, c1.attemptNo)
    t.match(puts(fullResult(core, id, c0), 'task_attempts'), [{ id: c0.attemptId, failure_reason: 'destination_full_unconfirmed' }], 'chunk 0: unconfirmed')
  }
  for (const [what, attributable, config] of [['a destination that is not this node\'s own sink', false, {}], ['a coordinator whose sink reports no refusals', true, { sinkRefusalsReported: false }]] as const) {
    const { core, id, wave } = started(clock, 1, ONLY_SELF, { maxAttemptsPerTask: 1, ...config }, UPLOAD, attributable)
    const s = fullResult(core, id, offersOf(wave)[0]!)
    t.match(puts(s, 'task_attempts'), [{ state: 'failed', failure_reason: 'destination_full' }], `${what}: the worker's word stands`)
    t.same(puts(s, 'transfers').filter((r: any) => r.status === 'failed'), [], `${what}: no attempt spent`)
  }
})

t.test('a worker\'s failed result naming no_worker is a failed attempt like any other', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 1, ONLY_SELF, { maxAttemptsPerTask: 2 })
  let offer = offersOf(wave)[0]!
  for (let n = 0; n < 2; n++) {
    assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: offer.attemptId, worker: W1 }] }, clock.now())
    const r = core.result(SELF, { taskId: offer.taskId, attemptId: offer.attemptId, transferId: id, worker: W1, success: false, bytes: 0, durationMs: 5, sha256: null, etag: null, error: 'no_worker', via: null }, clock.now())
    if (n === 0) {
      t.equal(effects(r, 'candidates').length, 1, 'replanned at once, as a failure is')
      offer = offersOf(core.planned(id, ONLY_SELF, clock.now()))[0]!
    } else t.match(puts(r, 'transfers').at(-1), { status: 'failed', error_code: 'delivery_failed' }, 'the second one reaches the limit of 2')
  }
})

t.test('a clean transfer: delivered, finalized, completed, gone from memory; late reports are answered', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 3, ONLY_SELF)
  const offers = offersOf(wave)
  assign(core, SELF, { transferId: id, batchId: 'b', assignments: offers.map(o => ({ attemptId: o.attemptId, worker: W1 })) }, clock.now())
  for (const o of offers) {
    const r = result(core, o, W1, clock.now())
    t.equal(jobs(r, 'check').length, 1, 'each reported delivery is checked at the destination')
    t.same(jobs(core.checked(id, o.attemptId, true, null, clock.now()), 'complete'), [], 'nothing completes before finalize')
  }
  const fin = core.finalize(id, clock.now())
  t.match(fin.reply, { ok: true })
  t.match(jobs(fin, 'complete'), [{ transferId: id, parts: [{ index: 0 }, { index: 1 }, { index: 2 }] }])
  t.same(effects(fin, 'fault').map(f => f.point), ['after_finalize'])
  const done = core.completedUpload({ transferId: id, ok: true, retry: false, redeliver: [], error: null }, clock.now())
  t.match(puts(done, 'transfers'), [{ status: 'completed', cleanup_pending: true }])
  t.match(jobs(done, 'cleanup'), [{ abort: null }], 'staging freed, the completed object kept')
  t.equal(core.size, 0)
  const late = result(core, offers[0]!, W1, clock.now())
  t.match(effects(late, 'send'), [{ type: 'task_result_ack', body: { status: 'late_superseded', reason: 'transfer_completed' } }])
  t.match(core.finalize(id, clock.now(), { ...transferRow(id, 3), coordinator_id: SELF, status: 'completed' }).reply, { ok: true }, 'finalize of a completed transfer answers 200')
  t.match(core.chunk({ transferId: id, index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now()).reply, { ok: false, code: 'BWN_ERR_TRANSFER_CLOSED' })
  t.match(core.chunk({ transferId: 'nope', index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now()).reply, { ok: false, status: 404 })
})

t.test('cancel waits for the destination abort; a second cancel shares it; the transfer leaves memory', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 2, ONLY_SELF)
  const r1 = reply()
  const r2 = reply()
  const c1 = core.cancel(id, r1, clock.now())
  t.equal(c1.reply, undefined, 'not answered before the abort')
  t.match(puts(c1, 'transfers'), [{ cancel_requested: true, status: 'in_progress' }], 'the cancel is durable before the abort starts')
  t.match(jobs(c1, 'abort'), [{ upload: UPLOAD, then: 'cancel' }])
  t.same(effects(c1, 'send').map(s => s.type), ['task_cancel'])
  t.equal((effects(c1, 'send')[0]!.body as any).attemptIds.length, offersOf(wave).length)
  t.same(core.cancel(id, r2, clock.now()).effects, [], 'no second abort')
  t.match(core.chunk({ transferId: id, index: 1, sha256: sha(5), md5: 'm', length: CHUNK }, clock.now()).reply, { ok: false, code: 'BWN_ERR_TRANSFER_CLOSED' })
  const done = core.aborted(id, clock.now())
  t.match(puts(done, 'transfers'), [{ status: 'cancelled', cancel_requested: false, cleanup_pending: true }])
  t.equal(effects(done, 'reply').length, 2, 'both cancels are answered')
  t.match(jobs(done, 'cleanup'), [{ abort: null }], 'staging is freed (the upload is already aborted)')
  t.equal(core.size, 0)
})

t.test('a redelivery asked by complete() sends the chunk again; a refusal fails the transfer', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 2, ONLY_SELF)
  const offers = offersOf(wave)
  assign(core, SELF, { transferId: id, batchId: 'b', assignments: offers.map(o => ({ attemptId: o.attemptId, worker: W1 })) }, clock.now())
  for (const o of offers) { result(core, o, W1, clock.now()); core.checked(id, o.attemptId, true, null, clock.now()) }
  core.finalize(id, clock.now())
  const redo = core.completedUpload({ transferId: id, ok: false, retry: false, redeliver: [1], error: 'BWN_ERR_DESTINATION_INCOMPLETE' }, clock.now())
  t.match(puts(redo, 'transfers').at(-1), { chunks_delivered: 1 })
  t.equal(effects(redo, 'candidates').length, 1)
  const again = offersOf(core.planned(id, ONLY_SELF, clock.now()))
  t.same(again.map(o => o.chunkIndex), [1])
  assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: again[0]!.attemptId, worker: W2 }] }, clock.now())
  result(core, again[0]!, W2, clock.now())
  t.equal(jobs(core.checked(id, again[0]!.attemptId, true, null, clock.now()), 'complete').length, 1, 'completion is tried again')
  const refused = core.completedUpload({ transferId: id, ok: false, retry: false, redeliver: [], error: 'BWN_ERR_DESTINATION_REFUSED' }, clock.now())
  t.match(puts(refused, 'transfers'), [{ status: 'failed', error_code: 'destination_refused' }])
  t.equal(core.size, 0)
})

t.test('chunks: a new one is staged and counted; the same bytes again are a duplicate; other bytes, or any after finalize, are refused', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, config: {}, newId })
  const id = `t-${++seq}`
  core.create(transferRow(id, 2), clock.now())
  clock.advance(5)
  const first = core.chunk({ transferId: id, index: 1, sha256: sha(1), md5: 'm', length: CHUNK }, clock.now())
  t.same(first.reply, { ok: true, value: { duplicate: false, chunksReceived: 1 } })
  t.match(puts(first, 'chunks'), [{ chunk_index: 1, offset: CHUNK, length: CHUNK, sha256: sha(1), state: 'staged' }])
  t.same(first.ops.filter(o => o.type === 'put' && o.table === 'index').map(o => (o as { value: unknown }).value), [1], 'the blob is referenced by the transfer')
  t.match(puts(first, 'transfers'), [{ status: 'in_progress', chunks_received: 1, bytes_received: CHUNK, started_at: new Date(clock.now()).toISOString() }], 'the first chunk starts the transfer')
  t.match(effects(first, 'timer'), [{ ms: DISPATCH_DEBOUNCE_MS, msg: { type: 'dispatch', transferId: id } }], 'a dispatch is scheduled')
  t.same(effects(first, 'fault').map(f => f.point), ['after_chunk'])
  const second = core.chunk({ transferId: id, index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now())
  t.same(second.reply, { ok: true, value: { duplicate: false, chunksReceived: 2 } })
  t.same(effects(second, 'timer'), [], 'one dispatch at a time')
  const dup = core.chunk({ transferId: id, index: 1, sha256: sha(1), md5: 'm', length: CHUNK }, clock.now())
  t.same(dup, { ops: [], effects: [], reply: { ok: true, value: { duplicate: true } } }, 'the same bytes again: nothing written')
  const conflict = core.chunk({ transferId: id, index: 1, sha256: sha(9), md5: 'm', length: CHUNK }, clock.now())
  t.match(conflict.reply, { ok: false, status: 409, code: 'BWN_ERR_CHUNK_CONFLICT', extensions: { chunk_index: 1 } })
  t.same(conflict.ops, [])
  const partial = new TransferState({ self: SELF, config: {}, newId })
  const pid = `t-${++seq}`
  partial.create(transferRow(pid, 3), clock.now())
  partial.chunk({ transferId: pid, index: 1, sha256: sha(1), md5: 'm', length: CHUNK }, clock.now())
  const early = partial.finalize(pid, clock.now())
  t.match(early.reply, { ok: false, status: 409, code: 'BWN_ERR_CHUNKS_MISSING', extensions: { missing_chunks: [0, 2], missing_count: 2 } })
  t.same(early.ops, [], 'nothing is written for a refused finalize')
  partial.chunk({ transferId: pid, index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now())
  partial.chunk({ transferId: pid, index: 2, sha256: sha(2), md5: 'm', length: CHUNK }, clock.now())
  t.match(partial.finalize(pid, clock.now()).reply, { ok: true, value: { finalize_requested: true } })
  t.match(partial.chunk({ transferId: pid, index: 2, sha256: sha(7), md5: 'm', length: CHUNK }, clock.now()).reply, { ok: false, code: 'BWN_ERR_CHUNK_CONFLICT' }, 'a conflict is a conflict after finalize too')
  t.match(partial.chunk({ transferId: pid, index: 2, sha256: sha(2), md5: 'm', length: CHUNK }, clock.now()).reply, { ok: true, value: { duplicate: true } }, 'and a duplicate a duplicate')
})

t.test('transfers not in memory: finalize and cancel answer from the stored row, 404 for an unknown one', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, config: {}, newId })
  const stored = (status: TransferRow['status'], coordinator = SELF): TransferRow => ({ ...transferRow('gone', 1), status, coordinator_id: coordinator })
  t.match(core.finalize('gone', clock.now(), stored('completed')).reply, { ok: true, value: { status: 'completed' } }, 'finalize of a completed transfer: 200')
  t.match(core.finalize('gone', clock.now(), stored('failed')).reply, { ok: false, status: 409, code: 'BWN_ERR_TRANSFER_CLOSED' })
  t.match(core.finalize('gone', clock.now()).reply, { ok: false, status: 404 })
  t.match(core.cancel('gone', reply(), clock.now(), stored('cancelled')).reply, { ok: true, value: { status: 'cancelled' } }, 'cancel of a cancelled transfer: 200')
  t.match(core.cancel('gone', reply(), clock.now(), stored('completed')).reply, { ok: false, status: 409, code: 'BWN_ERR_TRANSFER_CLOSED' })
  t.match(core.cancel('gone', reply(), clock.now(), stored('completed', OTHER)).reply, { ok: false, status: 404 }, 'another coordinator\'s transfer is not ours to answer for')
  t.match(core.cancel('gone', reply(), clock.now()).reply, { ok: false, status: 404 })
  t.match(core.chunk({ transferId: 'gone', index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now(), stored('completed')).reply, { ok: false, status: 409, code: 'BWN_ERR_TRANSFER_CLOSED' })
})

t.test('a cancel of a transfer that completed or failed is refused; a transfer being cancelled takes no chunk and no finalize', async t => {
  const clock = new ManualClock()
  const { core, id } = started(clock, 1, ONLY_SELF, { maxAttemptsPerTask: 1 })
  const r1 = reply()
  const c = core.cancel(id, r1, clock.now())
  t.match(jobs(c, 'abort'), [{ transferId: id, upload: UPLOAD, then: 'cancel' }], 'the destination upload is aborted first')
  t.match(puts(c, 'transfers'), [{ cancel_requested: true }])
  t.match(core.chunk({ transferId: id, index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now()).reply, { ok: false, code: 'BWN_ERR_TRANSFER_CLOSED', detail: /cancelled/ })
  t.match(core.finalize(id, clock.now()).reply, { ok: false, code: 'BWN_ERR_TRANSFER_CLOSED', detail: /cancelled/ })
  const second = core.cancel(id, reply(), clock.now())
  t.same(jobs(second), [], 'a second cancel starts no second abort')
  const done = core.aborted(id, clock.now())
  t.equal(effects(done, 'reply').length, 2, 'both cancels are answered by the one abort')
  t.same(core.aborted(id, clock.now()), { ops: [], effects: [] }, 'a late abort answer changes nothing')

  const failed = started(clock, 1, ONLY_SELF, { maxAttemptsPerTask: 1 })
  const [o] = offersOf(failed.wave)
  assign(failed.core, SELF, { transferId: failed.id, batchId: 'b', assignments: [{ attemptId: o!.attemptId, worker: W1 }] }, clock.now())
  t.match(puts(result(failed.core, o!, W1, clock.now(), false), 'transfers').at(-1), { status: 'failed' })
  t.match(failed.core.cancel(failed.id, reply(), clock.now(), { ...transferRow(failed.id, 1), status: 'failed', coordinator_id: SELF }).reply, { ok: false, status: 409, detail: /already failed/ })
})

t.test('the upload begun: refused, it fails the transfer; after a cancel it is kept for the abort; for a transfer gone it is discarded', async t => {
  const clock = new ManualClock()
  const make = (): { core: TransferState, id: string } => {
    const core = new TransferState({ self: SELF, config: {}, newId })
    const id = `t-${++seq}`
    core.create(transferRow(id, 1), clock.now())
    core.chunk({ transferId: id, index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now())
    clock.advance(DISPATCH_DEBOUNCE_MS)
    t.equal(jobs(core.dispatch(id), 'begin').length, 1)
    return { core, id }
  }
  const refused = make()
  const r = refused.core.begun(refused.id, 'd1', null, 'nope', clock.now())
  t.match(puts(r, 'transfers').at(-1), { status: 'failed', error_code: 'destination_unavailable' })
  t.same(effects(r, 'candidates'), [], 'nothing is planned')
  const cancelled = make()
  cancelled.core.cancel(cancelled.id, reply(), clock.now())
  const late = cancelled.core.begun(cancelled.id, 'd1', UPLOAD, null, clock.now())
  t.match(puts(late, 'transfers'), [{ upload: UPLOAD }], 'the upload is recorded, so the abort under way can find it')
  t.same(effects(late, 'candidates'), [], 'and nothing is planned')
  const gone = new TransferState({ self: SELF, config: {}, newId })
  t.match(jobs(gone.begun('t-unknown', 'd1', UPLOAD, null, clock.now())), [{ type: 'abort', transferId: 't-unknown', destinationId: 'd1', upload: UPLOAD, then: 'cleanup' }], 'an upload nobody will complete is aborted')
  t.same(gone.begun('t-unknown', 'd1', null, 'nope', clock.now()), { ops: [], effects: [] })
  const ok = make()
  const planned = ok.core.begun(ok.id, 'd1', UPLOAD, null, clock.now())
  t.match(puts(planned, 'transfers'), [{ upload: UPLOAD }])
  t.equal(effects(planned, 'candidates').length, 1, 'a begun upload asks for a plan')
})

t.test('validator verdicts: only from the validator asked, while the delivery is being checked; unreadable falls back to the coordinator\'s check', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 3, ONLY_SELF)
  const offers = offersOf(wave)
  acceptAll(core, id, offers, W1, clock.now())
  const asked: string[] = []
  for (const o of offers) {
    const r = result(core, o, W1, clock.now(), true, { etag: `"${o.sha256}"`, validators: ['v-1', 'v-2'] })
    const [job] = jobs(r, 'verify')
    t.match(job, { type: 'verify', check: { attemptId: o.attemptId, etag: `"${o.sha256}"` }, request: { transferId: id, attemptId: o.attemptId, chunkIndex: o.chunkIndex, worker: W1, length: CHUNK, sha256: o.sha256 } })
    asked.push((job as { validator: string }).validator)
  }
  t.same(asked, ['v-1', 'v-2', 'v-1'], 'validators are asked in turn')
  const verdict = (o: OfferDraft, from: string, v: 'verified' | 'mismatch' | 'unreadable'): Step => core.verdict(from, { transferId: id, attemptId: o.attemptId, chunkIndex: o.chunkIndex, verdict: v, sha256: o.sha256, detail: null }, clock.now())
  t.same(verdict(offers[0]!, 'v-2', 'verified'), { ops: [], effects: [] }, 'a verdict from a validator not asked is ignored')
  const ok = verdict(offers[0]!, 'v-1', 'verified')
  t.match(puts(ok, 'chunks'), [{ chunk_index: offers[0]!.chunkIndex, state: 'verified' }])
  t.match(puts(ok, 'transfers').at(-1), { chunks_delivered: 1, chunks_verified: 1, bytes_delivered: CHUNK })
  t.same(verdict(offers[0]!, 'v-1', 'verified'), { ops: [], effects: [] }, 'a second verdict on the same delivery changes nothing')
  const unreadable = verdict(offers[1]!, 'v-2', 'unreadable')
  t.match(jobs(unreadable), [{ type: 'check', attemptId: offers[1]!.attemptId, etag: `"${offers[1]!.sha256}"` }])
  t.same(unreadable.ops, [])
  t.match(puts(core.checked(id, offers[1]!.attemptId, true, null, clock.now()), 'chunks'), [{ state: 'delivered' }], 'its own check delivers it, unverified')
  // A mismatch is one validator's word: the coordinator checks the destination itself first.
  const said = verdict(offers[2]!, 'v-1', 'mismatch')
  t.same(said.ops, [], 'nothing fails on a validator\'s word alone')
  t.same(puts(said, 'workers'), [], 'no strike on it')
  t.match(jobs(said), [{ type: 'check', attemptId: offers[2]!.attemptId, etag: `"${offers[2]!.sha256}"` }], 'the coordinator\'s own check runs')
  t.match(effects(said, 'log'), [{ level: 'warn', obj: { validator: 'v-1', worker: W1 } }], 'the validator\'s claim is logged')
  const bad = core.checked(id, offers[2]!.attemptId, false, 'destination bytes do not match the staged chunk', clock.now())
  t.match(puts(bad, 'task_attempts'), [{ id: offers[2]!.attemptId, state: 'failed' }], 'its own check finding other bytes too fails the attempt')
  t.match(puts(bad, 'task_results'), [{ attempt_id: offers[2]!.attemptId, outcome: 'integrity_mismatch' }])
  t.match(puts(bad, 'workers'), [{ hotkey: W1, strikes: [{ reason: 'failed_check' }] }], 'the worker is struck')
  t.match(effects(bad, 'send'), [{ to: SELF, type: 'task_result_ack', body: { attemptId: offers[2]!.attemptId, status: 'failed', reason: 'destination_check_failed' } }])
  t.equal(effects(bad, 'candidates').length, 1, 'the chunk is delivered again')
})

t.test('a validator that calls good deliveries mismatched fails none and strikes no worker: the coordinator\'s own check delivers them', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 4, ONLY_SELF)
  const offers = offersOf(wave)
  acceptAll(core, id, offers, W1, clock.now())
  for (const o of offers) {
    result(core, o, W1, clock.now(), true, { etag: `"${o.sha256}"`, validators: ['liar'] })
    const said = core.verdict('liar', { transferId: id, attemptId: o.attemptId, chunkIndex: o.chunkIndex, verdict: 'mismatch', sha256: sha(1), detail: null }, clock.now())
    t.same(puts(said, 'workers'), [], `chunk ${o.chunkIndex}: no strike`)
    const delivered = core.checked(id, o.attemptId, true, null, clock.now())
    t.match(puts(delivered, 'chunks'), [{ chunk_index: o.chunkIndex, state: 'delivered' }], `chunk ${o.chunkIndex}: delivered on the coordinator's own check, not verified`)
  }
  t.equal(core.standingOf(W1)?.strikes.length ?? 0, 0, 'the worker holds no strike')
})

t.test('a verified chunk that complete() finds changed is delivered again, and counted out of delivered and verified', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 2, ONLY_SELF)
  const offers = offersOf(wave)
  acceptAll(core, id, offers, W1, clock.now())
  for (const o of offers) {
    result(core, o, W1, clock.now(), true, { validators: ['v-1'] })
    core.verdict('v-1', { transferId: id, attemptId: o.attemptId, chunkIndex: o.chunkIndex, verdict: 'verified', sha256: o.sha256, detail: null }, clock.now())
  }
  core.finalize(id, clock.now())
  const redo = core.completedUpload({ transferId: id, ok: false, retry: false, redeliver: [0, 5], error: 'BWN_ERR_DESTINATION_INCOMPLETE' }, clock.now())
  t.match(puts(redo, 'transfers').at(-1), { chunks_delivered: 1, chunks_verified: 1, bytes_delivered: CHUNK }, 'chunk 0 counted out; the unknown index 5 ignored')
  t.match(puts(redo, 'task_attempts'), [{ chunk_index: 0, state: 'failed', failure_reason: 'part changed before completion' }])
})

t.test('results: a hash other than the staged chunk\'s fails the attempt and strikes the worker; late, unknown and foreign results are answered', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 2, ONLY_SELF)
  const [o0, o1] = offersOf(wave)
  assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: o0!.attemptId, worker: W1 }, { attemptId: o1!.attemptId, worker: W2 }] }, clock.now())
  const base = { taskId: o0!.taskId, attemptId: o0!.attemptId, transferId: id, worker: W1, success: true, bytes: CHUNK, durationMs: 5, etag: null, error: null, via: 'http' as const }
  const lie = core.result(SELF, { ...base, sha256: sha(7) }, clock.now())
  t.match(puts(lie, 'task_attempts'), [{ id: o0!.attemptId, state: 'failed', failure_reason: 'reported hash does not match the staged chunk' }])
  t.match(puts(lie, 'workers'), [{ hotkey: W1, strikes: [{ reason: 'failed_check', attempt_id: o0!.attemptId }] }])
  t.match(effects(lie, 'send'), [{ to: SELF, type: 'task_result_ack', body: { attemptId: o0!.attemptId, received: true, status: 'failed', reason: 'hash_mismatch' } }])
  t.same(jobs(lie, 'check'), [], 'nothing is checked at the destination')
  t.equal(effects(lie, 'candidates').length, 1, 'the chunk is delivered again')
  const ack = (s: Step): unknown => effects(s, 'send').map(e => e.body)
  t.match(ack(core.result(SELF, { ...base, sha256: o0!.sha256 }, clock.now())), [{ status: 'late_superseded', reason: 'failed', received: true }], 'a result for an attempt that already failed is late')
  t.match(ack(core.result(OTHER, { ...base, taskId: o1!.taskId, attemptId: o1!.attemptId, worker: W2, sha256: o1!.sha256 }, clock.now())), [{ status: 'rejected', reason: 'unknown_attempt', received: false }], 'from an orchestrator the attempt was not given to')
  t.match(ack(core.result(SELF, { ...base, taskId: 'other-task', attemptId: o1!.attemptId, sha256: o1!.sha256 }, clock.now())), [{ status: 'rejected', reason: 'unknown_attempt' }], 'naming another task')
  t.match(ack(core.result(SELF, { ...base, attemptId: 'nope', sha256: o0!.sha256 }, clock.now())), [{ status: 'rejected', reason: 'unknown_attempt' }])
  t.match(ack(core.result(SELF, { ...base, transferId: 'never-heard-of', sha256: o0!.sha256 }, clock.now())), [{ status: 'rejected', reason: 'unknown_attempt' }], 'an unknown transfer')
  const ok = { ...base, taskId: o1!.taskId, attemptId: o1!.attemptId, worker: W2, sha256: o1!.sha256 }
  t.equal(jobs(core.result(SELF, ok, clock.now()), 'check').length, 1)
  core.checked(id, o1!.attemptId, true, null, clock.now())
  t.match(ack(core.result(SELF, ok, clock.now())), [{ status: 'completed', reason: null }], 'a repeat of a delivered result is answered completed')
  core.cancel(id, reply(), clock.now())
  core.aborted(id, clock.now())
  t.match(ack(core.result(SELF, ok, clock.now())), [{ status: 'late_superseded', reason: 'transfer_cancelled' }], 'after the transfer closed')
})

t.test('blame: a result speaks only for the worker the attempt was assigned to; strikes land on that worker', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 3, ONLY_SELF)
  const offers = offersOf(wave)
  const ack = (s: Step): unknown => effects(s, 'send').map(e => e.body)
  // An orchestrator names an innocent hotkey as the worker of its failed deliveries.
  for (const o of offers) {
    const lie = core.result(SELF, { taskId: o.taskId, attemptId: o.attemptId, transferId: id, worker: 'victim', success: true, bytes: CHUNK, durationMs: 5, sha256: sha(99), etag: null, error: null, via: 'http' }, clock.now())
    t.same(puts(lie, 'workers'), [], 'no strike on a worker nobody assigned')
    t.match(ack(lie), [{ attemptId: o.attemptId, received: false, status: 'rejected', reason: 'unknown_attempt' }])
  }
  acceptAll(core, id, offers, W1, clock.now())
  const named = core.result(SELF, { taskId: offers[0]!.taskId, attemptId: offers[0]!.attemptId, transferId: id, worker: 'victim', success: true, bytes: CHUNK, durationMs: 5, sha256: sha(99), etag: null, error: null, via: 'http' }, clock.now())
  t.same(puts(named, 'workers'), [], 'a result naming another worker than the assigned one strikes nobody')
  t.same(puts(named, 'task_attempts'), [], 'and ends no attempt')
  t.equal(core.standingOf('victim'), undefined)
  const own = core.result(SELF, { taskId: offers[0]!.taskId, attemptId: offers[0]!.attemptId, transferId: id, worker: W1, success: true, bytes: CHUNK, durationMs: 5, sha256: sha(99), etag: null, error: null, via: 'http' }, clock.now())
  t.match(puts(own, 'workers'), [{ hotkey: W1, strikes: [{ reason: 'failed_check', attempt_id: offers[0]!.attemptId }] }], 'the assigned worker\'s own wrong hash strikes it')
  // A validator's mismatch, confirmed by the coordinator's own check, strikes the assigned worker too.
  result(core, offers[1]!, W1, clock.now(), true, { validators: ['v-1'] })
  core.verdict('v-1', { transferId: id, attemptId: offers[1]!.attemptId, chunkIndex: offers[1]!.chunkIndex, verdict: 'mismatch', sha256: sha(98), detail: null }, clock.now())
  const confirmed = core.checked(id, offers[1]!.attemptId, false, 'destination bytes do not match the staged chunk', clock.now())
  t.match(puts(confirmed, 'workers'), [{ hotkey: W1 }])
  t.equal(core.standingOf('victim'), undefined, 'the innocent worker holds no strike')
})

t.test('no strike where a failed check may not be the worker\'s: a check that could not run, or a tenant\'s own destination', async t => {
  const clock = new ManualClock()
  // This node's sink: a check that errored (the destination timed out) strikes no one; a mismatch strikes.
  const own = started(clock, 2, ONLY_SELF)
  const [a0, a1] = offersOf(own.wave)
  acceptAll(own.core, own.id, [a0!, a1!], W1, clock.now())
  result(own.core, a0!, W1, clock.now())
  const errored = own.core.checked(own.id, a0!.attemptId, false, 'check failed: timeout', clock.now(), true)
  t.same(puts(errored, 'workers'), [], 'an inconclusive check strikes no one')
  t.match(puts(errored, 'task_attempts'), [{ id: a0!.attemptId, state: 'failed' }], 'the attempt fails: the chunk goes again')
  t.match(puts(errored, 'task_results'), [{ attempt_id: a0!.attemptId, outcome: 'failed' }], 'recorded as a failed attempt, not as a mismatch')

  result(own.core, a1!, W1, clock.now())
  t.match(puts(own.core.checked(own.id, a1!.attemptId, false, 'destination bytes do not match the staged chunk', clock.now()), 'workers'), [{ hotkey: W1 }], 'a mismatch at the own sink strikes')
  // A tenant's own destination (an http server, an s3 bucket, a `node` destination pointing elsewhere):
  // it can hold other bytes than the worker wrote. No strike, and a validator is told so.
  const tenant = started(clock, 1, ONLY_SELF, {}, { kind: 'node', uploadId: 'elsewhere' }, false)
  const [b0] = offersOf(tenant.wave)
  acceptAll(tenant.core, tenant.id, [b0!], W2, clock.now())
  const asked = result(tenant.core, b0!, W2, clock.now(), true, { validators: ['v-1'] })
  t.notOk((jobs(asked, 'verify')[0] as any).request.attributable, 'the verify request does not say the bytes are the worker\'s')
  tenant.core.verdict('v-1', { transferId: tenant.id, attemptId: b0!.attemptId, chunkIndex: 0, verdict: 'mismatch', sha256: sha(9), detail: null }, clock.now())
  const mismatch = tenant.core.checked(tenant.id, b0!.attemptId, false, 'destination bytes do not match the staged chunk', clock.now())
  t.same(puts(mismatch, 'workers'), [], 'no strike')
  t.match(puts(mismatch, 'task_attempts'), [{ id: b0!.attemptId, state: 'failed' }])
  t.equal(tenant.core.standingOf(W2), undefined)
})

t.test('a delivery its worker never signed is refused: the attempt fails and the chunk goes again, with no strike on anyone', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 2, ONLY_SELF)
  const [o0, o1] = offersOf(wave)
  assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: o0!.attemptId, worker: W1 }, { attemptId: o1!.attemptId, worker: W1 }] }, clock.now())
  const said = (o: typeof o0, sha256: string): TaskResult => ({ taskId: o!.taskId, attemptId: o!.attemptId, transferId: id, worker: W1, success: true, bytes: CHUNK, durationMs: 5, sha256, etag: null, error: null, via: 'http' })
  // Wrong bytes reported on the orchestrator's word alone: no strike, though a signed claim of the same would strike.
  const unsigned = core.result(SELF, said(o0, sha(7)), clock.now(), [], undefined, () => false)
  t.match(effects(unsigned, 'send'), [{ type: 'task_result_ack', body: { attemptId: o0!.attemptId, received: false, status: 'rejected', reason: 'no_worker_claim' } }])
  t.same(puts(unsigned, 'workers'), [], 'no strike')
  t.equal(core.standingOf(W1), undefined)
  t.match(puts(unsigned, 'task_attempts'), [{ id: o0!.attemptId, state: 'failed' }], 'the attempt fails at once')
  t.equal(effects(unsigned, 'candidates').length, 1, 'and the chunk is offered again')
  t.same(jobs(unsigned, 'check'), [], 'nothing is checked or verified on an unsigned word')
  // A failure needs no claim: an orchestrator reports its lost workers' attempts itself.
  const lost = core.result(SELF, { ...said(o1, sha(0)), success: false, sha256: null, error: 'worker_lost' }, clock.now(), [], undefined, () => { throw new Error('a failure is never checked for a claim') })
  t.match(effects(lost, 'send'), [{ body: { status: 'failed', reason: 'worker_lost' } }])
})

t.test('a node sink\'s ETag of other bytes is read back and fails its check; completion uses the staged hashes, never a reported ETag', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 2, ONLY_SELF)
  const [o0, o1] = offersOf(wave)
  acceptAll(core, id, [o0!, o1!], W1, clock.now())
  const lie = result(core, o0!, W1, clock.now(), true, { etag: `"${sha(77)}"` })
  t.match(jobs(lie, 'check'), [{ attemptId: o0!.attemptId, etag: `"${sha(77)}"` }], 'checked at the destination with the ETag it reported')
  const failed = core.checked(id, o0!.attemptId, false, null, clock.now())
  t.match(puts(failed, 'task_attempts'), [{ id: o0!.attemptId, state: 'failed' }])
  t.match(puts(failed, 'workers'), [{ hotkey: W1, strikes: [{ reason: 'failed_check' }] }], 'the worker that reported it is struck')
  t.match(jobs(result(core, o1!, W1, clock.now(), true, { etag: `W/"${o1!.sha256.toUpperCase()}"` }), 'check'), [{ attemptId: o1!.attemptId }])
  core.checked(id, o1!.attemptId, true, null, clock.now())
  const [again] = offersOf(core.planned(id, ONLY_SELF, clock.now()))
  t.equal(again!.attemptNo, 1, 'the redelivery is the chunk\'s second attempt')
  assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: again!.attemptId, worker: W2 }] }, clock.now())
  const check = jobs(result(core, again!, W2, clock.now(), true, { etag: `"${again!.sha256}"` }), 'check')
  t.match(check, [{ attemptSlot: 1, attemptNo: 1 }], 'the check names the attempt it checks')
  core.checked(id, again!.attemptId, true, null, clock.now())
  t.match(jobs(core.finalize(id, clock.now()), 'complete'), [{ parts: [{ index: 0, attemptSlot: 1, etag: sha(0) }, { index: 1, attemptSlot: 0, etag: sha(1) }] }], 'completed against the sha256 staged here')

  // Other destinations keep the ETag the worker reported (s3 checks it against the part's MD5).
  const s3 = new TransferState({ self: SELF, newId })
  const sid = `t-${++seq}`
  s3.create(transferRow(sid, 1), clock.now())
  s3.chunk({ transferId: sid, index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now())
  s3.begun(sid, 'd1', { kind: 's3', uploadId: 'x' }, null, clock.now())
  const [so] = offersOf(s3.planned(sid, ONLY_SELF, clock.now()))
  s3.assigned(SELF, { transferId: sid, batchId: 'b', assignments: [{ attemptId: so!.attemptId, worker: W1 }] }, clock.now())
  t.equal(jobs(result(s3, so!, W1, clock.now(), true, { etag: '"md5-etag"' }), 'check').length, 1, 'an s3 ETag is no sha256')
  s3.checked(sid, so!.attemptId, true, null, clock.now())
  t.match(jobs(s3.finalize(sid, clock.now()), 'complete'), [{ parts: [{ index: 0, etag: '"md5-etag"' }] }])
})

t.test('complete-retry: the timer after a destination that was unavailable tries completion again, once it is due', async t => {
  const clock = new ManualClock()
  const { core, id, wave } = started(clock, 1, ONLY_SELF)
  const [o] = offersOf(wave)
  assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: o!.attemptId, worker: W1 }] }, clock.now())
  result(core, o!, W1, clock.now())
  core.checked(id, o!.attemptId, true, null, clock.now())
  t.equal(jobs(core.finalize(id, clock.now()), 'complete').length, 1)
  const retry = core.completedUpload({ transferId: id, ok: false, retry: true, redeliver: [], error: 'BWN_ERR_DESTINATION_UNAVAILABLE' }, clock.now())
  t.match(effects(retry, 'timer'), [{ msg: { type: 'complete-retry', transferId: id } }])
  t.same(jobs(retry), [], 'no completion until the timer fires')
  t.match(jobs(core.completeRetry(id), 'complete'), [{ transferId: id, parts: [{ index: 0 }] }], 'the timer starts completion again')
  t.same(core.completeRetry('t-unknown'), { ops: [], effects: [] }, 'for a transfer gone, nothing')
})

t.test('finalize again while completion is stuck is never a no-op: it starts completion', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId })
  const row = transferRow('t-fin', 1, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, finalize_requested: true, chunks_received: 1, chunks_delivered: 1 })
  const chunk: ChunkRow = { transfer_id: 't-fin', chunk_index: 0, offset: 0, length: CHUNK, sha256: sha(0), md5: 'm', state: 'delivered', task_id: null, delivered_attempt_id: 'a', attempt_slot: 0, etag: '"e"', received_at: '', delivered_at: '' }
  const h = core.hydrate({ row, chunks: [chunk], tasks: [], attempts: [], results: [], waves: 1, interventions: 0 }, clock.now(), { processStart: true })
  t.match(jobs(h, 'complete'), [{ transferId: 't-fin', parts: [{ index: 0, attemptSlot: 0, etag: sha(0) }] }], 'hydration completes a finalized, fully delivered transfer')
  t.same(jobs(core.finalize('t-fin', clock.now()), 'complete'), [], 'not twice while the first runs')
  const retry = core.completedUpload({ transferId: 't-fin', ok: false, retry: true, redeliver: [], error: 'BWN_ERR_DESTINATION_UNAVAILABLE' }, clock.now())
  t.match(effects(retry, 'timer'), [{ msg: { type: 'complete-retry' } }])
  const fin = core.finalize('t-fin', clock.now())
  t.match(fin.reply, { ok: true })
  t.equal(jobs(fin, 'complete').length, 1, 'a finalize after a failed completion tries again')
})

t.test('hydration after a crash: each state is driven on', async t => {
  const clock = new ManualClock()
  const base = { tasks: [], results: [], waves: 1, interventions: 0 }
  const chunkRow = (id: string, i: number, state: ChunkRow['state'], over: Partial<ChunkRow> = {}): ChunkRow => ({ transfer_id: id, chunk_index: i, offset: i * CHUNK, length: CHUNK, sha256: sha(i), md5: 'm', state, task_id: `task-${i}`, delivered_attempt_id: null, attempt_slot: null, etag: null, received_at: '', delivered_at: null, ...over })
  const attempt = (id: string, i: number, state: AttemptRow['state'], orch: string): AttemptRow => ({ id: `${id}-a${i}`, task_id: `task-${i}`, transfer_id: id, chunk_index: i, attempt_no: 0, attempt_slot: 0, orchestrator_id: orch, worker_id: W1, batch_id: 'b', wave_kind: 'initial', recovery: false, state, offered_at: '', accepted_at: '', finished_at: null, failure_reason: null })
  const task = (id: string, i: number): any => ({ id: `task-${i}`, transfer_id: id, chunk_index: i, state: 'offered', orchestrator_id: SELF, assigned_worker_id: W1, current_attempt_id: `${id}-a${i}`, attempt_count: 1, created_at: '', offered_at: '', accepted_at: '', completed_at: null, failed_at: null, failure_reason: null })

  await t.test('during delivery: own-router attempts are reassigned at once, another orchestrator\'s are watched, checks rerun', async t => {
    const core = new TransferState({ self: SELF, newId })
    const id = 't-deliv'
    const row = transferRow(id, 4, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 4 })
    const h: Hydration = {
      ...base, row,
      chunks: [chunkRow(id, 0, 'delivering'), chunkRow(id, 1, 'delivering'), chunkRow(id, 2, 'delivering'), chunkRow(id, 3, 'staged')],
      tasks: [task(id, 0), task(id, 1), task(id, 2)],
      attempts: [attempt(id, 0, 'accepted', SELF), attempt(id, 1, 'accepted', OTHER), attempt(id, 2, 'checking', SELF)],
      results: [{ attempt_id: `${id}-a2`, etag: '"x"' } as any]
    }
    const s = core.hydrate(h, clock.now(), { processStart: true })
    t.match(puts(s, 'task_attempts'), [{ id: `${id}-a0`, state: 'superseded', failure_reason: 'the orchestrator restarted' }])
    t.match(jobs(s, 'check'), [{ attemptId: `${id}-a2`, etag: '"x"' }], 'the interrupted check runs again')
    t.equal(effects(s, 'candidates').length, 1, 'recovery planned at once')
    const wave = core.planned(id, ONLY_SELF, clock.now())
    t.same(offersOf(wave).map(o => o.chunkIndex), [0, 3], 'the dead attempt and the never-offered chunk go out')
    t.match(puts(wave, 'overseer_interventions'), [{ reason: 'orchestrator_restarted', chunk_index: 0, outcome: 'stall_redistributed' }])
    clock.advance(core.resultGapFor(CHUNK, 0))
    t.match(puts(core.tick(clock.now()), 'task_attempts'), [{ id: `${id}-a1`, failure_reason: 'result_gap' }], 'the other orchestrator\'s silent work is reassigned by the overseer')
  })

  await t.test('an actor reset (not a process start) keeps its own router\'s work', async t => {
    const core = new TransferState({ self: SELF, newId })
    const id = 't-reset'
    const row = transferRow(id, 1, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 1 })
    const s = core.hydrate({ ...base, row, chunks: [chunkRow(id, 0, 'delivering')], tasks: [task(id, 0)], attempts: [attempt(id, 0, 'offered', SELF)] }, clock.now(), { processStart: false })
    t.same(s.ops, [])
    t.same(s.effects, [])
  })

  await t.test('work offered before a restart and accepted after it: its reads were not kept, so it gets the longer overdue bound', async t => {
    const core = new TransferState({ self: SELF, newId })
    const id = 't-reads'
    const start = clock.now()
    const MiB = 1024 * 1024
    const row = transferRow(id, 1, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 1, chunk_size: 16 * MiB, total_size: 16 * MiB })
    core.hydrate({ ...base, row, chunks: [chunkRow(id, 0, 'delivering', { length: 16 * MiB })], tasks: [task(id, 0)], attempts: [attempt(id, 0, 'offered', OTHER)] }, clock.now(), { processStart: true })
    const attemptId = `${id}-a0`
    core.assigned(OTHER, { transferId: id, batchId: 'b', assignments: [{ attemptId, worker: W1 }] }, clock.now())
    core.accepted(OTHER, { transferId: id, attemptId, taskId: 'task-0', worker: W1, coordinator: SELF })
    let moved = 0
    const quietUntil = start + OFFER_TTL_MS + OVERDUE_SLACK_MS + 5000
    core.progress(OTHER, { worker: W1, moved, attempts: [] }, clock.now())
    while (clock.now() < quietUntil) {
      clock.advance(1000)
      moved += MiB
      core.progress(OTHER, { worker: W1, moved, attempts: [] }, clock.now())
      const back = puts(core.tick(clock.now()), 'task_attempts')
      if (back.length > 0) { t.fail(`taken back at ${clock.now() - start} ms: ${JSON.stringify(back)}`); return }
    }
    t.pass('not taken back a minute after its offer expired, as work never read would be')
  })

  await t.test('refusals for room before a restart spent no attempt: they are not counted after it', async t => {
    const core = new TransferState({ self: SELF, newId, config: { maxAttemptsPerTask: 2 } })
    const id = 't-room'
    const row = transferRow(id, 1, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 1 })
    const refused = (k: number): AttemptRow => ({ ...attempt(id, 0, 'failed', OTHER), id: `${id}-r${k}`, failure_reason: 'destination_full' })
    core.hydrate({ ...base, row, chunks: [chunkRow(id, 0, 'staged')], tasks: [task(id, 0)], attempts: [refused(1), refused(2), refused(3)] }, clock.now(), { processStart: true })
    const o = offersOf(core.planned(id, ONLY_SELF, clock.now()))[0]!
    assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: o.attemptId, worker: W2 }] }, clock.now())
    const s = result(core, o, W2, clock.now(), false)
    t.same(puts(s, 'transfers').filter((r: any) => r.status === 'failed'), [], 'one failed attempt, with a limit of 2 and three refusals before: still open')
  })

  await t.test('a destination_full for work open across a restart stands on the worker\'s word: the sink\'s refusals before it were not kept', async t => {
    const core = new TransferState({ self: SELF, newId, config: { maxAttemptsPerTask: 1 } })
    const id = 't-room-open'
    const row = transferRow(id, 1, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 1, attributable: true })
    core.hydrate({ ...base, row, chunks: [chunkRow(id, 0, 'staged')], tasks: [task(id, 0)], attempts: [attempt(id, 0, 'accepted', OTHER)] }, clock.now(), { processStart: true })
    const s = core.result(OTHER, { taskId: 'task-0', attemptId: `${id}-a0`, transferId: id, worker: W1, success: false, bytes: 0, durationMs: 5, sha256: null, etag: null, error: 'destination_full', via: 'http' }, clock.now())
    t.match(puts(s, 'task_attempts'), [{ state: 'failed', failure_reason: 'destination_full' }])
    t.same(puts(s, 'transfers').filter((r: any) => r.status === 'failed'), [], 'no attempt spent (limit 1)')
  })

  await t.test('cancel requested but not finished: aborted again, then cancelled', async t => {
    const core = new TransferState({ self: SELF, newId })
    const id = 't-cancel'
    const row = transferRow(id, 2, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, cancel_requested: true })
    const s = core.hydrate({ ...base, row, chunks: [chunkRow(id, 0, 'staged')], tasks: [], attempts: [] }, clock.now(), { processStart: true })
    t.match(jobs(s, 'abort'), [{ upload: UPLOAD, then: 'cancel' }])
    t.same(effects(s, 'candidates'), [], 'nothing is offered')
    t.match(puts(core.aborted(id, clock.now()), 'transfers'), [{ status: 'cancelled', cleanup_pending: true }])
    t.equal(core.size, 0)
  })

  await t.test('terminal with cleanup pending: cleaned up, not kept', async t => {
    const core = new TransferState({ self: SELF, newId })
    for (const status of ['failed', 'cancelled', 'completed'] as const) {
      const id = `t-${status}`
      const s = core.hydrate({ ...base, row: transferRow(id, 1, { coordinator_id: SELF, status, upload: UPLOAD, cleanup_pending: true }), chunks: [chunkRow(id, 0, 'staged')], tasks: [], attempts: [] }, clock.now(), { processStart: true })
      t.match(jobs(s, 'cleanup'), [{ transferId: id, abort: status === 'completed' ? null : UPLOAD, chunks: [{ index: 0 }] }], status)
    }
    t.equal(core.size, 0)
  })

  await t.test('failed and superseded attempts still count after a restart, and their workers are avoided', async t => {
    const core = new TransferState({ self: SELF, newId })
    const id = 't-counted'
    const failed = (i: number, n: number, state: 'failed' | 'superseded', worker: string): AttemptRow => ({ ...attempt(id, i, state, SELF), id: `${id}-f${i}-${n}`, attempt_no: n, worker_id: worker })
    const row = transferRow(id, 2, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 2 })
    const s = core.hydrate({
      ...base, row,
      chunks: [chunkRow(id, 0, 'staged'), chunkRow(id, 1, 'staged')],
      // Chunk 1 was taken back for stalls as often as a chunk may fail: stalls are not failures.
      attempts: [failed(0, 0, 'failed', W1), failed(0, 1, 'failed', W1), ...Array.from({ length: MAX_ATTEMPTS_PER_TASK }, (_v, n) => failed(1, n, 'superseded', W2))]
    }, clock.now(), { processStart: true })
    t.same(s.ops, [], 'nothing to write: no attempt was open')
    t.equal(effects(s, 'timer').length, 1, 'no recovery pending: the chunks go out with the next dispatch')
    clock.advance(DISPATCH_DEBOUNCE_MS)
    core.dispatch(id)
    const offers = offersOf(core.planned(id, ONLY_SELF, clock.now()))
    t.same(offers.map(o => [o.chunkIndex, o.excludeWorkers]), [[0, [W1]], [1, [W2]]], 'each chunk avoids the worker that failed it')
    const o1 = offers.find(o => o.chunkIndex === 1)!
    assign(core, SELF, { transferId: id, batchId: 'b', assignments: [{ attemptId: o1.attemptId, worker: W1 }] }, clock.now())
    const failedOnce = result(core, o1, W1, clock.now(), false)
    t.same(puts(failedOnce, 'transfers').filter(r => (r as TransferRow).status === 'failed'), [], 'one failure after eight stalls does not fail the transfer')
    t.equal(core.get(id)?.row.status, 'in_progress')
  })

  await t.test('a chunk whose last attempt the restart ends runs out of attempts, and the transfer fails', async t => {
    const core = new TransferState({ self: SELF, newId })
    const id = 't-spent'
    const row = transferRow(id, 1, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 1 })
    const stalls = Array.from({ length: MAX_STALLS_PER_TASK - 1 }, (_v, n): AttemptRow => ({ ...attempt(id, 0, 'superseded', SELF), id: `${id}-s${n}`, attempt_no: n }))
    const open: AttemptRow = { ...attempt(id, 0, 'accepted', SELF), attempt_no: MAX_STALLS_PER_TASK }
    const s = core.hydrate({ ...base, row, chunks: [chunkRow(id, 0, 'delivering')], tasks: [task(id, 0)], attempts: [...stalls, open] }, clock.now(), { processStart: true })
    t.match(puts(s, 'transfers'), [{ id, status: 'failed' }], `the ${MAX_STALLS_PER_TASK}th stall fails it`)
    t.same(effects(s, 'candidates'), [], 'and nothing is planned')
  })

  await t.test('a check interrupted before its result was recorded: the attempt is watched as accepted', async t => {
    const core = new TransferState({ self: SELF, newId })
    const id = 't-unchecked'
    const row = transferRow(id, 1, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 1 })
    const s = core.hydrate({ ...base, row, chunks: [chunkRow(id, 0, 'delivering')], tasks: [task(id, 0)], attempts: [attempt(id, 0, 'checking', OTHER)] }, clock.now(), { processStart: true })
    t.same(jobs(s, 'check'), [], 'no result to check again')
    t.same(s.ops, [], 'another orchestrator\'s attempt is not ended by our restart')
    clock.advance(core.resultGapFor(CHUNK, 0))
    t.match(puts(core.tick(clock.now()), 'task_attempts'), [{ id: `${id}-a0`, failure_reason: 'result_gap' }], 'watched like any accepted attempt')
  })

  await t.test('terminal without cleanup pending: remembered, nothing done', async t => {
    const core = new TransferState({ self: SELF, newId })
    const s = core.hydrate({ ...base, row: transferRow('t-done', 1, { coordinator_id: SELF, status: 'completed', cleanup_pending: false }), chunks: [], tasks: [], attempts: [] }, clock.now(), { processStart: true })
    t.same(s, { ops: [], effects: [] })
    t.equal(core.size, 0)
    t.equal(core.closedStatus('t-done'), 'completed')
  })

  await t.test('another coordinator\'s transfer is not touched', async t => {
    const core = new TransferState({ self: SELF, newId })
    const s = core.hydrate({ ...base, row: transferRow('t-x', 1, { coordinator_id: OTHER, status: 'in_progress' }), chunks: [], tasks: [], attempts: [] }, clock.now(), { processStart: true })
    t.same(s, { ops: [], effects: [] })
    t.equal(core.size, 0)
  })
})

t.test('closed transfers are remembered within a bound', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId })
  for (let i = 0; i <= CLOSED_MEMORY; i++) {
    const id = `c-${i}`
    core.hydrate({ row: transferRow(id, 1, { coordinator_id: SELF, status: 'completed', cleanup_pending: true }), chunks: [], tasks: [], attempts: [], results: [], waves: 0, interventions: 0 }, clock.now(), { processStart: true })
  }
  t.equal(core.closedStatus('c-0'), undefined, 'the oldest is forgotten')
  t.equal(core.closedStatus(`c-${CLOSED_MEMORY}`), 'completed')
})

t.test('waiting for an orchestrator with workers is said once at warn, and its end at info', async t => {
  const clock = new ManualClock()
  const NONE = [{ hotkey: SELF, workers: 0, score: 1 }]
  const logs = (s: Step): Array<{ level: string, msg: string }> => s.effects.flatMap(e => e.kind === 'log' && /offers (wait|go out)/.test(e.msg) ? [{ level: e.level, msg: e.msg }] : [])
  const { core, id, wave } = started(clock, 2, NONE)
  t.same(logs(wave), [{ level: 'warn', msg: 'no orchestrator with workers; offers wait' }])
  t.same(offersOf(wave), [], 'nothing offered')
  for (let i = 0; i < 3; i++) {
    clock.advance(OVERSEER_TICK_MS)
    t.same(logs(core.planned(id, NONE, clock.now())), [{ level: 'debug', msg: 'no orchestrator with workers; offers wait' }], 'asked again: debug only')
  }
  const resumed = core.planned(id, ONLY_SELF, clock.now())
  t.same(logs(resumed), [{ level: 'info', msg: 'orchestrators with workers again; offers go out' }])
  t.equal(offersOf(resumed).length, 2, 'both chunks offered')
})

t.test('the overseer counts no stall time past the oldest frame its node has not read yet', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId })
  const { offers } = heldBy(clock, core, 1, 1024 * 1024)
  core.tick(clock.now())
  // The node is behind on its frames: the oldest unread one arrived now, and stays unread while the
  // overseer ticks on time for ten stall windows. The worker's report may be among them: nothing moves.
  const unreadSince = clock.now()
  const watchedBefore = core.watched(unreadSince)
  const taken: unknown[] = []
  for (let i = 0; i < (10 * RESULT_GAP_MS) / OVERSEER_TICK_MS; i++) {
    clock.advance(OVERSEER_TICK_MS)
    taken.push(...core.tick(clock.now(), unreadSince).ops)
  }
  t.same(taken, [], 'ten stall windows of ticks take nothing back')
  t.equal(core.watched(unreadSince), watchedBefore, 'no time counted past the unread frame')
  // Caught up (nothing waits) and the worker still silent: its work moves once the window is full.
  const moved = puts(watchFor(core, clock, RESULT_GAP_MS), 'task_attempts') as AttemptRow[]
  t.same(moved.map(a => [a.id, a.failure_reason]), [[offers[0]!.attemptId, 'result_gap']])
})

t.test('a node always a little behind on its frames still judges: the held-back time counts once read', async t => {
  for (const lag of [125, 400, 1000]) {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId })
    const { offers } = heldBy(clock, core, 1, 1024 * 1024)
    core.tick(clock.now())
    const start = clock.now()
    let movedAt: number | null = null
    for (let i = 0; i < 100 && movedAt === null; i++) {
      clock.advance(OVERSEER_TICK_MS)
      // Every tick finds a frame unread that arrived `lag` ms ago (the frames before it were read).
      const moved = puts(core.tick(clock.now(), clock.now() - lag), 'task_attempts') as AttemptRow[]
      if (moved.some(a => a.id === offers[0]!.attemptId && a.failure_reason === 'result_gap')) movedAt = clock.now()
    }
    t.ok(movedAt !== null && movedAt - start <= RESULT_GAP_MS + lag + 2 * OVERSEER_TICK_MS, `${lag} ms behind: the silent worker's work moved after ${movedAt === null ? 'never' : movedAt - start} ms`)
  }
})
