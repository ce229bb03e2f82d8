// The coordinator's core, field by field: each path's whole step (every row it puts, every event it
// emits, every message, job and reply) compared with what it must be, so a changed table name, status,
// key, event or field is caught (docs/testing.md#mutation-testing), and the edges of its rules: progress
// at the threshold, the measured rate's median and window, the limits of a batch and of the exclusion
// list. The behaviour around them is in state.test.ts.
import t from 'tap'
import type tap from 'tap'
import {
  TransferState, DISPATCH_DEBOUNCE_MS, RESULT_GAP_MS, OVERSEER_TICK_MS, MIN_PROGRESS_BYTES, WAVE_TIMEOUT_MS, NO_WORKER_WAIT_MS as NO_WORKER_WAIT,
  type Step, type OfferDraft
} from '../../../actors/transfer/state.ts'
import type { TransferRow, ChunkRow, AttemptRow, TaskRow, ResultRow } from '../../../actors/transfer/model.ts'
import type { WorkerStandingRow } from '../../../actors/transfer/worker-standing.ts'
import { blobRefKey } from '../../../actors/transfer/blob-refs.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { CHUNK, UPLOAD, transferRow, sha, jobs, effects, puts, offersOf, reply } from '../../helpers/transfer-state.ts'

const SELF = 'orch-self'
const OTHER = 'orch-other'
const W1 = 'worker-1'
const W2 = 'worker-2'
const ONLY_SELF = [{ hotkey: SELF, workers: 2, score: 1 }]
const TTL = 600_000 // OFFER_TTL_MS: signed URLs live 10 min

const iso = (ms: number): string => new Date(ms).toISOString()
const json = (v: unknown): any => JSON.parse(JSON.stringify(v))
/** A step as plain data at the moment it was made, without its log lines (operators read those; tests do not pin them). */
const plain = (s: Step): any => json({ ...s, effects: s.effects.filter(e => e.kind !== 'log') })
const EMPTY = { ops: [], effects: [] }
/** Ids as the core asks for them: id-1, id-2, ... */
const counter = (): () => string => { let n = 0; return () => `id-${++n}` }
const put = (table: string, key: string, value: unknown): unknown => ({ type: 'put', table, key, value })

/** A chunk row of transfer `id` as staged at `at` (md5 `md5-<i>`). */
const chunkRow = (id: string, i: number, at: number, over: Partial<ChunkRow> = {}): ChunkRow => ({
  transfer_id: id, chunk_index: i, offset: i * CHUNK, length: CHUNK, sha256: sha(i), md5: `md5-${i}`, state: 'staged', task_id: null,
  delivered_attempt_id: null, attempt_slot: null, etag: null, received_at: iso(at), delivered_at: null, ...over
})
const taskRow = (id: string, i: number, taskId: string, attemptId: string, at: number, over: Partial<TaskRow> = {}): TaskRow => ({
  id: taskId, transfer_id: id, chunk_index: i, state: 'offered', orchestrator_id: SELF, assigned_worker_id: null, current_attempt_id: attemptId, attempt_count: 1,
  created_at: iso(at), offered_at: iso(at), accepted_at: null, completed_at: null, failed_at: null, failure_reason: null, ...over
})
const attemptRow = (id: string, i: number, attemptId: string, taskId: string, batchId: string, at: number, over: Partial<AttemptRow> = {}): AttemptRow => ({
  id: attemptId, task_id: taskId, transfer_id: id, chunk_index: i, attempt_no: 0, attempt_slot: 0, orchestrator_id: SELF, worker_id: null, batch_id: batchId,
  wave_kind: 'initial', recovery: false, state: 'offered', offered_at: iso(at), accepted_at: null, finished_at: null, failure_reason: null, ...over
})
const resultRow = (id: string, i: number, attemptId: string, taskId: string, worker: string, at: number, over: Partial<ResultRow> = {}): ResultRow => ({
  attempt_id: attemptId, task_id: taskId, transfer_id: id, chunk_index: i, orchestrator_id: SELF, worker_id: worker, success: true, bytes: CHUNK, claimed_bytes: 1000,
  duration_ms: 5, sha256: sha(i), etag: `"${sha(i)}"`, error: null, via: 'http', outcome: 'accepted', received_at: iso(at), ...over
})
const ack = (taskId: string, attemptId: string, worker: string, status: string, reason: string | null, to = SELF): unknown =>
  ({ kind: 'send', to, type: 'task_result_ack', body: { taskId, attemptId, worker, received: status !== 'rejected', status, reason } })

/** The worker's report on `o` (claiming 1000 bytes in 5 ms, with the sink's etag, the chunk's sha256 quoted). */
function report (core: TransferState, o: OfferDraft & { to: string }, worker: string, now: number, over: { success?: boolean, sha256?: string | null, error?: string | null, validators?: string[], evidence?: Uint8Array } = {}): Step {
  const success = over.success ?? true
  return core.result(o.to, {
    taskId: o.taskId, attemptId: o.attemptId, transferId: o.transferId, worker, success, bytes: 1000, durationMs: 5,
    sha256: over.sha256 !== undefined ? over.sha256 : success ? o.sha256 : null, etag: success ? `"${sha(o.chunkIndex)}"` : null, error: over.error ?? (success ? null : 'boom'), via: 'http'
  }, now, over.validators, over.evidence)
}

/**
 * Transfer 't1' of two chunks (org 'org-1'), chunk 1 staged before chunk 0, its upload begun and its
 * first wave planned over this orchestrator alone: batch id-1; chunk 0 task id-2, attempt id-3; chunk 1
 * task id-4, attempt id-5. Each step is checked whole on the way.
 */
async function firstWave (t: Pick<typeof tap, 'same'>, clock: ManualClock, config = {}): Promise<{ core: TransferState, row: TransferRow, times: { staged: [number, number], planned: number }, offers: Array<OfferDraft & { to: string }> }> {
  const core = new TransferState({ self: SELF, newId: counter(), config })
  const row = transferRow('t1', 2, { org_id: 'org-1' })
  const created = clock.now()
  const expectRow = (over: Partial<TransferRow>): TransferRow => transferRow('t1', 2, { org_id: 'org-1', coordinator_id: SELF, ...over })
  t.same(plain(core.create(row, created)), {
    ops: [put('transfers', 't1', expectRow({})), put('index', `org-transfers/org-1/${row.created_at}/t1`, 1)],
    effects: [{ kind: 'emit', event: { type: 'transfer', row: expectRow({}) } }],
    reply: { ok: true, value: expectRow({}) }
  }, 'create: the row is put, emitted and answered, with this orchestrator as its coordinator')

  clock.advance(5)
  const s1 = clock.now()
  let row1 = expectRow({ status: 'in_progress', started_at: iso(s1), updated_at: iso(s1), chunks_received: 1, bytes_received: CHUNK })
  t.same(plain(core.chunk({ transferId: 't1', index: 1, sha256: sha(1), md5: 'md5-1', length: CHUNK }, s1)), {
    ops: [put('chunks', 't1/000001', chunkRow('t1', 1, s1)), put('index', blobRefKey(sha(1), 't1', 1), 1), put('transfers', 't1', row1)],
    effects: [{ kind: 'fault', point: 'after_chunk' }, { kind: 'timer', ms: DISPATCH_DEBOUNCE_MS, msg: { type: 'dispatch', transferId: 't1' } }],
    reply: { ok: true, value: { duplicate: false, chunksReceived: 1 } }
  }, 'the first chunk: staged, referenced, counted, the transfer started, a dispatch scheduled')
  clock.advance(2)
  const s0 = clock.now()
  row1 = { ...row1, updated_at: iso(s0), chunks_received: 2, bytes_received: 2 * CHUNK }
  t.same(plain(core.chunk({ transferId: 't1', index: 0, sha256: sha(0), md5: 'md5-0', length: CHUNK }, s0)), {
    ops: [put('chunks', 't1/000000', chunkRow('t1', 0, s0)), put('index', blobRefKey(sha(0), 't1', 0), 1), put('transfers', 't1', row1)],
    effects: [{ kind: 'fault', point: 'after_chunk' }],
    reply: { ok: true, value: { duplicate: false, chunksReceived: 2 } }
  }, 'the second chunk: the start time kept, no second dispatch')

  clock.advance(DISPATCH_DEBOUNCE_MS)
  t.same(plain(core.dispatch('t1')), {
    ops: [],
    effects: [{ kind: 'io', job: { type: 'begin', transferId: 't1', destinationId: 'd1', spec: { transferId: 't1', filename: 't1.bin', totalSize: 2 * CHUNK, chunkSize: CHUNK, totalChunks: 2, namespace: 'org-1' } } }]
  }, 'the dispatch begins the upload, in the org\'s namespace')
  t.same(plain(core.dispatch('t1')), EMPTY, 'one begin at a time')
  clock.advance(3)
  const begun = clock.now()
  row1 = { ...row1, upload: UPLOAD as any, attributable: true, updated_at: iso(begun) }
  t.same(plain(core.begun('t1', 'd1', UPLOAD, null, begun, true)), { ops: [put('transfers', 't1', row1)], effects: [{ kind: 'candidates', transferId: 't1' }] }, 'the upload recorded (at the node\'s own sink: deliveries are the workers\' alone), candidates asked for')
  t.same(plain(core.dispatch('t1')), EMPTY, 'one plan request at a time')

  clock.advance(4)
  const p = clock.now()
  const wave = core.planned('t1', [{ hotkey: OTHER, workers: 0, score: 5 }, { hotkey: SELF, workers: 2, score: 3 }], p)
  const offers = [
    { taskId: 'id-2', attemptId: 'id-3', transferId: 't1', chunkIndex: 0, offset: 0, length: CHUNK, sha256: sha(0), attemptSlot: 0, attemptNo: 0, excludeWorkers: [] },
    { taskId: 'id-4', attemptId: 'id-5', transferId: 't1', chunkIndex: 1, offset: CHUNK, length: CHUNK, sha256: sha(1), attemptSlot: 0, attemptNo: 0, excludeWorkers: [] }
  ]
  t.same(plain(wave), {
    ops: [
      put('transfer_assignment_plans', 't1/000000', {
        transfer_id: 't1', wave: 0, wave_kind: 'initial', allocation_rule: 'quota_floor_sampled_remainder_by_routing_score_v2', created_at: iso(p),
        deliveries: [{ orchestrator_id: SELF, routing_score: 3, chunk_count: 2, chunk_indices: [0, 1] }]
      }),
      put('tasks', 't1/id-2', taskRow('t1', 0, 'id-2', 'id-3', p)),
      put('task_attempts', 't1/id-3', attemptRow('t1', 0, 'id-3', 'id-2', 'id-1', p)),
      put('chunks', 't1/000000', chunkRow('t1', 0, s0, { state: 'delivering', task_id: 'id-2' })),
      put('tasks', 't1/id-4', taskRow('t1', 1, 'id-4', 'id-5', p)),
      put('task_attempts', 't1/id-5', attemptRow('t1', 1, 'id-5', 'id-4', 'id-1', p)),
      put('chunks', 't1/000001', chunkRow('t1', 1, s1, { state: 'delivering', task_id: 'id-4' })),
      put('task_offer_batches', 't1/id-1', { id: 'id-1', transfer_id: 't1', orchestrator_id: SELF, coordinator_id: SELF, wave_kind: 'initial', task_ids: ['id-2', 'id-4'], attempt_ids: ['id-3', 'id-5'], offered_at: iso(p), routed: [] }),
      put('transfers', 't1', { ...row1, updated_at: iso(p) })
    ],
    effects: [{ kind: 'io', job: { type: 'offers', transferId: 't1', destinationId: 'd1', upload: UPLOAD, waveKind: 'initial', expiresAt: p + TTL, batches: [{ to: SELF, batchId: 'id-1', offers }], excludedWorkers: [] } }]
  }, 'the wave: plan (the orchestrator without workers left out), task, attempt and chunk rows in chunk order, the batch, the offers')
  return { core, row, times: { staged: [s0, s1], planned: p }, offers: offers.map(o => ({ ...o, to: SELF })) }
}

t.test('a transfer\'s first wave, field by field: the transfer, chunk, plan, task, attempt and batch rows, the begin and offers jobs', async t => {
  const clock = new ManualClock()
  const { core } = await firstWave(t, clock)
  t.ok(core.isLive('t1'), 'live')
  t.notOk(core.isLive('t-unknown'), 'an unknown transfer is not live')
  t.same(core.config, { waveTimeoutMs: 15_000, resultGapMs: 1_000, minWorkerRate: 1024 * 1024, offerTtlMs: TTL, maxAttemptsPerTask: 8, maxStallsPerTask: 24, standing: { strikeWindowMs: 600_000, strikeLimit: 3, exclusionMs: 600_000, maxExclusionMs: 86_400_000 }, readsReported: true, sinkRefusalsReported: true }, 'the defaults')
})

