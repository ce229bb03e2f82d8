// A worker's attachment: its standing on the network. Workers hold no chain UID (a UID per worker would
// cost a registration burn each and cap a subnet at 256); a registered orchestrator vouches for a worker
// by signing, with its own hotkey, a short-lived statement naming the worker. See protocol/attachment.ts.
import { Type, type Static } from '@sinclair/typebox'
import { Hotkey } from './common.ts'

export const Attachment = Type.Object({
  v: Type.Literal(1),
  /** The worker's hotkey: only frames signed by it are admitted on this attachment. */
  worker: Hotkey,
  /** The worker's node UUID (protocol/node-id.ts), derived from `worker`: what audit routes name. */
  workerId: Type.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' }),
  /** The issuing orchestrator's hotkey, which signs the attachment. */
  orchestrator: Hotkey,
  limits: Type.Object({
    /** Tasks the orchestrator lets the worker run at once. */
    slots: Type.Optional(Type.Integer({ minimum: 1, maximum: 1024 }))
  }, { additionalProperties: false }),
  /** Milliseconds since the Unix epoch. */
  issuedAt: Type.Integer({ minimum: 0 }),
  expiresAt: Type.Integer({ minimum: 0 }),
  /** Random, unique per issue: what a revocation names. */
  serial: Type.String({ pattern: '^[0-9a-f]{32}$' }),
  /** sr25519 signature by `orchestrator` over the canonical string (protocol/attachment.ts), hex. */
  signature: Type.String({ pattern: '^[0-9a-f]{128}$' })
}, { additionalProperties: false })
export type Attachment = Static<typeof Attachment>

/** An attachment handed over: by its orchestrator to the worker, or by the worker to its peers. */
export const WorkerAttachment = Type.Object({ attachment: Attachment }, { additionalProperties: false })
export type WorkerAttachment = Static<typeof WorkerAttachment>

/** At most this many revocations in one `attachments_revoked` message. */
export const MAX_REVOCATIONS_PER_MESSAGE = 256

/**
 * An orchestrator's word that every attachment it issued to `worker` at or before `revokedAt` is
 * revoked (docs/security.md#peers). Sent by the issuer itself, so the frame's signature is the notice's:
 * it speaks only for attachments its sender signed.
 */
export const AttachmentRevocation = Type.Object({
  worker: Hotkey,
  /** Milliseconds since the Unix epoch: attachments issued at or before it are revoked. */
  revokedAt: Type.Integer({ minimum: 0 })
}, { additionalProperties: false })
export type AttachmentRevocation = Static<typeof AttachmentRevocation>

export const AttachmentsRevoked = Type.Object({
  revocations: Type.Array(AttachmentRevocation, { minItems: 1, maxItems: MAX_REVOCATIONS_PER_MESSAGE })
}, { additionalProperties: false })
export type AttachmentsRevoked = Static<typeof AttachmentsRevoked>
