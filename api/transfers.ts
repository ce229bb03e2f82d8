// What the transfer and destination routes need from the node, and the shapes they answer with.
import { Type, type Static } from '@sinclair/typebox'
import type { Principal } from './accounts/model.ts'

export const TransferStatusSchema = Type.Union(['pending', 'in_progress', 'completed', 'failed', 'cancelled'].map(s => Type.Literal(s)))

export const TransferRecord = Type.Object({
  id: Type.String({ format: 'uuid' }),
  status: TransferStatusSchema,
  tier: Type.String(),
  sender_hotkey: Type.String(),
  destination_id: Type.String(),
  /** The display name: the filename for the owner's own reads, null in lists and dashboards. */
  transfer_name: Type.Union([Type.String(), Type.Null()]),
  stored_filename: Type.Union([Type.String(), Type.Null()], {
    description: 'Once completed at a destination that names the file itself (the node sink): the name it is stored under in your organization\'s ' +
      'namespace; differs from the requested filename when your organization already held that name (`name-1.ext`, ...). ' +
      'Null before completion, for other destinations, and in lists and dashboards (docs/transfers.md#stored-name)'
  }),
  metadata: Type.Object({ name: Type.Optional(Type.String()) }),
  total_size: Type.Integer(),
  chunk_size: Type.Integer(),
  total_chunks: Type.Integer(),
  chunks: Type.Object({ received: Type.Integer(), delivered: Type.Integer(), verified: Type.Integer(), total: Type.Integer() }),
  bytes: Type.Object({ received: Type.Integer(), delivered: Type.Integer(), total: Type.Integer() }),
  finalize_requested: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  started_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  finalized_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  completed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()])
})
export type TransferRecord = Static<typeof TransferRecord>

export const CreateTransferBody = Type.Object({
  sender_hotkey: Type.String({ minLength: 1, maxLength: 64, description: 'SS58 hotkey of the sender; the checksum is verified' }),
  total_size: Type.Integer({ minimum: 1, description: 'bytes' }),
  filename: Type.String({ minLength: 1, maxLength: 1024, description: 'a file name, or a relative path of names joined by "/" (sub/b.txt); NFC, no hidden, empty, "." or ".." segments' }),
  tier: Type.String({ minLength: 1, maxLength: 32, description: 'see GET /transfers/tiers' }),
  destination_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'default: the node\'s default destination' }))
}, { additionalProperties: false })
export type CreateTransferBody = Static<typeof CreateTransferBody>

export const ChunkAck = Type.Object({
  transfer_id: Type.String({ format: 'uuid' }),
  chunk_index: Type.Integer(),
  sha256: Type.String(),
  bytes: Type.Integer(),
  duplicate: Type.Boolean(),
  chunks_received: Type.Integer()
})
export type ChunkAck = Static<typeof ChunkAck>

/** The chunks the API holds for a transfer: what `bwnet transfer verify` compares a local file with. */
export const TransferChunks = Type.Object({
  transfer_id: Type.String({ format: 'uuid' }),
  chunk_size: Type.Integer(),
  total_chunks: Type.Integer(),
  items: Type.Array(Type.Object({
    index: Type.Integer(),
    bytes: Type.Integer(),
    sha256: Type.String({ description: 'hex sha256 of the chunk as received (and as delivered: the network checks each delivery against it)' }),
    state: Type.Union(['staged', 'delivering', 'delivered', 'verified'].map(s => Type.Literal(s)))
  }), { description: 'received chunks in index order; a missing index was not received' })
})
export type TransferChunks = Static<typeof TransferChunks>

export const Tier = Type.Object({ name: Type.String(), description: Type.String(), min_chunk_size: Type.Integer(), max_chunks: Type.Integer() })
export const PlanLimits = Type.Object({
  plan: Type.String(),
  requests_per_minute: Type.Union([Type.Integer(), Type.Null()]),
  concurrent_transfers: Type.Union([Type.Integer(), Type.Null()]),
  max_file_size_bytes: Type.Union([Type.Integer(), Type.Null()])
})
export const TiersResponse = Type.Object({ tiers: Type.Array(Tier), plans: Type.Array(PlanLimits), your_plan: Type.Union([Type.String(), Type.Null()]) })
export type TiersResponse = Static<typeof TiersResponse>