t.test('acceptance, results, checks, a validator\'s verdict, completion: every row, event, acknowledgement and job', async t => {
  const clock = new ManualClock()
  const { core, row, times, offers } = await firstWave(t, clock)
  const [s0, s1] = times.staged
  const p = times.planned
  const [o0, o1] = offers as [OfferDraft & { to: string }, OfferDraft & { to: string }]
  const expectRow = (over: Partial<TransferRow>): TransferRow => transferRow('t1', 2, {
    org_id: 'org-1', coordinator_id: SELF, status: 'in_progress', started_at: iso(s1), chunks_received: 2, bytes_received: 2 * CHUNK, upload: UPLOAD as any, attributable: true, ...over
  })

  clock.advance(10)
  const acc = clock.now()
  t.same(plain(core.assigned(OTHER, { transferId: 't1', batchId: 'id-1', assignments: [{ attemptId: 'id-3', worker: W2 }] }, acc)), EMPTY, 'an assignment from an orchestrator the offer did not go to is ignored')
  t.same(plain(core.assigned(SELF, { transferId: 't1', batchId: 'id-1', assignments: [{ attemptId: 'nope', worker: W2 }] }, acc)), EMPTY, 'so is one of an unknown attempt')
  t.same(plain(core.assigned(SELF, { transferId: 't-unknown', batchId: 'id-1', assignments: [{ attemptId: 'id-3', worker: W2 }] }, acc)), EMPTY, 'and of an unknown transfer')
  const accepted = (i: number, worker: string): AttemptRow => attemptRow('t1', i, i === 0 ? 'id-3' : 'id-5', i === 0 ? 'id-2' : 'id-4', 'id-1', p, { worker_id: worker, state: 'accepted', accepted_at: iso(acc) })
  const acceptedTask = (i: number, worker: string): TaskRow => taskRow('t1', i, i === 0 ? 'id-2' : 'id-4', i === 0 ? 'id-3' : 'id-5', p, { assigned_worker_id: worker, accepted_at: iso(acc) })
  t.same(plain(core.assigned(SELF, { transferId: 't1', batchId: 'id-1', assignments: [{ attemptId: 'id-3', worker: W1 }, { attemptId: 'id-5', worker: W2 }] }, acc)), {
    ops: [put('task_attempts', 't1/id-3', accepted(0, W1)), put('tasks', 't1/id-2', acceptedTask(0, W1)), put('task_attempts', 't1/id-5', accepted(1, W2)), put('tasks', 't1/id-4', acceptedTask(1, W2))],
    effects: []
  }, 'accepted: attempt and task rows name the worker')
  t.same(plain(core.assigned(SELF, { transferId: 't1', batchId: 'id-1', assignments: [{ attemptId: 'id-3', worker: W2 }] }, acc)), EMPTY, 'an attempt already accepted is not given to another worker')

  clock.advance(100)
  const r0 = clock.now()
  const checking0 = { ...accepted(0, W1), state: 'checking' as const }
  const res0 = resultRow('t1', 0, 'id-3', 'id-2', W1, r0)
  t.same(plain(report(core, o0, W1, r0)), {
    ops: [put('task_results', 't1/id-3', res0), put('task_attempts', 't1/id-3', checking0)],
    effects: [
      { kind: 'io', job: { type: 'check', transferId: 't1', destinationId: 'd1', upload: UPLOAD, attemptId: 'id-3', chunk: { index: 0, offset: 0, length: CHUNK, sha256: sha(0), md5: 'md5-0' }, attemptSlot: 0, attemptNo: 0, etag: `"${sha(0)}"` } },
      { kind: 'emit', event: { type: 'checking', row: res0, attempt: checking0 } }
    ]
  }, 'a reported delivery: its result recorded (the planned bytes, the claimed ones apart), the attempt checking, the destination checked')
  t.equal(core.measuredRate(), CHUNK * 1000 / (r0 - acc), 'the delivery is the first sample of the measured rate')

  clock.advance(7)
  const c0 = clock.now()
  const row2 = expectRow({ chunks_delivered: 1, bytes_delivered: CHUNK, updated_at: iso(c0) })
  const succeeded0 = { ...checking0, state: 'succeeded' as const, finished_at: iso(c0) }
  t.same(plain(core.checked('t1', 'id-3', true, null, c0)), {
    ops: [
      put('task_attempts', 't1/id-3', succeeded0),
      put('tasks', 't1/id-2', { ...acceptedTask(0, W1), state: 'completed', completed_at: iso(c0) }),
      put('chunks', 't1/000000', chunkRow('t1', 0, s0, { state: 'delivered', task_id: 'id-2', delivered_attempt_id: 'id-3', attempt_slot: 0, etag: `"${sha(0)}"`, delivered_at: iso(c0) })),
      put('transfers', 't1', row2)
    ],
    effects: [{ kind: 'fault', point: 'during_delivery' }, ack('id-2', 'id-3', W1, 'completed', null), { kind: 'emit', event: { type: 'result', row: res0, attempt: succeeded0 } }]
  }, 'the check passed: attempt, task, chunk and transfer rows, the acknowledgement, the result event')
  t.same(plain(core.checked('t1', 'id-3', true, null, c0)), EMPTY, 'a second check outcome changes nothing')
  t.same(plain(core.checked('t-unknown', 'id-3', true, null, c0)), EMPTY)
  t.same(plain(core.checked('t1', 'nope', true, null, c0)), EMPTY)

  clock.advance(50)
  const r1 = clock.now()
  const checking1 = { ...accepted(1, W2), state: 'checking' as const }
  const res1 = resultRow('t1', 1, 'id-5', 'id-4', W2, r1)
  const check1 = { type: 'check', transferId: 't1', destinationId: 'd1', upload: UPLOAD, attemptId: 'id-5', chunk: { index: 1, offset: CHUNK, length: CHUNK, sha256: sha(1), md5: 'md5-1' }, attemptSlot: 0, attemptNo: 0, etag: `"${sha(1)}"` }
  t.same(plain(report(core, o1, W2, r1, { validators: ['v-1'], evidence: new Uint8Array([1, 2, 3]) })), {
    ops: [put('task_results', 't1/id-5', res1), put('task_attempts', 't1/id-5', checking1)],
    effects: [
      {
        kind: 'io',
        job: {
          type: 'verify', validator: 'v-1', check: check1,
          request: { transferId: 't1', taskId: 'id-4', attemptId: 'id-5', chunkIndex: 1, orchestrator: SELF, worker: W2, length: CHUNK, sha256: sha(1), trustedDurationMs: r1 - p, evidence: 'AQID', attributable: true }
        }
      },
      { kind: 'emit', event: { type: 'checking', row: res1, attempt: checking1 } }
    ]
  }, 'with a validator connected: it is asked to read the chunk back, with the time since the offer and the signed evidence')
  t.same(plain(core.verdict('v-1', { transferId: 't-unknown', attemptId: 'id-5', chunkIndex: 1, verdict: 'verified', sha256: sha(1), detail: null }, r1)), EMPTY, 'a verdict on an unknown transfer')
  t.same(plain(core.verdict('v-1', { transferId: 't1', attemptId: 'nope', chunkIndex: 1, verdict: 'verified', sha256: sha(1), detail: null }, r1)), EMPTY, 'on an unknown attempt')
  t.same(plain(core.verdict('v-1', { transferId: 't1', attemptId: 'id-3', chunkIndex: 0, verdict: 'verified', sha256: sha(0), detail: null }, r1)), EMPTY, 'on one no validator was asked about')

  clock.advance(9)
  const v1 = clock.now()
  const succeeded1 = { ...checking1, state: 'succeeded' as const, finished_at: iso(v1) }
  const row3 = expectRow({ chunks_delivered: 2, chunks_verified: 1, bytes_delivered: 2 * CHUNK, updated_at: iso(v1) })
  t.same(plain(core.verdict('v-1', { transferId: 't1', attemptId: 'id-5', chunkIndex: 1, verdict: 'verified', sha256: sha(1), detail: null }, v1)), {
    ops: [
      put('task_attempts', 't1/id-5', succeeded1),
      put('tasks', 't1/id-4', { ...acceptedTask(1, W2), state: 'completed', completed_at: iso(v1) }),
      put('chunks', 't1/000001', chunkRow('t1', 1, s1, { state: 'verified', task_id: 'id-4', delivered_attempt_id: 'id-5', attempt_slot: 0, etag: `"${sha(1)}"`, delivered_at: iso(v1) })),
      put('transfers', 't1', row3)
    ],
    effects: [{ kind: 'fault', point: 'during_delivery' }, ack('id-4', 'id-5', W2, 'completed', null), { kind: 'emit', event: { type: 'result', row: res1, attempt: succeeded1 } }]
  }, 'verified: the chunk counted delivered and verified')

  clock.advance(11)
  const f = clock.now()
  const row4 = expectRow({ chunks_delivered: 2, chunks_verified: 1, bytes_delivered: 2 * CHUNK, finalize_requested: true, finalized_at: iso(f), updated_at: iso(f) })
  const complete = { kind: 'io', job: { type: 'complete', transferId: 't1', destinationId: 'd1', upload: UPLOAD, parts: [{ index: 0, attemptSlot: 0, etag: sha(0) }, { index: 1, attemptSlot: 0, etag: sha(1) }] } }
  t.same(plain(core.finalize('t1', f)), { ops: [put('transfers', 't1', row4)], effects: [{ kind: 'fault', point: 'after_finalize' }, complete], reply: { ok: true, value: row4 } }, 'finalize: recorded, completion started with the parts in order')
  t.same(plain(core.finalize('t1', f)), { ops: [], effects: [], reply: { ok: true, value: row4 } }, 'again while completing: answered, nothing started twice')
  t.same(plain(core.completeRetry('t1')), EMPTY, 'a retry timer while completion runs starts nothing')

  clock.advance(13)
  const done = clock.now()
  const row5 = { ...row4, status: 'completed', completed_at: iso(done), stored_filename: 'stored.bin', cancel_requested: false, cleanup_pending: true, updated_at: iso(done) }
  t.same(plain(core.completedUpload({ transferId: 't1', ok: true, retry: false, redeliver: [], error: null, storedName: 'stored.bin' }, done)), {
    ops: [put('transfers', 't1', row5)],
    effects: [
      { kind: 'emit', event: { type: 'transfer', row: row5 } },
      { kind: 'io', job: { type: 'cleanup', transferId: 't1', destinationId: 'd1', abort: null, chunks: [{ index: 1, sha256: sha(1) }, { index: 0, sha256: sha(0) }] } }
    ]
  }, 'completed: the row with the stored name, its event, staging freed with the upload kept')
  t.equal(core.size, 0)
  t.notOk(core.isLive('t1'), 'a closed transfer is not live')
  t.same(plain(core.completedUpload({ transferId: 't1', ok: true, retry: false, redeliver: [], error: null }, done)), EMPTY, 'a second answer for a transfer gone changes nothing')
  t.same(row.coordinator_id, SELF)
})

/**
 * Transfer `id` of `chunks` chunks of `length` bytes, its upload begun and its first wave planned over
 * this orchestrator alone (ids from `newId`: the batch first, then per chunk its task and attempt).
 */
function planned (clock: ManualClock, core: TransferState, id: string, chunks: number, length = CHUNK, over = ONLY_SELF): Array<OfferDraft & { to: string }> {
  core.create(transferRow(id, chunks, { chunk_size: length, total_size: chunks * length }), clock.now())
  for (let i = 0; i < chunks; i++) core.chunk({ transferId: id, index: i, sha256: sha(i), md5: `md5-${i}`, length }, clock.now())
  core.dispatch(id)
  core.begun(id, 'd1', UPLOAD, null, clock.now())
  return offersOf(core.planned(id, over, clock.now()))
}
/** `o` assigned to `worker` by its orchestrator, and (`said`, as an honest worker does) the worker's own word that it holds it. */
const accept = (core: TransferState, o: OfferDraft & { to: string }, worker: string, now: number, said = true): Step => {
  const step = core.assigned(o.to, { transferId: o.transferId, batchId: 'b', assignments: [{ attemptId: o.attemptId, worker }] }, now)
  if (said) core.accepted(o.to, { transferId: o.transferId, attemptId: o.attemptId, taskId: o.taskId, worker, coordinator: SELF })
  return step
}
/** The rows a step puts, as [table, key, state]. */
const written = (s: Step): unknown[] => s.ops.map(o => o.type === 'put' ? [o.type, o.table, o.key, (o.value as { state?: string, status?: string }).state ?? (o.value as { status?: string }).status] : [o.type])

