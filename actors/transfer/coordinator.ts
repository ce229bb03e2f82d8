// The coordinator: for every transfer created on this orchestrator it records the staged chunks,
// plans their delivery across orchestrators weighted by routing score, sends offer batches, checks
// every reported delivery against the destination, recovers stalled or failed work (the overseer),
// completes the destination object on finalize, and cancels.
//
// Slow I/O (destination read-back, complete, abort) runs outside the handler and reports back as a
// message, so one slow destination never holds up the mailbox. Every row change is persisted before
// the state that depends on it is acknowledged.
import { randomUUID, createHash } from 'node:crypto'
import type { Network, Store, StoreOp, BlobStore } from '../ports.ts'
import { spawnSupervised, tell, type Env, type Ref, type Reply } from '../runtime.ts'
import { collect, prefixRange } from '../store.ts'
import { allocateChunks, rotatedOrder } from '../domain/allocation.ts'
import { isoFromMs } from '../domain/chain-time.ts'
import { ATTEMPT_SLOTS_PER_CHUNK, type DestinationDriver, type UploadState } from '../destination.ts'
import type { TaskOffer, TaskResult, TaskAssigned, VerifyVerdict } from '../../protocol/index.ts'
import {
  keys, TERMINAL, type TransferRow, type ChunkRow, type TaskRow, type AttemptRow, type ResultRow,
  type InterventionRow, type PlanRow, type OfferBatchRow, type InterventionReason
} from './model.ts'

// The overseer's two clocks (docs/transfers.md#overseer):
export const WAVE_TIMEOUT_MS = 15_000 // an offer no orchestrator routed to a worker this long after dispatch is reassigned
export const RESULT_GAP_MS = 5_000 // a worker holding accepted work with no result for this long loses that work
export const OVERSEER_TICK_MS = 1_000
export const DISPATCH_DEBOUNCE_MS = 20 // chunks landing together go out in one wave
export const OFFER_TTL_MS = 10 * 60_000 // signed source and target URLs live 10 min
export const MAX_ATTEMPTS_PER_TASK = 8 // failed attempts of one chunk before the transfer fails
export const MAX_STALLS_PER_TASK = 24 // stall reassignments of one chunk before the transfer fails
export const MAX_OFFERS_PER_BATCH = 64
export const COMPLETE_RETRY_MS = 2_000
export const VERIFY_TIMEOUT_MS = 15_000 // a validator's verdict later than this: the coordinator checks for itself

export interface OrchestratorCandidate { hotkey: string, workers: number, score: number }

export interface CoordinatorConfig {
  waveTimeoutMs: number
  resultGapMs: number
  offerTtlMs: number
  maxAttemptsPerTask: number
  maxStallsPerTask: number
}
export const DEFAULT_COORDINATOR_CONFIG: CoordinatorConfig = {
  waveTimeoutMs: WAVE_TIMEOUT_MS, resultGapMs: RESULT_GAP_MS, offerTtlMs: OFFER_TTL_MS, maxAttemptsPerTask: MAX_ATTEMPTS_PER_TASK, maxStallsPerTask: MAX_STALLS_PER_TASK
}

export interface CoordinatorDeps {
  env: Env
  self: string
  net: Network
  store: Store
  blobs: BlobStore
  /** The driver of a transfer's destination (holds its credentials). */
  driverFor (destinationId: string): Promise<DestinationDriver>
  /** Orchestrators that can take work now, this one included, with their routing scores. */
  candidates (): Promise<OrchestratorCandidate[]>
  /** Signs the data-endpoint path of one chunk for one attempt; returns { url, path }. */
  signSource (transferId: string, chunkIndex: number, attemptId: string, expiresAt: number): { url: string, path: string }
  config?: Partial<CoordinatorConfig>
  /** Validators connected now (hotkeys); deliveries are verified by one of them when any is. */
  validators?: () => string[]
  /** Hook for evidence consumers (validators, telemetry): every settled attempt and transfer change. */
  onEvent?: (event: CoordinatorEvent) => void
}

export type CoordinatorEvent =
  | { type: 'transfer', row: TransferRow }
  | { type: 'result', row: ResultRow, attempt: AttemptRow }
  /** A reported success whose destination check has begun (the attempt is 'checking'); 'result' follows. */
  | { type: 'checking', row: ResultRow, attempt: AttemptRow }
  | { type: 'intervention', row: InterventionRow }

export type Outcome<T> = { ok: true, value: T } | { ok: false, code: string, status: number, detail: string, extensions?: Record<string, unknown> }

export type CoordinatorMsg =
  | { type: 'start' }
  | { type: 'create', row: TransferRow, reply: Reply<Outcome<TransferRow>> }
  | { type: 'chunk', transferId: string, index: number, sha256: string, md5: string, length: number, reply: Reply<Outcome<{ duplicate: boolean }>> }
  | { type: 'finalize', transferId: string, reply: Reply<Outcome<TransferRow>> }
  | { type: 'cancel', transferId: string, reply: Reply<Outcome<TransferRow>> }
  | { type: 'assigned', from: string, body: TaskAssigned }
  /** `evidence`: the orchestrator's signed result frame, forwarded to the validator (peer trust, docs/security.md#peers). */
  | { type: 'result', from: string, body: TaskResult, evidence?: Uint8Array }
  | { type: 'dispatch', transferId: string }
  | { type: 'begun', transferId: string, upload: UploadState | null, error: string | null }
  | { type: 'checked', transferId: string, attemptId: string, ok: boolean, reason: string | null }
  | { type: 'completed-upload', transferId: string, ok: boolean, retry: boolean, redeliver: number[], error: string | null }
  | { type: 'overseer' }
  | { type: 'verdict', from: string, body: VerifyVerdict }

/** Clock readings of an open attempt, for the overseer. */
interface OpenAttempt { offeredAt: number, acceptedAt: number | null }

