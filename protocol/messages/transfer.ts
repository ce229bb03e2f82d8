// Messages of the transfer flow between coordinator, orchestrators and workers.
//
//   coordinator  --task_offer_batch-->  orchestrator  --task_offer-->  worker
//   coordinator  <--task_assigned-----  orchestrator
//   coordinator  <--task_accepts------  orchestrator  <--task_accepted--  worker   (the workers' signed frames relayed whole, batched)
//   coordinator  <--task_progress-----  orchestrator  <--task_progress--  worker   (while moving)
//   coordinator  <--task_result-------  orchestrator  <--task_result--  worker     (a delivery carries the worker's signed frame)
//   coordinator  --task_result_ack--->  orchestrator  --task_result_ack-->  worker
//   coordinator  --task_cancel------->  orchestrator  --task_cancel-->  worker
//   worker --worker_attach--> orchestrator --worker_attached / session_displaced--> worker
import { Type, type Static } from '@sinclair/typebox'
import { Hotkey, Uuid, Sha256Hex } from './common.ts'

const Url = Type.String({ minLength: 1, maxLength: 4096 })

/**
 * The largest chunk a node moves or accepts as a body (1 GiB): a coordinator plans no larger chunk (files
 * over ~3.3 TiB are refused), so an offer over it is refused where it is decoded and by the worker.
 */
export const MAX_CHUNK_BODY_BYTES = 1024 * 1024 * 1024

/** The longest relayed worker claim (base64 of the worker's frame; an honest one is under 2,500). */
export const MAX_WORKER_CLAIM_CHARS = 8192

export const DeliveryTargetSchema = Type.Object({
  method: Type.Literal('PUT'),
  url: Url,
  headers: Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 4096 })),
  expiresAt: Type.Integer({ minimum: 0 })
}, { additionalProperties: false })

/** One chunk to move: where to read it, where to write it, and what it must hash to. */
export const TaskOffer = Type.Object({
  taskId: Uuid,
  attemptId: Uuid,
  transferId: Uuid,
  chunkIndex: Type.Integer({ minimum: 0 }),
  length: Type.Integer({ minimum: 0, maximum: MAX_CHUNK_BODY_BYTES }),
  sha256: Sha256Hex,
  /** Coordinator's signed data URL (HTTP); the same signed path is the bulk-channel key. */
  source: Type.Object({ url: Url, path: Url, coordinator: Hotkey }, { additionalProperties: false }),
  target: DeliveryTargetSchema,
  expiresAt: Type.Integer({ minimum: 0 }),
  /** Workers that already failed this task; the orchestrator avoids them. */
  excludeWorkers: Type.Array(Hotkey, { maxItems: 64 }),
  /**
   * The coordinator's sr25519 signature over the offer's terms (protocol/offer-signature.ts), hex: a
   * node's worker takes no offer without it, so no orchestrator relaying it can change it.
   */
  signature: Type.Optional(Type.String({ pattern: '^[0-9a-f]{128}$' }))
}, { additionalProperties: false })
export type TaskOffer = Static<typeof TaskOffer>

export const TaskOfferBatch = Type.Object({
  batchId: Uuid,
  transferId: Uuid,
  waveKind: Type.Union([Type.Literal('initial'), Type.Literal('recovery')]),
  offers: Type.Array(TaskOffer, { minItems: 1, maxItems: 64 }),
  /** Workers the coordinator excluded for a cool-down (its own evidence against them): never routed any of these offers. */
  excludedWorkers: Type.Optional(Type.Array(Hotkey, { maxItems: 256 }))
}, { additionalProperties: false })
export type TaskOfferBatch = Static<typeof TaskOfferBatch>

export const TaskOfferMsg = Type.Object({ batchId: Uuid, offer: TaskOffer }, { additionalProperties: false })
export type TaskOfferMsg = Static<typeof TaskOfferMsg>

export const TaskAssigned = Type.Object({
  transferId: Uuid,
  batchId: Uuid,
  assignments: Type.Array(Type.Object({ attemptId: Uuid, worker: Type.Union([Hotkey, Type.Null()]) }, { additionalProperties: false }), { maxItems: 64 })
}, { additionalProperties: false })
export type TaskAssigned = Static<typeof TaskAssigned>

const TaskAcceptedFields = {
  transferId: Uuid,
  attemptId: Uuid,
  taskId: Uuid,
  worker: Hotkey,
  /** The coordinator the offer came from (its `source.coordinator`): the word is good only there. */
  coordinator: Hotkey
}

/**
 * A worker's word that it holds an attempt: sent to its orchestrator when it takes an offer. The
 * orchestrator relays it to the coordinator (`task_accepts`) with the worker's own signed frame. The
 * coordinator strikes a worker for holding work without moving it only on this word, never on the
 * orchestrator's `task_assigned` alone; an orchestrator holds against its own worker an offer it did
 * not take in time (docs/transfers.md#worker-standing).
 */
export const TaskAccepted = Type.Object(TaskAcceptedFields, { additionalProperties: false })
export type TaskAccepted = Static<typeof TaskAccepted>