t.test('failed deliveries: each failure\'s rows and events, and the recovery wave\'s interventions, attempt numbers and slots', async t => {
  const clock = new ManualClock()
  const { core, offers, times } = await firstWave(t, clock)
  const p = times.planned
  const [o0, o1] = offers as [OfferDraft & { to: string }, OfferDraft & { to: string }]
  clock.advance(10)
  const acc = clock.now()
  core.assigned(SELF, { transferId: 't1', batchId: 'id-1', assignments: [{ attemptId: 'id-3', worker: W1 }, { attemptId: 'id-5', worker: W2 }] }, acc)
  clock.advance(10)
  const r0 = clock.now()
  const failed0 = attemptRow('t1', 0, 'id-3', 'id-2', 'id-1', p, { worker_id: W1, state: 'failed', accepted_at: iso(acc), finished_at: iso(r0), failure_reason: 'worker_lost' })
  const res0 = resultRow('t1', 0, 'id-3', 'id-2', W1, r0, { success: false, sha256: null, etag: null, error: 'worker_lost', outcome: 'failed' })
  t.same(plain(report(core, o0, W1, r0, { success: false, error: 'worker_lost' })), {
    ops: [put('task_attempts', 't1/id-3', failed0), put('chunks', 't1/000000', chunkRow('t1', 0, times.staged[0], { task_id: 'id-2' })), put('task_results', 't1/id-3', res0), put('task_attempts', 't1/id-3', failed0)],
    effects: [ack('id-2', 'id-3', W1, 'failed', 'worker_lost'), { kind: 'emit', event: { type: 'result', row: res0, attempt: failed0 } }, { kind: 'candidates', transferId: 't1' }]
  }, 'a worker lost: the attempt failed, the chunk staged again, the result and its event, a plan asked for')
  const r1 = clock.now()
  const failed1 = attemptRow('t1', 1, 'id-5', 'id-4', 'id-1', p, { worker_id: W2, state: 'failed', accepted_at: iso(acc), finished_at: iso(r1), failure_reason: 'session_displaced' })
  const res1 = resultRow('t1', 1, 'id-5', 'id-4', W2, r1, { success: false, sha256: null, etag: null, error: 'session_displaced', outcome: 'failed' })
  t.same(plain(report(core, o1, W2, r1, { success: false, error: 'session_displaced' })), {
    ops: [put('task_attempts', 't1/id-5', failed1), put('chunks', 't1/000001', chunkRow('t1', 1, times.staged[1], { task_id: 'id-4' })), put('task_results', 't1/id-5', res1), put('task_attempts', 't1/id-5', failed1)],
    effects: [ack('id-4', 'id-5', W2, 'failed', 'session_displaced'), { kind: 'emit', event: { type: 'result', row: res1, attempt: failed1 } }]
  }, 'a displaced session: the same, and no second plan request while one is out')

  clock.advance(10)
  const q = clock.now()
  const iv = (i: number, ivId: string, reason: string, prev: string, worker: string, replacement: string): unknown => ({
    id: ivId, transfer_id: 't1', task_id: i === 0 ? 'id-2' : 'id-4', chunk_index: i, intervention_type: 'overseer_recovery', reason, outcome: 'failure_redelivered',
    orchestrator_id: SELF, previous_attempt_id: prev, previous_worker_id: worker, replacement_attempt_id: replacement, replacement_orchestrator_id: SELF, intervened_at: iso(q)
  })
  const task = (i: number, attemptId: string): TaskRow => taskRow('t1', i, i === 0 ? 'id-2' : 'id-4', attemptId, p, { attempt_count: 2, offered_at: iso(q), accepted_at: iso(acc) })
  const attempt = (i: number, attemptId: string): AttemptRow => attemptRow('t1', i, attemptId, i === 0 ? 'id-2' : 'id-4', 'id-6', q, { attempt_no: 1, attempt_slot: 1, wave_kind: 'recovery', recovery: true })
  const recovery = core.planned('t1', ONLY_SELF, q)
  const rec = plain(recovery)
  t.same(rec.ops.slice(0, 9), [
    put('transfer_assignment_plans', 't1/000001', { transfer_id: 't1', wave: 1, wave_kind: 'recovery', allocation_rule: 'quota_floor_sampled_remainder_by_routing_score_v2', created_at: iso(q), deliveries: [{ orchestrator_id: SELF, routing_score: 1, chunk_count: 2, chunk_indices: [0, 1] }] }),
    put('overseer_interventions', 't1/00000000-id-8', iv(0, 'id-8', 'worker_lost', 'id-3', W1, 'id-7')),
    put('tasks', 't1/id-2', task(0, 'id-7')),
    put('task_attempts', 't1/id-7', attempt(0, 'id-7')),
    put('chunks', 't1/000000', chunkRow('t1', 0, times.staged[0], { state: 'delivering', task_id: 'id-2' })),
    put('overseer_interventions', 't1/00000001-id-10', iv(1, 'id-10', 'session_displaced', 'id-5', W2, 'id-9')),
    put('tasks', 't1/id-4', task(1, 'id-9')),
    put('task_attempts', 't1/id-9', attempt(1, 'id-9')),
    put('chunks', 't1/000001', chunkRow('t1', 1, times.staged[1], { state: 'delivering', task_id: 'id-4' }))
  ], 'the recovery wave: plan 1, each chunk\'s intervention before its task, its second attempt (slot 1), and the chunk')
  t.same(written(recovery).slice(9), [['put', 'task_offer_batches', 't1/id-6', undefined], ['put', 'transfers', 't1', 'in_progress']])
  t.same(rec.effects.slice(0, 2), [{ kind: 'emit', event: { type: 'intervention', row: iv(0, 'id-8', 'worker_lost', 'id-3', W1, 'id-7') } }, { kind: 'emit', event: { type: 'intervention', row: iv(1, 'id-10', 'session_displaced', 'id-5', W2, 'id-9') } }], 'each intervention is emitted')
  t.match(rec.effects[2], { kind: 'io', job: { type: 'offers', waveKind: 'recovery', batches: [{ to: SELF, batchId: 'id-6', offers: [{ attemptId: 'id-7', attemptSlot: 1, excludeWorkers: [W1] }, { attemptId: 'id-9', attemptSlot: 1, excludeWorkers: [W2] }] }] } })
  t.equal(rec.effects.length, 3)

  // Chunk 0 fails twice more (an ordinary failure): its third and fourth attempts use slots 2 and 0.
  let o = offersOf(recovery)[0]!
  const seen: unknown[] = []
  for (let n = 0; n < 3; n++) {
    accept(core, o, W2, clock.now())
    report(core, o, W2, clock.now(), { success: false })
    const next = core.planned('t1', ONLY_SELF, clock.now())
    seen.push([...puts(next, 'task_attempts').map(a => [(a as AttemptRow).attempt_no, (a as AttemptRow).attempt_slot, (a as AttemptRow).recovery]), ...puts(next, 'overseer_interventions').map(r => (r as { reason: string }).reason)])
    o = offersOf(next)[0]!
  }
  t.same(seen, [[[2, 2, true], 'attempt_failed'], [[3, 0, true], 'attempt_failed'], [[4, 1, true], 'attempt_failed']], 'attempt numbers count on; slots go round the three')
})

t.test('a chunk out of attempts fails the transfer: the whole step, open work cancelled, nothing written twice', async t => {
  const clock = new ManualClock()
  const { core, offers, times } = await firstWave(t, clock, { maxAttemptsPerTask: 1 })
  const p = times.planned
  clock.advance(10)
  const acc = clock.now()
  core.assigned(SELF, { transferId: 't1', batchId: 'id-1', assignments: [{ attemptId: 'id-3', worker: W1 }, { attemptId: 'id-5', worker: W2 }] }, acc)
  clock.advance(10)
  const r = clock.now()
  const failed0 = attemptRow('t1', 0, 'id-3', 'id-2', 'id-1', p, { worker_id: W1, state: 'failed', accepted_at: iso(acc), finished_at: iso(r), failure_reason: 'boom' })
  const res0 = resultRow('t1', 0, 'id-3', 'id-2', W1, r, { success: false, sha256: null, etag: null, error: 'boom', outcome: 'failed' })
  const row = transferRow('t1', 2, {
    org_id: 'org-1', coordinator_id: SELF, status: 'failed', started_at: iso(times.staged[1]), chunks_received: 2, bytes_received: 2 * CHUNK, upload: UPLOAD as any, attributable: true,
    error_code: 'delivery_failed', error_message: 'A chunk could not be delivered after repeated attempts.', completed_at: iso(r), cancel_requested: false, cleanup_pending: true, updated_at: iso(r)
  })
  t.same(plain(report(core, offers[0]!, W1, r, { success: false })), {
    ops: [
      put('task_attempts', 't1/id-3', failed0),
      put('tasks', 't1/id-2', taskRow('t1', 0, 'id-2', 'id-3', p, { state: 'failed', assigned_worker_id: W1, accepted_at: iso(acc), failed_at: iso(r), failure_reason: 'attempt_failed' })),
      put('task_attempts', 't1/id-5', attemptRow('t1', 1, 'id-5', 'id-4', 'id-1', p, { worker_id: W2, state: 'cancelled', accepted_at: iso(acc), finished_at: iso(r), failure_reason: 'transfer_failed' })),
      put('tasks', 't1/id-4', taskRow('t1', 1, 'id-4', 'id-5', p, { state: 'cancelled', assigned_worker_id: W2, accepted_at: iso(acc) })),
      put('transfers', 't1', row),
      put('task_results', 't1/id-3', res0),
      put('task_attempts', 't1/id-3', failed0)
    ],
    effects: [
      { kind: 'send', to: SELF, type: 'task_cancel', body: { transferId: 't1', attemptIds: ['id-5'], reason: 'transfer_failed' } },
      { kind: 'emit', event: { type: 'transfer', row } },
      { kind: 'io', job: { type: 'cleanup', transferId: 't1', destinationId: 'd1', abort: UPLOAD, chunks: [{ index: 1, sha256: sha(1) }, { index: 0, sha256: sha(0) }] } },
      ack('id-2', 'id-3', W1, 'failed', 'boom'),
      { kind: 'emit', event: { type: 'result', row: res0, attempt: failed0 } }
    ]
  }, 'the failed task is not cancelled over; the other attempt and task are; the upload is aborted with the cleanup')
  t.equal(core.closedStatus('t1'), 'failed')
})

t.test('a cancel, field by field: open attempts (offered, accepted, checking) and unfinished tasks cancelled, then the abort answers every caller', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId: counter() })
  const offers = planned(clock, core, 't1', 4)
  const [o0, o1, o2] = offers as [OfferDraft & { to: string }, OfferDraft & { to: string }, OfferDraft & { to: string }]
  accept(core, o0, W1, clock.now()); report(core, o0, W1, clock.now()); core.checked('t1', o0.attemptId, true, null, clock.now())
  accept(core, o1, W1, clock.now()); report(core, o1, W1, clock.now())
  accept(core, o2, W2, clock.now())
  clock.advance(10)
  const c = clock.now()
  const r1 = reply()
  const cancel = core.cancel('t1', r1, c)
  t.same(written(cancel), [
    ['put', 'task_attempts', 't1/id-5', 'cancelled'], ['put', 'task_attempts', 't1/id-7', 'cancelled'], ['put', 'task_attempts', 't1/id-9', 'cancelled'],
    ['put', 'tasks', 't1/id-4', 'cancelled'], ['put', 'tasks', 't1/id-6', 'cancelled'], ['put', 'tasks', 't1/id-8', 'cancelled'],
    ['put', 'transfers', 't1', 'in_progress']
  ], 'the delivered chunk\'s attempt and task are left as they are')
  t.same(puts(cancel, 'task_attempts').map(a => [(a as AttemptRow).finished_at, (a as AttemptRow).failure_reason]), [0, 1, 2].map(() => [iso(c), 'transfer_cancelled']))
  t.match(puts(cancel, 'transfers'), [{ cancel_requested: true, updated_at: iso(c) }])
  t.same(plain(cancel).effects, [
    { kind: 'send', to: SELF, type: 'task_cancel', body: { transferId: 't1', attemptIds: ['id-5', 'id-7', 'id-9'], reason: 'transfer_cancelled' } },
    { kind: 'io', job: { type: 'abort', transferId: 't1', destinationId: 'd1', upload: UPLOAD, then: 'cancel' } }
  ])
  t.equal(cancel.reply, undefined, 'answered after the abort')
  t.notOk(core.isLive('t1'), 'a transfer being cancelled is not live')
  t.same(plain(core.planned('t1', ONLY_SELF, clock.now())), EMPTY, 'nothing is planned for it')
  t.same(plain(core.begun('t1', 'd1', null, 'late', clock.now())), EMPTY, 'a late refusal of its upload changes nothing')
  t.same(plain(core.tick(clock.now())), EMPTY, 'the overseer leaves it alone')
  const r2 = reply()
  t.same(plain(core.cancel('t1', r2, clock.now())), EMPTY, 'a second cancel waits for the same abort')
  const before = json(puts(cancel, 'transfers')[0])
  clock.advance(10)
  const d = clock.now()
  const row = { ...before, status: 'cancelled', completed_at: iso(d), cancel_requested: false, cleanup_pending: true, updated_at: iso(d) }
  t.same(plain(core.aborted('t1', d)), {
    ops: [put('transfers', 't1', row)],
    effects: [
      { kind: 'emit', event: { type: 'transfer', row } },
      { kind: 'io', job: { type: 'cleanup', transferId: 't1', destinationId: 'd1', abort: null, chunks: [0, 1, 2, 3].map(i => ({ index: i, sha256: sha(i) })) } },
      { kind: 'reply', reply: { id: 'r' }, value: { ok: true, value: row } },
      { kind: 'reply', reply: { id: 'r' }, value: { ok: true, value: row } }
    ]
  }, 'cancelled: the row, its event, staging freed (the upload already aborted), both callers answered')
  t.same(plain(core.aborted('t1', d)), EMPTY)
})