interface Active {
  row: TransferRow
  chunks: Map<number, ChunkRow>
  tasks: Map<number, TaskRow> // by chunk index
  attempts: Map<string, AttemptRow>
  failedWorkers: Map<number, Set<string>> // chunk index → workers that failed it
  checking: Map<string, ResultRow> // attempt id → its result, while the destination check runs
  verifying: Map<string, { validator: string, since: number }> // attempt id → the validator asked
  verifiedBy: Set<string> // attempts a validator verified
  pending: Set<number> // staged chunk indices waiting for an offer
  open: Map<string, OpenAttempt> // attempt id → its clock readings, while offered or accepted
  lastResultAt: Map<string, number> // worker → when its last result for this transfer arrived
  failures: Map<number, number> // chunk index → failed attempts (stall reassignments do not count)
  stalls: Map<number, number> // chunk index → stall reassignments
  wave: number
  interventions: number
  dispatchScheduled: boolean
  beginning: boolean
  completing: boolean
  cancelling: boolean
}

interface State {
  rr: number
  active: Map<string, Active>
  attemptIndex: Map<string, string> // attemptId → transferId
  started: boolean
}

const fail = (status: number, code: string, detail: string, extensions?: Record<string, unknown>): Outcome<never> => ({ ok: false, status, code, detail, extensions })

export interface Coordinator { ref: Ref<CoordinatorMsg>, stop (): void }

