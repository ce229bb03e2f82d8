// Worker standing: the coordinator's own evidence against a worker, strikes in a sliding window, an
// exclusion from its offers past the limit, a cool-down that doubles; and the coordinator core that
// records strikes for failed checks and for held work that made no progress, and lists the excluded
// workers in every batch it sends (docs/transfers.md#worker-standing).
import t from 'tap'
import { addStrike, isExcluded, STRIKE_LIMIT, STRIKE_WINDOW_MS, EXCLUSION_MS, MAX_EXCLUSION_MS, type WorkerStandingRow } from '../../../actors/transfer/worker-standing.ts'
import { TransferState, RESULT_GAP_MS, OVERSEER_TICK_MS, type Step, type IoJob } from '../../../actors/transfer/state.ts'
import type { TransferRow } from '../../../actors/transfer/model.ts'
import type { StoreOp } from '../../../actors/ports.ts'

const W = 'worker-griefer'
const at = (n: number) => ({ hotkey: W, coordinator: 'orch', reason: 'failed_check' as const, transferId: 't', attemptId: `a${n}` })

t.test('strikes within the window exclude a worker for a cool-down that doubles with each exclusion', async t => {
  let row: WorkerStandingRow | undefined
  let now = 1_000_000
  for (let i = 1; i < STRIKE_LIMIT; i++) {
    const r = addStrike(row, at(i), now); row = r.row
    t.equal(r.excluded, false, `strike ${i} alone does not exclude`)
    now += 1000
  }
  t.equal(isExcluded(row, now), false)
  const third = addStrike(row, at(STRIKE_LIMIT), now); row = third.row
  t.equal(third.excluded, true, 'the limit excludes')
  t.match(row, { status: 'excluded', exclusions: 1, exclusion_reason: 'failed_check' })
  t.equal(Date.parse(row.excluded_until!) - now, EXCLUSION_MS, 'for the first cool-down')
  t.equal(isExcluded(row, now + EXCLUSION_MS - 1), true, 'excluded until the end of the cool-down')
  t.equal(addStrike(row, at(9), now + 10).excluded, false, 'a strike while excluded does not start another exclusion')
  // After the cool-down, the spent strikes do not count: it takes the limit again, and the cool-down doubles.
  now += EXCLUSION_MS
  t.equal(isExcluded(row, now), false, 'the cool-down ended')
  for (let i = 1; i < STRIKE_LIMIT; i++) { const r = addStrike(row, at(10 + i), now); row = r.row; t.equal(r.excluded, false); now += 1 }
  const again = addStrike(row, at(20), now); row = again.row
  t.equal(again.excluded, true)
  t.equal(Date.parse(row.excluded_until!) - now, 2 * EXCLUSION_MS, 'the second cool-down is twice as long')
  // However many exclusions, a cool-down lasts at most MAX_EXCLUSION_MS.
  const veteran: WorkerStandingRow = { ...row, status: 'good', exclusions: 40, excluded_until: new Date(now).toISOString(), excluded_at: new Date(now - 1).toISOString(), strikes: [] }
  let v: WorkerStandingRow = veteran
  let last = { row: v, excluded: false }
  for (let i = 0; i < STRIKE_LIMIT; i++) { last = addStrike(v, at(40 + i), now + 1 + i); v = last.row }
  t.equal(last.excluded, true)
  t.equal(Date.parse(v.excluded_until!) - (now + STRIKE_LIMIT), MAX_EXCLUSION_MS, 'capped at a day')
})

t.test('strikes older than the window no longer count', async t => {
  let row: WorkerStandingRow | undefined
  let now = 5_000_000
  for (let i = 0; i < STRIKE_LIMIT - 1; i++) { row = addStrike(row, at(i), now).row; now += 1 }
  now += STRIKE_WINDOW_MS
  const late = addStrike(row, at(99), now)
  t.equal(late.excluded, false, 'the earlier strikes expired')
  t.equal(late.row.strikes.length, 1, 'only the fresh strike is kept')
  t.ok(MAX_EXCLUSION_MS >= EXCLUSION_MS)
})

// ---- in the coordinator core ----------------------------------------------------------------------

const SELF = 'orch-self'
const ONLY_SELF = [{ hotkey: SELF, workers: 2, score: 1 }]
const UPLOAD = { kind: 'node', uploadId: 'u1' } as const
const CHUNK = 1024
let seq = 0
const newId = (): string => `id-${++seq}`
const sha = (i: number): string => i.toString(16).padStart(64, '0')
const puts = (s: Step, table: string): any[] => s.ops.filter((o): o is Extract<StoreOp, { type: 'put' }> => o.type === 'put' && o.table === table).map(o => o.value)
const offersJob = (s: Step): Extract<IoJob, { type: 'offers' }> | undefined => s.effects.flatMap(e => e.kind === 'io' && e.job.type === 'offers' ? [e.job] : [])[0]

