// The coordinator's pure core: every transfer this orchestrator coordinates, in memory, with the rules
// that move it. Each input (a client call, a report from an orchestrator, a timer, the outcome of a
// destination call) goes in with the clock reading; out come the store operations to persist and the
// effects to run once they are durable (messages to send, destination calls, timers, replies). Nothing
// here awaits, reads a clock or touches the network: the actor in coordinator.ts does, and the rules are
// unit-tested on a manual clock (test/actors/transfer/state.test.ts).
//
// Rules: docs/transfers.md (states, the overseer's wave timeout and progress rule, worker standing,
// recovery on start).
import { blobRefKey } from './blob-refs.ts'
import { systemRandom } from '../random.ts'
import type { StoreOp } from '../ports.ts'
import type { Reply } from '../runtime.ts'
import type { MessageType, TaskAssigned, RelayedAccept, TaskResult, TaskProgress, VerifyVerdict, TransferFailure, AttemptEnding } from '../../protocol/index.ts'
import { addStrike, isExcluded, standingKey, DEFAULT_STANDING_CONFIG, type StandingConfig, type StrikeReason, type WorkerStandingRow } from './worker-standing.ts'
import { allocateRotated, ROUTED_ALLOCATION_RULE } from '../domain/allocation.ts'
import { isoFromMs } from '../domain/chain-time.ts'
import { ATTEMPT_SLOTS_PER_CHUNK, type DeliveredPart, type UploadSpec, type UploadState } from '../destination.ts'
import {
  keys, TERMINAL, type TransferRow, type ChunkRow, type TaskRow, type AttemptRow, type ResultRow,
  type InterventionRow, type PlanRow, type OfferBatchRow, type InterventionReason, type TransferStatus
} from './model.ts'

// The overseer's clocks (docs/transfers.md#overseer):
export const WAVE_TIMEOUT_MS = 15_000 // an offer no orchestrator routed to a worker this long after dispatch is reassigned
/**
 * A worker holding accepted work loses it when it has made no progress (task_progress) and sent no
 * result for its stall window: at least this long, or twice the chunk's time at the network's measured
 * rate when that is longer. Judged by progress, never by a fixed rate: a slow, steady worker keeps its work.
 */
export const RESULT_GAP_MS = 1_000 // a worker's progress reports come every 250 ms while bytes move: four missed
export const STALL_RATE_FACTOR = 2 // a dead worker's chunk moves within 2 × its time at the measured rate
export const RATE_SAMPLES = 64 // the measured rate: the median of the last 64 accepted deliveries (bytes / (result − acceptance))
/** A report is progress when the worker's bytes grew by at least this much, or its chunk is complete. */
export const MIN_PROGRESS_BYTES = 64 * 1024
/** The rate a validator's read-back is given (verifyTimeoutFor); workers are judged by progress instead. */
export const MIN_WORKER_RATE = 1024 * 1024 // bytes/s
/** A chunk that stalled before gets twice the stall window: a loaded network does not thrash (kept at one doubling so a dead network still fails a transfer within minutes). */
export const MAX_GAP_DOUBLINGS = 1
export const OVERSEER_TICK_MS = 250
/**
 * The overseer counts only time it was watching: a tick that comes late (its process starved of CPU, its
 * event loop busy) adds at most this much to the stall clocks, since reports that arrived meanwhile may
 * still wait unread. So a loaded orchestrator slows its overseer down instead of taking healthy work back.
 */
export const MAX_WATCHED_STEP_MS = 500 // two ticks: less than the stall window's floor
export const DISPATCH_DEBOUNCE_MS = 20 // chunks landing together go out in one wave
export const OFFER_TTL_MS = 10 * 60_000 // signed source and target URLs live 10 min
export const MAX_ATTEMPTS_PER_TASK = 8 // failed attempts of one chunk before the transfer fails
export const MAX_STALLS_PER_TASK = 24 // stall reassignments of one chunk before the transfer fails
export const MAX_OFFERS_PER_BATCH = 64
/**
 * An accepted attempt with no result is taken back (`overdue`) once its offer's URLs expired (no move
 * starts after that), the chunk's two passes (in from the coordinator, out to the destination: a bulk
 * read makes them one after the other) at OVERDUE_FLOOR_RATE have passed too (a move started just
 * before) and OVERDUE_SLACK_MS more (the destination's answer after the last byte), whatever progress is
 * reported. Progress reports are the worker's word and its orchestrator's: without a bound, a pair of
 * them could keep a chunk for ever with totals that rise and nothing delivered. So a move that runs past
 * its offer's expiry must average 16 KiB/s a pass; an HTTP pull slower than about 17 KiB/s is cut by
 * the data endpoint itself anyway (a 1 MiB piece per 60 s: node/adapters/file-response.ts).
 */
export const OVERDUE_FLOOR_RATE = 16 * 1024
export const OVERDUE_SLACK_MS = 60_000
export const COMPLETE_RETRY_MS = 2_000
/**
 * A transfer whose offers were answered `no_worker` (no worker attached, or all in their cool-down) asks
 * again after this long, doubling with each answer in a row up to NO_WORKER_MAX_WAIT_MS: a wait of
 * minutes writes tens of attempt rows per chunk, not thousands.
 */
export const NO_WORKER_WAIT_MS = 500
export const NO_WORKER_MAX_WAIT_MS = 30_000
/**
 * A destination out of room (a worker's `destination_full`: the destination answered 507) is a wait, not
 * a failed attempt: the chunk is offered again after the same doubling waits as `no_worker`, and the
 * transfer fails (`destination_unavailable`) only once its destination has had no room this long with
 * nothing delivered meanwhile.
 */
export const DESTINATION_FULL_MAX_WAIT_MS = 10 * 60_000
/** The wait before asking again after `rounds` answers in a row of no worker, or of no room: 0.5 s doubling to 30 s. */
const waitAfter = (rounds: number): number => Math.min(NO_WORKER_MAX_WAIT_MS, NO_WORKER_WAIT_MS * 2 ** Math.min(Math.max(0, rounds - 1), 16))
export const VERIFY_TIMEOUT_MS = 15_000 // a validator's verdict later than this: the coordinator checks for itself
/** Ids of transfers that left memory, remembered to answer their late reports. */
export const CLOSED_MEMORY = 4096
const MAX_CANCEL_IDS = 4096

export interface OrchestratorCandidate { hotkey: string, workers: number, score: number }

export interface CoordinatorConfig {
  waveTimeoutMs: number
  /** The stall window's floor: how long a worker holding work may go without progress or a result. */
  resultGapMs: number
  /** Bytes/s a validator's read-back is given (verifyTimeoutFor). */
  minWorkerRate: number
  offerTtlMs: number
  maxAttemptsPerTask: number
  maxStallsPerTask: number
  /** Strikes, window and cool-down of worker standing (worker-standing.ts). */
  standing: StandingConfig
  /**
   * Whether every read of an offered chunk is reported (read()), as a node's data endpoint does: then
   * accepted work never read by its offer's expiry can no longer move, and is overdue a little after it.
   * The simulator, which has no data endpoint, sets it false.
   */
  readsReported: boolean
  /**
   * Whether this node's own sink reports every chunk PUT it refused for room (sinkFull()), as a node does:
   * then a `destination_full` for a transfer to that sink (`attributable`) that the sink never answered
   * is an ordinary failed attempt, not a free wait (docs/transfers.md#overseer).
   */
  sinkRefusalsReported: boolean
}
export const DEFAULT_COORDINATOR_CONFIG: CoordinatorConfig = {
  waveTimeoutMs: WAVE_TIMEOUT_MS, resultGapMs: RESULT_GAP_MS, minWorkerRate: MIN_WORKER_RATE, offerTtlMs: OFFER_TTL_MS, maxAttemptsPerTask: MAX_ATTEMPTS_PER_TASK, maxStallsPerTask: MAX_STALLS_PER_TASK,
  standing: DEFAULT_STANDING_CONFIG, readsReported: true, sinkRefusalsReported: true
}

export type Outcome<T> = { ok: true, value: T } | { ok: false, code: string, status: number, detail: string, extensions?: Record<string, unknown> }

export type CoordinatorEvent =
  | { type: 'transfer', row: TransferRow }
  | { type: 'result', row: ResultRow, attempt: AttemptRow }
  /** A reported success whose destination check has begun (the attempt is 'checking'); 'result' follows. */
  | { type: 'checking', row: ResultRow, attempt: AttemptRow }
  | { type: 'intervention', row: InterventionRow }
  /** A worker's standing changed: a strike, or an exclusion from this coordinator's offers. */
  | { type: 'worker_standing', row: WorkerStandingRow, excluded: boolean }

/** One offer as planned; the actor adds the signed source and the destination target before sending. */
export interface OfferDraft {
  taskId: string
  attemptId: string
  transferId: string
  chunkIndex: number
  offset: number
  length: number
  sha256: string
  attemptSlot: number
  /** The attempt's number for its chunk (0, 1, ...): a destination that orders attempts (the node sink) gets it. */
  attemptNo: number
  excludeWorkers: string[]
}

/** Destination and staging work, run outside the mailbox; each reports back by message. */
export type IoJob =
  | { type: 'begin', transferId: string, destinationId: string, spec: UploadSpec }
  | { type: 'offers', transferId: string, destinationId: string, upload: UploadState, waveKind: 'initial' | 'recovery', expiresAt: number, batches: Array<{ to: string, batchId: string, offers: OfferDraft[] }>, excludedWorkers: string[] }
  /** Reads the delivered chunk back (or lists the stored part) and reports 'checked'. */
  | { type: 'check', transferId: string, destinationId: string, upload: UploadState, attemptId: string, chunk: { index: number, offset: number, length: number, sha256: string, md5: string }, attemptSlot: number, attemptNo: number, etag: string | null }
  /** Asks `validator` to read the chunk back when the destination allows it; otherwise checks like 'check'. */
  | { type: 'verify', validator: string, request: VerifyDraft, check: Extract<IoJob, { type: 'check' }> }
  | { type: 'complete', transferId: string, destinationId: string, upload: UploadState, parts: DeliveredPart[] }
  /** `then: 'cancel'` reports 'aborted' (the cancel waits for it); 'cleanup' is part of a terminal transfer's cleanup. */
  | { type: 'abort', transferId: string, destinationId: string, upload: UploadState | null, then: 'cancel' | 'cleanup' }
  /** Frees the staged chunks of a terminal transfer (and aborts its upload when `abort` is set), then reports 'cleaned'. */
  | { type: 'cleanup', transferId: string, destinationId: string, abort: UploadState | null, chunks: Array<{ index: number, sha256: string }> }