export function startCoordinator (parent: Ref<any>, deps: CoordinatorDeps): Coordinator {
  const { env, store, net } = deps
  const cfg: CoordinatorConfig = { ...DEFAULT_COORDINATOR_CONFIG, ...deps.config }
  const log = env.logger.child({ component: 'coordinator' })
  const iso = (): string => isoFromMs(env.clock.now())
  let self: Ref<CoordinatorMsg>

  const emit = (e: CoordinatorEvent): void => { try { deps.onEvent?.(e) } catch (err) { log.warn({ err }, 'event consumer failed') } }

  async function load (state: State, transferId: string): Promise<Active | undefined> {
    const cached = state.active.get(transferId)
    if (cached) return cached
    const row = await store.table<TransferRow>('transfers').get(transferId)
    if (row === undefined || row.coordinator_id !== deps.self) return undefined
    const a = newActive(row)
    for (const [, c] of await collect(store.table<ChunkRow>('chunks'), prefixRange(keys.prefix(transferId)))) a.chunks.set(c.chunk_index, c)
    for (const [, t] of await collect(store.table<TaskRow>('tasks'), prefixRange(keys.prefix(transferId)))) a.tasks.set(t.chunk_index, t)
    for (const [, at] of await collect(store.table<AttemptRow>('task_attempts'), prefixRange(keys.prefix(transferId)))) {
      a.attempts.set(at.id, at)
      state.attemptIndex.set(at.id, transferId)
      if (at.state === 'failed' || at.state === 'superseded') {
        if (at.worker_id) addFailedWorker(a, at.chunk_index, at.worker_id)
        const counter = at.state === 'failed' ? a.failures : a.stalls
        counter.set(at.chunk_index, (counter.get(at.chunk_index) ?? 0) + 1)
      }
    }
    a.wave = (await collect(store.table<PlanRow>('transfer_assignment_plans'), prefixRange(keys.prefix(transferId)))).length
    a.interventions = (await collect(store.table<InterventionRow>('overseer_interventions'), prefixRange(keys.prefix(transferId)))).length
    if (!TERMINAL.has(row.status)) {
      // Work that was in flight when the node stopped: one recovery wave the overseer watches.
      const now = env.clock.now()
      const open = [...a.attempts.values()].filter(at => at.state === 'offered' || at.state === 'accepted' || at.state === 'checking')
      for (const at of open) {
        if (at.state === 'checking') at.state = 'accepted'
        a.open.set(at.id, { offeredAt: now, acceptedAt: at.state === 'accepted' ? now : null })
      }
      for (const c of a.chunks.values()) if (c.state === 'staged' && !hasOpenAttempt(a, c.chunk_index)) a.pending.add(c.chunk_index)
    }
    state.active.set(transferId, a)
    return a
  }

  function newActive (row: TransferRow): Active {
    return {
      row, chunks: new Map(), tasks: new Map(), attempts: new Map(), failedWorkers: new Map(), checking: new Map(), verifying: new Map(), verifiedBy: new Set(), pending: new Set(), open: new Map(), lastResultAt: new Map(), failures: new Map(), stalls: new Map(),
      wave: 0, interventions: 0, dispatchScheduled: false, beginning: false, completing: false, cancelling: false
    }
  }

  function addFailedWorker (a: Active, index: number, worker: string): void {
    const s = a.failedWorkers.get(index) ?? new Set<string>()
    s.add(worker)
    a.failedWorkers.set(index, s)
  }

  function hasOpenAttempt (a: Active, index: number): boolean {
    const t = a.tasks.get(index)
    if (t?.current_attempt_id == null) return false
    const at = a.attempts.get(t.current_attempt_id)
    return at !== undefined && (at.state === 'offered' || at.state === 'accepted' || at.state === 'checking')
  }

  function touch (a: Active): StoreOp {
    a.row.updated_at = iso()
    return { type: 'put', table: 'transfers', key: a.row.id, value: a.row }
  }

  function scheduleDispatch (a: Active): void {
    if (a.dispatchScheduled) return
    a.dispatchScheduled = true
    env.clock.setTimer(DISPATCH_DEBOUNCE_MS, () => tell(self, { type: 'dispatch', transferId: a.row.id }))
  }

  /** Offers the pending chunks: one assignment plan, one batch per orchestrator (per 64 offers). */
  async function dispatch (state: State, a: Active, waveKind: 'initial' | 'recovery', reasons?: Map<number, { reason: InterventionReason, previous: AttemptRow, excludeOrchestrator: boolean }>): Promise<void> {
    if (TERMINAL.has(a.row.status) || a.cancelling || a.pending.size === 0) return
    if (a.row.upload === null) {
      if (!a.beginning) {
        a.beginning = true
        const driver = await deps.driverFor(a.row.destination_id)
        driver.begin({ transferId: a.row.id, filename: a.row.filename, totalSize: a.row.total_size, chunkSize: a.row.chunk_size, totalChunks: a.row.total_chunks })
          .then(upload => tell(self, { type: 'begun', transferId: a.row.id, upload, error: null }),
            (err: Error & { code?: string }) => tell(self, { type: 'begun', transferId: a.row.id, upload: null, error: err.code ?? err.message }))
      }
      return
    }
    const all = (await deps.candidates()).filter(c => c.workers > 0)
    if (all.length === 0) {
      log.warn({ transferId: a.row.id, pending: a.pending.size }, 'no orchestrator with workers; offers wait')
      return
    }
    const indices = [...a.pending].sort((x, y) => x - y)
    // Recovery avoids the orchestrator whose wave stalled, when another can take the chunk.
    const groups = new Map<string, number[]>()
    const plain: number[] = []
    for (const i of indices) {
      const why = reasons?.get(i)
      if (why?.excludeOrchestrator === true && all.some(c => c.hotkey !== why.previous.orchestrator_id)) {
        const key = why.previous.orchestrator_id
        groups.set(key, [...(groups.get(key) ?? []), i])
      } else plain.push(i)
    }
    const assignment = new Map<string, number[]>()
    const allocate = (chunkIdx: number[], candidates: OrchestratorCandidate[]): void => {
      if (chunkIdx.length === 0) return
      // Ties in score are broken by a rotation seeded with the transfer and wave, so small transfers
      // spread over every orchestrator instead of always landing on the lowest keys.
      const rotated = rotatedOrder(candidates.map(c => ({ id: c.hotkey, score: c.score })), `${a.row.id}/${a.wave}`)
      const alloc = allocateChunks(chunkIdx.length, rotated.map((c, i) => ({ ...c, key: String(i).padStart(6, '0') })))
      for (const s of alloc.slices) {
        if (s.count === 0) continue
        assignment.set(s.id, [...(assignment.get(s.id) ?? []), ...chunkIdx.slice(s.chunkStart, s.chunkEnd + 1)])
      }
    }
    allocate(plain, all)
    for (const [excluded, idx] of groups) allocate(idx, all.filter(c => c.hotkey !== excluded))

    const driver = await deps.driverFor(a.row.destination_id)
    const now = env.clock.now()
    const expiresAt = now + cfg.offerTtlMs
    const ops: StoreOp[] = []
    const plan: PlanRow = {
      transfer_id: a.row.id, wave: a.wave, wave_kind: waveKind, allocation_rule: 'hamilton_largest_remainder_by_routing_score', created_at: iso(),
      deliveries: [...assignment].map(([orch, idx]) => ({ orchestrator_id: orch, routing_score: all.find(c => c.hotkey === orch)?.score ?? 0, chunk_count: idx.length, chunk_indices: idx }))
    }
    ops.push({ type: 'put', table: 'transfer_assignment_plans', key: keys.plan(a.row.id, a.wave), value: plan })
    a.wave++
    const batches: Array<{ to: string, batchId: string, offers: TaskOffer[] }> = []
    for (const [orch, idx] of assignment) {
      for (let b = 0; b < idx.length; b += MAX_OFFERS_PER_BATCH) {
        const batchId = randomUUID()
        const offers: TaskOffer[] = []
        const batchRow: OfferBatchRow = { id: batchId, transfer_id: a.row.id, orchestrator_id: orch, coordinator_id: deps.self, wave_kind: waveKind, task_ids: [], attempt_ids: [], offered_at: iso(), routed: [] }
        for (const index of idx.slice(b, b + MAX_OFFERS_PER_BATCH)) {
          const chunk = a.chunks.get(index)!
          let task = a.tasks.get(index)
          if (task === undefined) {
            task = { id: randomUUID(), transfer_id: a.row.id, chunk_index: index, state: 'pending', orchestrator_id: null, assigned_worker_id: null, current_attempt_id: null, attempt_count: 0, created_at: iso(), offered_at: null, accepted_at: null, completed_at: null, failed_at: null, failure_reason: null }
            a.tasks.set(index, task)
          }
          const attemptNo = task.attempt_count
          const attempt: AttemptRow = {
            id: randomUUID(), task_id: task.id, transfer_id: a.row.id, chunk_index: index, attempt_no: attemptNo, attempt_slot: attemptNo % ATTEMPT_SLOTS_PER_CHUNK,
            orchestrator_id: orch, worker_id: null, batch_id: batchId, wave_kind: waveKind, recovery: attemptNo > 0, state: 'offered',
            offered_at: iso(), accepted_at: null, finished_at: null, failure_reason: null
          }
          const why = reasons?.get(index)
          if (why !== undefined) {
            const iv: InterventionRow = {
              id: randomUUID(), transfer_id: a.row.id, task_id: task.id, chunk_index: index, intervention_type: 'overseer_recovery', reason: why.reason,
              outcome: why.reason === 'wave_timeout' || why.reason === 'result_gap' ? 'stall_redistributed' : 'failure_redelivered',
              orchestrator_id: why.previous.orchestrator_id, previous_attempt_id: why.previous.id, previous_worker_id: why.previous.worker_id,
              replacement_attempt_id: attempt.id, replacement_orchestrator_id: orch, intervened_at: iso()
            }
            ops.push({ type: 'put', table: 'overseer_interventions', key: keys.intervention(a.row.id, a.interventions++, iv.id), value: iv })
            emit({ type: 'intervention', row: iv })
          }
          task.attempt_count++
          task.state = 'offered'
          task.orchestrator_id = orch
          task.assigned_worker_id = null
          task.current_attempt_id = attempt.id
          task.offered_at = iso()
          a.attempts.set(attempt.id, attempt)
          state.attemptIndex.set(attempt.id, a.row.id)
          chunk.state = 'delivering'
          chunk.task_id = task.id
          a.pending.delete(index)
          const target = await driver.target(a.row.upload, { index, offset: chunk.offset, length: chunk.length, attemptSlot: attempt.attempt_slot }, expiresAt)
          const source = deps.signSource(a.row.id, index, attempt.id, expiresAt)
          offers.push({
            taskId: task.id, attemptId: attempt.id, transferId: a.row.id, chunkIndex: index, length: chunk.length, sha256: chunk.sha256,
            source: { url: source.url, path: source.path, coordinator: deps.self }, target, expiresAt, excludeWorkers: [...(a.failedWorkers.get(index) ?? [])].slice(0, 64)
          })
          batchRow.task_ids.push(task.id)
          batchRow.attempt_ids.push(attempt.id)
          ops.push({ type: 'put', table: 'tasks', key: keys.row(a.row.id, task.id), value: task })
          ops.push({ type: 'put', table: 'task_attempts', key: keys.row(a.row.id, attempt.id), value: attempt })
          ops.push({ type: 'put', table: 'chunks', key: keys.chunk(a.row.id, index), value: chunk })
        }
        ops.push({ type: 'put', table: 'task_offer_batches', key: keys.row(a.row.id, batchId), value: batchRow })
        batches.push({ to: orch, batchId, offers })
        for (const o of offers) a.open.set(o.attemptId, { offeredAt: now, acceptedAt: null })
      }
    }
    if (a.row.status === 'pending') { a.row.status = 'in_progress'; a.row.started_at = iso() }
    ops.push(touch(a))
    await store.batch(ops)
    for (const b of batches) {
      // A batch that cannot be sent is never routed: the overseer reassigns it after WAVE_TIMEOUT_MS.
      const sent = net.send(b.to, 'task_offer_batch', { batchId: b.batchId, transferId: a.row.id, waveKind, offers: b.offers })
      if (!sent) log.warn({ transferId: a.row.id, orchestrator: b.to, batchId: b.batchId }, 'offer batch not sent: no connection')
    }
    log.debug({ transferId: a.row.id, waveKind, offers: indices.length, orchestrators: assignment.size }, 'wave dispatched')
  }

  /** Ends an attempt as failed and queues its chunk for redelivery with an intervention row. */
  function failAttempt (a: Active, at: AttemptRow, reason: InterventionReason, detail: string | null, recover: Map<number, { reason: InterventionReason, previous: AttemptRow, excludeOrchestrator: boolean }>): StoreOp[] {
    const stalled = reason === 'wave_timeout' || reason === 'result_gap'
    at.state = stalled ? 'superseded' : 'failed'
    at.finished_at = iso()
    at.failure_reason = detail ?? reason
    a.open.delete(at.id)
    // A stalled worker is avoided for this chunk too; only real failures count toward the limit.
    if (at.worker_id !== null) addFailedWorker(a, at.chunk_index, at.worker_id)
    const counter = stalled ? a.stalls : a.failures
    counter.set(at.chunk_index, (counter.get(at.chunk_index) ?? 0) + 1)
    const ops: StoreOp[] = [{ type: 'put', table: 'task_attempts', key: keys.row(a.row.id, at.id), value: at }]
    const task = a.tasks.get(at.chunk_index)!
    const chunk = a.chunks.get(at.chunk_index)!
    if ((a.failures.get(at.chunk_index) ?? 0) >= cfg.maxAttemptsPerTask || (a.stalls.get(at.chunk_index) ?? 0) >= cfg.maxStallsPerTask) {
      task.state = 'failed'; task.failed_at = iso(); task.failure_reason = reason
      ops.push({ type: 'put', table: 'tasks', key: keys.row(a.row.id, task.id), value: task })
      ops.push(...failTransfer(a, 'delivery_failed', 'A chunk could not be delivered after repeated attempts.'))
      return ops
    }
    chunk.state = 'staged'
    a.pending.add(at.chunk_index)
    recover.set(at.chunk_index, { reason, previous: at, excludeOrchestrator: reason === 'wave_timeout' || reason === 'no_worker' })
    ops.push({ type: 'put', table: 'chunks', key: keys.chunk(a.row.id, chunk.chunk_index), value: chunk })
    return ops
  }

  function failTransfer (a: Active, code: string, message: string): StoreOp[] {
    if (TERMINAL.has(a.row.status)) return []
    a.row.status = 'failed'
    a.row.error_code = code
    a.row.error_message = message
    a.row.completed_at = iso()
    a.pending.clear()
    const ops: StoreOp[] = [touch(a)]
    cancelOpenAttempts(a, ops, 'transfer_failed')
    void abortUpload(a)
    emit({ type: 'transfer', row: a.row })
    return ops
  }

  function cancelOpenAttempts (a: Active, ops: StoreOp[], reason: string): void {
    const byOrch = new Map<string, string[]>()
    for (const at of a.attempts.values()) {
      if (at.state !== 'offered' && at.state !== 'accepted' && at.state !== 'checking') continue
      at.state = 'cancelled'; at.finished_at = iso(); at.failure_reason = reason
      ops.push({ type: 'put', table: 'task_attempts', key: keys.row(a.row.id, at.id), value: at })
      byOrch.set(at.orchestrator_id, [...(byOrch.get(at.orchestrator_id) ?? []), at.id])
    }
    for (const t of a.tasks.values()) {
      if (t.state === 'completed' || t.state === 'failed') continue
      t.state = 'cancelled'
      ops.push({ type: 'put', table: 'tasks', key: keys.row(a.row.id, t.id), value: t })
    }
    a.open.clear()
    for (const [orch, ids] of byOrch) {
      for (let i = 0; i < ids.length; i += 4096) net.send(orch, 'task_cancel', { transferId: a.row.id, attemptIds: ids.slice(i, i + 4096), reason })
    }
  }

  async function abortUpload (a: Active): Promise<void> {
    if (a.row.upload === null) return
    try {
      const driver = await deps.driverFor(a.row.destination_id)
      await driver.abort(a.row.upload)
    } catch (err) {
      log.warn({ transferId: a.row.id, err: (err as Error).message }, 'destination abort failed')
    }
  }

  async function freeStaging (a: Active): Promise<void> {
    for (const c of a.chunks.values()) {
      const ref = `blob/${c.sha256}/${a.row.id}/${c.chunk_index}`
      await store.table('index').del(ref)
      const others = await collect(store.table('index'), { ...prefixRange(`blob/${c.sha256}/`), limit: 1 })
      if (others.length === 0) await deps.blobs.delete(c.sha256)
    }
  }

  function checkDelivery (a: Active, at: AttemptRow, result: TaskResult): void {
    const chunk = a.chunks.get(at.chunk_index)!
    const upload = a.row.upload!
    void (async () => {
      const driver = await deps.driverFor(a.row.destination_id)
      if (driver.readableBeforeComplete) {
        const bytes = await driver.readRange(upload, chunk.offset, chunk.length)
        const sha = createHash('sha256').update(bytes).digest('hex')
        return sha === chunk.sha256 ? null : 'destination bytes do not match the staged chunk'
      }
      const parts = await driver.listParts!(upload)
      const part = parts.filter(p => p.index === at.chunk_index && p.attemptSlot === at.attempt_slot).pop() ?? parts.filter(p => p.index === at.chunk_index).pop()
      if (part === undefined) return 'the destination holds no part for the chunk'
      if (part.size !== chunk.length) return 'the stored part has the wrong size'
      if (part.etag.replaceAll('"', '') !== chunk.md5) return 'the stored part does not match the staged chunk'
      if (result.etag !== null && result.etag.replaceAll('"', '') !== chunk.md5) return 'the reported etag does not match the staged chunk'
      return null
    })().then(
      problem => tell(self, { type: 'checked', transferId: a.row.id, attemptId: at.id, ok: problem === null, reason: problem }),
      (err: Error) => tell(self, { type: 'checked', transferId: a.row.id, attemptId: at.id, ok: false, reason: `check failed: ${err.message}` })
    )
  }

  function maybeComplete (a: Active): void {
    if (!a.row.finalize_requested || a.completing || TERMINAL.has(a.row.status)) return
    if (a.row.chunks_delivered < a.row.total_chunks) return
    a.completing = true
    const parts = [...a.chunks.values()].sort((x, y) => x.chunk_index - y.chunk_index).map(c => ({ index: c.chunk_index, attemptSlot: c.attempt_slot ?? 0, etag: c.etag }))
    void (async () => {
      const driver = await deps.driverFor(a.row.destination_id)
      await driver.complete(a.row.upload!, parts)
    })().then(
      () => tell(self, { type: 'completed-upload', transferId: a.row.id, ok: true, retry: false, redeliver: [], error: null }),
      (err: Error & { code?: string, chunks?: number[], retryable?: boolean }) => tell(self, {
        type: 'completed-upload', transferId: a.row.id, ok: false, retry: err.retryable === true,
        redeliver: err.code === 'BWN_ERR_DESTINATION_INCOMPLETE' ? (err.chunks ?? []) : [], error: err.code ?? err.message
      })
    )
  }

  /** Loads every unfinished transfer of this coordinator (once per fresh state). */
  async function startUp (state: State): Promise<void> {
    if (state.started) return
    state.started = true
    for await (const [id, row] of store.table<TransferRow>('transfers').entries()) {
      if (!TERMINAL.has(row.status) && row.coordinator_id === deps.self) {
        const a = await load(state, id)
        if (a && a.pending.size > 0) scheduleDispatch(a)
      }
    }
  }

  const handler = async (state: State, msg: CoordinatorMsg): Promise<State> => {
    switch (msg.type) {
      case 'start': {
        await startUp(state)
        return state
      }
      case 'create': {
        const row = msg.row
        row.coordinator_id = deps.self
        await store.batch([{ type: 'put', table: 'transfers', key: row.id, value: row }])
        state.active.set(row.id, newActive(row))
        emit({ type: 'transfer', row })
        msg.reply.resolve({ ok: true, value: row })
        return state
      }
      case 'chunk': {
        const a = await load(state, msg.transferId)
        if (a === undefined) { msg.reply.resolve(fail(404, 'BWN_ERR_TRANSFER_NOT_FOUND', 'No such transfer.')); return state }
        if (TERMINAL.has(a.row.status) || a.cancelling) { msg.reply.resolve(fail(409, 'BWN_ERR_TRANSFER_CLOSED', `The transfer is ${a.cancelling ? 'cancelled' : a.row.status}; it takes no more chunks.`)); return state }
        const existing = a.chunks.get(msg.index)
        if (existing !== undefined) {
          if (existing.sha256 === msg.sha256) { msg.reply.resolve({ ok: true, value: { duplicate: true } }); return state }
          msg.reply.resolve(fail(409, 'BWN_ERR_CHUNK_CONFLICT', `Chunk ${msg.index} was already received with other bytes.`, { chunk_index: msg.index }))
          return state
        }
        if (a.row.finalize_requested) { msg.reply.resolve(fail(409, 'BWN_ERR_TRANSFER_CLOSED', 'The transfer is finalized.')); return state }
        const chunk: ChunkRow = {
          transfer_id: a.row.id, chunk_index: msg.index, offset: msg.index * a.row.chunk_size, length: msg.length, sha256: msg.sha256, md5: msg.md5,
          state: 'staged', task_id: null, delivered_attempt_id: null, attempt_slot: null, etag: null, received_at: iso(), delivered_at: null
        }
        a.chunks.set(msg.index, chunk)
        a.row.chunks_received++
        a.row.bytes_received += msg.length
        if (a.row.status === 'pending') { a.row.status = 'in_progress'; a.row.started_at = iso() }
        await store.batch([
          { type: 'put', table: 'chunks', key: keys.chunk(a.row.id, msg.index), value: chunk },
          { type: 'put', table: 'index', key: `blob/${msg.sha256}/${a.row.id}/${msg.index}`, value: 1 },
          touch(a)
        ])
        a.pending.add(msg.index)
        scheduleDispatch(a)
        msg.reply.resolve({ ok: true, value: { duplicate: false } })
        return state
      }
      case 'dispatch': {
        const a = state.active.get(msg.transferId)
        if (a === undefined) return state
        a.dispatchScheduled = false
        await dispatch(state, a, 'initial')
        return state
      }
      case 'begun': {
        const a = state.active.get(msg.transferId)
        if (a === undefined) return state
        a.beginning = false
        if (a.cancelling || TERMINAL.has(a.row.status)) {
          if (msg.upload !== null) { a.row.upload = msg.upload; void abortUpload(a) }
          return state
        }
        if (msg.upload === null) {
          log.warn({ transferId: a.row.id, error: msg.error }, 'destination refused the upload')
          await store.batch(failTransfer(a, 'destination_unavailable', 'The destination could not start the upload.'))
          return state
        }
        a.row.upload = msg.upload
        await store.batch([touch(a)])
        await dispatch(state, a, 'initial')
        return state
      }
      case 'assigned': {
        const a = state.active.get(msg.body.transferId)
        if (a === undefined) return state
        const ops: StoreOp[] = []
        const recover = new Map<number, { reason: InterventionReason, previous: AttemptRow, excludeOrchestrator: boolean }>()
        for (const { attemptId, worker } of msg.body.assignments) {
          const at = a.attempts.get(attemptId)
          if (at === undefined || at.orchestrator_id !== msg.from || at.state !== 'offered') continue
          if (worker === null) { ops.push(...failAttempt(a, at, 'no_worker', 'no worker available', recover)); continue }
          at.worker_id = worker; at.state = 'accepted'; at.accepted_at = iso()
          const clockReading = a.open.get(at.id)
          if (clockReading) clockReading.acceptedAt = env.clock.now()
          const task = a.tasks.get(at.chunk_index)!
          task.assigned_worker_id = worker; task.accepted_at = at.accepted_at
          ops.push({ type: 'put', table: 'task_attempts', key: keys.row(a.row.id, at.id), value: at })
          ops.push({ type: 'put', table: 'tasks', key: keys.row(a.row.id, task.id), value: task })
        }
        if (ops.length > 0) await store.batch(ops)
        if (recover.size > 0) await dispatch(state, a, 'recovery', recover)
        return state
      }
      case 'result': {
        const r = msg.body
        const ack = (status: 'completed' | 'failed' | 'late_superseded' | 'rejected', reason: string | null): void => {
          net.send(msg.from, 'task_result_ack', { taskId: r.taskId, attemptId: r.attemptId, worker: r.worker, received: status !== 'rejected', status, reason })
        }
        const a = await load(state, r.transferId)
        const at = a?.attempts.get(r.attemptId)
        if (a === undefined || at === undefined || at.task_id !== r.taskId || at.orchestrator_id !== msg.from) { ack('rejected', 'unknown_attempt'); return state }
        if (at.state === 'succeeded') { ack('completed', null); return state }
        if (at.state !== 'offered' && at.state !== 'accepted') { ack('late_superseded', at.state); return state }
        const chunk = a.chunks.get(at.chunk_index)!
        const offeredAt = a.open.get(at.id)?.offeredAt ?? null
        a.open.delete(at.id)
        a.lastResultAt.set(r.worker, env.clock.now())
        if (at.worker_id === null) at.worker_id = r.worker
        const row: ResultRow = {
          attempt_id: at.id, task_id: at.task_id, transfer_id: a.row.id, chunk_index: at.chunk_index, orchestrator_id: at.orchestrator_id, worker_id: r.worker,
          success: r.success, bytes: chunk.length, claimed_bytes: r.bytes, duration_ms: r.durationMs, sha256: r.sha256, etag: r.etag, error: r.error, via: r.via,
          outcome: 'accepted', received_at: iso()
        }
        const recover = new Map<number, { reason: InterventionReason, previous: AttemptRow, excludeOrchestrator: boolean }>()
        const ops: StoreOp[] = []
        if (!r.success) {
          row.outcome = 'failed'
          const reason: InterventionReason = r.error === 'worker_lost' ? 'worker_lost' : r.error === 'session_displaced' ? 'session_displaced' : r.error === 'no_worker' ? 'no_worker' : 'attempt_failed'
          ops.push(...failAttempt(a, at, reason, r.error, recover))
          ack('failed', r.error)
        } else if (r.sha256 !== chunk.sha256) {
          row.outcome = 'integrity_mismatch'
          ops.push(...failAttempt(a, at, 'integrity_mismatch', 'reported hash does not match the staged chunk', recover))
          ack('failed', 'hash_mismatch')
        } else {
          at.state = 'checking'
          const validators = deps.validators?.() ?? []
          const driver = await deps.driverFor(a.row.destination_id)
          if (validators.length > 0 && driver.readableBeforeComplete && driver.readTarget !== undefined) {
            // Pending verification until a validator's verdict exists.
            const validator = validators[state.rr++ % validators.length]!
            const read = await driver.readTarget(a.row.upload!, chunk.offset, chunk.length, env.clock.now() + cfg.offerTtlMs)
            a.verifying.set(at.id, { validator, since: env.clock.now() })
            net.send(validator, 'verify_request', {
              transferId: a.row.id, taskId: at.task_id, attemptId: at.id, chunkIndex: at.chunk_index, orchestrator: at.orchestrator_id, worker: r.worker,
              length: chunk.length, sha256: chunk.sha256, trustedDurationMs: offeredAt === null ? 0 : Math.max(0, env.clock.now() - offeredAt), read,
              ...(msg.evidence !== undefined ? { evidence: Buffer.from(msg.evidence).toString('base64') } : {})
            })
          } else {
            checkDelivery(a, at, r)
          }
        }
        ops.push({ type: 'put', table: 'task_results', key: keys.row(a.row.id, at.id), value: row }, { type: 'put', table: 'task_attempts', key: keys.row(a.row.id, at.id), value: at })
        await store.batch(ops)
        if (row.outcome !== 'accepted') emit({ type: 'result', row, attempt: at })
        else { a.checking.set(at.id, row); emit({ type: 'checking', row: { ...row }, attempt: { ...at } }) }
        if (recover.size > 0) await dispatch(state, a, 'recovery', recover)
        return state
      }
      case 'checked': {
        const a = state.active.get(msg.transferId)
        const at = a?.attempts.get(msg.attemptId)
        if (a === undefined || at === undefined || at.state !== 'checking') return state
        const pending = a.checking.get(at.id)
        a.checking.delete(at.id)
        const ack = (status: 'completed' | 'failed', reason: string | null): void => {
          net.send(at.orchestrator_id, 'task_result_ack', { taskId: at.task_id, attemptId: at.id, worker: at.worker_id ?? deps.self, received: true, status, reason })
        }
        const recover = new Map<number, { reason: InterventionReason, previous: AttemptRow, excludeOrchestrator: boolean }>()
        const ops: StoreOp[] = []
        if (!msg.ok) {
          log.warn({ transferId: a.row.id, chunk: at.chunk_index, worker: at.worker_id, reason: msg.reason }, 'delivery failed its destination check')
          if (pending) { pending.outcome = 'integrity_mismatch'; ops.push({ type: 'put', table: 'task_results', key: keys.row(a.row.id, at.id), value: pending }) }
          ops.push(...failAttempt(a, at, 'integrity_mismatch', msg.reason, recover))
          ack('failed', 'destination_check_failed')
        } else {
          const chunk = a.chunks.get(at.chunk_index)!
          const task = a.tasks.get(at.chunk_index)!
          at.state = 'succeeded'; at.finished_at = iso()
          task.state = 'completed'; task.completed_at = iso(); task.assigned_worker_id = at.worker_id
          chunk.state = 'delivered'; chunk.delivered_attempt_id = at.id; chunk.attempt_slot = at.attempt_slot; chunk.etag = pending?.etag ?? null; chunk.delivered_at = iso()
          a.row.chunks_delivered++
          a.row.bytes_delivered += chunk.length
          if (a.verifiedBy.delete(at.id)) { chunk.state = 'verified'; a.row.chunks_verified++ }
          ops.push(
            { type: 'put', table: 'task_attempts', key: keys.row(a.row.id, at.id), value: at },
            { type: 'put', table: 'tasks', key: keys.row(a.row.id, task.id), value: task },
            { type: 'put', table: 'chunks', key: keys.chunk(a.row.id, chunk.chunk_index), value: chunk },
            touch(a)
          )
          ack('completed', null)
        }
        await store.batch(ops)
        if (pending) emit({ type: 'result', row: pending, attempt: at })
        if (recover.size > 0) await dispatch(state, a, 'recovery', recover)
        maybeComplete(a)
        return state
      }
      case 'verdict': {
        const a = state.active.get(msg.body.transferId)
        const at = a?.attempts.get(msg.body.attemptId)
        const asked = a?.verifying.get(msg.body.attemptId)
        if (a === undefined || at === undefined || asked === undefined || asked.validator !== msg.from || at.state !== 'checking') return state
        a.verifying.delete(at.id)
        if (msg.body.verdict === 'unreadable') {
          checkDelivery(a, at, { etag: a.checking.get(at.id)?.etag ?? null } as TaskResult)
          return state
        }
        const ok = msg.body.verdict === 'verified'
        if (ok) a.verifiedBy.add(at.id)
        tell(self, { type: 'checked', transferId: a.row.id, attemptId: at.id, ok, reason: ok ? null : `validator ${msg.from} found other bytes at the destination` })
        return state
      }
      case 'finalize': {
        const a = await load(state, msg.transferId)
        if (a === undefined) { msg.reply.resolve(fail(404, 'BWN_ERR_TRANSFER_NOT_FOUND', 'No such transfer.')); return state }
        if (a.row.status === 'completed' || (a.row.finalize_requested && !TERMINAL.has(a.row.status))) { msg.reply.resolve({ ok: true, value: a.row }); return state }
        if (TERMINAL.has(a.row.status) || a.cancelling) { msg.reply.resolve(fail(409, 'BWN_ERR_TRANSFER_CLOSED', `The transfer is ${a.cancelling ? 'cancelled' : a.row.status}.`)); return state }
        const missing: number[] = []
        for (let i = 0; i < a.row.total_chunks; i++) if (!a.chunks.has(i)) missing.push(i)
        if (missing.length > 0) {
          msg.reply.resolve(fail(409, 'BWN_ERR_CHUNKS_MISSING', `${missing.length} of ${a.row.total_chunks} chunks have not been received.`, { missing_chunks: missing.slice(0, 1000), missing_count: missing.length }))
          return state
        }
        a.row.finalize_requested = true
        a.row.finalized_at = iso()
        await store.batch([touch(a)])
        msg.reply.resolve({ ok: true, value: a.row })
        maybeComplete(a)
        return state
      }
      case 'completed-upload': {
        const a = state.active.get(msg.transferId)
        if (a === undefined || TERMINAL.has(a.row.status)) return state
        a.completing = false
        if (msg.ok) {
          a.row.status = 'completed'
          a.row.completed_at = iso()
          await store.batch([touch(a)])
          emit({ type: 'transfer', row: a.row })
          log.info({ transferId: a.row.id, chunks: a.row.total_chunks, bytes: a.row.total_size, event: 'transfer_completed' }, 'transfer completed')
          await freeStaging(a)
          state.active.delete(a.row.id)
          return state
        }
        if (msg.redeliver.length > 0) {
          // A part changed after it was checked (a stale attempt wrote over it): deliver those again.
          const recover = new Map<number, { reason: InterventionReason, previous: AttemptRow, excludeOrchestrator: boolean }>()
          const ops: StoreOp[] = []
          for (const index of msg.redeliver) {
            const chunk = a.chunks.get(index)
            const at = chunk?.delivered_attempt_id ? a.attempts.get(chunk.delivered_attempt_id) : undefined
            if (chunk === undefined || at === undefined) continue
            chunk.state = 'staged'; a.row.chunks_delivered--; a.row.bytes_delivered -= chunk.length
            ops.push(...failAttempt(a, at, 'integrity_mismatch', 'part changed before completion', recover))
          }
          ops.push(touch(a))
          await store.batch(ops)
          await dispatch(state, a, 'recovery', recover)
          return state
        }
        if (msg.retry) {
          env.clock.setTimer(COMPLETE_RETRY_MS, () => { const b = state.active.get(msg.transferId); if (b) maybeComplete(b) })
          return state
        }
        log.warn({ transferId: a.row.id, error: msg.error }, 'destination refused to complete the object')
        await store.batch(failTransfer(a, 'destination_refused', 'The destination refused to complete the object.'))
        return state
      }
      case 'cancel': {
        const a = await load(state, msg.transferId)
        if (a === undefined) { msg.reply.resolve(fail(404, 'BWN_ERR_TRANSFER_NOT_FOUND', 'No such transfer.')); return state }
        if (a.row.status === 'cancelled') { msg.reply.resolve({ ok: true, value: a.row }); return state }
        if (a.row.status === 'completed' || a.row.status === 'failed') { msg.reply.resolve(fail(409, 'BWN_ERR_TRANSFER_CLOSED', `The transfer is already ${a.row.status}.`)); return state }
        a.cancelling = true
        a.pending.clear()
        const ops: StoreOp[] = []
        cancelOpenAttempts(a, ops, 'transfer_cancelled')
        // The destination upload is aborted before the cancel is acknowledged: no write lands after it.
        await abortUpload(a)
        a.row.status = 'cancelled'
        a.row.completed_at = iso()
        ops.push(touch(a))
        await store.batch(ops)
        emit({ type: 'transfer', row: a.row })
        await freeStaging(a)
        state.active.delete(a.row.id)
        msg.reply.resolve({ ok: true, value: a.row })
        return state
      }
      case 'overseer': {
        await startUp(state) // after a crash reset the state starts empty
        const now = env.clock.now()
        for (const a of state.active.values()) {
          if (TERMINAL.has(a.row.status) || a.cancelling) continue
          const recover = new Map<number, { reason: InterventionReason, previous: AttemptRow, excludeOrchestrator: boolean }>()
          const ops: StoreOp[] = []
          const cancel = new Map<string, string[]>() // orchestrator → superseded attempts its workers must drop
          for (const [attemptId, c] of [...a.open]) {
            const at = a.attempts.get(attemptId)
            if (at === undefined || (at.state !== 'offered' && at.state !== 'accepted')) { a.open.delete(attemptId); continue }
            let reason: InterventionReason | null = null
            if (c.acceptedAt === null) {
              if (now - c.offeredAt >= cfg.waveTimeoutMs) reason = 'wave_timeout' // never routed to a worker
            } else {
              const since = Math.max(c.acceptedAt, a.lastResultAt.get(at.worker_id ?? '') ?? 0)
              if (now - since >= cfg.resultGapMs) reason = 'result_gap' // its worker went quiet
            }
            if (reason === null) continue
            log.info({ transferId: a.row.id, attemptId, chunk: at.chunk_index, orchestrator: at.orchestrator_id, worker: at.worker_id, reason, event: 'overseer_reassign' }, 'reassigning stalled work')
            ops.push(...failAttempt(a, at, reason, null, recover))
            cancel.set(at.orchestrator_id, [...(cancel.get(at.orchestrator_id) ?? []), attemptId])
          }
          for (const [orch, ids] of cancel) net.send(orch, 'task_cancel', { transferId: a.row.id, attemptIds: ids.slice(0, 4096), reason: 'superseded' })
          for (const [attemptId, v] of [...a.verifying]) {
            const at = a.attempts.get(attemptId)
            if (at === undefined || at.state !== 'checking') { a.verifying.delete(attemptId); continue }
            if (now - v.since < VERIFY_TIMEOUT_MS) continue
            a.verifying.delete(attemptId)
            log.warn({ transferId: a.row.id, attemptId, validator: v.validator }, 'no verdict in time; checking the destination directly')
            checkDelivery(a, at, { etag: a.checking.get(attemptId)?.etag ?? null } as TaskResult)
          }
          if (ops.length > 0) await store.batch(ops)
          if (recover.size > 0) await dispatch(state, a, 'recovery', recover)
          else if (a.pending.size > 0 && !a.dispatchScheduled) await dispatch(state, a, 'initial')
        }
        return state
      }
    }
  }

  self = spawnSupervised<State, CoordinatorMsg>(parent, 'coordinator', env, () => ({ rr: 0, active: new Map(), attemptIndex: new Map(), started: false }), handler)
  // After a restart (or a crash reset) the active transfers are reloaded from the store.
  tell(self, { type: 'start' })
  const ticker = env.clock.every(OVERSEER_TICK_MS, () => tell(self, { type: 'overseer' }))
  return { ref: self, stop: () => ticker.cancel() }
}