function row (id: string, chunks: number): TransferRow {
  const iso = new Date(0).toISOString()
  return {
    id, status: 'pending', sender_hotkey: 'x', filename: `${id}.bin`, total_size: CHUNK * chunks, chunk_size: CHUNK, total_chunks: chunks, tier: 'STANDARD',
    destination_id: 'd1', api_key_id: null, org_id: null, coordinator_id: '', metadata: { name: id }, upload: null,
    chunks_received: 0, chunks_delivered: 0, chunks_verified: 0, bytes_received: 0, bytes_delivered: 0, finalize_requested: false,
    created_at: iso, updated_at: iso, started_at: null, finalized_at: null, completed_at: null, error_code: null, error_message: null
  }
}

/** One transfer of `chunks` chunks, its wave planned and every offer given to `worker`. */
function wave (core: TransferState, now: number, chunks: number, worker: string): { id: string, job: Extract<IoJob, { type: 'offers' }> } {
  const id = `t-${++seq}`
  core.create(row(id, chunks), now)
  for (let i = 0; i < chunks; i++) core.chunk({ transferId: id, index: i, sha256: sha(i), md5: 'm', length: CHUNK }, now)
  core.dispatch(id)
  core.begun(id, 'd1', UPLOAD, null, now, true) // the node's own sink: its bytes are the workers' alone
  const job = offersJob(core.planned(id, ONLY_SELF, now))!
  const offers = job.batches.flatMap(b => b.offers)
  core.assigned(SELF, { transferId: id, batchId: 'b', assignments: offers.map(o => ({ attemptId: o.attemptId, worker })) }, now)
  // The worker's own word that it holds each chunk (a stall strikes only on it).
  for (const o of offers) core.accepted(SELF, { transferId: id, attemptId: o.attemptId, taskId: o.taskId, worker, coordinator: SELF })
  return { id, job }
}

t.test('a worker that delivers wrong bytes is struck for each failed check and excluded from every batch past the limit', async t => {
  const core = new TransferState({ self: SELF, newId })
  let now = 10_000
  const first = wave(core, now, STRIKE_LIMIT, W)
  t.same(first.job.excludedWorkers, [], 'nobody excluded yet')
  const offers = first.job.batches.flatMap(b => b.offers)
  let excludedAt = -1
  offers.forEach((o, i) => {
    now += 100
    // The worker reports the staged hash; the destination check finds other bytes.
    core.result(SELF, { taskId: o.taskId, attemptId: o.attemptId, transferId: first.id, worker: W, success: true, bytes: CHUNK, durationMs: 5, sha256: o.sha256, etag: null, error: null, via: 'http' }, now)
    const checked = core.checked(first.id, o.attemptId, false, 'wrong bytes at the destination', now)
    const standing = puts(checked, 'workers')
    t.equal(standing.length, 1, `check ${i + 1}: one standing row written`)
    t.equal(standing[0].strikes.length, i + 1)
    if (standing[0].status === 'excluded' && excludedAt < 0) excludedAt = i + 1
    t.ok(checked.effects.some(e => e.kind === 'emit' && e.event.type === 'worker_standing'), 'the change is an event')
  })
  t.equal(excludedAt, STRIKE_LIMIT, 'excluded at the limit')
  t.same(core.excludedWorkers(now), [W])
  const next = wave(core, now, 1, 'worker-honest')
  t.same(next.job.excludedWorkers, [W], 'every batch names the excluded worker')
  // The cool-down ends: batches stop naming it.
  t.same(core.excludedWorkers(Date.parse(core.standingOf(W)!.excluded_until!)), [])
})

t.test('a worker that holds work without progress gets one strike per overseer tick, however many chunks it held', async t => {
  const core = new TransferState({ self: SELF, newId })
  let now = 50_000
  wave(core, now, 4, W)
  now += RESULT_GAP_MS
  const tick = core.tick(now)
  t.equal(puts(tick, 'task_attempts').filter(a => a.failure_reason === 'result_gap').length, 4, 'its four chunks move')
  const standing = puts(tick, 'workers')
  t.equal(standing.length, 1, 'one strike for the four')
  t.match(standing[0], { hotkey: W, status: 'good', strikes: [{ reason: 'no_progress' }] })
  // A restart keeps what the coordinator holds against it.
  // A worker whose bytes stopped part-way loses the work but is not struck (a slow destination, a loaded machine).
  const partial = wave(core, now, 2, 'worker-slowed')
  const [p0] = partial.job.batches.flatMap(b => b.offers)
  core.progress(SELF, { worker: 'worker-slowed', moved: 512 * 1024, attempts: [{ transferId: partial.id, attemptId: p0!.attemptId, bytes: 512 }] }, now)
  let later: Step = { ops: [], effects: [] }
  for (let left = RESULT_GAP_MS; left > 0; left -= OVERSEER_TICK_MS) { now += OVERSEER_TICK_MS; const s = core.tick(now); later = { ops: [...later.ops, ...s.ops], effects: [...later.effects, ...s.effects] } }
  t.equal(puts(later, 'task_attempts').filter(a => a.worker_id === 'worker-slowed').length, 2, 'its work moves')
  t.same(puts(later, 'workers'), [], 'but it is not struck: it had moved bytes')
  const restarted = new TransferState({ self: SELF, newId })
  restarted.loadStanding([{ ...standing[0], status: 'excluded', excluded_until: new Date(now + 60_000).toISOString() }])
  t.same(restarted.excludedWorkers(now), [W], 'loaded standings keep their exclusion')
})
