// Messages of the live (WebSocket) interface, server → client, as JSON text frames. Not gossip
// messages (they never ride the swarm), but they cross a process boundary all the same, so they are
// declared here once: TypeScript type and JSON Schema from one source (docs/api.md#live-interface).
//
//   GET /transfers/{id}/events               TransferEvent, one per status or chunk change, in `seq` order
//   GET /v1/telemetry/realtime/stream        RealtimeStreamMessage, one per new live network version
import { Type, type Static } from '@sinclair/typebox'

export const TRANSFER_EVENT_TYPES = ['status', 'chunk_received', 'chunk_delivered', 'chunk_verified', 'chunk_requeued'] as const
export type TransferEventType = typeof TRANSFER_EVENT_TYPES[number]

const Status = Type.Union(['pending', 'in_progress', 'completed', 'failed', 'cancelled'].map(s => Type.Literal(s)))

/**
 * One change of a transfer, numbered per transfer from 1 without gaps; the numbers are persisted with
 * the change itself, so `?after=<seq>` resumes exactly where a client left off, across restarts.
 */
export const TransferEvent = Type.Object({
  seq: Type.Integer({ minimum: 1, description: 'Per-transfer sequence number, 1, 2, 3, … without gaps' }),
  type: Type.Union(TRANSFER_EVENT_TYPES.map(t => Type.Literal(t)), { description: 'status: the transfer\'s status changed; chunk_*: one chunk was received (staged), delivered, verified, or sent back to be delivered again' }),
  at: Type.String({ format: 'date-time', description: 'When the coordinator recorded the change' }),
  transfer_id: Type.String({ format: 'uuid' }),
  /** The status after this change (every event carries it; a `status` event is the change itself). */
  status: Status,
  chunk_index: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'The chunk of a chunk_* event; null on status events' }),
  chunks: Type.Object({ received: Type.Integer(), delivered: Type.Integer(), verified: Type.Integer(), total: Type.Integer() }),
  bytes: Type.Object({ received: Type.Integer(), delivered: Type.Integer(), total: Type.Integer() }),
  error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()])
}, { additionalProperties: false, title: 'TransferEvent' })
export type TransferEvent = Static<typeof TransferEvent>

/** Statuses after which a transfer's event stream ends (the server closes with 1000). */
export const TERMINAL_TRANSFER_STATUSES: readonly string[] = ['completed', 'failed', 'cancelled']

/**
 * One pushed live network version: `envelope` is exactly the body GET /v1/telemetry/realtime/network
 * answers for that version (docs/telemetry.md), `charged` what the push cost.
 */
export const RealtimeStreamMessage = Type.Object({
  seq: Type.Integer({ minimum: 1, description: 'Pushes on this connection, 1, 2, 3, …' }),
  type: Type.Literal('network'),
  at: Type.String({ format: 'date-time', description: 'When the version was pushed' }),
  snapshotId: Type.String({ description: 'The live version pushed (the envelope\'s snapshotId)' }),
  charged: Type.Number({ description: 'Credits debited for this push' }),
  remaining: Type.Number({ description: 'The organization\'s balance after the debit' }),
  envelope: Type.Record(Type.String(), Type.Unknown(), { description: 'The realtime/network envelope (TelemetryEnvelope of a NetworkSummary)' })
}, { additionalProperties: false, title: 'RealtimeStreamMessage' })
export type RealtimeStreamMessage = Static<typeof RealtimeStreamMessage>

/**
 * Close codes of the live routes (RFC 6455 §7.4; 4000-4999 are ours). The reason text says more;
 * clients branch on the code.
 */
export const CLOSE_CODES = {
  /** The stream is over: the transfer reached a terminal status (after its last event). */
  normal: 1000,
  /** The server is shutting down. */
  goingAway: 1001,
  /** The client sent a frame the route does not take (these routes are server → client only). */
  unsupported: 1003,
  /** Unexpected server failure. */
  internal: 1011,
  /** The client fell behind: its bounded queue was full (reconnect with ?after= to resume). */
  slowConsumer: 1013,
  /** The key that opened the socket was revoked, or has expired. */
  unauthorized: 4401,
  /** The organization's balance cannot pay the next push (realtime stream). */
  paymentRequired: 4402,
  /** No frame either way (not even a pong) for the idle limit. */
  idle: 4408
} as const