/** The most accepts one relayed batch carries. */
export const MAX_ACCEPTS_PER_BATCH = 64
/**
 * The longest relayed worker accept (base64 of its frame; an honest one is about 670 characters): 64 of
 * them stay far inside a frame (MAX_FRAME_BYTES), however a worker pads its own.
 */
export const MAX_WORKER_ACCEPT_CHARS = 1024

/** One relayed accept: what the worker said, and its signed `task_accepted` frame (base64; absent in the simulator). */
export const RelayedAccept = Type.Object({
  ...TaskAcceptedFields,
  workerAccept: Type.Optional(Type.String({ maxLength: MAX_WORKER_ACCEPT_CHARS, pattern: '^[A-Za-z0-9+/]*={0,2}$' }))
}, { additionalProperties: false })
export type RelayedAccept = Static<typeof RelayedAccept>

/** Workers' accepts relayed by their orchestrator to the coordinator that offered the work, gathered for a few ms. */
export const TaskAccepts = Type.Object({
  accepts: Type.Array(RelayedAccept, { minItems: 1, maxItems: MAX_ACCEPTS_PER_BATCH })
}, { additionalProperties: false })
export type TaskAccepts = Static<typeof TaskAccepts>

export const TaskResult = Type.Object({
  taskId: Uuid,
  attemptId: Uuid,
  transferId: Uuid,
  worker: Hotkey,
  success: Type.Boolean(),
  bytes: Type.Integer({ minimum: 0 }),
  durationMs: Type.Integer({ minimum: 0 }),
  sha256: Type.Union([Sha256Hex, Type.Null()]),
  etag: Type.Union([Type.String({ maxLength: 256 }), Type.Null()]),
  error: Type.Union([Type.String({ maxLength: 256 }), Type.Null()]),
  /** Which path carried the bytes from the coordinator. */
  via: Type.Union([Type.Literal('http'), Type.Literal('bulk'), Type.Null()]),
  /** The coordinator the delivery was for (the offer's `source.coordinator`): a worker's claim names it, so it is good only there. */
  coordinator: Type.Optional(Hotkey),
  /**
   * Set by the orchestrator relaying a worker's delivery: the worker's own signed `task_result` frame,
   * addressed to that orchestrator (base64). A delivery is held against a worker only on its own
   * signature, never on an orchestrator's word (node/verify-evidence.ts, docs/security.md#peers). The
   * worker's frame itself carries none.
   */
  workerClaim: Type.Optional(Type.String({ maxLength: MAX_WORKER_CLAIM_CHARS, pattern: '^[A-Za-z0-9+/]*={0,2}$' }))
}, { additionalProperties: false })
export type TaskResult = Static<typeof TaskResult>

/**
 * A worker's progress: `moved`, the bytes it has moved in this session over all the chunks it holds
 * (for any coordinator), and of each of the receiving coordinator's chunks the bytes that went on to the
 * destination so far. Sent at most every PROGRESS_INTERVAL_MS (actors/transfer/worker.ts) while bytes
 * move; the worker's orchestrator relays it to every coordinator whose chunks the worker holds, with
 * only that coordinator's chunks. A worker busy with one coordinator's chunks keeps the others' queued
 * work: the overseer takes work back when a worker's progress stops, not when a rate is missed
 * (docs/transfers.md#overseer).
 */
export const TaskProgress = Type.Object({
  worker: Hotkey,
  moved: Type.Integer({ minimum: 0 }),
  attempts: Type.Array(Type.Object({
    transferId: Uuid,
    attemptId: Uuid,
    bytes: Type.Integer({ minimum: 0 })
  }, { additionalProperties: false }), { maxItems: 1024 })
}, { additionalProperties: false })
export type TaskProgress = Static<typeof TaskProgress>

export const AckStatus = Type.Union(['completed', 'failed', 'late_superseded', 'rejected', 'retry'].map(s => Type.Literal(s)))
export const TaskResultAck = Type.Object({
  taskId: Uuid,
  attemptId: Uuid,
  worker: Hotkey,
  received: Type.Boolean(),
  status: AckStatus,
  reason: Type.Union([Type.String({ maxLength: 256 }), Type.Null()])
}, { additionalProperties: false })
export type TaskResultAck = Static<typeof TaskResultAck>

export const TaskCancel = Type.Object({
  transferId: Uuid,
  attemptIds: Type.Array(Uuid, { maxItems: 4096 }),
  reason: Type.String({ maxLength: 128 })
}, { additionalProperties: false })
export type TaskCancel = Static<typeof TaskCancel>

export const WorkerAttach = Type.Object({ session: Uuid, slots: Type.Integer({ minimum: 1, maximum: 1024 }) }, { additionalProperties: false })
export type WorkerAttach = Static<typeof WorkerAttach>
export const WorkerAttached = Type.Object({ session: Uuid }, { additionalProperties: false })
export const SessionDisplaced = Type.Object({ session: Uuid }, { additionalProperties: false })
