// Verification and scores: coordinator ↔ validator, validator → everyone.
//
//   coordinator --verify_request--> validator   (read-back URL of one delivered chunk, expected sha256)
//   coordinator <--verify_verdict-- validator   (signed by the validator's hotkey, like every frame)
//   validator   --prism_scores-->   everyone    (routing scores after each epoch close)
import { Type, type Static } from '@sinclair/typebox'
import { Hotkey, Uuid, Sha256Hex } from './common.ts'
import { Attachment } from './attachment.ts'

export const ReadTarget = Type.Object({
  method: Type.Literal('GET'),
  url: Type.String({ minLength: 1, maxLength: 4096 }),
  headers: Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 4096 })),
  expiresAt: Type.Integer({ minimum: 0 })
}, { additionalProperties: false })
export type ReadTarget = Static<typeof ReadTarget>

export const VerifyRequest = Type.Object({
  transferId: Uuid,
  taskId: Uuid,
  attemptId: Uuid,
  chunkIndex: Type.Integer({ minimum: 0 }),
  orchestrator: Hotkey,
  worker: Hotkey,
  /** At most a chunk's largest size (MAX_CHUNK_SIZE, 5 GiB: actors/domain/chunk-plan.ts). */
  length: Type.Integer({ minimum: 0, maximum: 5 * 1024 ** 3 }),
  sha256: Sha256Hex,
  /** Offer sent → result received, measured by the coordinator (never the worker's claim). */
  trustedDurationMs: Type.Integer({ minimum: 0 }),
  read: ReadTarget,
  /**
   * The named orchestrator's signed `task_result` frame for this attempt, addressed to the sender (base64):
   * proof that the sender coordinates the attempt and that the orchestrator reported this worker's delivery.
   * Nodes refuse a request without it (node/verify-evidence.ts); the simulator's in-memory network omits it.
   */
  evidence: Type.Optional(Type.String({ maxLength: 16_384, pattern: '^[A-Za-z0-9+/]*={0,2}$' })),
  /** The worker's attachment, when it holds no chain registration: what it answers for its delivery with. */
  attachment: Type.Optional(Attachment),
  /**
   * The destination takes writes only through the offer's signed URLs (the coordinator's own node sink),
   * so bytes read back are the worker's alone. Without it (an http server, an s3 bucket, a `node`
   * destination pointing elsewhere: the tenant's to write too) a mismatch penalizes no one; it only
   * earns nothing.
   */
  attributable: Type.Optional(Type.Boolean())
}, { additionalProperties: false })
export type VerifyRequest = Static<typeof VerifyRequest>

export const VerifyVerdict = Type.Object({
  transferId: Uuid,
  attemptId: Uuid,
  chunkIndex: Type.Integer({ minimum: 0 }),
  verdict: Type.Union([Type.Literal('verified'), Type.Literal('mismatch'), Type.Literal('unreadable')]),
  sha256: Type.Union([Sha256Hex, Type.Null()]),
  detail: Type.Union([Type.String({ maxLength: 256 }), Type.Null()])
}, { additionalProperties: false })
export type VerifyVerdict = Static<typeof VerifyVerdict>

export const PrismScores = Type.Object({
  epoch: Type.Integer({ minimum: 0 }),
  computedAt: Type.Integer({ minimum: 0 }),
  scores: Type.Array(Type.Object({
    hotkey: Hotkey,
    pool: Type.Union([Type.Literal('qualifying'), Type.Literal('qualified')]),
    routingScore: Type.Number({ minimum: 0, maximum: 1 }),
    finalScore: Type.Number({ minimum: 0, maximum: 1 }),
    penaltyMultiplier: Type.Number({ minimum: 0, maximum: 1 }),
    /** gate (ready ∧ connected now) × activeTimeRatio. */
    readinessMultiplier: Type.Number({ minimum: 0, maximum: 1 }),
    /** Share of the lookback window the orchestrator was ready and connected, from the validator's transitions. */
    activeTimeRatio: Type.Number({ minimum: 0, maximum: 1 })
  }, { additionalProperties: false }), { maxItems: 4096 })
}, { additionalProperties: false })
export type PrismScores = Static<typeof PrismScores>

/** A validator's newly published version, replicated to orchestrators so their telemetry serves it. */
export const SnapshotPublished = Type.Object({
  kind: Type.Union([Type.Literal('epoch'), Type.Literal('sell_paid'), Type.Literal('sell_free')]),
  epoch: Type.Integer({ minimum: 0 }),
  revision: Type.Integer({ minimum: 0 }),
  hotkey: Type.Union([Hotkey, Type.Null()]),
  snapshot: Type.Object({ snapshotId: Type.String({ format: 'uuid' }) }, { additionalProperties: true })
}, { additionalProperties: false })
export type SnapshotPublished = Static<typeof SnapshotPublished>
