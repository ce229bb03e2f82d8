// The one vocabulary of transfer failure reasons: lower-case, stable, documented in docs/errors.md
// (#failure-reasons). They name why a transfer failed (its record's `error.code`), why the overseer
// intervened, why an attempt ended, and why a worker's move failed (`TaskResult.error`); the
// coordinator, the simulator and telemetry all speak it. A worker's report is untrusted text on the
// wire (`TaskResult.error` stays a bounded string), so readers compare it with these names.
import { Type } from '@sinclair/typebox'

/** Why a transfer failed: its record's `error.code` (docs/transfers.md#transfer-record). */
export const TRANSFER_FAILURES = ['delivery_failed', 'destination_unavailable', 'destination_refused'] as const

/** Why the overseer took a chunk's attempt back and delivered it again (docs/transfers.md#overseer). */
export const INTERVENTION_REASONS = [
  'wave_timeout', 'result_gap', 'worker_lost', 'session_displaced', 'attempt_failed', 'integrity_mismatch', 'no_worker',
  'orchestrator_restarted',
  // The destination answered that it has no room (507): the chunk waits for room, no attempt spent.
  'destination_full',
  // Held past its offer's URLs on reported progress, never delivered: a minute after they expired if its
  // chunk was never read, else after its two passes at a floor rate too (docs/transfers.md#overseer).
  'overdue'
] as const

/** Why a worker's move of one chunk failed (the `code` of a MoveError, reported as `TaskResult.error`). */
export const MOVE_FAILURES = [
  'bad_url', 'source_refused', 'source_unreachable', 'source_size_mismatch', 'source_hash_mismatch',
  'destination_refused', 'destination_unavailable', 'destination_full', 'worker_io', 'move_stalled', 'cancelled',
  // An offer without its coordinator's signature over its terms (changed on the way): never moved.
  'offer_unsigned'
] as const

/** Why an open attempt was closed without a result of its own, or a result was not accepted. */
export const ATTEMPT_ENDINGS = [
  'transfer_cancelled', 'transfer_failed', 'superseded', 'unknown_attempt', 'hash_mismatch', 'destination_check_failed',
  // A delivery relayed without its worker's own signed result for this coordinator (node/verify-evidence.ts).
  'no_worker_claim',
  // A worker's result its orchestrator cannot relay as it stands (it carries a claim of its own, or is too large).
  'malformed_result',
  // A `destination_full` for this node's own sink, which answered that attempt no 507: a failed attempt.
  'destination_full_unconfirmed'
] as const

export const FAILURE_REASONS = [...new Set([...TRANSFER_FAILURES, ...INTERVENTION_REASONS, ...MOVE_FAILURES, ...ATTEMPT_ENDINGS])] as ReadonlyArray<
  typeof TRANSFER_FAILURES[number] | typeof INTERVENTION_REASONS[number] | typeof MOVE_FAILURES[number] | typeof ATTEMPT_ENDINGS[number]
>

export type TransferFailure = typeof TRANSFER_FAILURES[number]
export type InterventionReason = typeof INTERVENTION_REASONS[number]
export type MoveFailure = typeof MOVE_FAILURES[number]
export type AttemptEnding = typeof ATTEMPT_ENDINGS[number]
export type FailureReason = typeof FAILURE_REASONS[number]

/** JSON Schema of a failure reason (for routes and messages that carry one). */
export const FailureReason = Type.Union(FAILURE_REASONS.map(r => Type.Literal(r)))

export const isFailureReason = (s: unknown): s is FailureReason => typeof s === 'string' && (FAILURE_REASONS as readonly string[]).includes(s)

/**
 * Failures that are no participant's doing: telemetry counts them neither as a success nor as a
 * failure (docs/telemetry.md). `cancelled` is a worker's own report of a cancelled move.
 */
export const NEUTRAL_FAILURES: ReadonlySet<FailureReason> = new Set<FailureReason>(['session_displaced', 'no_worker', 'cancelled', 'transfer_cancelled', 'transfer_failed'])