t.test('answers for transfers closed, unknown, being cancelled or finalized, and refused chunks, exactly', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId: counter() })
  const now = clock.now()
  const NOT_FOUND = { ok: false, status: 404, code: 'BWN_ERR_TRANSFER_NOT_FOUND', detail: 'No such transfer.' }
  const closed = (detail: string): unknown => ({ ok: false, status: 409, code: 'BWN_ERR_TRANSFER_CLOSED', detail })
  const chunk = (id: string, index: number, stored?: TransferRow, s = sha(index)): Step => core.chunk({ transferId: id, index, sha256: s, md5: 'm', length: CHUNK }, now, stored)
  const stored = (status: TransferRow['status'], coordinator = SELF): TransferRow => transferRow('gone', 1, { status, coordinator_id: coordinator })
  t.same(plain(chunk('gone', 0)), { ...EMPTY, reply: NOT_FOUND })
  t.same(plain(chunk('gone', 0, stored('failed'))), { ...EMPTY, reply: closed('The transfer is failed; it takes no more chunks.') })
  t.same(plain(chunk('gone', 0, stored('failed', OTHER))), { ...EMPTY, reply: NOT_FOUND }, 'another coordinator\'s row is not ours to answer for')
  t.same(plain(core.finalize('gone', now)), { ...EMPTY, reply: NOT_FOUND })
  t.same(plain(core.finalize('gone', now, stored('cancelled'))), { ...EMPTY, reply: closed('The transfer is cancelled.') })
  t.same(plain(core.finalize('gone', now, stored('completed'))), { ...EMPTY, reply: { ok: true, value: json(stored('completed')) } })
  t.same(plain(core.cancel('gone', reply(), now)), { ...EMPTY, reply: NOT_FOUND })
  t.same(plain(core.cancel('gone', reply(), now, stored('cancelled'))), { ...EMPTY, reply: { ok: true, value: json(stored('cancelled')) } })
  t.same(plain(core.cancel('gone', reply(), now, stored('failed'))), { ...EMPTY, reply: closed('The transfer is already failed.') })

  // Remembered after leaving memory.
  core.hydrate({ row: transferRow('done', 1, { coordinator_id: SELF, status: 'completed' }), chunks: [], tasks: [], attempts: [], results: [], waves: 0, interventions: 0 }, now, { processStart: true })
  t.same(plain(chunk('done', 0)), { ...EMPTY, reply: closed('The transfer is completed; it takes no more chunks.') })
  t.same(plain(core.finalize('done', now)), { ...EMPTY, reply: closed('The transfer is completed.') })

  core.create(transferRow('t1', 3), now)
  chunk('t1', 0); chunk('t1', 1); chunk('t1', 2)
  t.same(plain(chunk('t1', 1, undefined, sha(9))), { ...EMPTY, reply: { ok: false, status: 409, code: 'BWN_ERR_CHUNK_CONFLICT', detail: 'Chunk 1 was already received with other bytes.', extensions: { chunk_index: 1 } } })
  t.same(plain(chunk('t1', 1)), { ...EMPTY, reply: { ok: true, value: { duplicate: true } } })
  t.match(core.finalize('t1', now).reply, { ok: true })
  t.same(plain(chunk('t1', 3)), { ...EMPTY, reply: closed('The transfer is finalized.') }, 'a chunk past the end after finalize is refused')
  core.cancel('t1', reply(), now)
  t.same(plain(chunk('t1', 1)), { ...EMPTY, reply: closed('The transfer is cancelled; it takes no more chunks.') })
  t.same(plain(core.finalize('t1', now)), { ...EMPTY, reply: closed('The transfer is cancelled.') })

  core.create(transferRow('big', 1002), now)
  chunk('big', 1)
  const missing = core.finalize('big', now)
  t.same(plain(missing), {
    ...EMPTY,
    reply: { ok: false, status: 409, code: 'BWN_ERR_CHUNKS_MISSING', detail: '1001 of 1002 chunks have not been received.', extensions: { missing_chunks: [0, ...Array.from({ length: 999 }, (_v, i) => i + 2)], missing_count: 1001 } }
  }, 'the first 1000 missing chunks are named, all are counted')
})

t.test('progress at its edges: what restarts a worker\'s stall window and what does not', async t => {
  const KiB = 1024
  const LENGTH = 100 * KiB
  interface Report { at: number, moved?: number, bytes?: number, worker?: string, from?: string, transferId?: string, attemptId?: string }
  const answers: Step[] = []
  /** One chunk of 100 KiB accepted by W1 at 0, the overseer ticking on time, `reports` relayed at their times: when the chunk is taken back. */
  const stalledAt = (reports: Report[]): number | null => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    const [o] = planned(clock, core, 't1', 1, LENGTH)
    accept(core, o!, W1, clock.now())
    core.tick(clock.now())
    for (let ms = OVERSEER_TICK_MS; ms <= 3000; ms += OVERSEER_TICK_MS) {
      clock.advance(OVERSEER_TICK_MS)
      for (const r of reports.filter(x => x.at === ms)) {
        answers.push(core.progress(r.from ?? SELF, { worker: r.worker ?? W1, moved: r.moved ?? 0, attempts: r.bytes === undefined ? [] : [{ transferId: r.transferId ?? 't1', attemptId: r.attemptId ?? o!.attemptId, bytes: r.bytes }] }, clock.now()))
      }
      if (puts(core.tick(clock.now()), 'task_attempts').length > 0) return ms
    }
    return null
  }
  t.equal(RESULT_GAP_MS, 1000)
  t.equal(MIN_PROGRESS_BYTES, 64 * KiB)
  t.equal(stalledAt([]), 1000, 'no report: taken back after the window')
  t.equal(stalledAt([{ at: 250, moved: 0 }, { at: 500, moved: 64 * KiB }]), 1500, 'the session total moved on by exactly the threshold: the window restarts')
  t.equal(stalledAt([{ at: 250, moved: 0 }, { at: 500, moved: 64 * KiB - 1 }]), 1000, 'one byte less: it does not')
  t.equal(stalledAt([{ at: 250, moved: 10 * 1024 * KiB }, { at: 500, moved: 10 * 1024 * KiB + 1 }]), 1000, 'a large total that hardly moves is no progress')
  t.equal(stalledAt([{ at: 250, moved: 10 * 1024 * KiB }, { at: 500, moved: 0 }, { at: 750, moved: 64 * KiB }]), 1750, 'a new session (a lower total) counts from its own start')
  t.equal(stalledAt([{ at: 250, moved: 0 }, { at: 500, moved: 64 * KiB }, { at: 750, moved: 100 * KiB }]), 1500, 'progress is measured from the total when it last counted')
  t.equal(stalledAt([{ at: 500, bytes: 64 * KiB }]), 1500, 'the chunk\'s bytes moved on by exactly the threshold')
  t.equal(stalledAt([{ at: 500, bytes: 64 * KiB - 1 }]), 1000, 'one byte less')
  t.equal(stalledAt([{ at: 250, bytes: 10 * KiB }, { at: 500, bytes: 60 * KiB }]), 1000, 'two small steps are two small steps')
  t.equal(stalledAt([{ at: 250, bytes: 90 * KiB }, { at: 500, bytes: LENGTH }]), 1500, 'the chunk\'s last bytes count, however few')
  t.equal(stalledAt([{ at: 250, bytes: LENGTH }, { at: 750, bytes: LENGTH }]), 1250, 'a complete chunk reported again is no new progress')
  t.equal(stalledAt([{ at: 250, bytes: 2 * LENGTH }, { at: 750, bytes: 2 * LENGTH }]), 1250, 'bytes past the chunk\'s length count as its length')
  t.equal(stalledAt([{ at: 250, worker: W2, bytes: 80 * KiB }, { at: 500, bytes: 80 * KiB }]), 1500, 'another worker\'s report on the attempt changes nothing; its holder\'s counts')
  t.equal(stalledAt([{ at: 250, from: OTHER, bytes: 80 * KiB }, { at: 500, bytes: 80 * KiB }]), 1500, 'so does one through another orchestrator')
  t.equal(stalledAt([{ at: 250, from: OTHER, moved: 0 }, { at: 500, from: OTHER, moved: 64 * KiB }, { at: 750, from: OTHER, moved: 128 * KiB }]), 1000, 'a session total through an orchestrator the worker holds nothing through keeps nothing alive')
  t.equal(stalledAt([{ at: 250, moved: 0 }, { at: 250, from: OTHER, moved: 2 ** 50 }, { at: 500, moved: 64 * KiB }]), 1500, 'nor resets the count of the orchestrator it holds work through')
  t.equal(stalledAt([{ at: 250, transferId: 't-unknown', bytes: 80 * KiB }, { at: 250, attemptId: 'nope', bytes: 80 * KiB }]), 1000, 'reports on unknown transfers and attempts are passed over')
  t.same(answers.map(plain).filter(a => JSON.stringify(a) !== JSON.stringify(EMPTY)), [], `none of the ${answers.length} reports writes or sends anything`)
})

t.test('after a restart, restored work counts its worker\'s progress, and its stall strikes no one and steers nothing', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId: counter() })
  const LEN = 1024 * 1024
  // Held through another orchestrator when this process stopped: its worker's word was not kept.
  const row = transferRow('t1', 1, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 1, chunk_size: LEN, total_size: LEN })
  const attempt: AttemptRow = { id: 't1-a0', task_id: 'task-0', transfer_id: 't1', chunk_index: 0, attempt_no: 0, attempt_slot: 0, orchestrator_id: OTHER, worker_id: W1, batch_id: 'b', wave_kind: 'initial', recovery: false, state: 'accepted', offered_at: '', accepted_at: '', finished_at: null, failure_reason: null }
  core.hydrate({ row, chunks: [chunkRow('t1', 0, clock.now(), { state: 'delivering', task_id: 'task-0', length: LEN })], tasks: [], attempts: [attempt], results: [], waves: 1, interventions: 0 }, clock.now(), { processStart: true })
  core.tick(clock.now())
  for (let ms = OVERSEER_TICK_MS; ms <= 2 * RESULT_GAP_MS; ms += OVERSEER_TICK_MS) {
    clock.advance(OVERSEER_TICK_MS)
    core.progress(OTHER, { worker: W1, moved: ms * 1024, attempts: [] }, clock.now())
    t.same(puts(core.tick(clock.now()), 'task_attempts'), [], `${ms} ms: its session total moves on: kept`)
  }
  let stall: Step = { ops: [], effects: [] }
  for (let ms = 0; ms < RESULT_GAP_MS && puts(stall, 'task_attempts').length === 0; ms += OVERSEER_TICK_MS) { clock.advance(OVERSEER_TICK_MS); stall = core.tick(clock.now()) }
  t.equal(puts(stall, 'task_attempts').length, 1, 'quiet for its window: taken back')
  t.same(puts(stall, 'workers'), [], 'no strike: its word was not kept across the restart')
  t.same(stall.effects.filter(e => e.kind === 'log' && (e.obj as { event?: string }).event === 'stall_unclaimed'), [], 'nor counted against its orchestrator')
})

t.test('another orchestrator that named the worker keeps none of its work alive, with no word, or a word that does not check out', async t => {
  const KiB = 1024
  for (const word of ['none', 'forged', 'signed'] as const) {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    const [mine] = planned(clock, core, 't1', 1, 1024 * KiB)
    accept(core, mine!, W1, clock.now()) // held through this orchestrator, on the worker's word; it then goes quiet
    const [theirs] = planned(clock, core, 't2', 1, 1024 * KiB, [{ hotkey: OTHER, workers: 1, score: 1 }])
    t.equal(theirs!.to, OTHER)
    core.assigned(OTHER, { transferId: 't2', batchId: 'b', assignments: [{ attemptId: theirs!.attemptId, worker: W1 }] }, clock.now())
    if (word !== 'none') core.accepted(OTHER, { transferId: 't2', attemptId: theirs!.attemptId, taskId: theirs!.taskId, worker: W1, coordinator: SELF }, () => word === 'signed')
    core.tick(clock.now())
    let takenAt: number | null = null
    for (let ms = OVERSEER_TICK_MS, k = 1; ms <= 3000 && takenAt === null; ms += OVERSEER_TICK_MS, k++) {
      clock.advance(OVERSEER_TICK_MS)
      // OTHER reports the worker moving: its session total, and the bytes of "its" attempt.
      core.progress(OTHER, { worker: W1, moved: k * 128 * KiB, attempts: [{ transferId: 't2', attemptId: theirs!.attemptId, bytes: k * 128 * KiB }] }, clock.now())
      const step = core.tick(clock.now())
      if ((puts(step, 'task_attempts') as AttemptRow[]).some(a => a.id === mine!.attemptId)) takenAt = ms
    }
    if (word === 'signed') t.equal(takenAt, null, 'signed: the worker\'s own word that it holds work through OTHER, its reports keep it alive')
    else t.equal(takenAt, RESULT_GAP_MS, `${word}: the quiet worker's work here is taken back at its window all the same`)
  }
})

t.test('the measured rate: the median of the last 64 accepted deliveries, in any order of arrival; none from a delivery never accepted or of no bytes', async t => {
  const LENGTH = 1000
  /** Chunk i accepted, then reported `dts[i]` ms later: a rate of LENGTH / dts[i] per ms. */
  const deliver = (dts: number[]): TransferState => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    const offers = planned(clock, core, 't1', dts.length, LENGTH)
    dts.forEach((dt, i) => {
      accept(core, offers[i]!, W1, clock.now())
      clock.advance(dt)
      report(core, offers[i]!, W1, clock.now())
    })
    return core
  }
  const rate = (dt: number): number => LENGTH * 1000 / dt
  t.equal(deliver([1000, 250, 500]).measuredRate(), rate(500), 'the median of 1, 4 and 2 kB/s, as they came')
  t.equal(deliver([500, 250, 1000]).measuredRate(), rate(500))

  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId: counter() })
  const [o] = planned(clock, core, 't-unaccepted', 1)
  clock.advance(500)
  report(core, o!, W1, clock.now())
  t.equal(core.measuredRate(), null, 'a result for an offer never accepted gives no sample')
  const [z] = planned(clock, core, 't-empty', 1, 0)
  accept(core, z!, W1, clock.now())
  clock.advance(500)
  report(core, z!, W1, clock.now())
  t.equal(core.measuredRate(), null, 'nor does a chunk of no bytes')
  const [same] = planned(clock, core, 't-instant', 1)
  accept(core, same!, W1, clock.now())
  report(core, same!, W1, clock.now())
  t.equal(core.measuredRate(), null, 'nor a result in the same instant as its acceptance')

  // 65 deliveries, faster each time: the first falls out of the window.
  const faster = Array.from({ length: 65 }, (_v, i) => 200 - i)
  t.equal(deliver(faster).measuredRate(), rate(faster[33]!), 'the median of deliveries 1..64')
  // 64 deliveries, slower each time: all 64 count.
  const slower = Array.from({ length: 64 }, (_v, i) => 100 + i)
  t.equal(deliver(slower).measuredRate(), rate(slower[31]!), 'the median of all 64')
})

