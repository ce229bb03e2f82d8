// The registry of every control message: its type name, its schema (and so its TypeScript type).
import type { Static, TSchema } from '@sinclair/typebox'
import { Announce, Heartbeat } from './membership.ts'
import { TaskOfferBatch, TaskOfferMsg, TaskAssigned, TaskAccepted, TaskAccepts, TaskResult, TaskProgress, TaskResultAck, TaskCancel, WorkerAttach, WorkerAttached, SessionDisplaced } from './transfer.ts'
import { ChainRequest, ChainResponse } from './chain.ts'
import { WorkerAttachment, AttachmentsRevoked } from './attachment.ts'
import { VerifyRequest, VerifyVerdict, PrismScores, SnapshotPublished } from './validation.ts'

export const MESSAGES = {
  announce: Announce,
  heartbeat: Heartbeat,
  task_offer_batch: TaskOfferBatch,
  task_offer: TaskOfferMsg,
  task_assigned: TaskAssigned,
  task_accepted: TaskAccepted,
  task_accepts: TaskAccepts,
  task_result: TaskResult,
  task_progress: TaskProgress,
  task_result_ack: TaskResultAck,
  task_cancel: TaskCancel,
  worker_attach: WorkerAttach,
  worker_attached: WorkerAttached,
  session_displaced: SessionDisplaced,
  worker_attachment: WorkerAttachment,
  attachments_revoked: AttachmentsRevoked,
  chain_request: ChainRequest,
  chain_response: ChainResponse,
  verify_request: VerifyRequest,
  verify_verdict: VerifyVerdict,
  prism_scores: PrismScores,
  snapshot_published: SnapshotPublished
} satisfies Record<string, TSchema>

export type MessageType = keyof typeof MESSAGES
export type MessageBody<T extends MessageType> = Static<(typeof MESSAGES)[T]>
export function isMessageType (t: unknown): t is MessageType {
  return typeof t === 'string' && Object.prototype.hasOwnProperty.call(MESSAGES, t)
}

export * from './common.ts'
export * from './membership.ts'
export * from './transfer.ts'
export * from './chain.ts'
export * from './validation.ts'
export * from './attachment.ts'
