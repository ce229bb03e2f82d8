// Rows of the transfer flow, as stored in the level tables the audit routes read. Every row carries
// the transfer id in its key (`<transferId>/<rowId>`) and the orchestrator and worker hotkeys it
// concerns, so an audit read for one participant on one transfer is a prefix scan and a filter.
import type { UploadState } from '../destination.ts'
import type { InterventionReason, TransferFailure } from '../../protocol/failure-reasons.ts'

export type TransferStatus = 'pending' | 'in_progress' | 'completed' | 'failed' | 'cancelled'
export const TERMINAL: ReadonlySet<TransferStatus> = new Set(['completed', 'failed', 'cancelled'])

export interface TransferRow {
  id: string
  status: TransferStatus
  sender_hotkey: string
  filename: string
  total_size: number
  chunk_size: number
  total_chunks: number
  tier: string
  destination_id: string
  /** Key that created it (its id, never the key) and its organization: limits and ownership. */
  api_key_id: string | null
  org_id: string | null
  /**
   * The creating key's plan: transfers in progress count against the plan's limit per organization and
   * plan (node/transfers/service.ts). Absent on rows made before it was recorded (counted per key).
   */
  plan?: string
  /**
   * Set when the upload began, from its driver (DestinationDriver.attributable): delivered bytes are the
   * workers' alone, so a failed check strikes and a validator's mismatch penalizes. Absent: neither.
   */
  attributable?: boolean
  coordinator_id: string
  metadata: { name: string }
  upload: UploadState | null
  chunks_received: number
  chunks_delivered: number
  chunks_verified: number
  bytes_received: number
  bytes_delivered: number
  finalize_requested: boolean
  created_at: string
  updated_at: string
  started_at: string | null
  finalized_at: string | null
  completed_at: string | null
  /**
   * The name the destination stored the file under, once completed, when the destination chooses one
   * (a node sink: the requested name, or `name-1.ext`, ... when the organization already holds that
   * name); absent otherwise and on rows completed before it was recorded.
   */
  stored_filename?: string
  /** Audience-safe failure: a fixed code and message, never provider or internal detail. */
  /** Why a failed transfer failed (null otherwise). */
  error_code: TransferFailure | null
  error_message: string | null
  /** A cancel is under way: the destination abort has not finished (resumed on start). */
  cancel_requested?: boolean
  /** Terminal, but its staged chunks (and a failed or cancelled upload) are not cleaned up yet (resumed on start). */
  cleanup_pending?: boolean
  /** When the disk sweep deleted its delivery history, past the node's retention (node/sweep.ts). */
  history_pruned_at?: string
}

export type ChunkState = 'staged' | 'delivering' | 'delivered' | 'verified'
export interface ChunkRow {
  transfer_id: string
  chunk_index: number
  offset: number
  length: number
  sha256: string
  md5: string
  state: ChunkState
  task_id: string | null
  delivered_attempt_id: string | null
  attempt_slot: number | null
  etag: string | null
  received_at: string
  delivered_at: string | null
}

export type TaskState = 'pending' | 'offered' | 'completed' | 'failed' | 'cancelled'
export interface TaskRow {
  id: string
  transfer_id: string
  chunk_index: number
  state: TaskState
  orchestrator_id: string | null
  assigned_worker_id: string | null
  current_attempt_id: string | null
  attempt_count: number
  created_at: string
  offered_at: string | null
  accepted_at: string | null
  completed_at: string | null
  failed_at: string | null
  failure_reason: string | null
}

export type AttemptState = 'offered' | 'accepted' | 'checking' | 'succeeded' | 'failed' | 'superseded' | 'cancelled'
export interface AttemptRow {
  id: string
  task_id: string
  transfer_id: string
  chunk_index: number
  attempt_no: number
  attempt_slot: number
  orchestrator_id: string
  worker_id: string | null
  batch_id: string
  wave_kind: 'initial' | 'recovery'
  recovery: boolean
  state: AttemptState
  offered_at: string
  accepted_at: string | null
  finished_at: string | null
  failure_reason: string | null
}

export type ResultOutcome = 'accepted' | 'failed' | 'integrity_mismatch' | 'late_superseded' | 'rejected'
export interface ResultRow {
  attempt_id: string
  task_id: string
  transfer_id: string
  chunk_index: number
  orchestrator_id: string
  worker_id: string
  success: boolean
  /** Bytes as the coordinator planned them (never the worker's claim). */
  bytes: number
  claimed_bytes: number
  duration_ms: number
  sha256: string | null
  etag: string | null
  error: string | null
  via: 'http' | 'bulk' | null
  outcome: ResultOutcome
  received_at: string
}

/** The overseer's reasons, from the one failure vocabulary (protocol/failure-reasons.ts). */
export type { InterventionReason }
export interface InterventionRow {
  id: string
  transfer_id: string
  task_id: string
  chunk_index: number
  intervention_type: 'overseer_recovery'
  reason: InterventionReason
  outcome: 'stall_redistributed' | 'failure_redelivered' | 'no_candidate'
  orchestrator_id: string
  previous_attempt_id: string
  previous_worker_id: string | null
  replacement_attempt_id: string | null
  replacement_orchestrator_id: string | null
  intervened_at: string
}

export interface PlanRow {
  transfer_id: string
  wave: number
  wave_kind: 'initial' | 'recovery'
  allocation_rule: string
  deliveries: Array<{ orchestrator_id: string, routing_score: number, chunk_count: number, chunk_indices: number[] }>
  created_at: string
}

export interface OfferBatchRow {
  id: string
  transfer_id: string
  orchestrator_id: string
  coordinator_id: string
  wave_kind: 'initial' | 'recovery'
  task_ids: string[]
  attempt_ids: string[]
  offered_at: string
  /** Filled in by the receiving orchestrator: which of its workers took each attempt. */
  routed: Array<{ attempt_id: string, worker_id: string | null }>
}

const pad = (n: number, w = 6): string => String(n).padStart(w, '0')
export const keys = {
  chunk: (t: string, i: number) => `${t}/${pad(i)}`,
  row: (t: string, id: string) => `${t}/${id}`,
  plan: (t: string, wave: number) => `${t}/${pad(wave)}`,
  intervention: (t: string, seq: number, id: string) => `${t}/${pad(seq, 8)}-${id}`,
  prefix: (t: string) => `${t}/`,
  /**
   * An organization's transfers by creation time, in the `index` table (written with the transfer's row):
   * a listing reads its own organization's keys, not every transfer the node holds. `-`: no organization.
   */
  orgTransfer: (org: string | null, createdAt: string, id: string) => `org-transfers/${org ?? '-'}/${createdAt}/${id}`,
  orgTransfers: (org: string | null) => `org-transfers/${org ?? '-'}/`
}