t.test('waves of more than 64 chunks go out in batches of 64', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId: counter() })
  const batchesOf = (n: number): number[] => {
    const id = `t-${n}`
    core.create(transferRow(id, n), clock.now())
    for (let i = 0; i < n; i++) core.chunk({ transferId: id, index: i, sha256: sha(i), md5: 'm', length: CHUNK }, clock.now())
    core.dispatch(id)
    core.begun(id, 'd1', UPLOAD, null, clock.now())
    const wave = core.planned(id, ONLY_SELF, clock.now())
    t.equal(puts(wave, 'task_offer_batches').length, jobs(wave, 'offers').flatMap(j => j.type === 'offers' ? j.batches : []).length, `${n}: a batch row for each batch`)
    return jobs(wave, 'offers').flatMap(j => j.type === 'offers' ? j.batches.map(b => b.offers.length) : [])
  }
  t.same(batchesOf(64), [64])
  t.same(batchesOf(65), [64, 1])
  t.same(batchesOf(130), [64, 64, 2])
})

t.test('limits and settings: the exclusion list is capped at 256, a validator\'s time grows with the chunk', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId: counter() })
  const until = iso(clock.now() + 60_000)
  const rows: WorkerStandingRow[] = Array.from({ length: 300 }, (_v, i) => ({
    worker_id: `w-${i}`, hotkey: `w-${i}`, coordinator_id: SELF, status: 'excluded', strikes: [], exclusions: 1, excluded_at: iso(clock.now()), excluded_until: until, exclusion_reason: 'failed_check', updated_at: iso(clock.now())
  }))
  core.loadStanding(rows)
  t.same(core.excludedWorkers(clock.now()), rows.slice(0, 256).map(r => r.hotkey), 'the first 256 excluded workers')
  t.same(core.excludedWorkers(clock.now() + 60_000), [], 'none once their cool-down is over')
  t.same(core.standingOf('w-7'), rows[7])
  t.equal(core.verifyTimeoutFor(16 * 1024 * 1024), 31_000, '15 s and 16 MiB at 1 MiB/s')
  t.equal(core.verifyTimeoutFor(0), 15_000)
})

t.test('the overseer\'s steps, whole: a wave timeout, a stall that fails the transfer, strikes only for workers that moved nothing, a validator\'s timeout', async t => {
  await t.test('a wave timeout: both attempts superseded, their chunks staged, the orchestrator told, a plan asked for', async t => {
    const clock = new ManualClock()
    const { core, times } = await firstWave(t, clock)
    clock.advance(WAVE_TIMEOUT_MS - 1)
    t.same(plain(core.tick(clock.now())), EMPTY)
    clock.advance(1)
    const now = clock.now()
    const step = core.tick(now)
    const superseded = (i: number, attemptId: string, taskId: string): AttemptRow => attemptRow('t1', i, attemptId, taskId, 'id-1', times.planned, { state: 'superseded', finished_at: iso(now), failure_reason: 'wave_timeout' })
    t.same(plain(step).ops.slice(0, 4), [
      put('task_attempts', 't1/id-3', superseded(0, 'id-3', 'id-2')), put('chunks', 't1/000000', chunkRow('t1', 0, times.staged[0], { task_id: 'id-2' })),
      put('task_attempts', 't1/id-5', superseded(1, 'id-5', 'id-4')), put('chunks', 't1/000001', chunkRow('t1', 1, times.staged[1], { task_id: 'id-4' }))
    ])
    t.same(written(step).slice(4), [['put', 'transfers', 't1', 'in_progress']], 'the transfer touched once')
    t.same(plain(step).effects, [{ kind: 'send', to: SELF, type: 'task_cancel', body: { transferId: 't1', attemptIds: ['id-3', 'id-5'], reason: 'superseded' } }, { kind: 'candidates', transferId: 't1' }], 'no strike: nobody held the offers')
  })

  await t.test('the stall limit reached: the transfer fails in that tick and is touched no more', async t => {
    const clock = new ManualClock()
    const { core } = await firstWave(t, clock, { maxStallsPerTask: 1 })
    clock.advance(WAVE_TIMEOUT_MS)
    const step = core.tick(clock.now())
    t.same(written(step), [['put', 'task_attempts', 't1/id-3', 'superseded'], ['put', 'tasks', 't1/id-2', 'failed'], ['put', 'task_attempts', 't1/id-5', 'cancelled'], ['put', 'tasks', 't1/id-4', 'cancelled'], ['put', 'transfers', 't1', 'failed']])
    t.same(plain(step).effects.map((e: any) => e.kind === 'send' ? [e.type, e.body.attemptIds, e.body.reason] : e.kind === 'io' ? [e.job.type, e.job.abort] : [e.kind, e.event.type]), [
      ['task_cancel', ['id-5'], 'transfer_failed'], ['emit', 'transfer'], ['cleanup', UPLOAD], ['task_cancel', ['id-3'], 'superseded']
    ])
    t.match(puts(step, 'tasks')[0], { failure_reason: 'wave_timeout' })
  })

  await t.test('a worker that moved some of its work loses all of it and is not struck; one that moved none is struck once, on its own word only', async t => {
    const MiB = 1024 * 1024
    let asked = 0
    /** `word`: what the worker said of holding its chunks: nothing, its signed word, or a word whose signature does not check out. */
    let last: TransferState | null = null
    const run = (bytes: number, word: 'signed' | 'none' | 'forged' = 'signed', read = false): Step => {
      const clock = new ManualClock()
      const core = last = new TransferState({ self: SELF, newId: counter() })
      const offers = planned(clock, core, 't1', 2, MiB)
      for (const o of offers) {
        accept(core, o, W1, clock.now(), false)
        if (word !== 'none') t.same(plain(core.accepted(o.to, { transferId: o.transferId, attemptId: o.attemptId, taskId: o.taskId, worker: W1, coordinator: SELF }, () => { asked++; return word === 'signed' })), EMPTY, 'a word changes no row')
      }
      if (read) core.read('t1', offers[0]!.attemptId)
      core.tick(clock.now())
      clock.advance(OVERSEER_TICK_MS)
      core.progress(SELF, { worker: W1, moved: 0, attempts: [{ transferId: 't1', attemptId: offers[1]!.attemptId, bytes }] }, clock.now())
      core.tick(clock.now())
      for (let ms = 2 * OVERSEER_TICK_MS; ms < RESULT_GAP_MS; ms += OVERSEER_TICK_MS) { clock.advance(OVERSEER_TICK_MS); core.tick(clock.now()) }
      clock.advance(OVERSEER_TICK_MS)
      return core.tick(clock.now())
    }
    const moved = run(1000)
    t.same(puts(moved, 'task_attempts').map(a => [(a as AttemptRow).id, (a as AttemptRow).state]), [['id-3', 'superseded'], ['id-5', 'superseded']], 'both chunks taken back')
    t.same(puts(moved, 'workers'), [], 'its bytes moved a little: no strike')
    const still = run(0)
    t.same(puts(still, 'task_attempts').length, 2)
    const now = 1_700_000_000_000 + RESULT_GAP_MS
    const standing = { worker_id: W1, hotkey: W1, coordinator_id: SELF, status: 'good', strikes: [{ at: iso(now), reason: 'no_progress', transfer_id: 't1', attempt_id: 'id-3' }], exclusions: 0, excluded_at: null, excluded_until: null, exclusion_reason: null, updated_at: iso(now) }
    t.same(plain({ ops: still.ops.filter(o => o.type === 'put' && o.table === 'workers'), effects: still.effects.filter(e => e.kind === 'emit') }), {
      ops: [put('workers', `standing/${W1}`, standing)],
      effects: [{ kind: 'emit', event: { type: 'worker_standing', row: standing, excluded: false } }]
    }, 'nothing moved: one strike for the worker, however many chunks it held')
    t.ok(asked >= 1, 'the signature was checked when a strike was due')

    asked = 0
    for (const word of ['none', 'forged'] as const) {
      const unsaid = run(0, word)
      t.same(puts(unsaid, 'task_attempts').map(a => (a as AttemptRow).state), ['superseded', 'superseded'], `${word}: both chunks taken back all the same`)
      t.same(puts(unsaid, 'workers'), [], `${word}: no strike without the worker's own word`)
      t.match(unsaid.effects.filter(e => e.kind === 'log' && (e.obj as { event?: string }).event === 'stall_unclaimed'), [{ obj: { worker: W1, orchestrator: SELF } }], `${word}: logged with the orchestrator that named the worker`)
      const next = offersOf(last!.planned('t1', [{ hotkey: SELF, workers: 2, score: 10 }, { hotkey: OTHER, workers: 1, score: 1 }], 1_700_000_000_000 + RESULT_GAP_MS))
      t.same(next.map(x => [x.to, x.excludeWorkers]), [[OTHER, [W1]], [OTHER, [W1]]], `${word}: the chunks go to another orchestrator, and avoid the worker named for themselves only`)
    }
    t.equal(asked, 2, 'a forged word is checked (once per chunk that moved nothing), a missing one never')
    t.same(plain(run(1000, 'forged')).ops.filter((o: any) => o.table === 'workers'), [], 'a worker that moved part of its work is not struck, whatever its word')
    const owned = offersOf(last!.planned('t1', [{ hotkey: SELF, workers: 2, score: 10 }, { hotkey: OTHER, workers: 1, score: 1 }], 1_700_000_000_000 + RESULT_GAP_MS))
    t.same(owned.sort((x, y) => x.chunkIndex - y.chunkIndex).map(x => [x.chunkIndex, x.to, x.excludeWorkers]), [[0, OTHER, [W1]], [1, OTHER, [W1]]], 'work the worker never owned by its word goes to another orchestrator, moved or not')
    const read = run(0, 'signed', true)
    t.same(puts(read, 'task_attempts').length, 2, 'read but silent: both chunks taken back')
    t.same(puts(read, 'workers'), [], 'no strike: the worker read its chunk from this node, whatever its orchestrator relayed of its progress')
  })

  await t.test('a word from another orchestrator, for another worker or coordinator, or of an unknown attempt counts for nothing', async t => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    const [o] = planned(clock, core, 't1', 1)
    accept(core, o!, W1, clock.now(), false)
    const word = { transferId: 't1', attemptId: o!.attemptId, taskId: o!.taskId, worker: W1, coordinator: SELF }
    let asked = 0
    const proved = (): boolean => { asked++; return true }
    core.accepted(OTHER, word, proved)
    core.accepted(SELF, { ...word, worker: W2 }, proved)
    core.accepted(SELF, { ...word, coordinator: OTHER }, proved)
    core.accepted(SELF, { ...word, taskId: 'id-other' }, proved)
    core.accepted(SELF, { ...word, attemptId: 'id-other' }, proved)
    for (let ms = 0; ms <= RESULT_GAP_MS; ms += OVERSEER_TICK_MS) {
      const step = core.tick(clock.now())
      t.same(puts(step, 'workers'), [], 'no strike')
      clock.advance(OVERSEER_TICK_MS)
    }
    t.equal(asked, 0, 'none of them was kept to be checked')
  })

  await t.test('a validator silent past its time: the coordinator checks the destination itself, with the reported etag', async t => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    const [o] = planned(clock, core, 't1', 1)
    accept(core, o!, W1, clock.now())
    report(core, o!, W1, clock.now(), { validators: ['v-1'] })
    clock.advance(core.verifyTimeoutFor(CHUNK))
    t.same(plain(core.tick(clock.now())), {
      ops: [],
      effects: [{ kind: 'io', job: { type: 'check', transferId: 't1', destinationId: 'd1', upload: UPLOAD, attemptId: o!.attemptId, chunk: { index: 0, offset: 0, length: CHUNK, sha256: sha(0), md5: 'md5-0' }, attemptSlot: 0, attemptNo: 0, etag: `"${sha(0)}"` } }]
    })
    t.same(plain(core.tick(clock.now())), EMPTY, 'once')
  })

  await t.test('a chunk that just arrived waits for its dispatch, not the next tick', async t => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    core.create(transferRow('t1', 2), clock.now())
    core.chunk({ transferId: 't1', index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now())
    core.dispatch('t1')
    core.begun('t1', 'd1', UPLOAD, null, clock.now())
    core.planned('t1', ONLY_SELF, clock.now())
    t.same(plain(core.planned('t1', ONLY_SELF, clock.now())), EMPTY, 'a second plan with nothing pending offers nothing')
    t.same(effects(core.chunk({ transferId: 't1', index: 1, sha256: sha(1), md5: 'm', length: CHUNK }, clock.now()), 'timer').length, 1)
    clock.advance(OVERSEER_TICK_MS)
    t.same(plain(core.tick(clock.now())), EMPTY)
    t.same(plain(core.dispatch('t1')), { ops: [], effects: [{ kind: 'candidates', transferId: 't1' }] })
    t.same(plain(core.dispatch('t-unknown')), EMPTY)
    t.same(plain(core.planned('t-unknown', ONLY_SELF, clock.now())), EMPTY)
  })
})