export interface VerifyDraft {
  transferId: string
  taskId: string
  attemptId: string
  chunkIndex: number
  orchestrator: string
  worker: string
  length: number
  sha256: string
  trustedDurationMs: number
  /** The orchestrator's signed result frame, base64 (peer trust). */
  evidence?: string
}

export type Effect =
  | { kind: 'send', to: string, type: MessageType, body: unknown }
  | { kind: 'emit', event: CoordinatorEvent }
  | { kind: 'log', level: 'debug' | 'info' | 'warn', obj: Record<string, unknown>, msg: string }
  /** Delivers `msg` to the coordinator after `ms` on the injected clock. */
  | { kind: 'timer', ms: number, msg: { type: 'dispatch' | 'complete-retry', transferId: string } }
  /** Fetch the orchestrators that can take work and hand them back as a 'planned' message. */
  | { kind: 'candidates', transferId: string }
  | { kind: 'io', job: IoJob }
  | { kind: 'reply', reply: Reply<Outcome<any>>, value: Outcome<any> }
  /** A named point crash tests stop the process at (after the step's store operations are durable). */
  | { kind: 'fault', point: FaultPoint }

export type FaultPoint = 'after_chunk' | 'after_finalize' | 'during_delivery' | 'before_complete' | 'after_complete'

export interface Step {
  ops: StoreOp[]
  effects: Effect[]
  /** The answer to the input, when it had a caller (sent once `ops` are durable). */
  reply?: Outcome<any>
}

/** Everything the store holds about one transfer, as hydration needs it. */
export interface Hydration {
  row: TransferRow
  chunks: ChunkRow[]
  tasks: TaskRow[]
  attempts: AttemptRow[]
  /** Results of attempts that were being checked when the node stopped. */
  results: ResultRow[]
  waves: number
  interventions: number
}

/** `notBefore`: a chunk waiting for room at its destination is not offered again before this time. */
interface Recovery { reason: InterventionReason, previous: AttemptRow, excludeOrchestrator: boolean, notBefore?: number }

/**
 * Clock readings of an open attempt, for the overseer; `acceptedWatched`: its acceptance on the watched
 * clock (watched()); `bytes`: its worker's last reported progress; `word`: the worker's own word that it
 * holds the attempt (task_accepted), checked only when a stall would strike it; `read`: its chunk was
 * read whole from this node's data endpoint, `reading`: responses of it being served now (the
 * coordinator's own evidence that the worker acts on it: a streamed move reads to its last byte only as
 * its PUT ends, so a live read counts as read while it lasts);
 * `restored`: accepted before this process started (its word, if any, was not kept): its progress counts,
 * but a stall of it strikes no one and steers nothing; `readUnknown`: open when this process started (a
 * read of its chunk before then was not kept), judged as read and, at this node's own sink, as refused
 * for room; `refused`: this node's own sink answered a PUT of it 507 (sinkFull()).
 */
interface OpenAttempt { offeredAt: number, acceptedAt: number | null, acceptedWatched: number | null, bytes: number, word?: () => boolean, read?: true, reading?: number, restored?: true, readUnknown?: true, refused?: true }

export interface Active {
  row: TransferRow
  chunks: Map<number, ChunkRow>
  tasks: Map<number, TaskRow> // by chunk index
  attempts: Map<string, AttemptRow>
  failedWorkers: Map<number, Set<string>> // chunk index → workers that failed it
  checking: Map<string, ResultRow> // attempt id → its result, while the destination check runs
  verifying: Map<string, { validator: string, since: number }> // attempt id → the validator asked
  verifiedBy: Set<string> // attempts a validator verified
  pending: Set<number> // staged chunk indices waiting for an offer
  recovery: Map<number, Recovery> // pending chunks that are pending again, and why
  open: Map<string, OpenAttempt> // attempt id → its clock readings, while offered or accepted
  failures: Map<number, number> // chunk index → failed attempts (stall reassignments do not count)
  stalls: Map<number, number> // chunk index → stall reassignments
  wave: number
  interventions: number
  dispatchScheduled: boolean
  /** `no_worker` answers in a row, and the time before which the overseer does not plan again for them. */
  noWorkerRounds: number
  planAfter: number
  /** `destination_full` results since a chunk was last delivered (each chunk's wait doubles with them), and when the first came. */
  fullRounds: number
  fullSince: number | null
  /** No orchestrator had workers at the last plan: said once at warn, until offers go out again. */
  waitingForWorkers: boolean
  planning: boolean
  beginning: boolean
  completing: boolean
  cancelling: boolean
  cancelReplies: Array<Reply<Outcome<any>>>
}

const fail = (status: number, code: string, detail: string, extensions?: Record<string, unknown>): Outcome<never> => ({ ok: false, status, code, detail, extensions })
const NOT_FOUND = fail(404, 'BWN_ERR_TRANSFER_NOT_FOUND', 'No such transfer.')
const isOpen = (at: AttemptRow): boolean => at.state === 'offered' || at.state === 'accepted' || at.state === 'checking'
/** What the data endpoint said of a response of a chunk (`read()`). */
export type ReadPhase = 'start' | 'done' | 'cut'
/** Its chunk was read whole, or is being read now. */
const wasRead = (c: OpenAttempt): boolean => c.read === true || (c.reading ?? 0) > 0
const isStall = (reason: InterventionReason): boolean => reason === 'wave_timeout' || reason === 'result_gap' || reason === 'overdue' || reason === 'orchestrator_restarted'

export class TransferState {
  readonly #self: string
  readonly #cfg: CoordinatorConfig
  readonly #newId: () => string
  readonly #active = new Map<string, Active>()
  /** Transfers that left memory: id → final status, oldest first (bounded). */
  readonly #closed = new Map<string, TransferStatus>()
  /** `<orchestrator>/<worker>` → the worker's session total, as that orchestrator relayed it, when it last counted. */
  readonly #moved = new Map<string, number>()
  /**
   * worker → its attempts here, accepted through some orchestrator (attempt id → transfer id): whose
   * session totals count (only an orchestrator the worker holds work through speaks for it). Pruned as
   * attempts close, and of stale entries when read.
   */
  readonly #held = new Map<string, Map<string, string>>()
  /** worker → when it last made progress or sent a result (for any transfer), on the watched clock. */
  readonly #lastActivityAt = new Map<string, number>()
  /** The watched clock (MAX_WATCHED_STEP_MS): its reading and the wall time at the last tick. */
  #watchedAtTick = 0
  #lastTickAt: number | null = null
  /** Rates (bytes/s) of the last RATE_SAMPLES accepted deliveries, acceptance to result: the measured rate. */
  readonly #rates: number[] = []
  /** worker → what this coordinator holds against it (worker-standing.ts). */
  readonly #standing = new Map<string, WorkerStandingRow>()
  #rr = 0

  constructor (opts: { self: string, config?: Partial<CoordinatorConfig>, newId?: () => string }) {
    this.#self = opts.self
    this.#cfg = { ...DEFAULT_COORDINATOR_CONFIG, ...opts.config }
    this.#newId = opts.newId ?? systemRandom.uuid
  }

