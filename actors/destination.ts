// The Destination port: where a transfer's bytes go. The coordinator holds a driver (and with it the
// destination's credentials); workers only ever see a DeliveryTarget, a short-lived URL scoped to one
// chunk; validators read delivered bytes back through the driver. Adapters: node/adapters/destinations/.

export type DestinationKind = 's3' | 'http' | 'node'

/** Multipart part numbers reserved per chunk, so a retried chunk never reuses a part number. */
export const ATTEMPT_SLOTS_PER_CHUNK = 3
/** S3 allows part numbers 1..10000: at 3 slots per chunk an object holds at most 3333 chunks. */
export const MAX_PART_NUMBER = 10_000
export const MAX_CHUNKS_PER_OBJECT = Math.floor(MAX_PART_NUMBER / ATTEMPT_SLOTS_PER_CHUNK)

/** `partNumber = chunkIndex * 3 + attemptSlot + 1` (attemptSlot in 0..2). Documented in docs/destinations.md. */
export function partNumberOf (chunkIndex: number, attemptSlot: number): number {
  if (!Number.isSafeInteger(chunkIndex) || chunkIndex < 0 || chunkIndex >= MAX_CHUNKS_PER_OBJECT) throw new RangeError(`chunk index ${chunkIndex} outside 0..${MAX_CHUNKS_PER_OBJECT - 1}`)
  if (!Number.isInteger(attemptSlot) || attemptSlot < 0 || attemptSlot >= ATTEMPT_SLOTS_PER_CHUNK) throw new RangeError(`attempt slot ${attemptSlot} outside 0..${ATTEMPT_SLOTS_PER_CHUNK - 1}`)
  return chunkIndex * ATTEMPT_SLOTS_PER_CHUNK + attemptSlot + 1
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

/**
 * What a driver needs to resume an upload: a small JSON object the coordinator persists with the
 * transfer (a few hundred bytes; never credentials). Drivers check its shape before using it.
 */
export interface UploadState {
  readonly kind: DestinationKind
  readonly [field: string]: JsonValue
}

export interface UploadSpec {
  transferId: string
  filename: string
  totalSize: number
  chunkSize: number
  totalChunks: number
  /**
   * The organization the file belongs to. A node sink keeps each organization's files in a namespace of
   * their own (docs/destinations.md#tenant-namespaces); other destinations ignore it.
   */
  namespace?: string
}

/** What complete() learnt about the stored object. */
export interface CompletedUpload {
  /** The name the destination stored the file under, when it chooses one (a node sink: `name-1.ext` on a clash). */
  storedName?: string
}

export interface ChunkCoordinates {
  index: number
  /** Byte offset in the object: index * chunkSize. */
  offset: number
  /** Bytes in this chunk (the last chunk may be shorter). */
  length: number
  /** 0..2: which of the chunk's reserved part numbers this attempt writes. */
  attemptSlot: number
}

/** What a worker does with a chunk: one HTTP request, body = the chunk bytes. */
export interface DeliveryTarget {
  method: 'PUT'
  url: string
  /** Headers the worker must send verbatim (besides Content-Length). */
  headers: Record<string, string>
  /** Milliseconds since the epoch after which the URL is refused. */
  expiresAt: number
}

/** One ranged read of delivered bytes: a GET with these headers, valid until `expiresAt`. */
export interface ReadBackTarget {
  method: 'GET'
  url: string
  headers: Record<string, string>
  expiresAt: number
}

/** The part a chunk's delivery chose: the slot whose ETag the worker reported. */
export interface DeliveredPart {
  index: number
  attemptSlot: number
  /** The ETag the destination answered to the worker's PUT (quotes kept as received), if any. */
  etag: string | null
}

/** A part as the destination itself lists it, before the object is completed. */
export interface StoredPart {
  index: number
  attemptSlot: number
  etag: string
  size: number
}

export interface DestinationDriver {
  readonly kind: DestinationKind
  /**
   * Delivered bytes here are the workers' alone: the destination takes writes only through offers'
   * signed URLs and nobody else writes it (the node's own built-in sink; the simulator's modelled one).
   * Only then does a failed check strike a worker, or a validator's mismatch penalize it: a tenant's
   * http server or s3 bucket, or a `node` destination pointing elsewhere, could hold other bytes than
   * any worker wrote.
   */
  readonly attributable?: boolean
  /**
   * True when `readRange` works before `complete` (node, http): validators can verify each chunk as
   * soon as it is delivered. False for s3, where bytes become readable only once the multipart
   * object is completed; before that `listParts` gives each stored part's ETag and size.
   */
  readonly readableBeforeComplete: boolean
  /**
   * Refuses, before any byte moves, an upload `complete` would refuse for its name (a node sink where
   * the file name and every variant of it are taken). Called when a transfer is created.
   */
  checkName? (upload: UploadSpec): Promise<void>
  /** Starts an upload (S3 CreateMultipartUpload, a sink allocation, ...). */
  begin (upload: UploadSpec): Promise<UploadState>
  /** A task-scoped URL for one chunk attempt, valid until `expiresAt` (ms since the epoch). */
  target (state: UploadState, chunk: ChunkCoordinates, expiresAt: number): Promise<DeliveryTarget>
  /** Assembles the object from one part per chunk, in index order; every chunk must be listed once. */
  complete (state: UploadState, parts: DeliveredPart[]): Promise<CompletedUpload | void>
  /** Discards the upload and everything delivered for it. Idempotent. */
  abort (state: UploadState): Promise<void>
  /** Reads `length` bytes at `offset` of the delivered object (see `readableBeforeComplete`). */
  readRange (state: UploadState, offset: number, length: number): Promise<Uint8Array>
  /**
   * The destination's own sha256 of a delivered chunk, computed where the bytes are (node sink). The
   * coordinator's per-chunk check asks for it instead of reading the chunk back: trusted as far as the
   * destination is, like an S3 part's ETag. Validators still read the bytes back themselves.
   */
  chunkSha256? (state: UploadState, chunk: { index: number, length: number }): Promise<string>
  /** The parts the destination holds before completion (s3 only). */
  listParts? (state: UploadState): Promise<StoredPart[]>
  /**
   * A short-lived request a validator can make to read `length` bytes at `offset` back without holding
   * the destination's credentials (a signed sink URL; the http destination's URL with the upload headers
   * workers also get). The coordinator asks a validator to verify a delivery only through one: absent
   * where a third party cannot read before completion (s3), whose deliveries the coordinator checks
   * itself. Independent of `readableBeforeComplete`, which says how the coordinator's own check reads.
   */
  readTarget? (state: UploadState, offset: number, length: number, expiresAt: number): Promise<ReadBackTarget>
}

/** Stable codes of the errors drivers throw (`err.code`). */
export type DestinationErrorCode =
  | 'BWN_ERR_DESTINATION_STATE' // the UploadState does not belong to this driver or is malformed
  | 'BWN_ERR_DESTINATION_REFUSED' // the destination answered 4xx: retrying the same request will not help
  | 'BWN_ERR_DESTINATION_UNAVAILABLE' // network error or 5xx: retry later
  | 'BWN_ERR_DESTINATION_INCOMPLETE' // complete() without exactly one part per chunk