t.test('no worker: the answer\'s rows; the chunk goes to another orchestrator when one can take it, and a failed delivery does not avoid its orchestrator', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId: counter() })
  const [o] = planned(clock, core, 't1', 1)
  const p = clock.now()
  clock.advance(5)
  const none = core.assigned(SELF, { transferId: 't1', batchId: 'id-1', assignments: [{ attemptId: o!.attemptId, worker: null }] }, clock.now())
  t.same(plain(none), {
    ops: [
      put('task_attempts', 't1/id-3', attemptRow('t1', 0, 'id-3', 'id-2', 'id-1', p, { state: 'failed', finished_at: iso(clock.now()), failure_reason: 'no worker available' })),
      put('chunks', 't1/000000', chunkRow('t1', 0, p, { task_id: 'id-2' }))
    ],
    effects: []
  })
  clock.advance(NO_WORKER_WAIT)
  t.equal(effects(core.tick(clock.now()), 'candidates').length, 1)
  const FLEET = [{ hotkey: SELF, workers: 1, score: 10 }, { hotkey: OTHER, workers: 1, score: 1 }]
  const away = core.planned('t1', FLEET, clock.now())
  t.same(offersOf(away).map(x => x.to), [OTHER], 'the orchestrator without a worker is avoided')
  t.match(puts(away, 'transfer_assignment_plans'), [{ deliveries: [{ orchestrator_id: OTHER, routing_score: 1, chunk_count: 1, chunk_indices: [0] }] }])
  t.equal((puts(away, 'transfer_assignment_plans')[0] as { deliveries: unknown[] }).deliveries.length, 1, 'an orchestrator given nothing is not in the plan')
  t.match(puts(away, 'overseer_interventions'), [{ reason: 'no_worker', outcome: 'failure_redelivered', orchestrator_id: SELF, replacement_orchestrator_id: OTHER }])
  const best = new TransferState({ self: SELF, newId: counter() })
  best.create(transferRow('t2', 1), clock.now())
  best.chunk({ transferId: 't2', index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now())
  best.dispatch('t2')
  best.begun('t2', 'd1', UPLOAD, null, clock.now())
  const first = offersOf(best.planned('t2', FLEET, clock.now()))[0]!
  t.equal(first.to, SELF, 'the best score takes the chunk')
  accept(best, first, W1, clock.now())
  report(best, first, W1, clock.now(), { success: false })
  t.same(offersOf(best.planned('t2', FLEET, clock.now())).map(x => x.to), [SELF], 'after a failed delivery (not its orchestrator\'s fault) it may take it again')
})

t.test('a mixed answer (one worker, one none) asks again at the next tick; the rows of a wave over two orchestrators name each one\'s score', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId: counter() })
  const offers = planned(clock, core, 't1', 2)
  core.assigned(SELF, { transferId: 't1', batchId: 'id-1', assignments: [{ attemptId: offers[0]!.attemptId, worker: W1 }, { attemptId: offers[1]!.attemptId, worker: null }] }, clock.now())
  clock.advance(OVERSEER_TICK_MS)
  t.equal(effects(core.tick(clock.now()), 'candidates').length, 1, 'a worker was found: no wait')

  const four = new TransferState({ self: SELF, newId: counter() })
  four.create(transferRow('t4', 4), clock.now())
  for (let i = 0; i < 4; i++) four.chunk({ transferId: 't4', index: i, sha256: sha(i), md5: 'm', length: CHUNK }, clock.now())
  four.dispatch('t4')
  four.begun('t4', 'd1', UPLOAD, null, clock.now())
  const wave = four.planned('t4', [{ hotkey: SELF, workers: 1, score: 3 }, { hotkey: OTHER, workers: 1, score: 1 }], clock.now())
  const plan = puts(wave, 'transfer_assignment_plans')[0] as { deliveries: Array<{ orchestrator_id: string, routing_score: number, chunk_count: number, chunk_indices: number[] }> }
  const byOrch = (orch: string): number[] => offersOf(wave).filter(x => x.to === orch).map(x => x.chunkIndex)
  t.same(new Map(plan.deliveries.map(d => [d.orchestrator_id, [d.routing_score, d.chunk_count, d.chunk_indices]])), new Map([[SELF, [3, 3, byOrch(SELF)]], [OTHER, [1, 1, byOrch(OTHER)]]]), 'three chunks for the score of 3, one for 1')
  t.same(puts(wave, 'task_offer_batches').map(b => [(b as { orchestrator_id: string }).orchestrator_id, (b as { attempt_ids: string[] }).attempt_ids.length]).sort(), [[OTHER, 1], [SELF, 3]])
})

/** Transfer 't1' of `n` chunks, every chunk delivered by W1 (chunk 0 verified by 'v-1'), finalized: its completion under way. */
function delivered (clock: ManualClock, n: number, config = {}): { core: TransferState, offers: Array<OfferDraft & { to: string }> } {
  const core = new TransferState({ self: SELF, newId: counter(), config })
  const offers = planned(clock, core, 't1', n)
  offers.forEach((o, i) => {
    accept(core, o, W1, clock.now())
    if (i === 0) {
      report(core, o, W1, clock.now(), { validators: ['v-1'] })
      core.verdict('v-1', { transferId: 't1', attemptId: o.attemptId, chunkIndex: 0, verdict: 'verified', sha256: o.sha256, detail: null }, clock.now())
    } else {
      report(core, o, W1, clock.now())
      core.checked('t1', o.attemptId, true, null, clock.now())
    }
  })
  core.finalize('t1', clock.now())
  return { core, offers }
}

t.test('the destination\'s answers to completion: parts to deliver again, a retry, a refusal, a completion without a stored name, one after a cancel', async t => {
  await t.test('redelivery counts a chunk out of delivered (and verified only when it was); a stale request for a chunk already staged does nothing', async t => {
    const clock = new ManualClock()
    const { core, offers } = delivered(clock, 3)
    const counts = (s: Step): unknown => (puts(s, 'transfers') as TransferRow[]).map(r => [r.chunks_delivered, r.chunks_verified, r.bytes_delivered])
    const one = core.completedUpload({ transferId: 't1', ok: false, retry: false, redeliver: [1], error: 'BWN_ERR_DESTINATION_INCOMPLETE' }, clock.now())
    t.same(written(one), [['put', 'task_attempts', `t1/${offers[1]!.attemptId}`, 'failed'], ['put', 'chunks', 't1/000001', 'staged'], ['put', 'transfers', 't1', 'in_progress']])
    t.same(counts(one), [[2, 1, 2 * CHUNK]], 'an unverified chunk: delivered less one, verified as it was')
    t.same(plain(one).effects, [{ kind: 'candidates', transferId: 't1' }])
    const stale = core.completedUpload({ transferId: 't1', ok: false, retry: false, redeliver: [1], error: 'BWN_ERR_DESTINATION_INCOMPLETE' }, clock.now())
    t.same(written(stale), [['put', 'transfers', 't1', 'in_progress']])
    t.same(counts(stale), [[2, 1, 2 * CHUNK]], 'not counted out twice')
    const verified = core.completedUpload({ transferId: 't1', ok: false, retry: false, redeliver: [0], error: 'BWN_ERR_DESTINATION_INCOMPLETE' }, clock.now())
    t.same(counts(verified), [[1, 0, CHUNK]], 'a verified chunk: out of both')
  })

  await t.test('a redelivery that spends a chunk\'s last attempt fails the transfer and stops there', async t => {
    const clock = new ManualClock()
    const { core, offers } = delivered(clock, 2, { maxAttemptsPerTask: 1 })
    const step = core.completedUpload({ transferId: 't1', ok: false, retry: false, redeliver: [0, 1], error: 'BWN_ERR_DESTINATION_INCOMPLETE' }, clock.now())
    t.same(written(step), [['put', 'task_attempts', `t1/${offers[0]!.attemptId}`, 'failed'], ['put', 'tasks', `t1/${offers[0]!.taskId}`, 'failed'], ['put', 'transfers', 't1', 'failed'], ['put', 'transfers', 't1', 'failed']])
    t.same(plain(step).effects.map((e: any) => e.kind === 'io' ? [e.job.type, e.job.abort] : [e.kind, e.event?.type]), [['emit', 'transfer'], ['cleanup', UPLOAD]])
    t.match(puts(step, 'transfers')[0], { chunks_delivered: 1, error_code: 'delivery_failed' }, 'chunk 1 was not touched')
  })

  await t.test('a retry sets a timer; a refusal fails the transfer with its reason', async t => {
    const clock = new ManualClock()
    const { core } = delivered(clock, 1)
    t.same(plain(core.completedUpload({ transferId: 't1', ok: false, retry: true, redeliver: [], error: 'BWN_ERR_DESTINATION_UNAVAILABLE' }, clock.now())), { ops: [], effects: [{ kind: 'timer', ms: 2000, msg: { type: 'complete-retry', transferId: 't1' } }] })
    t.same(jobs(core.completeRetry('t1'), 'complete').length, 1)
    const refused = core.completedUpload({ transferId: 't1', ok: false, retry: false, redeliver: [], error: 'BWN_ERR_DESTINATION_REFUSED' }, clock.now())
    t.same(written(refused), [['put', 'transfers', 't1', 'failed']])
    t.match(puts(refused, 'transfers'), [{ error_code: 'destination_refused', error_message: 'The destination refused to complete the object.', cleanup_pending: true }])
    t.same(plain(refused).effects.map((e: any) => e.kind === 'io' ? [e.job.type, e.job.abort] : [e.kind, e.event?.type]), [['emit', 'transfer'], ['cleanup', UPLOAD]])
  })

  await t.test('completed without a stored name: the row keeps none', async t => {
    const clock = new ManualClock()
    const { core } = delivered(clock, 1)
    const done = core.completedUpload({ transferId: 't1', ok: true, retry: false, redeliver: [], error: null }, clock.now())
    const row = puts(done, 'transfers')[0] as TransferRow
    t.equal(row.status, 'completed')
    t.notOk('stored_filename' in row)
  })

  await t.test('a cancel while completion runs wins: the destination\'s success is not taken', async t => {
    const clock = new ManualClock()
    const { core } = delivered(clock, 1)
    core.cancel('t1', reply(), clock.now())
    t.same(plain(core.completedUpload({ transferId: 't1', ok: true, retry: false, redeliver: [], error: null, storedName: 'x' }, clock.now())), EMPTY)
    t.match(puts(core.aborted('t1', clock.now()), 'transfers'), [{ status: 'cancelled' }])
  })
})