  get config (): Readonly<CoordinatorConfig> { return this.#cfg }
  /** Transfers held in memory (every non-terminal one of this coordinator). */
  get size (): number { return this.#active.size }
  get (id: string): Readonly<Active> | undefined { return this.#active.get(id) }
  /** This coordinator's hotkey. */
  get self (): string { return this.#self }
  /** Still accepting offers to be sent (not terminal, not being cancelled). */
  isLive (id: string): boolean {
    const a = this.#active.get(id)
    return a !== undefined && !a.cancelling && !TERMINAL.has(a.row.status)
  }

  /** The final status of a transfer that left memory, while remembered. */
  closedStatus (id: string): TransferStatus | undefined { return this.#closed.get(id) }

  // ---- hydration ---------------------------------------------------------------------------------

  /**
   * Takes a transfer as the store holds it. At process start (`processStart`), offers this node's own
   * router held are gone with the process: they are reassigned at once. Work another orchestrator holds
   * is watched by the overseer as if just offered. A transfer finalized with every chunk delivered is
   * completed; one whose cancel was not finished is aborted again; a terminal one whose cleanup did not
   * finish is cleaned up (and not kept).
   */
  hydrate (h: Hydration, now: number, opts: { processStart: boolean }): Step {
    const step: Step = { ops: [], effects: [] }
    const row = h.row
    if (row.coordinator_id !== this.#self) return step
    if (TERMINAL.has(row.status)) {
      if (row.cleanup_pending === true) step.effects.push({ kind: 'io', job: this.#cleanupJob(row, h.chunks.map(c => ({ index: c.chunk_index, sha256: c.sha256 }))) })
      this.#remember(row.id, row.status)
      return step
    }
    const a = newActive(row)
    for (const c of h.chunks) a.chunks.set(c.chunk_index, c)
    for (const t of h.tasks) a.tasks.set(t.chunk_index, t)
    for (const at of h.attempts) {
      a.attempts.set(at.id, at)
      if (at.state === 'failed' || at.state === 'superseded') {
        if (at.worker_id) addFailedWorker(a, at.chunk_index, at.worker_id)
        // No worker to take it, or no room at the destination: no attempt spent then, none counted now.
        if (at.failure_reason === 'destination_full' || at.failure_reason === 'no worker available') continue
        const counter = at.state === 'failed' ? a.failures : a.stalls
        counter.set(at.chunk_index, (counter.get(at.chunk_index) ?? 0) + 1)
      }
    }
    a.wave = h.waves
    a.interventions = h.interventions
    this.#active.set(row.id, a)
    if (row.cancel_requested === true) {
      a.cancelling = true
      step.effects.push({ kind: 'io', job: { type: 'abort', transferId: row.id, destinationId: row.destination_id, upload: row.upload, then: 'cancel' } })
      return step
    }
    const results = new Map(h.results.map(r => [r.attempt_id, r]))
    for (const at of a.attempts.values()) {
      if (at.state === 'checking') {
        // The check was running when the node stopped: run it again.
        const result = results.get(at.id)
        if (result !== undefined && row.upload !== null) {
          a.checking.set(at.id, result)
          step.effects.push({ kind: 'io', job: this.#checkJob(a, at, result.etag) })
          continue
        }
        at.state = 'accepted'
      }
      if (at.state !== 'offered' && at.state !== 'accepted') continue
      if (opts.processStart && at.orchestrator_id === this.#self) {
        // This node's router held it; it went down with the process.
        this.#failAttempt(a, at, 'orchestrator_restarted', 'the orchestrator restarted', now, step)
        continue
      }
      a.open.set(at.id, { offeredAt: now, acceptedAt: at.state === 'accepted' ? now : null, acceptedWatched: at.state === 'accepted' ? this.watched(now) : null, bytes: 0, readUnknown: true, ...(at.state === 'accepted' ? { restored: true as const } : {}) })
      if (at.state === 'accepted' && at.worker_id !== null) this.#hold(at.worker_id, at.id, a.row.id)
    }
    for (const c of a.chunks.values()) if (c.state === 'staged' && !hasOpenAttempt(a, c.chunk_index)) a.pending.add(c.chunk_index)
    if (step.ops.length > 0) step.ops.push(this.#touch(a, now))
    if (TERMINAL.has(a.row.status)) return step // a chunk ran out of attempts
    if (a.pending.size > 0) {
      if (a.recovery.size > 0) this.#requestPlan(a, step)
      else this.#scheduleDispatch(a, step)
    }
    this.#maybeComplete(a, step)
    return step
  }

  // ---- client calls -------------------------------------------------------------------------------

  create (row: TransferRow, now: number): Step {
    row.coordinator_id = this.#self
    this.#active.set(row.id, newActive(row))
    void now
    return {
      ops: [{ type: 'put', table: 'transfers', key: row.id, value: row }, { type: 'put', table: 'index', key: keys.orgTransfer(row.org_id, row.created_at, row.id), value: 1 }],
      effects: [{ kind: 'emit', event: { type: 'transfer', row } }],
      reply: { ok: true, value: row }
    }
  }

  /** A chunk durably staged; `stored` is the row when the transfer left memory (or is unknown: undefined). */
  chunk (msg: { transferId: string, index: number, sha256: string, md5: string, length: number }, now: number, stored?: TransferRow): Step {
    const a = this.#active.get(msg.transferId)
    if (a === undefined) return { ops: [], effects: [], reply: this.#absent(msg.transferId, stored, s => `The transfer is ${s}; it takes no more chunks.`) }
    if (TERMINAL.has(a.row.status) || a.cancelling) return { ops: [], effects: [], reply: fail(409, 'BWN_ERR_TRANSFER_CLOSED', `The transfer is ${a.cancelling ? 'cancelled' : a.row.status}; it takes no more chunks.`) }
    const existing = a.chunks.get(msg.index)
    if (existing !== undefined) {
      if (existing.sha256 === msg.sha256) return { ops: [], effects: [], reply: { ok: true, value: { duplicate: true } } }
      return { ops: [], effects: [], reply: fail(409, 'BWN_ERR_CHUNK_CONFLICT', `Chunk ${msg.index} was already received with other bytes.`, { chunk_index: msg.index }) }
    }
    if (a.row.finalize_requested) return { ops: [], effects: [], reply: fail(409, 'BWN_ERR_TRANSFER_CLOSED', 'The transfer is finalized.') }
    const iso = isoFromMs(now)
    const chunk: ChunkRow = {
      transfer_id: a.row.id, chunk_index: msg.index, offset: msg.index * a.row.chunk_size, length: msg.length, sha256: msg.sha256, md5: msg.md5,
      state: 'staged', task_id: null, delivered_attempt_id: null, attempt_slot: null, etag: null, received_at: iso, delivered_at: null
    }
    a.chunks.set(msg.index, chunk)
    a.row.chunks_received++
    a.row.bytes_received += msg.length
    if (a.row.status === 'pending') { a.row.status = 'in_progress'; a.row.started_at = iso }
    a.pending.add(msg.index)
    const step: Step = {
      ops: [
        { type: 'put', table: 'chunks', key: keys.chunk(a.row.id, msg.index), value: chunk },
        { type: 'put', table: 'index', key: blobRefKey(msg.sha256, a.row.id, msg.index), value: 1 },
        this.#touch(a, now)
      ],
      effects: [{ kind: 'fault', point: 'after_chunk' }],
      reply: { ok: true, value: { duplicate: false, chunksReceived: a.row.chunks_received } }
    }
    this.#scheduleDispatch(a, step)
    return step
  }

  finalize (transferId: string, now: number, stored?: TransferRow): Step {
    const a = this.#active.get(transferId)
    if (a === undefined) {
      if (stored?.status === 'completed') return { ops: [], effects: [], reply: { ok: true, value: stored } }
      return { ops: [], effects: [], reply: this.#absent(transferId, stored, s => `The transfer is ${s}.`) }
    }
    if (a.cancelling || TERMINAL.has(a.row.status)) return { ops: [], effects: [], reply: fail(409, 'BWN_ERR_TRANSFER_CLOSED', `The transfer is ${a.cancelling ? 'cancelled' : a.row.status}.`) }
    const step: Step = { ops: [], effects: [] }
    if (a.row.finalize_requested) {
      // Asked again: answer, and make sure completion is under way (never a no-op forever).
      step.reply = { ok: true, value: a.row }
      this.#maybeComplete(a, step)
      return step
    }
    const missing: number[] = []
    for (let i = 0; i < a.row.total_chunks; i++) if (!a.chunks.has(i)) missing.push(i)
    if (missing.length > 0) {
      return { ops: [], effects: [], reply: fail(409, 'BWN_ERR_CHUNKS_MISSING', `${missing.length} of ${a.row.total_chunks} chunks have not been received.`, { missing_chunks: missing.slice(0, 1000), missing_count: missing.length }) }
    }
    a.row.finalize_requested = true
    a.row.finalized_at = isoFromMs(now)
    step.ops.push(this.#touch(a, now))
    step.effects.push({ kind: 'fault', point: 'after_finalize' })
    step.reply = { ok: true, value: a.row }
    this.#maybeComplete(a, step)
    return step
  }

  /** Starts a cancel: open work is cancelled at once; the answer waits for the destination abort ('aborted'). */
  cancel (transferId: string, reply: Reply<Outcome<any>>, now: number, stored?: TransferRow): Step {
    const a = this.#active.get(transferId)
    if (a === undefined) {
      if (stored?.status === 'cancelled') return { ops: [], effects: [], reply: { ok: true, value: stored } }
      if (stored !== undefined && stored.coordinator_id === this.#self && TERMINAL.has(stored.status)) return { ops: [], effects: [], reply: fail(409, 'BWN_ERR_TRANSFER_CLOSED', `The transfer is already ${stored.status}.`) }
      return { ops: [], effects: [], reply: NOT_FOUND }
    }
    if (a.row.status === 'completed' || a.row.status === 'failed') return { ops: [], effects: [], reply: fail(409, 'BWN_ERR_TRANSFER_CLOSED', `The transfer is already ${a.row.status}.`) }
    a.cancelReplies.push(reply)
    const step: Step = { ops: [], effects: [] }
    if (a.cancelling) return step // the first cancel's abort answers this one too
    a.cancelling = true
    a.row.cancel_requested = true
    a.pending.clear()
    a.recovery.clear()
    this.#cancelOpenAttempts(a, step, 'transfer_cancelled', now)
    step.ops.push(this.#touch(a, now))
    // The destination upload is aborted before the cancel is answered: no write lands after it.
    step.effects.push({ kind: 'io', job: { type: 'abort', transferId, destinationId: a.row.destination_id, upload: a.row.upload, then: 'cancel' } })
    return step
  }

  /** The destination abort of a cancel finished (or failed: the transfer is cancelled either way). */
  aborted (transferId: string, now: number): Step {
    const a = this.#active.get(transferId)
    const step: Step = { ops: [], effects: [] }
    if (a === undefined || !a.cancelling) return step
    a.row.status = 'cancelled'
    a.row.completed_at = isoFromMs(now)
    this.#close(a, step, now, { abort: false })
    for (const r of a.cancelReplies.splice(0)) step.effects.push({ kind: 'reply', reply: r, value: { ok: true, value: a.row } })
    return step
  }

  // ---- delivery -----------------------------------------------------------------------------------

  /** The debounce fired: start the upload at the destination, or ask for candidates to plan a wave. */
  dispatch (transferId: string): Step {
    const step: Step = { ops: [], effects: [] }
    const a = this.#active.get(transferId)
    if (a === undefined) return step
    a.dispatchScheduled = false
    this.#requestPlan(a, step)
    return step
  }

  /** `attributable`: the destination's bytes are the workers' alone (DestinationDriver.attributable), kept on the row. */
  begun (transferId: string, destinationId: string, upload: UploadState | null, error: string | null, now: number, attributable = false): Step {
    const step: Step = { ops: [], effects: [] }
    const a = this.#active.get(transferId)
    if (a === undefined) {
      // Closed while the upload was starting: discard it.
      if (upload !== null) step.effects.push({ kind: 'io', job: { type: 'abort', transferId, destinationId, upload, then: 'cleanup' } })
      return step
    }
    a.beginning = false
    if (a.cancelling || TERMINAL.has(a.row.status)) {
      if (upload !== null) { a.row.upload = upload; step.ops.push(this.#touch(a, now)) }
      return step
    }
    if (upload === null) {
      step.effects.push({ kind: 'log', level: 'warn', obj: { transferId, error }, msg: 'destination refused the upload' })
      this.#failTransfer(a, step, 'destination_unavailable', 'The destination could not start the upload.', now)
      return step
    }
    a.row.upload = upload
    if (attributable) a.row.attributable = true
    step.ops.push(this.#touch(a, now))
    this.#requestPlan(a, step)
    return step
  }

  /** Plans a wave of the pending chunks over `candidates`: one plan row, batches of ≤ 64 offers per orchestrator. */
  planned (transferId: string, candidates: OrchestratorCandidate[], now: number): Step {
    const step: Step = { ops: [], effects: [] }
    const a = this.#active.get(transferId)
    if (a === undefined) return step
    a.planning = false
    if (TERMINAL.has(a.row.status) || a.cancelling || a.pending.size === 0 || a.row.upload === null) return step
    const all = candidates.filter(c => c.workers > 0)
    if (all.length === 0) {
      // The overseer asks again every tick: an operator hears it once per wait, not four times a second.
      step.effects.push({ kind: 'log', level: a.waitingForWorkers ? 'debug' : 'warn', obj: { transferId, pending: a.pending.size }, msg: 'no orchestrator with workers; offers wait' })
      a.waitingForWorkers = true
      return step
    }
    if (a.waitingForWorkers) {
      a.waitingForWorkers = false
      step.effects.push({ kind: 'log', level: 'info', obj: { transferId, pending: a.pending.size }, msg: 'orchestrators with workers again; offers go out' })
    }
    // Chunks waiting for room at the destination stay pending until their time (the tick asks again then).
    const indices = [...a.pending].filter(i => (a.recovery.get(i)?.notBefore ?? 0) <= now).sort((x, y) => x - y)
    if (indices.length === 0) return step
    const waveKind = indices.some(i => a.recovery.has(i)) ? 'recovery' : 'initial'
    // Recovery avoids the orchestrator whose wave stalled, when another can take the chunk.
    const groups = new Map<string, number[]>()
    const plain: number[] = []
    for (const i of indices) {
      const why = a.recovery.get(i)
      if (why?.excludeOrchestrator === true && all.some(c => c.hotkey !== why.previous.orchestrator_id)) {
        const key = why.previous.orchestrator_id
        groups.set(key, [...(groups.get(key) ?? []), i])
      } else plain.push(i)
    }
    const assignment = new Map<string, number[]>()
    const allocate = (chunkIdx: number[], cands: OrchestratorCandidate[]): void => {
      if (chunkIdx.length === 0) return
      // Quota floors, and the leftovers sampled by their fractions with the transfer and wave as the seed,
      // so a wave of one chunk goes to each orchestrator as often as its routing score says
      // (allocateRotated, docs/formulas.md#allocation).
      const slices = allocateRotated(chunkIdx.length, cands.map(c => ({ id: c.hotkey, score: c.score })), `${a.row.id}/${a.wave}`)
      for (const s of slices) {
        if (s.count === 0) continue
        assignment.set(s.id, [...(assignment.get(s.id) ?? []), ...chunkIdx.slice(s.chunkStart, s.chunkEnd + 1)])
      }
    }
    // A chunk offered for the first time goes to the orchestrator whose slice of the whole transfer holds
    // it (the transfer's split over its total chunks), so each orchestrator's count for the transfer is
    // within one of its quota however the chunks arrive: a client uploading four at a time makes waves of
    // one to four chunks, and a split of each wave alone could stray from the quota by one per wave.
    // Chunks pending again are split by wave.
    const first = plain.filter(i => !a.recovery.has(i))
    if (first.length > 0) {
      const whole = allocateRotated(a.row.total_chunks, all.map(c => ({ id: c.hotkey, score: c.score })), `${a.row.id}/0`)
      let s = 0
      for (const i of first) { // ascending, as the slices are
        while (whole[s]!.chunkEnd < i) s++ // slices cover 0..total-1 in order, none empty
        const owner = whole[s]!.id
        assignment.set(owner, [...(assignment.get(owner) ?? []), i])
      }
    }
    allocate(plain.filter(i => a.recovery.has(i)), all)
    for (const idx of assignment.values()) idx.sort((x, y) => x - y)
    for (const [excluded, idx] of groups) allocate(idx, all.filter(c => c.hotkey !== excluded))

    const iso = isoFromMs(now)
    const plan: PlanRow = {
      transfer_id: a.row.id, wave: a.wave, wave_kind: waveKind, allocation_rule: ROUTED_ALLOCATION_RULE, created_at: iso,
      deliveries: [...assignment].map(([orch, idx]) => ({ orchestrator_id: orch, routing_score: all.find(c => c.hotkey === orch)?.score ?? 0, chunk_count: idx.length, chunk_indices: idx }))
    }
    step.ops.push({ type: 'put', table: 'transfer_assignment_plans', key: keys.plan(a.row.id, a.wave), value: plan })
    a.wave++
    const batches: Array<{ to: string, batchId: string, offers: OfferDraft[] }> = []
    for (const [orch, idx] of assignment) {
      for (let b = 0; b < idx.length; b += MAX_OFFERS_PER_BATCH) {
        const batchId = this.#newId()
        const offers: OfferDraft[] = []
        const batchRow: OfferBatchRow = { id: batchId, transfer_id: a.row.id, orchestrator_id: orch, coordinator_id: this.#self, wave_kind: waveKind, task_ids: [], attempt_ids: [], offered_at: iso, routed: [] }
        for (const index of idx.slice(b, b + MAX_OFFERS_PER_BATCH)) {
          const chunk = a.chunks.get(index)!
          let task = a.tasks.get(index)
          if (task === undefined) {
            task = { id: this.#newId(), transfer_id: a.row.id, chunk_index: index, state: 'pending', orchestrator_id: null, assigned_worker_id: null, current_attempt_id: null, attempt_count: 0, created_at: iso, offered_at: null, accepted_at: null, completed_at: null, failed_at: null, failure_reason: null }
            a.tasks.set(index, task)
          }
          const attemptNo = task.attempt_count
          const attempt: AttemptRow = {
            id: this.#newId(), task_id: task.id, transfer_id: a.row.id, chunk_index: index, attempt_no: attemptNo, attempt_slot: attemptNo % ATTEMPT_SLOTS_PER_CHUNK,
            orchestrator_id: orch, worker_id: null, batch_id: batchId, wave_kind: waveKind, recovery: attemptNo > 0, state: 'offered',
            offered_at: iso, accepted_at: null, finished_at: null, failure_reason: null
          }
          const why = a.recovery.get(index)
          if (why !== undefined) {
            a.recovery.delete(index)
            const iv: InterventionRow = {
              id: this.#newId(), transfer_id: a.row.id, task_id: task.id, chunk_index: index, intervention_type: 'overseer_recovery', reason: why.reason,
              outcome: isStall(why.reason) ? 'stall_redistributed' : 'failure_redelivered',
              orchestrator_id: why.previous.orchestrator_id, previous_attempt_id: why.previous.id, previous_worker_id: why.previous.worker_id,
              replacement_attempt_id: attempt.id, replacement_orchestrator_id: orch, intervened_at: iso
            }
            step.ops.push({ type: 'put', table: 'overseer_interventions', key: keys.intervention(a.row.id, a.interventions++, iv.id), value: iv })
            step.effects.push({ kind: 'emit', event: { type: 'intervention', row: iv } })
          }
          task.attempt_count++
          task.state = 'offered'
          task.orchestrator_id = orch
          task.assigned_worker_id = null
          task.current_attempt_id = attempt.id
          task.offered_at = iso
          a.attempts.set(attempt.id, attempt)
          chunk.state = 'delivering'
          chunk.task_id = task.id
          a.pending.delete(index)
          a.open.set(attempt.id, { offeredAt: now, acceptedAt: null, acceptedWatched: null, bytes: 0 })
          offers.push({
            taskId: task.id, attemptId: attempt.id, transferId: a.row.id, chunkIndex: index, offset: chunk.offset, length: chunk.length, sha256: chunk.sha256,
            attemptSlot: attempt.attempt_slot, attemptNo: attempt.attempt_no, excludeWorkers: [...(a.failedWorkers.get(index) ?? [])].slice(0, 64)
          })
          batchRow.task_ids.push(task.id)
          batchRow.attempt_ids.push(attempt.id)
          step.ops.push({ type: 'put', table: 'tasks', key: keys.row(a.row.id, task.id), value: task })
          step.ops.push({ type: 'put', table: 'task_attempts', key: keys.row(a.row.id, attempt.id), value: attempt })
          step.ops.push({ type: 'put', table: 'chunks', key: keys.chunk(a.row.id, index), value: chunk })
        }
        step.ops.push({ type: 'put', table: 'task_offer_batches', key: keys.row(a.row.id, batchId), value: batchRow })
        batches.push({ to: orch, batchId, offers })
      }
    }
    if (a.row.status === 'pending') { a.row.status = 'in_progress'; a.row.started_at = iso }
    step.ops.push(this.#touch(a, now))
    // A batch that cannot be sent is never routed: the overseer reassigns it after the wave timeout.
    step.effects.push({ kind: 'io', job: { type: 'offers', transferId: a.row.id, destinationId: a.row.destination_id, upload: a.row.upload, waveKind, expiresAt: now + this.#cfg.offerTtlMs, batches, excludedWorkers: this.excludedWorkers(now) } })
    step.effects.push({ kind: 'log', level: 'debug', obj: { transferId: a.row.id, waveKind, offers: indices.length, orchestrators: assignment.size }, msg: 'wave dispatched' })
    return step
  }

  assigned (from: string, body: TaskAssigned, now: number): Step {
    const step: Step = { ops: [], effects: [] }
    const a = this.#active.get(body.transferId)
    if (a === undefined) return step
    let none = false
    let some = false
    for (const { attemptId, worker } of body.assignments) {
      const at = a.attempts.get(attemptId)
      if (at === undefined || at.orchestrator_id !== from || at.state !== 'offered') continue
      if (worker === null) { none = true; this.#failAttempt(a, at, 'no_worker', 'no worker available', now, step); continue }
      some = true
      at.worker_id = worker; at.state = 'accepted'; at.accepted_at = isoFromMs(now)
      this.#hold(worker, at.id, a.row.id)
      const reading = a.open.get(at.id)
      if (reading) { reading.acceptedAt = now; reading.acceptedWatched = this.watched(now) }
      const task = a.tasks.get(at.chunk_index)!
      task.assigned_worker_id = worker; task.accepted_at = at.accepted_at
      step.ops.push({ type: 'put', table: 'task_attempts', key: keys.row(a.row.id, at.id), value: at })
      step.ops.push({ type: 'put', table: 'tasks', key: keys.row(a.row.id, task.id), value: task })
    }
    if (some) { a.noWorkerRounds = 0; a.planAfter = 0 } else if (none) {
      a.noWorkerRounds++
      a.planAfter = now + waitAfter(a.noWorkerRounds)
    }
    this.#afterFailures(a, step, now)
    return step
  }

  /**
   * The worker's own word that it holds an attempt, relayed by the orchestrator `from` the attempt was
   * assigned through. `proved`: whether the relayed word carries the worker's signed frame for this
   * coordinator (node/verify-evidence.ts checkWorkerAccept), asked at most once, when a stall or the
   * worker's progress first needs it; absent (the simulator signs nothing), the word stands as said.
   */
  accepted (from: string, body: RelayedAccept, proved?: () => boolean): Step {
    const step: Step = { ops: [], effects: [] }
    const a = this.#active.get(body.transferId)
    const at = a?.attempts.get(body.attemptId)
    if (a === undefined || at === undefined || at.orchestrator_id !== from || at.task_id !== body.taskId || at.worker_id !== body.worker || body.coordinator !== this.#self) return step
    const reading = a.open.get(at.id)
    if (reading !== undefined && reading.word === undefined) {
      // Checked at most once: when a stall would strike, or progress would count through it.
      let verdict: boolean | undefined
      reading.word = () => (verdict ??= proved?.() ?? true)
    }
    return step
  }

  /**
   * The attempt's chunk was read from this node's data endpoint under the offer's signed path: the
   * worker acted on the offer, whatever its orchestrator relays of its progress, so a stall of it is not
   * held against the worker (the orchestrator, which knows the path too, can only spare it a strike).
   */
  /** `phase`: a response of the chunk began (`start`), sent its last byte (`done`), or ended short (`cut`). */
  read (transferId: string, attemptId: string, phase: ReadPhase = 'done'): void {
    const reading = this.#active.get(transferId)?.open.get(attemptId)
    if (reading === undefined) return
    if (phase === 'start') { reading.reading = (reading.reading ?? 0) + 1; return }
    if (reading.reading !== undefined) reading.reading = Math.max(0, reading.reading - 1)
    if (phase === 'done') reading.read = true
  }

  /**
   * This node's own sink refused a PUT of chunk `index` of upload `uploadId`, signed for attempt number
   * `attemptNo`, for room (507). Its evidence that a `destination_full` from that attempt is true; a
   * refusal of no open attempt (late, or a transfer that is not this sink's) changes nothing.
   */
  sinkFull (uploadId: string, index: number, attemptNo: number): void {
    for (const a of this.#active.values()) {
      if (a.row.attributable !== true || a.row.upload?.uploadId !== uploadId) continue
      for (const [id, reading] of a.open) {
        const at = a.attempts.get(id)
        if (at !== undefined && at.chunk_index === index && at.attempt_no === attemptNo) reading.refused = true
      }
      return
    }
  }

  /** A worker's report, relayed by the orchestrator `from`; `validators` are the ones connected now. */
  /** `evidence`: the orchestrator's signed result frame, handed to the validator with the verify request (docs/security.md#peers). */
  /**
   * `claimed`: whether the delivery carries its worker's own signed result for this coordinator
   * (node/verify-evidence.ts checkWorkerClaim), asked only of a success for an attempt still open (a
   * signature check); absent (the simulator signs nothing), every delivery counts as claimed. A
   * delivery without one is refused and the attempt fails, with no strike on anyone: the worker never
   * said it delivered.
   */
  result (from: string, r: TaskResult, now: number, validators: readonly string[] = [], evidence?: Uint8Array, claimed?: () => boolean): Step {
    const step: Step = { ops: [], effects: [] }
    const ack = (status: 'completed' | 'failed' | 'late_superseded' | 'rejected', reason: string | null): void => {
      step.effects.push({ kind: 'send', to: from, type: 'task_result_ack', body: { taskId: r.taskId, attemptId: r.attemptId, worker: r.worker, received: status !== 'rejected', status, reason } })
    }
    const a = this.#active.get(r.transferId)
    if (a === undefined) {
      const closed = this.#closed.get(r.transferId)
      if (closed !== undefined) ack('late_superseded', `transfer_${closed}`)
      else ack('rejected', 'unknown_attempt')
      return step
    }
    const at = a.attempts.get(r.attemptId)
    if (at === undefined || at.task_id !== r.taskId || at.orchestrator_id !== from) { ack('rejected', 'unknown_attempt'); return step }
    // Only the worker the attempt was assigned to (task_assigned) reports on it: a result naming
    // another, or for an attempt assigned to none, is refused, so no report pins a failure on a worker
    // that never held the work.
    if (at.worker_id === null || at.worker_id !== r.worker) { ack('rejected', 'unknown_attempt'); return step }
    const worker = at.worker_id
    if (at.state === 'succeeded') { ack('completed', null); return step }
    if (at.state !== 'offered' && at.state !== 'accepted') { ack('late_superseded', at.state); return step }
    if (r.success && claimed !== undefined && !claimed()) {
      this.#failAttempt(a, at, 'attempt_failed', 'delivery without the worker\'s signed result', now, step)
      ack('rejected', 'no_worker_claim')
      this.#afterFailures(a, step, now)
      return step
    }
    const chunk = a.chunks.get(at.chunk_index)!
    const reading = a.open.get(at.id)
    const offeredAt = reading?.offeredAt ?? null
    a.open.delete(at.id)
    this.#held.get(worker)?.delete(at.id)
    this.#lastActivityAt.set(worker, this.watched(now))
    const row: ResultRow = {
      attempt_id: at.id, task_id: at.task_id, transfer_id: a.row.id, chunk_index: at.chunk_index, orchestrator_id: at.orchestrator_id, worker_id: worker,
      success: r.success, bytes: chunk.length, claimed_bytes: r.bytes, duration_ms: r.durationMs, sha256: r.sha256, etag: r.etag, error: r.error, via: r.via,
      outcome: 'accepted', received_at: isoFromMs(now)
    }
    if (!r.success) {
      row.outcome = 'failed'
      // `no_worker` is the coordinator's own finding (assigned()), never a result's: a worker holding the
      // chunk cannot say no worker was available, and would spend no attempt if it could.
      // A destination out of room is a wait, on the worker's word, except at this node's own sink, which
      // says itself which PUTs it refused: there a `destination_full` it never answered is a failure.
      const unconfirmed = r.error === 'destination_full' && a.row.attributable === true && this.#cfg.sinkRefusalsReported && reading?.refused !== true && reading?.readUnknown !== true
      const reason: InterventionReason = r.error === 'worker_lost' ? 'worker_lost' : r.error === 'session_displaced' ? 'session_displaced' : r.error === 'destination_full' && !unconfirmed ? 'destination_full' : 'attempt_failed'
      if (unconfirmed) step.effects.push({ kind: 'log', level: 'warn', obj: { worker, orchestrator: from, transferId: a.row.id, attemptId: at.id, event: 'destination_full_unconfirmed' }, msg: 'a worker reported this node\'s sink full, which refused it nothing; counted as a failed attempt' })
      this.#failAttempt(a, at, reason, unconfirmed ? 'destination_full_unconfirmed' : r.error, now, step)
      if (reason === 'destination_full') this.#waitForRoom(a, at.chunk_index, now, step)
      ack('failed', r.error)
    } else if (r.sha256 !== chunk.sha256) {
      // A node sink's ETag of other bytes goes on to the read-back like any delivery: the validator's
      // verdict (a penalty on the worker's own hotkey) or the coordinator's check, which compares it.
      row.outcome = 'integrity_mismatch'
      this.#strike(worker, 'failed_check', at, now, step)
      this.#failAttempt(a, at, 'integrity_mismatch', 'reported hash does not match the staged chunk', now, step)
      ack('failed', 'hash_mismatch')
    } else {
      if (reading?.acceptedAt != null && now > reading.acceptedAt) this.#sampleRate(chunk.length * 1000 / (now - reading.acceptedAt))
      if (a.fullSince !== null) {
        // The destination took a chunk: it has room again, and the chunks waiting for it go at once.
        a.fullRounds = 0; a.fullSince = null
        for (const w of a.recovery.values()) if (w.notBefore !== undefined) w.notBefore = 0
      }
      at.state = 'checking'
      const check = this.#checkJob(a, at, r.etag)
      if (validators.length > 0) {
        // Pending verification until a validator's verdict exists (where the destination lets it read).
        const validator = validators[this.#rr++ % validators.length]!
        a.verifying.set(at.id, { validator, since: now })
        step.effects.push({
          kind: 'io',
          job: {
            type: 'verify', validator, check,
            request: {
              transferId: a.row.id, taskId: at.task_id, attemptId: at.id, chunkIndex: at.chunk_index, orchestrator: at.orchestrator_id, worker, length: chunk.length, sha256: chunk.sha256,
              trustedDurationMs: offeredAt === null ? 0 : Math.max(0, now - offeredAt), ...(evidence !== undefined ? { evidence: Buffer.from(evidence).toString('base64') } : {}),
              ...(a.row.attributable === true ? { attributable: true } : {})
            }
          }
        })
      } else {
        step.effects.push({ kind: 'io', job: check })
      }
    }
    step.ops.push({ type: 'put', table: 'task_results', key: keys.row(a.row.id, at.id), value: row }, { type: 'put', table: 'task_attempts', key: keys.row(a.row.id, at.id), value: at })
    if (row.outcome !== 'accepted') step.effects.push({ kind: 'emit', event: { type: 'result', row, attempt: at } })
    else { a.checking.set(at.id, row); step.effects.push({ kind: 'emit', event: { type: 'checking', row: { ...row }, attempt: { ...at } } }) }
    this.#afterFailures(a, step, now)
    return step
  }

  /** A validator's verdict on a delivery it was asked to read back. */
  verdict (from: string, body: VerifyVerdict, now: number): Step {
    const a = this.#active.get(body.transferId)
    const at = a?.attempts.get(body.attemptId)
    const asked = a?.verifying.get(body.attemptId)
    if (a === undefined || at === undefined || asked === undefined || asked.validator !== from || at.state !== 'checking') return { ops: [], effects: [] }
    a.verifying.delete(at.id)
    const ownCheck: Effect = { kind: 'io', job: this.#checkJob(a, at, a.checking.get(at.id)?.etag ?? null) }
    if (body.verdict === 'unreadable') return { ops: [], effects: [ownCheck] }
    if (body.verdict === 'mismatch') {
      // One validator's word fails no delivery and strikes no worker: any permitted validator, whatever
      // its stake, is asked for some verdicts. The coordinator checks the destination itself, and only a
      // mismatch it finds too fails the attempt (with the strike where the bytes are the worker's alone).
      return {
        ops: [],
        effects: [
          { kind: 'log', level: 'warn', obj: { transferId: a.row.id, chunk: at.chunk_index, worker: at.worker_id, validator: from }, msg: 'a validator found other bytes at the destination; checking it directly' },
          ownCheck
        ]
      }
    }
    a.verifiedBy.add(at.id)
    return this.checked(a.row.id, at.id, true, null, now)
  }

  /** The outcome of a destination check (or a validator's verdict). */
  /**
   * `inconclusive`: the check could not run (the destination errored or timed out): the attempt fails
   * and the chunk goes again, with no strike, as nothing says the worker wrote wrong bytes.
   */
  checked (transferId: string, attemptId: string, ok: boolean, reason: string | null, now: number, inconclusive = false): Step {
    const step: Step = { ops: [], effects: [] }
    const a = this.#active.get(transferId)
    const at = a?.attempts.get(attemptId)
    if (a === undefined || at === undefined || at.state !== 'checking') return step
    const pending = a.checking.get(at.id)
    a.checking.delete(at.id)
    a.verifying.delete(at.id)
    const ack = (status: 'completed' | 'failed', why: string | null): void => {
      step.effects.push({ kind: 'send', to: at.orchestrator_id, type: 'task_result_ack', body: { taskId: at.task_id, attemptId: at.id, worker: at.worker_id ?? this.#self, received: true, status, reason: why } })
    }
    const iso = isoFromMs(now)
    if (!ok) {
      step.effects.push({ kind: 'log', level: 'warn', obj: { transferId, chunk: at.chunk_index, worker: at.worker_id, reason }, msg: 'delivery failed its destination check' })
      // A strike only where a mismatch can be the worker's alone: this node's own sink, written only
      // through the offer's signed URL. An http server, an s3 bucket or a `node` destination elsewhere
      // is the tenant's to write too, so a tenant could make any worker's delivery fail there.
      if (at.worker_id !== null && !inconclusive && a.row.attributable === true) this.#strike(at.worker_id, 'failed_check', at, now, step)
      // A check that could not run found nothing against the bytes: a failed attempt, not a mismatch.
      if (pending) { pending.outcome = inconclusive ? 'failed' : 'integrity_mismatch'; step.ops.push({ type: 'put', table: 'task_results', key: keys.row(a.row.id, at.id), value: pending }) }
      this.#failAttempt(a, at, inconclusive ? 'attempt_failed' : 'integrity_mismatch', reason, now, step)
      ack('failed', 'destination_check_failed')
    } else {
      const chunk = a.chunks.get(at.chunk_index)!
      const task = a.tasks.get(at.chunk_index)!
      at.state = 'succeeded'; at.finished_at = iso
      task.state = 'completed'; task.completed_at = iso; task.assigned_worker_id = at.worker_id
      chunk.state = 'delivered'; chunk.delivered_attempt_id = at.id; chunk.attempt_slot = at.attempt_slot; chunk.etag = pending?.etag ?? null; chunk.delivered_at = iso
      a.row.chunks_delivered++
      a.row.bytes_delivered += chunk.length
      if (a.verifiedBy.delete(at.id)) { chunk.state = 'verified'; a.row.chunks_verified++ }
      // A crash test's "during delivery": every chunk received, this delivery not yet recorded.
      if (a.row.chunks_received === a.row.total_chunks) step.effects.push({ kind: 'fault', point: 'during_delivery' })
      step.ops.push(
        { type: 'put', table: 'task_attempts', key: keys.row(a.row.id, at.id), value: at },
        { type: 'put', table: 'tasks', key: keys.row(a.row.id, task.id), value: task },
        { type: 'put', table: 'chunks', key: keys.chunk(a.row.id, chunk.chunk_index), value: chunk },
        this.#touch(a, now)
      )
      ack('completed', null)
    }
    if (pending) step.effects.push({ kind: 'emit', event: { type: 'result', row: pending, attempt: at } })
    this.#afterFailures(a, step, now)
    this.#maybeComplete(a, step)
    return step
  }

  /** The destination's answer to complete(). */
  completedUpload (msg: { transferId: string, ok: boolean, retry: boolean, redeliver: number[], error: string | null, storedName?: string | null }, now: number): Step {
    const step: Step = { ops: [], effects: [] }
    const a = this.#active.get(msg.transferId)
    if (a === undefined || TERMINAL.has(a.row.status)) return step
    a.completing = false
    if (a.cancelling) return step
    if (msg.ok) {
      a.row.status = 'completed'
      a.row.completed_at = isoFromMs(now)
      if (msg.storedName != null) a.row.stored_filename = msg.storedName
      step.effects.push({ kind: 'log', level: 'info', obj: { transferId: a.row.id, chunks: a.row.total_chunks, bytes: a.row.total_size, event: 'transfer_completed' }, msg: 'transfer completed' })
      this.#close(a, step, now, { abort: false })
      return step
    }
    if (msg.redeliver.length > 0) {
      // A part changed after it was checked (a stale attempt wrote over it): deliver those again.
      for (const index of msg.redeliver) {
        const chunk = a.chunks.get(index)
        const at = chunk?.delivered_attempt_id ? a.attempts.get(chunk.delivered_attempt_id) : undefined
        if (TERMINAL.has(a.row.status)) break
        if (chunk === undefined || at === undefined || (chunk.state !== 'delivered' && chunk.state !== 'verified')) continue
        if (chunk.state === 'verified') a.row.chunks_verified--
        chunk.state = 'staged'; a.row.chunks_delivered--; a.row.bytes_delivered -= chunk.length
        this.#failAttempt(a, at, 'integrity_mismatch', 'part changed before completion', now, step)
      }
      step.ops.push(this.#touch(a, now))
      this.#afterFailures(a, step, now)
      return step
    }
    if (msg.retry) {
      step.effects.push({ kind: 'timer', ms: COMPLETE_RETRY_MS, msg: { type: 'complete-retry', transferId: a.row.id } })
      return step
    }
    step.effects.push({ kind: 'log', level: 'warn', obj: { transferId: a.row.id, error: msg.error }, msg: 'destination refused to complete the object' })
    this.#failTransfer(a, step, 'destination_refused', 'The destination refused to complete the object.', now)
    return step
  }

  completeRetry (transferId: string): Step {
    const step: Step = { ops: [], effects: [] }
    const a = this.#active.get(transferId)
    if (a !== undefined) this.#maybeComplete(a, step)
    return step
  }

  // ---- the overseer -------------------------------------------------------------------------------

  /**
   * One overseer tick. An offer no orchestrator routed to a worker `waveTimeoutMs` after it was sent is
   * reassigned (`wave_timeout`); a worker holding accepted work with no result from it (for any
   * transfer) for the chunk's result gap (resultGapFor) since the later of the acceptance and its last
   * result loses that work (`result_gap`); accepted work with no result past overdueAt() is taken back
   * whatever progress is reported (`overdue`); a validator silent for verifyTimeoutFor(chunk) is replaced by
   * the coordinator's own check. `readThrough`: when the oldest frame this node received and has not yet
   * read arrived (its frames wait when it is busy); the stall clocks count no time past it, since a
   * report may be among them.
   */
  tick (now: number, readThrough?: number): Step {
    const step: Step = { ops: [], effects: [] }
    // Watched through the unread frame, and from there on the next tick: time held back is counted
    // once the frames before it are read, not lost (a node always a little behind still judges).
    const through = Math.max(this.#lastTickAt ?? -Infinity, readThrough === undefined ? now : Math.min(now, readThrough))
    const watchedNow = this.watched(through)
    this.#watchedAtTick = watchedNow
    this.#lastTickAt = through
    // One no-progress strike per worker per tick, however many chunks it held, and only for a worker that
    // moved none of them at all: one whose bytes stopped part-way (a destination that stalls, a machine
    // under load) loses the work but is not struck.
    const stalledWorkers = new Map<string, { at: AttemptRow | null, moved: boolean }>()
    for (const a of this.#active.values()) {
      if (TERMINAL.has(a.row.status) || a.cancelling) continue
      const cancel = new Map<string, string[]>() // orchestrator → superseded attempts its workers must drop
      const before = step.ops.length
      for (const [attemptId, c] of [...a.open]) {
        const at = a.attempts.get(attemptId)
        if (at === undefined || (at.state !== 'offered' && at.state !== 'accepted')) { a.open.delete(attemptId); continue }
        let reason: InterventionReason | null = null
        if (c.acceptedAt === null) {
          if (now - c.offeredAt >= this.#cfg.waveTimeoutMs) reason = 'wave_timeout' // never routed to a worker
        } else {
          const length = a.chunks.get(at.chunk_index)?.length ?? 0
          const since = Math.max(c.acceptedWatched ?? watchedNow, this.#lastActivityAt.get(at.worker_id ?? '') ?? -Infinity)
          if (watchedNow - since >= this.resultGapFor(length, a.stalls.get(at.chunk_index) ?? 0)) reason = 'result_gap' // its worker made no progress
          else if (through >= this.overdueAt(c.offeredAt, length, !this.#cfg.readsReported || wasRead(c) || c.readUnknown === true)) reason = 'overdue' // progress reported, nothing delivered (its result may wait unread: judged through `through`)
        }
        if (reason === null) continue
        step.effects.push({ kind: 'log', level: 'info', obj: { transferId: a.row.id, attemptId, chunk: at.chunk_index, orchestrator: at.orchestrator_id, worker: at.worker_id, reason, event: 'overseer_reassign' }, msg: 'reassigning stalled work' })
        // A stall strikes its worker only if the worker owned the work by its signed word and moved none
        // of it (no bytes on, no read of the chunk here). Work it never owned is its orchestrator's to
        // answer for, moved or not: no strike, and the chunk tries another orchestrator; it still avoids
        // the named worker for itself (a worker that withholds its word loses the chunk all the same, and
        // its own orchestrator holds the missing accept against it, actors/transfer/router.ts).
        let unowned = false
        if (reason === 'result_gap' && at.worker_id !== null && c.restored !== true) {
          let seen = stalledWorkers.get(at.worker_id)
          if (seen === undefined) stalledWorkers.set(at.worker_id, seen = { at: null, moved: false })
          const said = c.word !== undefined && c.word()
          if (c.bytes > 0 || wasRead(c)) seen.moved = true
          else if (said) seen.at ??= at // the strike names an attempt the worker owned
          if (!said) {
            unowned = true
            step.effects.push({ kind: 'log', level: 'info', obj: { worker: at.worker_id, orchestrator: at.orchestrator_id, transferId: a.row.id, attemptId, event: 'stall_unclaimed' }, msg: 'no strike for a stall: the worker never said it held the work' })
          }
        }
        if (reason === 'overdue') step.effects.push({ kind: 'log', level: 'warn', obj: { worker: at.worker_id, orchestrator: at.orchestrator_id, transferId: a.row.id, attemptId, bytes: c.bytes, event: 'attempt_overdue' }, msg: 'work held past its offer with progress reported and nothing delivered; taken back' })
        this.#failAttempt(a, at, reason, null, now, step)
        const recovery = a.recovery.get(at.chunk_index)
        if (unowned && recovery?.previous === at) recovery.excludeOrchestrator = true
        cancel.set(at.orchestrator_id, [...(cancel.get(at.orchestrator_id) ?? []), attemptId])
        if (TERMINAL.has(a.row.status)) break
      }
      this.#sendCancels(a, step, cancel, 'superseded')
      if (TERMINAL.has(a.row.status)) continue
      for (const [attemptId, v] of [...a.verifying]) {
        const at = a.attempts.get(attemptId)
        if (at === undefined || at.state !== 'checking') { a.verifying.delete(attemptId); continue }
        if (now - v.since < this.verifyTimeoutFor(a.chunks.get(at.chunk_index)?.length ?? 0)) continue
        a.verifying.delete(attemptId)
        step.effects.push({ kind: 'log', level: 'warn', obj: { transferId: a.row.id, attemptId, validator: v.validator }, msg: 'no verdict in time; checking the destination directly' })
        step.effects.push({ kind: 'io', job: this.#checkJob(a, at, a.checking.get(attemptId)?.etag ?? null) })
      }
      if (step.ops.length > before) step.ops.push(this.#touch(a, now))
      if (a.pending.size > 0 && !a.dispatchScheduled && now >= a.planAfter && this.#anyReady(a, now)) this.#requestPlan(a, step)
    }
    // Struck only on the worker's own word that it held the work: an orchestrator's task_assigned alone
    // could name any hotkey and send nothing.
    for (const [worker, { at, moved }] of stalledWorkers) if (!moved && at !== null) this.#strike(worker, 'no_progress', at, now, step)
    return step
  }

  /**
   * A worker's progress report, relayed by the orchestrator `from`. The worker's stall window restarts
   * when its session total moved on by MIN_PROGRESS_BYTES since the last time it did (whichever
   * coordinator's chunks the bytes were), or one of this coordinator's chunks did or completed. Chunk
   * bytes count only from the worker the attempt was given to, through `from`.
   */
  progress (from: string, body: TaskProgress, now: number): Step {
    const step: Step = { ops: [], effects: [] }
    let moved = false
    // The session total counts only from an orchestrator the worker holds work here through, each against
    // its own last: another's report can neither keep the worker's work alive nor reset its count.
    if (!this.#holdsThrough(from, body.worker)) this.#moved.delete(`${from}/${body.worker}`)
    else {
      const key = `${from}/${body.worker}`
      const held = this.#moved.get(key)
      if (held === undefined || body.moved < held) this.#moved.set(key, body.moved) // a first report, or a new session
      else if (body.moved - held >= MIN_PROGRESS_BYTES) { this.#moved.set(key, body.moved); moved = true }
    }
    for (const p of body.attempts) {
      const a = this.#active.get(p.transferId)
      const at = a?.attempts.get(p.attemptId)
      const c = a?.open.get(p.attemptId)
      if (a === undefined || at === undefined || c === undefined || at.state !== 'accepted' || at.orchestrator_id !== from || at.worker_id !== body.worker) continue
      const length = a.chunks.get(at.chunk_index)?.length ?? 0
      const bytes = Math.min(p.bytes, length)
      if (bytes <= c.bytes) continue
      // The attempt's own bytes spare it a strike; they keep the worker's other work alive only on the
      // worker's own word that it holds this one.
      if ((bytes - c.bytes >= MIN_PROGRESS_BYTES || bytes === length) && (c.restored === true || c.word?.() === true)) moved = true
      c.bytes = bytes
    }
    if (moved) this.#lastActivityAt.set(body.worker, this.watched(now))
    return step
  }

  #hold (worker: string, attemptId: string, transferId: string): void {
    let m = this.#held.get(worker)
    if (m === undefined) this.#held.set(worker, m = new Map())
    m.set(attemptId, transferId)
  }

  /** Whether `worker` holds an accepted, open attempt here through orchestrator `from` (dropping stale entries). */
  #holdsThrough (from: string, worker: string): boolean {
    const m = this.#held.get(worker)
    if (m === undefined) return false
    let through = false
    for (const [attemptId, transferId] of m) {
      const a = this.#active.get(transferId)
      const at = a?.attempts.get(attemptId)
      const c = a?.open.get(attemptId)
      if (a === undefined || at === undefined || c === undefined || at.state !== 'accepted' || at.worker_id !== worker) { m.delete(attemptId); continue }
      // Through `from` on the worker's own word: task_assigned alone could name any worker.
      if (at.orchestrator_id === from && (c.restored === true || c.word?.() === true)) { through = true; break }
    }
    if (m.size === 0) this.#held.delete(worker)
    return through
  }

  /**
   * The watched clock at `now`: wall time, except that the time since the last tick counts for at most
   * MAX_WATCHED_STEP_MS (the stall clocks run on it). Before the first tick it is wall time.
   */
  watched (now: number): number {
    if (this.#lastTickAt === null) { this.#watchedAtTick = now; return now }
    return this.#watchedAtTick + Math.min(Math.max(0, now - this.#lastTickAt), MAX_WATCHED_STEP_MS)
  }

  /** The network's measured rate (bytes/s): the median of the recent accepted deliveries; null before any. */
  measuredRate (): number | null {
    if (this.#rates.length === 0) return null
    const sorted = [...this.#rates].sort((x, y) => x - y)
    return sorted[sorted.length >> 1]!
  }

  /** Workers in their cool-down now (at most 256, the batch's limit). */
  excludedWorkers (now: number): string[] {
    const out: string[] = []
    for (const [hotkey, row] of this.#standing) if (isExcluded(row, now) && out.length < 256) out.push(hotkey)
    return out
  }

  /** What this coordinator holds against a worker. */
  standingOf (hotkey: string): Readonly<WorkerStandingRow> | undefined { return this.#standing.get(hotkey) }

  /** Takes the standings the store holds (at start). */
  loadStanding (rows: Iterable<WorkerStandingRow>): void {
    for (const r of rows) this.#standing.set(r.hotkey, r)
  }

  /**
   * The stall window of a chunk of `length` bytes: how long its worker may go without progress or a
   * result. The longer of resultGapMs and STALL_RATE_FACTOR × the chunk's time at the measured rate,
   * doubled once the same chunk has stalled before.
   */
  resultGapFor (length: number, stalls: number): number {
    const rate = this.measuredRate()
    const atRate = rate === null ? 0 : Math.ceil(STALL_RATE_FACTOR * length * 1000 / rate)
    return Math.max(this.#cfg.resultGapMs, atRate) * 2 ** Math.min(stalls, MAX_GAP_DOUBLINGS)
  }

  /**
   * When an accepted attempt offered at `offeredAt` is overdue (OVERDUE_FLOOR_RATE): its offer's URLs
   * expired, then the chunk's two passes at the floor rate and OVERDUE_SLACK_MS passed (45 minutes for
   * 16 MiB with the default 10-minute offers). One whose chunk was never read (`read` false: reads are
   * reported, and none came) cannot move once its URLs expired: overdue OVERDUE_SLACK_MS after that.
   */
  overdueAt (offeredAt: number, length: number, read = true): number {
    const expiry = offeredAt + this.#cfg.offerTtlMs
    return expiry + OVERDUE_SLACK_MS + (read ? 2 * Math.ceil(length * 1000 / OVERDUE_FLOOR_RATE) : 0)
  }

  /** How long a validator's verdict may take: VERIFY_TIMEOUT_MS plus the read at MIN_WORKER_RATE (31 s for 16 MiB). */
  verifyTimeoutFor (length: number): number {
    return VERIFY_TIMEOUT_MS + Math.ceil(length * 1000 / this.#cfg.minWorkerRate)
  }

  // ---- internals ----------------------------------------------------------------------------------

  #sampleRate (bytesPerSecond: number): void {
    if (!Number.isFinite(bytesPerSecond) || bytesPerSecond <= 0) return
    this.#rates.push(bytesPerSecond)
    if (this.#rates.length > RATE_SAMPLES) this.#rates.shift()
  }

  /** Records the coordinator's own evidence against a worker; past the limit it is excluded for a cool-down. */
  #strike (worker: string, reason: StrikeReason, at: AttemptRow, now: number, step: Step): void {
    const { row, excluded } = addStrike(this.#standing.get(worker), { hotkey: worker, coordinator: this.#self, reason, transferId: at.transfer_id, attemptId: at.id }, now, this.#cfg.standing)
    this.#standing.set(worker, row)
    step.ops.push({ type: 'put', table: 'workers', key: standingKey(worker), value: row })
    step.effects.push({ kind: 'emit', event: { type: 'worker_standing', row, excluded } })
    step.effects.push({ kind: 'log', level: excluded ? 'warn' : 'info', obj: { worker, reason, strikes: row.strikes.length, excludedUntil: row.excluded_until, event: excluded ? 'worker_excluded' : 'worker_strike' }, msg: excluded ? 'worker excluded from offers for a cool-down' : 'strike against a worker' })
  }

  /** Answer for a transfer not in memory: 404 when unknown here, 409 when it is closed. */
  #absent (id: string, stored: TransferRow | undefined, closedDetail: (status: string) => string): Outcome<never> {
    const status = stored !== undefined && stored.coordinator_id === this.#self ? stored.status : this.#closed.get(id)
    if (status === undefined) return NOT_FOUND
    return fail(409, 'BWN_ERR_TRANSFER_CLOSED', closedDetail(status))
  }

  #touch (a: Active, now: number): StoreOp {
    a.row.updated_at = isoFromMs(now)
    return { type: 'put', table: 'transfers', key: a.row.id, value: a.row }
  }

  #scheduleDispatch (a: Active, step: Step): void {
    if (a.dispatchScheduled) return
    a.dispatchScheduled = true
    step.effects.push({ kind: 'timer', ms: DISPATCH_DEBOUNCE_MS, msg: { type: 'dispatch', transferId: a.row.id } })
  }

  /** Starts the upload first if it has not begun; otherwise asks for candidates (one request at a time). */
  #requestPlan (a: Active, step: Step): void {
    if (TERMINAL.has(a.row.status) || a.cancelling || a.pending.size === 0) return
    if (a.row.upload === null) {
      if (!a.beginning) {
        a.beginning = true
        step.effects.push({ kind: 'io', job: { type: 'begin', transferId: a.row.id, destinationId: a.row.destination_id, spec: { transferId: a.row.id, filename: a.row.filename, totalSize: a.row.total_size, chunkSize: a.row.chunk_size, totalChunks: a.row.total_chunks, ...(a.row.org_id !== null ? { namespace: a.row.org_id } : {}) } } })
      }
      return
    }
    if (a.planning) return
    a.planning = true
    step.effects.push({ kind: 'candidates', transferId: a.row.id })
  }

  /**
   * After attempts failed in this step: plan their recovery now, unless every chunk waiting is waiting
   * for a worker (`no_worker`): those wait for the overseer, which asks again after NO_WORKER_WAIT_MS,
   * doubling while the answer stays the same (planAfter), as offers wait while no orchestrator has
   * workers, instead of asking again in a loop.
   */
  #afterFailures (a: Active, step: Step, now: number): void {
    void now
    if (TERMINAL.has(a.row.status)) return
    for (const r of a.recovery.values()) if (r.reason !== 'no_worker' && r.reason !== 'destination_full') { this.#requestPlan(a, step); return }
  }

  /**
   * The destination had no room for chunk `index` (its attempt already ended, spending none of the
   * chunk's attempts): the chunk waits, longer with each such answer since the transfer's last
   * delivery, and the transfer fails once there has been no room for DESTINATION_FULL_MAX_WAIT_MS.
   */
  #waitForRoom (a: Active, index: number, now: number, step: Step): void {
    a.fullSince ??= now
    a.fullRounds++
    if (now - a.fullSince >= DESTINATION_FULL_MAX_WAIT_MS) {
      this.#failTransfer(a, step, 'destination_unavailable', `The destination has had no room for the file for ${DESTINATION_FULL_MAX_WAIT_MS / 60_000} minutes.`, now)
      return
    }
    const waiting = a.recovery.get(index)
    if (waiting !== undefined) waiting.notBefore = now + waitAfter(a.fullRounds)
  }

  /** Whether a pending chunk may be offered now (none waiting for room past `now`). */
  #anyReady (a: Active, now: number): boolean {
    for (const i of a.pending) if ((a.recovery.get(i)?.notBefore ?? 0) <= now) return true
    return false
  }

  #checkJob (a: Active, at: AttemptRow, etag: string | null): Extract<IoJob, { type: 'check' }> {
    const c = a.chunks.get(at.chunk_index)!
    return {
      type: 'check', transferId: a.row.id, destinationId: a.row.destination_id, upload: a.row.upload!, attemptId: at.id,
      chunk: { index: c.chunk_index, offset: c.offset, length: c.length, sha256: c.sha256, md5: c.md5 }, attemptSlot: at.attempt_slot, attemptNo: at.attempt_no, etag
    }
  }

  /** Ends an attempt as failed (or superseded, for a stall) and queues its chunk for redelivery. */
  #failAttempt (a: Active, at: AttemptRow, reason: InterventionReason, detail: string | null, now: number, step: Step): void {
    const iso = isoFromMs(now)
    const stalled = isStall(reason)
    at.state = stalled ? 'superseded' : 'failed'
    at.finished_at = iso
    at.failure_reason = detail ?? reason
    a.open.delete(at.id)
    if (at.worker_id !== null) this.#held.get(at.worker_id)?.delete(at.id)
    a.checking.delete(at.id)
    a.verifying.delete(at.id)
    // A stalled worker is avoided for this chunk too; only real failures count toward the limit.
    if (at.worker_id !== null) addFailedWorker(a, at.chunk_index, at.worker_id)
    // An orchestrator with no worker to give the chunk to (none attached, or all in their cool-down)
    // made no delivery attempt, and a destination out of room is no worker's failure: neither counts
    // toward either limit, and the chunk waits (#afterFailures).
    if (reason !== 'no_worker' && reason !== 'destination_full') {
      const counter = stalled ? a.stalls : a.failures
      counter.set(at.chunk_index, (counter.get(at.chunk_index) ?? 0) + 1)
    }
    step.ops.push({ type: 'put', table: 'task_attempts', key: keys.row(a.row.id, at.id), value: at })
    const task = a.tasks.get(at.chunk_index)!
    const chunk = a.chunks.get(at.chunk_index)!
    if ((a.failures.get(at.chunk_index) ?? 0) >= this.#cfg.maxAttemptsPerTask || (a.stalls.get(at.chunk_index) ?? 0) >= this.#cfg.maxStallsPerTask) {
      task.state = 'failed'; task.failed_at = iso; task.failure_reason = reason
      step.ops.push({ type: 'put', table: 'tasks', key: keys.row(a.row.id, task.id), value: task })
      this.#failTransfer(a, step, 'delivery_failed', 'A chunk could not be delivered after repeated attempts.', now)
      return
    }
    chunk.state = 'staged'
    a.pending.add(at.chunk_index)
    a.recovery.set(at.chunk_index, { reason, previous: at, excludeOrchestrator: reason === 'wave_timeout' || reason === 'no_worker' || reason === 'overdue' })
    step.ops.push({ type: 'put', table: 'chunks', key: keys.chunk(a.row.id, chunk.chunk_index), value: chunk })
  }

  #failTransfer (a: Active, step: Step, code: TransferFailure, message: string, now: number): void {
    if (TERMINAL.has(a.row.status)) return
    a.row.status = 'failed'
    a.row.error_code = code
    a.row.error_message = message
    a.row.completed_at = isoFromMs(now)
    this.#cancelOpenAttempts(a, step, 'transfer_failed', now)
    this.#close(a, step, now, { abort: true })
  }

  /** The transfer is terminal: persist it with its cleanup pending, emit it, clean up outside, forget it. */
  #close (a: Active, step: Step, now: number, opts: { abort: boolean }): void {
    a.pending.clear()
    a.recovery.clear()
    a.row.cancel_requested = false
    a.row.cleanup_pending = true
    step.ops.push(this.#touch(a, now))
    step.effects.push({ kind: 'emit', event: { type: 'transfer', row: a.row } })
    const chunks = [...a.chunks.values()].map(c => ({ index: c.chunk_index, sha256: c.sha256 }))
    step.effects.push({ kind: 'io', job: { type: 'cleanup', transferId: a.row.id, destinationId: a.row.destination_id, abort: opts.abort ? a.row.upload : null, chunks } })
    this.#active.delete(a.row.id)
    this.#remember(a.row.id, a.row.status)
  }

  #cleanupJob (row: TransferRow, chunks: Array<{ index: number, sha256: string }>): IoJob {
    return { type: 'cleanup', transferId: row.id, destinationId: row.destination_id, abort: row.status === 'completed' ? null : row.upload, chunks }
  }

  #remember (id: string, status: TransferStatus): void {
    this.#closed.delete(id)
    this.#closed.set(id, status)
    while (this.#closed.size > CLOSED_MEMORY) this.#closed.delete(this.#closed.keys().next().value!)
  }

  #cancelOpenAttempts (a: Active, step: Step, reason: AttemptEnding, now: number): void {
    const iso = isoFromMs(now)
    const byOrch = new Map<string, string[]>()
    for (const at of a.attempts.values()) {
      if (!isOpen(at)) continue
      at.state = 'cancelled'; at.finished_at = iso; at.failure_reason = reason
      step.ops.push({ type: 'put', table: 'task_attempts', key: keys.row(a.row.id, at.id), value: at })
      byOrch.set(at.orchestrator_id, [...(byOrch.get(at.orchestrator_id) ?? []), at.id])
    }
    for (const t of a.tasks.values()) {
      if (t.state === 'completed' || t.state === 'failed' || t.state === 'cancelled') continue
      t.state = 'cancelled'
      step.ops.push({ type: 'put', table: 'tasks', key: keys.row(a.row.id, t.id), value: t })
    }
    for (const id of a.open.keys()) { const w = a.attempts.get(id)?.worker_id; if (w != null) this.#held.get(w)?.delete(id) }
    a.open.clear()
    a.checking.clear()
    a.verifying.clear()
    this.#sendCancels(a, step, byOrch, reason)
  }

  /** Tells each orchestrator which of its attempts to drop, in messages of at most MAX_CANCEL_IDS (the protocol's limit). */
  #sendCancels (a: Active, step: Step, byOrch: Map<string, string[]>, reason: string): void {
    for (const [orch, ids] of byOrch) {
      for (let i = 0; i < ids.length; i += MAX_CANCEL_IDS) step.effects.push({ kind: 'send', to: orch, type: 'task_cancel', body: { transferId: a.row.id, attemptIds: ids.slice(i, i + MAX_CANCEL_IDS), reason } })
    }
  }

  #maybeComplete (a: Active, step: Step): void {
    if (!a.row.finalize_requested || a.completing || a.cancelling || TERMINAL.has(a.row.status)) return
    if (a.row.chunks_delivered < a.row.total_chunks || a.row.upload === null) return
    a.completing = true
    // A node sink's ETag is a chunk's sha256: it is completed against the hashes staged here, never a
    // worker's report (a worker could report the hash of other bytes and write them after the check).
    const staged = a.row.upload.kind === 'node'
    const parts = [...a.chunks.values()].sort((x, y) => x.chunk_index - y.chunk_index).map(c => ({ index: c.chunk_index, attemptSlot: c.attempt_slot ?? 0, etag: staged ? c.sha256 : c.etag }))
    step.effects.push({ kind: 'io', job: { type: 'complete', transferId: a.row.id, destinationId: a.row.destination_id, upload: a.row.upload, parts } })
  }
}

function newActive (row: TransferRow): Active {
  return {
    row, chunks: new Map(), tasks: new Map(), attempts: new Map(), failedWorkers: new Map(), checking: new Map(), verifying: new Map(), verifiedBy: new Set(),
    pending: new Set(), recovery: new Map(), open: new Map(), failures: new Map(), stalls: new Map(), noWorkerRounds: 0, planAfter: 0, fullRounds: 0, fullSince: null, waitingForWorkers: false,
    wave: 0, interventions: 0, dispatchScheduled: false, planning: false, beginning: false, completing: false, cancelling: false, cancelReplies: []
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
  return at !== undefined && isOpen(at)
}