export const DestinationKindSchema = Type.Union([Type.Literal('node'), Type.Literal('http'), Type.Literal('s3')])
export const DestinationRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  kind: DestinationKindSchema,
  builtin: Type.Boolean(),
  /** Public settings only: credentials and control headers are never returned. */
  config: Type.Record(Type.String(), Type.Union([Type.String(), Type.Boolean(), Type.Null()])),
  created_at: Type.String({ format: 'date-time' })
})
export type DestinationRecord = Static<typeof DestinationRecord>

/** Headers an http destination may set per request kind: a destination's record stays small. */
export const MAX_DESTINATION_HEADERS = 32
/** Destinations one organization may register (the node's built-in one not counted). */
export const MAX_DESTINATIONS_PER_ORG = 100

export const CreateDestinationBody = Type.Union([
  Type.Object({
    name: Type.String({ minLength: 1, maxLength: 128 }),
    kind: Type.Literal('s3'),
    config: Type.Object({
      endpoint: Type.String({ format: 'uri', maxLength: 512 }),
      region: Type.String({ minLength: 1, maxLength: 64 }),
      bucket: Type.String({ minLength: 3, maxLength: 63 }),
      accessKeyId: Type.String({ minLength: 1, maxLength: 256 }),
      secretAccessKey: Type.String({ minLength: 1, maxLength: 256 }),
      keyPrefix: Type.Optional(Type.String({ maxLength: 512 })),
      sharedPartNumbers: Type.Optional(Type.Boolean())
    }, { additionalProperties: false })
  }, { additionalProperties: false }),
  Type.Object({
    name: Type.String({ minLength: 1, maxLength: 128 }),
    kind: Type.Literal('http'),
    config: Type.Object({
      url: Type.String({ pattern: '^https?://[^\\s]+$', maxLength: 2048, description: 'PUT target; {transferId} and {filename} are replaced' }),
      uploadHeaders: Type.Optional(Type.Record(Type.String({ maxLength: 128 }), Type.String({ maxLength: 2048 }), { maxProperties: MAX_DESTINATION_HEADERS })),
      controlHeaders: Type.Optional(Type.Record(Type.String({ maxLength: 128 }), Type.String({ maxLength: 2048 }), { maxProperties: MAX_DESTINATION_HEADERS })),
      completeUrl: Type.Optional(Type.String({ format: 'uri', maxLength: 2048 })),
      deleteOnAbort: Type.Optional(Type.Boolean())
    }, { additionalProperties: false })
  }, { additionalProperties: false }),
  Type.Object({
    name: Type.String({ minLength: 1, maxLength: 128 }),
    kind: Type.Literal('node'),
    config: Type.Object({ baseUrl: Type.String({ format: 'uri', maxLength: 512 }) }, { additionalProperties: false })
  }, { additionalProperties: false })
])
export type CreateDestinationBody = Static<typeof CreateDestinationBody>

export interface ChunkBodyOptions {
  /** X-Chunk-SHA256 (hex, lower case), or null. */
  sha256: string | null
  /** The declared Content-Length, or null (chunked encoding): a wrong one is refused before reading. */
  contentLength: number | null
}

export interface ListQuery { limit: number, offset: number, status?: string }

export interface TransferService {
  create (body: CreateTransferBody, principal: Principal): Promise<TransferRecord>
  /** Streams one chunk's body (read only after the transfer and index are checked). */
  putChunk (id: string, index: number, body: AsyncIterable<Uint8Array>, opts: ChunkBodyOptions, principal: Principal): Promise<{ ack: ChunkAck, created: boolean }>
  finalize (id: string, principal: Principal): Promise<TransferRecord>
  get (id: string, principal: Principal): Promise<TransferRecord>
  cancel (id: string, principal: Principal): Promise<TransferRecord>
  list (principal: Principal, query: ListQuery): Promise<{ items: TransferRecord[], total: number }>
  /** The received chunks' hashes, in index order. */
  chunks (id: string, principal: Principal): Promise<TransferChunks>
  tiers (principal: Principal | null): TiersResponse
  /** Largest chunk body the chunk route accepts. */
  readonly maxChunkBytes: number
}

export interface DestinationService {
  create (body: CreateDestinationBody, principal: Principal): Promise<DestinationRecord>
  list (principal: Principal): Promise<DestinationRecord[]>
  get (id: string, principal: Principal): Promise<DestinationRecord>
  remove (id: string, principal: Principal): Promise<void>
}

// Component names in the OpenAPI document (api/plugins/openapi.ts hoists titled schemas).
for (const [title, schema] of Object.entries({ TransferRecord, CreateTransferBody, ChunkAck, Tier, PlanLimits, TiersResponse, DestinationRecord, CreateDestinationBody })) (schema as { title?: string }).title ??= title