t.test('hydration, whole steps: rechecks with their recorded result, watched offers, own work ended, a pending transfer started, delivered chunks kept', async t => {
  const base = { tasks: [], results: [], waves: 1, interventions: 0 }
  const now = 1_700_000_000_000
  const attempt = (id: string, i: number, state: AttemptRow['state'], orch: string, over: Partial<AttemptRow> = {}): AttemptRow =>
    ({ id: `${id}-a${i}`, task_id: `task-${i}`, transfer_id: id, chunk_index: i, attempt_no: 0, attempt_slot: 0, orchestrator_id: orch, worker_id: W1, batch_id: 'b', wave_kind: 'initial', recovery: false, state, offered_at: '', accepted_at: '', finished_at: null, failure_reason: null, ...over })
  const task = (id: string, i: number): TaskRow => ({ id: `task-${i}`, transfer_id: id, chunk_index: i, state: 'offered', orchestrator_id: SELF, assigned_worker_id: W1, current_attempt_id: `${id}-a${i}`, attempt_count: 1, created_at: '', offered_at: '', accepted_at: '', completed_at: null, failed_at: null, failure_reason: null })

  await t.test('a check that was running: run again, and its recorded result settles it', async t => {
    const clock = new ManualClock(now)
    const core = new TransferState({ self: SELF, newId: counter() })
    const row = transferRow('t1', 1, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 1 })
    const result = resultRow('t1', 0, 't1-a0', 'task-0', W1, now, { etag: '"x"' })
    const s = core.hydrate({ ...base, row, chunks: [chunkRow('t1', 0, now, { state: 'delivering', task_id: 'task-0' })], tasks: [task('t1', 0)], attempts: [attempt('t1', 0, 'checking', OTHER)], results: [result] }, now, { processStart: true })
    t.same(plain(s), { ops: [], effects: [{ kind: 'io', job: { type: 'check', transferId: 't1', destinationId: 'd1', upload: UPLOAD, attemptId: 't1-a0', chunk: { index: 0, offset: 0, length: CHUNK, sha256: sha(0), md5: 'md5-0' }, attemptSlot: 0, attemptNo: 0, etag: '"x"' } }] })
    const ok = core.checked('t1', 't1-a0', true, null, now)
    t.match(puts(ok, 'chunks'), [{ state: 'delivered', etag: '"x"' }], 'the etag the worker reported')
    t.same(plain(ok).effects.filter((e: any) => e.kind === 'emit'), [{ kind: 'emit', event: { type: 'result', row: json(result), attempt: json(puts(ok, 'task_attempts')[0]) } }], 'and its result is emitted')
  })

  await t.test('a check that was running before the upload was recorded: watched as accepted', async t => {
    const clock = new ManualClock(now)
    const core = new TransferState({ self: SELF, newId: counter() })
    const row = transferRow('t1', 1, { coordinator_id: SELF, status: 'in_progress', upload: null, chunks_received: 1 })
    const s = core.hydrate({ ...base, row, chunks: [chunkRow('t1', 0, now, { state: 'delivering', task_id: 'task-0' })], tasks: [task('t1', 0)], attempts: [attempt('t1', 0, 'checking', OTHER)], results: [resultRow('t1', 0, 't1-a0', 'task-0', W1, now)] }, now, { processStart: true })
    t.same(plain(s), EMPTY)
    core.tick(clock.now())
    const moved: unknown[] = []
    for (let ms = OVERSEER_TICK_MS; ms <= RESULT_GAP_MS; ms += OVERSEER_TICK_MS) { clock.advance(OVERSEER_TICK_MS); moved.push(...puts(core.tick(clock.now()), 'task_attempts')) }
    t.match(moved, [{ id: 't1-a0', state: 'superseded', failure_reason: 'result_gap' }])
  })

  await t.test('another orchestrator\'s offer: watched as an offer, taken back at the wave timeout, not the stall window', async t => {
    const clock = new ManualClock(now)
    const core = new TransferState({ self: SELF, newId: counter() })
    const row = transferRow('t1', 1, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 1 })
    t.same(plain(core.hydrate({ ...base, row, chunks: [chunkRow('t1', 0, now, { state: 'delivering', task_id: 'task-0' })], tasks: [task('t1', 0)], attempts: [attempt('t1', 0, 'offered', OTHER, { worker_id: null })] }, now, { processStart: true })), EMPTY)
    core.tick(clock.now())
    let moved: unknown[] = []
    let at = 0
    for (let ms = OVERSEER_TICK_MS; ms <= WAVE_TIMEOUT_MS && moved.length === 0; ms += OVERSEER_TICK_MS) {
      clock.advance(OVERSEER_TICK_MS)
      moved = puts(core.tick(clock.now()), 'task_attempts')
      at = ms
    }
    t.equal(at, WAVE_TIMEOUT_MS)
    t.match(moved, [{ id: 't1-a0', failure_reason: 'wave_timeout' }])
  })

  await t.test('own router\'s accepted work at a process start: ended, the transfer touched, recovery planned', async t => {
    const core = new TransferState({ self: SELF, newId: counter() })
    const row = transferRow('t1', 1, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 1 })
    const s = core.hydrate({ ...base, row, chunks: [chunkRow('t1', 0, now, { state: 'delivering', task_id: 'task-0' })], tasks: [task('t1', 0)], attempts: [attempt('t1', 0, 'accepted', SELF)] }, now, { processStart: true })
    t.same(written(s), [['put', 'task_attempts', 't1/t1-a0', 'superseded'], ['put', 'chunks', 't1/000000', 'staged'], ['put', 'transfers', 't1', 'in_progress']])
    t.same(plain(s).effects, [{ kind: 'candidates', transferId: 't1' }])
  })

  await t.test('a pending transfer with a staged chunk: dispatched, begun, and started by its first wave', async t => {
    const clock = new ManualClock(now)
    const core = new TransferState({ self: SELF, newId: counter() })
    const row = transferRow('t1', 2, { coordinator_id: SELF, chunks_received: 2 })
    const s = core.hydrate({ ...base, row, chunks: [chunkRow('t1', 0, now), chunkRow('t1', 1, now, { state: 'delivered', delivered_attempt_id: 'old', attempt_slot: 0 })], tasks: [], attempts: [] }, now, { processStart: true })
    t.same(plain(s), { ops: [], effects: [{ kind: 'timer', ms: DISPATCH_DEBOUNCE_MS, msg: { type: 'dispatch', transferId: 't1' } }] })
    clock.advance(DISPATCH_DEBOUNCE_MS)
    t.same(jobs(core.dispatch('t1')).map(j => j.type), ['begin'])
    core.begun('t1', 'd1', UPLOAD, null, clock.now())
    const wave = core.planned('t1', ONLY_SELF, clock.now())
    t.same(offersOf(wave).map(o => o.chunkIndex), [0], 'the delivered chunk is not offered again')
    const started = clock.now()
    t.match(puts(wave, 'transfers'), [{ status: 'in_progress', started_at: iso(started) }])
    const [o] = offersOf(wave)
    clock.advance(100)
    accept(core, o!, W1, clock.now())
    report(core, o!, W1, clock.now(), { success: false })
    t.match(puts(core.planned('t1', ONLY_SELF, clock.now()), 'transfers'), [{ status: 'in_progress', started_at: iso(started) }], 'a later wave keeps the start time')
  })
})

t.test('more edges of delivery: ties spread by transfer, a partial recovery wave, the no_worker wait after a worker was found, workers a chunk avoids, results from elsewhere', async t => {
  await t.test('one chunk over orchestrators of equal score: the transfer decides which, so transfers spread', async t => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    const EQUAL = [{ hotkey: SELF, workers: 1, score: 1 }, { hotkey: OTHER, workers: 1, score: 1 }]
    const chosen = ['ta', 'tb', 'tc', 'td', 'te', 'tf', 'tg', 'th'].map(id => {
      core.create(transferRow(id, 1), clock.now())
      core.chunk({ transferId: id, index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now())
      core.dispatch(id)
      core.begun(id, 'd1', UPLOAD, null, clock.now())
      const wave = core.planned(id, EQUAL, clock.now())
      t.equal((puts(wave, 'transfer_assignment_plans')[0] as { deliveries: unknown[] }).deliveries.length, 1, `${id}: the plan names only the orchestrator given the chunk`)
      return offersOf(wave)[0]!.to
    })
    t.same(new Set(chosen), new Set([SELF, OTHER]), `both are chosen: ${chosen.join(' ')}`)
  })

  await t.test('chunks arriving one at a time are shared by routing score over the whole transfer, as when they arrive together', async t => {
    const SCORED = [{ hotkey: 'orch-a', workers: 1, score: 0.5 }, { hotkey: 'orch-b', workers: 1, score: 0.3 }, { hotkey: 'orch-c', workers: 1, score: 0.2 }]
    const split = (oneByOne: boolean): Record<string, number[]> => {
      const clock = new ManualClock()
      const core = new TransferState({ self: SELF, newId: counter() })
      core.create(transferRow('t1', 10), clock.now())
      const to: Record<string, number[]> = {}
      const take = (wave: ReturnType<typeof core.planned>): void => { for (const o of offersOf(wave)) (to[o.to] ??= []).push(o.chunkIndex) }
      for (let i = 0; i < 10; i++) {
        core.chunk({ transferId: 't1', index: i, sha256: sha(i), md5: 'm', length: CHUNK }, clock.now())
        if (oneByOne || i === 9) {
          core.dispatch('t1')
          if (i === 0 || !oneByOne) core.begun('t1', 'd1', UPLOAD, null, clock.now())
          take(core.planned('t1', SCORED, clock.now()))
        }
      }
      return to
    }
    const together = split(false)
    t.same(Object.fromEntries(Object.entries(together).map(([k, v]) => [k, v.length])), { 'orch-a': 5, 'orch-b': 3, 'orch-c': 2 }, 'all at once: 5, 3 and 2 of 10 chunks (the quotas of 0.5, 0.3, 0.2)')
    t.same(split(true), together, 'one at a time: the same chunks to the same orchestrators, not every chunk to the highest score')
  })

  await t.test('one-chunk transfers reach each orchestrator as often as its routing score says, not all the top one', async t => {
    const SCORED = [{ hotkey: 'orch-a', workers: 1, score: 0.5 }, { hotkey: 'orch-b', workers: 1, score: 0.3 }, { hotkey: 'orch-c', workers: 1, score: 0.2 }]
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    const to: Record<string, number> = {}
    for (let k = 0; k < 1000; k++) {
      const id = `transfer-${k}`
      core.create(transferRow(id, 1), clock.now())
      core.chunk({ transferId: id, index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now())
      core.dispatch(id)
      core.begun(id, 'd1', UPLOAD, null, clock.now())
      for (const o of offersOf(core.planned(id, SCORED, clock.now()))) to[o.to] = (to[o.to] ?? 0) + 1
    }
    // Largest remainders gave all 1000 to orch-a. Three standard deviations at 1000 transfers: about 45.
    t.ok(Math.abs(to['orch-a']! - 500) <= 50 && Math.abs(to['orch-b']! - 300) <= 45 && Math.abs(to['orch-c']! - 200) <= 40, `1000 one-chunk transfers: ${JSON.stringify(to)} (expected about 500, 300, 200)`)
  })

  await t.test('a wave with one chunk recovering and one new is a recovery wave; a recovered chunk is not recovered again', async t => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    core.create(transferRow('t1', 3), clock.now())
    core.chunk({ transferId: 't1', index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now())
    core.dispatch('t1')
    core.begun('t1', 'd1', UPLOAD, null, clock.now())
    const [o0] = offersOf(core.planned('t1', ONLY_SELF, clock.now()))
    accept(core, o0!, W1, clock.now())
    report(core, o0!, W1, clock.now(), { success: false })
    core.chunk({ transferId: 't1', index: 1, sha256: sha(1), md5: 'm', length: CHUNK }, clock.now())
    core.dispatch('t1')
    const wave = core.planned('t1', ONLY_SELF, clock.now())
    t.same(offersOf(wave).map(o => o.chunkIndex), [0, 1])
    t.same(jobs(wave, 'offers').map(j => j.type === 'offers' && j.waveKind), ['recovery'])
    t.same(puts(wave, 'overseer_interventions').map(r => (r as { chunk_index: number }).chunk_index), [0], 'an intervention for the recovering chunk only')
    // Chunk 1 finds no worker: it waits, and chunk 0's recovery, done, does not make it ask at once.
    const o1 = offersOf(wave).find(o => o.chunkIndex === 1)!
    const none = core.assigned(SELF, { transferId: 't1', batchId: 'b', assignments: [{ attemptId: o1.attemptId, worker: null }] }, clock.now())
    t.same(effects(none, 'candidates'), [])
    clock.advance(NO_WORKER_WAIT)
    t.equal(effects(core.tick(clock.now()), 'candidates').length, 1)
    const again = core.planned('t1', ONLY_SELF, clock.now())
    t.same(offersOf(again).map(o => [o.chunkIndex, o.excludeWorkers]), [[1, []]], 'an attempt no worker took names no worker to avoid')
  })

  await t.test('a worker found resets the no_worker wait', async t => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    let [o] = planned(clock, core, 't1', 1)
    const waitAfterNone = (): number => {
      core.assigned(SELF, { transferId: 't1', batchId: 'b', assignments: [{ attemptId: o!.attemptId, worker: null }] }, clock.now())
      for (let ms = OVERSEER_TICK_MS; ms <= 10_000; ms += OVERSEER_TICK_MS) {
        clock.advance(OVERSEER_TICK_MS)
        if (effects(core.tick(clock.now()), 'candidates').length > 0) {
          o = offersOf(core.planned('t1', ONLY_SELF, clock.now()))[0]
          return ms
        }
      }
      return -1
    }
    t.equal(waitAfterNone(), 500)
    t.same(plain(core.assigned(OTHER, { transferId: 't1', batchId: 'b', assignments: [{ attemptId: o!.attemptId, worker: null }] }, clock.now())), EMPTY, 'an answer from an orchestrator the offer did not go to is ignored')
    t.same(plain(core.assigned(SELF, { transferId: 't1', batchId: 'b', assignments: [] }, clock.now())), EMPTY)
    t.equal(waitAfterNone(), 1000, 'a second answer in a row waits twice as long (the ignored ones are not counted)')
    accept(core, o!, W1, clock.now())
    report(core, o!, W1, clock.now(), { success: false })
    o = offersOf(core.planned('t1', ONLY_SELF, clock.now()))[0]
    t.equal(waitAfterNone(), 500, 'after a worker took the chunk, the wait starts over')
  })

  await t.test('a chunk avoids at most 64 of the workers that failed it', async t => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter(), config: { maxAttemptsPerTask: 100 } })
    let [o] = planned(clock, core, 't1', 1)
    for (let i = 0; i < 66; i++) {
      accept(core, o!, `w-${i}`, clock.now())
      report(core, o!, `w-${i}`, clock.now(), { success: false })
      o = offersOf(core.planned('t1', ONLY_SELF, clock.now()))[0]
    }
    t.same(o!.excludeWorkers, Array.from({ length: 64 }, (_v, i) => `w-${i}`))
  })

  await t.test('results: for an offer not yet accepted, from another worker, with another hash, and a worker\'s result keeps its other work', async t => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    const offers = planned(clock, core, 't1', 3)
    const refused = (s: Step): unknown => effects(s, 'send').map(e => e.body)
    const early = report(core, offers[0]!, W1, clock.now())
    t.same(written(early), [], 'a result before the acceptance names a worker nobody assigned: nothing is taken')
    t.match(refused(early), [{ attemptId: offers[0]!.attemptId, received: false, status: 'rejected', reason: 'unknown_attempt' }])
    accept(core, offers[1]!, W1, clock.now())
    const other = report(core, offers[1]!, W2, clock.now(), { success: false })
    t.same(written(other), [], 'a result naming another worker than the assigned one is refused: no attempt ends, nobody is struck')
    t.match(refused(other), [{ attemptId: offers[1]!.attemptId, received: false, status: 'rejected', reason: 'unknown_attempt' }])
    const own = report(core, offers[1]!, W1, clock.now())
    t.match(puts(own, 'task_attempts'), [{ worker_id: W1, state: 'checking' }], 'the assigned worker\'s own result is taken')
    t.match(puts(own, 'task_results'), [{ worker_id: W1 }])
    accept(core, offers[2]!, W2, clock.now())
    const lie = report(core, offers[2]!, W2, clock.now(), { sha256: sha(9) })
    t.match(puts(lie, 'task_results'), [{ outcome: 'integrity_mismatch', sha256: sha(9) }])
    t.match(puts(core.planned('t1', ONLY_SELF, clock.now()), 'overseer_interventions'), [{ chunk_index: 2, reason: 'integrity_mismatch', outcome: 'failure_redelivered' }])

    const held = new TransferState({ self: SELF, newId: counter() })
    const two = planned(clock, held, 't2', 2)
    for (const x of two) accept(held, x, W1, clock.now())
    held.tick(clock.now())
    const taken: Array<[number, unknown[]]> = []
    for (let ms = OVERSEER_TICK_MS; ms <= 2000; ms += OVERSEER_TICK_MS) {
      clock.advance(OVERSEER_TICK_MS)
      if (ms === 250) report(held, two[0]!, W1, clock.now())
      const moved = puts(held.tick(clock.now()), 'task_attempts')
      if (moved.length > 0) taken.push([ms, moved.map(a => (a as AttemptRow).chunk_index)])
    }
    t.same(taken, [[1250, [1]]], 'the result at 250 ms restarted the worker\'s window for its other chunk')
  })

  await t.test('a destination check that fails: the chunk is delivered again for an integrity mismatch', async t => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    const [o] = planned(clock, core, 't1', 1)
    accept(core, o!, W1, clock.now())
    report(core, o!, W1, clock.now())
    const bad = core.checked('t1', o!.attemptId, false, 'md5 differs', clock.now())
    t.match(puts(bad, 'task_attempts'), [{ state: 'failed', failure_reason: 'md5 differs' }])
    t.match(puts(core.planned('t1', ONLY_SELF, clock.now()), 'overseer_interventions'), [{ reason: 'integrity_mismatch' }])
  })

  await t.test('a delivery before every chunk has arrived is no crash point; a dispatch with nothing pending does nothing', async t => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    core.create(transferRow('t1', 2), clock.now())
    core.chunk({ transferId: 't1', index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now())
    t.same(plain(core.planned('t1', ONLY_SELF, clock.now())), EMPTY, 'no plan before the upload has begun')
    core.dispatch('t1')
    core.begun('t1', 'd1', UPLOAD, null, clock.now())
    const [o] = offersOf(core.planned('t1', ONLY_SELF, clock.now()))
    t.same(plain(core.dispatch('t1')), EMPTY)
    accept(core, o!, W1, clock.now())
    report(core, o!, W1, clock.now())
    t.same(effects(core.checked('t1', o!.attemptId, true, null, clock.now()), 'fault'), [])
  })

  await t.test('the upload refused: the transfer fails with the reason', async t => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    core.create(transferRow('t1', 1), clock.now())
    core.chunk({ transferId: 't1', index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now())
    core.dispatch('t1')
    t.match(puts(core.begun('t1', 'd1', null, 'quota', clock.now()), 'transfers'), [{ status: 'failed', error_code: 'destination_unavailable', error_message: 'The destination could not start the upload.' }])
  })
})

t.test('hydration: a staged chunk whose attempt is still open is not offered twice; a hydrated task is reused', async t => {
  const now = 1_700_000_000_000
  const core = new TransferState({ self: SELF, newId: counter() })
  const row = transferRow('t1', 2, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 2 })
  const task = (i: number, state: TaskRow['state'] = 'offered'): TaskRow => ({ id: `task-${i}`, transfer_id: 't1', chunk_index: i, state, orchestrator_id: OTHER, assigned_worker_id: null, current_attempt_id: `a${i}`, attempt_count: 1, created_at: '', offered_at: '', accepted_at: null, completed_at: null, failed_at: null, failure_reason: null })
  const attempt = (i: number, state: AttemptRow['state']): AttemptRow => ({ id: `a${i}`, task_id: `task-${i}`, transfer_id: 't1', chunk_index: i, attempt_no: 0, attempt_slot: 0, orchestrator_id: OTHER, worker_id: null, batch_id: 'b', wave_kind: 'initial', recovery: false, state, offered_at: '', accepted_at: null, finished_at: null, failure_reason: null })
  const s = core.hydrate({ row, chunks: [chunkRow('t1', 0, now), chunkRow('t1', 1, now)], tasks: [task(0), task(1)], attempts: [attempt(0, 'offered'), attempt(1, 'superseded')], results: [], waves: 1, interventions: 0 }, now, { processStart: true })
  t.same(plain(s), { ops: [], effects: [{ kind: 'timer', ms: DISPATCH_DEBOUNCE_MS, msg: { type: 'dispatch', transferId: 't1' } }] })
  core.dispatch('t1')
  const wave = core.planned('t1', ONLY_SELF, now)
  t.same(offersOf(wave).map(o => [o.chunkIndex, o.taskId, o.attemptSlot]), [[1, 'task-1', 1]], 'only the chunk whose attempt ended, under its task, in its next slot')
  t.match(puts(wave, 'transfer_assignment_plans'), [{ wave: 1 }], 'waves count on from the store')
})

t.test('closed transfers: exactly the last CLOSED_MEMORY are remembered', async t => {
  const core = new TransferState({ self: SELF, newId: counter() })
  const close = (id: string): void => { core.hydrate({ row: transferRow(id, 1, { coordinator_id: SELF, status: 'failed' }), chunks: [], tasks: [], attempts: [], results: [], waves: 0, interventions: 0 }, 0, { processStart: true }) }
  for (let i = 0; i <= 4096; i++) close(`c-${i}`)
  t.equal(core.closedStatus('c-0'), undefined)
  t.equal(core.closedStatus('c-1'), 'failed')
  t.equal(core.closedStatus('c-4096'), 'failed')
  close('c-1') // seen again: now the newest
  close('c-4097')
  t.equal(core.closedStatus('c-1'), 'failed', 'a transfer closed again is remembered as the newest')
  t.equal(core.closedStatus('c-2'), undefined, 'the oldest after it is forgotten')
})

t.test('task_cancel messages carry at most 4096 attempts: more are split, none left out, whether a cancel or the overseer takes them back', async t => {
  const sizes = (s: Step): unknown => effects(s, 'send').filter(e => e.type === 'task_cancel').map(e => [e.to, (e.body as { attemptIds: string[], reason: string }).attemptIds.length, (e.body as { reason: string }).reason])
  const many = (n: number): { clock: ManualClock, core: TransferState, offers: Array<OfferDraft & { to: string }> } => {
    const clock = new ManualClock()
    const core = new TransferState({ self: SELF, newId: counter() })
    return { clock, core, offers: planned(clock, core, 't1', n) }
  }
  const exact = many(4096)
  t.same(sizes(exact.core.cancel('t1', reply(), exact.clock.now())), [[SELF, 4096, 'transfer_cancelled']], '4096: one message')
  const over = many(4097)
  const cancelled = over.core.cancel('t1', reply(), over.clock.now())
  t.same(sizes(cancelled), [[SELF, 4096, 'transfer_cancelled'], [SELF, 1, 'transfer_cancelled']], '4097: two')
  t.same(effects(cancelled, 'send').flatMap(e => (e.body as { attemptIds: string[] }).attemptIds), over.offers.map(o => o.attemptId), 'every attempt, once, in order')
  const stalled = many(4097)
  stalled.clock.advance(WAVE_TIMEOUT_MS)
  const tick = stalled.core.tick(stalled.clock.now())
  t.same(sizes(tick), [[SELF, 4096, 'superseded'], [SELF, 1, 'superseded']], 'the overseer\'s too')
  t.same(effects(tick, 'send').flatMap(e => (e.body as { attemptIds: string[] }).attemptIds), stalled.offers.map(o => o.attemptId))
})

t.test('small things the steps carry: no namespace without an org, a part\'s slot, the reason a redelivery is recovered for, the wait for workers said once', async t => {
  const clock = new ManualClock()
  const core = new TransferState({ self: SELF, newId: counter() })
  core.create(transferRow('t1', 1), clock.now())
  core.chunk({ transferId: 't1', index: 0, sha256: sha(0), md5: 'm', length: CHUNK }, clock.now())
  t.same(plain(core.dispatch('t1')).effects, [{ kind: 'io', job: { type: 'begin', transferId: 't1', destinationId: 'd1', spec: { transferId: 't1', filename: 't1.bin', totalSize: CHUNK, chunkSize: CHUNK, totalChunks: 1 } } }], 'no org: no namespace')
  core.begun('t1', 'd1', UPLOAD, null, clock.now())
  let [o] = offersOf(core.planned('t1', ONLY_SELF, clock.now()))
  accept(core, o!, W1, clock.now())
  report(core, o!, W1, clock.now(), { success: false })
  ;[o] = offersOf(core.planned('t1', ONLY_SELF, clock.now()))
  accept(core, o!, W1, clock.now())
  report(core, o!, W1, clock.now())
  core.checked('t1', o!.attemptId, true, null, clock.now())
  t.same(jobs(core.finalize('t1', clock.now()), 'complete').map(j => j.type === 'complete' && j.parts), [[{ index: 0, attemptSlot: 1, etag: sha(0) }]], 'the part names the slot its second attempt wrote, and the sha256 staged here')
  core.completedUpload({ transferId: 't1', ok: false, retry: false, redeliver: [0], error: 'BWN_ERR_DESTINATION_INCOMPLETE' }, clock.now())
  t.match(puts(core.planned('t1', ONLY_SELF, clock.now()), 'overseer_interventions'), [{ reason: 'integrity_mismatch', outcome: 'failure_redelivered', previous_attempt_id: o!.attemptId }], 'a part changed at the destination is recovered as an integrity mismatch')

  // Waiting for workers: warn once, info when they are back, and quiet in between.
  const NONE = [{ hotkey: SELF, workers: 0, score: 1 }]
  const logs = (s: Step): string[] => s.effects.flatMap(e => e.kind === 'log' && /offers (wait|go out)/.test(e.msg) ? [`${e.level}: ${e.msg}`] : [])
  const waits = new TransferState({ self: SELF, newId: counter() })
  const plan = (id: string, cands: typeof ONLY_SELF): string[] => logs(waits.planned(id, cands, clock.now()))
  waits.create(transferRow('t2', 3), clock.now())
  const next = (i: number): void => {
    waits.chunk({ transferId: 't2', index: i, sha256: sha(i), md5: 'm', length: CHUNK }, clock.now())
    waits.dispatch('t2')
  }
  next(0)
  waits.begun('t2', 'd1', UPLOAD, null, clock.now())
  t.same(plan('t2', NONE), ['warn: no orchestrator with workers; offers wait'])
  t.same(plan('t2', ONLY_SELF), ['info: orchestrators with workers again; offers go out'])
  next(1)
  t.same(plan('t2', ONLY_SELF), [], 'an ordinary wave says nothing of it')
  next(2)
  t.same(plan('t2', NONE), ['warn: no orchestrator with workers; offers wait'], 'a new wait is said at warn again')
})

t.test('hydration counts failed attempts as failures, not stalls, and no worker against a chunk for an attempt that had none', async t => {
  const now = 1_700_000_000_000
  const core = new TransferState({ self: SELF, newId: counter(), config: { maxAttemptsPerTask: 3 } })
  const row = transferRow('t1', 1, { coordinator_id: SELF, status: 'in_progress', upload: UPLOAD, chunks_received: 1 })
  const failed = (n: number, worker: string | null): AttemptRow => ({ id: `f${n}`, task_id: 'task-0', transfer_id: 't1', chunk_index: 0, attempt_no: n, attempt_slot: n % 3, orchestrator_id: SELF, worker_id: worker, batch_id: 'b', wave_kind: 'initial', recovery: n > 0, state: 'failed', offered_at: '', accepted_at: null, finished_at: '', failure_reason: 'boom' })
  const task: TaskRow = { id: 'task-0', transfer_id: 't1', chunk_index: 0, state: 'pending', orchestrator_id: SELF, assigned_worker_id: null, current_attempt_id: 'f1', attempt_count: 2, created_at: '', offered_at: '', accepted_at: null, completed_at: null, failed_at: null, failure_reason: null }
  core.hydrate({ row, chunks: [chunkRow('t1', 0, now)], tasks: [task], attempts: [failed(0, null), failed(1, W1)], results: [], waves: 2, interventions: 0 }, now, { processStart: true })
  core.dispatch('t1')
  const [o] = offersOf(core.planned('t1', ONLY_SELF, now))
  t.same(o!.excludeWorkers, [W1], 'the attempt without a worker names none')
  accept(core, o!, W2, now)
  t.match(puts(report(core, o!, W2, now, { success: false }), 'transfers'), [{ status: 'failed', error_code: 'delivery_failed' }], 'two failures before the restart and this one reach the limit of 3')
})
