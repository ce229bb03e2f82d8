// S3-compatible destination: one multipart upload per transfer. Workers PUT chunk bytes to presigned
// UploadPart URLs (the credentials stay here, in the coordinator); each chunk owns 3 part numbers so a
// retried chunk never overwrites a part another attempt may still be writing. complete() names, per
// chunk, the part whose ETag the worker reported, after checking with ListParts that the stored part
// still has that ETag.
//
// Ceph RGW is stricter than AWS S3 and MinIO: its CompleteMultipartUpload must name every uploaded
// part (AWS discards parts left out), so a second attempt in its own slot would make the upload
// impossible to complete. Set `sharedPartNumbers: true` for such servers: every attempt of a chunk then
// writes the chunk's first part number, a later attempt replaces the earlier one, and complete()
// refuses (BWN_ERR_DESTINATION_INCOMPLETE, `err.chunks`) when a stale attempt overwrote the chosen bytes.
import {
  S3Client, CreateMultipartUploadCommand, UploadPartCommand, CompleteMultipartUploadCommand,
  AbortMultipartUploadCommand, GetObjectCommand, HeadObjectCommand, ListPartsCommand, type Part
} from '@aws-sdk/client-s3'
import { createHash } from 'node:crypto'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import {
  partNumberOf, ATTEMPT_SLOTS_PER_CHUNK, MAX_CHUNKS_PER_OBJECT,
  type DestinationDriver, type UploadState, type UploadSpec, type ChunkCoordinates, type DeliveryTarget,
  type DeliveredPart, type StoredPart
} from '../../../actors/destination.ts'
import { DestinationError, expectKind, stateString, stateInteger, partsInOrder, checkRange } from './errors.ts'

/** Presigned URLs live at most this long (SigV4 allows 7 days; a chunk task needs minutes). */
export const MAX_PRESIGN_TTL_S = 3600 // 1 h
/** S3 refuses parts under 5 MiB except the last one; chunk plans must not go below. */
export const MIN_PART_BYTES = 5 * 1024 * 1024
/** Metadata the completed object carries, naming the transfer it came from. */
export const TRANSFER_ID_METADATA = 'bwnet-transfer-id'
const LIST_PARTS_PAGE = 1000 // the S3 maximum per ListParts page
/**
 * Each call to the S3 endpoint (its answer's body included) ends within this, as the http and node
 * drivers' calls do: a tenant's endpoint that never answers cannot hold a destination lane's slot, which
 * other organizations' work and staging cleanup share (actors/transfer/io.ts).
 */
export const S3_CALL_TIMEOUT_MS = 60_000 // 1 min
/**
 * CompleteMultipartUpload's own deadline: S3 may take minutes to assemble a large upload (AWS keeps the
 * connection alive meanwhile), so the one call that can be slow honestly is given longer.
 */
export const S3_COMPLETE_TIMEOUT_MS = 10 * 60_000
/** A connection to the endpoint is made within this, or the call fails (at most the call's deadline). */
const S3_CONNECT_TIMEOUT_MS = 10_000

export interface S3DestinationConfig {
  /** e.g. https://s3.eu-central-1.amazonaws.com or http://127.0.0.1:7480 */
  endpoint: string
  region: string
  bucket: string
  accessKeyId: string
  secretAccessKey: string
  /** Prepended to the object key, e.g. 'uploads/'. Default ''. */
  keyPrefix?: string
  /** All attempts of a chunk share one part number (needed by Ceph RGW; see the top of this file). Default false. */
  sharedPartNumbers?: boolean
}

export interface S3DriverOptions {
  /** Clock for presign lifetimes (ms since the epoch). Default Date.now. */
  now?: () => number
  /** Agents the SDK connects through (url-policy.ts guardedAgents for client-created destinations). */
  agents?: { httpAgent: import('node:http').Agent, httpsAgent: import('node:https').Agent }
  /** Deadline of each call to the endpoint, ms. Default S3_CALL_TIMEOUT_MS. */
  callTimeoutMs?: number
  /** Deadline of CompleteMultipartUpload, ms (at least the call deadline). Default S3_COMPLETE_TIMEOUT_MS. */
  completeTimeoutMs?: number
}

/** Shape of the persisted state: `{ kind: 's3', bucket, key, uploadId, totalSize, chunkSize, totalChunks }`. */
interface S3State { bucket: string, key: string, uploadId: string, totalSize: number, chunkSize: number, totalChunks: number }

export class S3Driver implements DestinationDriver {
  readonly kind = 's3' as const
  readonly readableBeforeComplete = false
  readonly #client: S3Client
  readonly #bucket: string
  readonly #keyPrefix: string
  readonly #now: () => number
  readonly #sharedPartNumbers: boolean
  readonly #callTimeoutMs: number
  readonly #completeTimeoutMs: number

  constructor (config: S3DestinationConfig, options: S3DriverOptions = {}) {
    const deadline = options.callTimeoutMs ?? S3_CALL_TIMEOUT_MS
    this.#callTimeoutMs = deadline
    this.#completeTimeoutMs = Math.max(deadline, options.completeTimeoutMs ?? S3_COMPLETE_TIMEOUT_MS)
    this.#client = new S3Client({
      endpoint: config.endpoint,
      region: config.region,
      credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey },
      // Path-style addressing works with every S3-compatible server (radosgw, MinIO) and bare IPs.
      forcePathStyle: true,
      // The SDK's default CRC32 trailers need streaming encodings several servers reject.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // Each call also carries its own deadline (#send); these bound the connection and a silent socket,
      // and any request (which, unless throwOnRequestTimeout is set, only logs a warning): the longest
      // deadline, Complete's, as the handler's is one for every call (a server assembling a large upload
      // may say nothing until it is done).
      requestHandler: {
        ...options.agents,
        connectionTimeout: Math.min(S3_CONNECT_TIMEOUT_MS, deadline),
        requestTimeout: this.#completeTimeoutMs,
        throwOnRequestTimeout: true,
        socketTimeout: this.#completeTimeoutMs
      }
    })
    this.#bucket = config.bucket
    this.#keyPrefix = config.keyPrefix ?? ''
    this.#now = options.now ?? Date.now
    this.#sharedPartNumbers = config.sharedPartNumbers ?? false
  }

  /** The part number an attempt writes: its own slot's, or the chunk's first with sharedPartNumbers. */
  partNumber (chunkIndex: number, attemptSlot: number): number {
    partNumberOf(chunkIndex, attemptSlot) // range checks
    return partNumberOf(chunkIndex, this.#sharedPartNumbers ? 0 : attemptSlot)
  }

  async begin (upload: UploadSpec): Promise<UploadState> {
    if (upload.totalChunks < 1 || upload.totalChunks > MAX_CHUNKS_PER_OBJECT) {
      throw new DestinationError('BWN_ERR_DESTINATION_REFUSED', `an s3 object holds 1..${MAX_CHUNKS_PER_OBJECT} chunks, not ${upload.totalChunks}`)
    }
    if (upload.totalChunks > 1 && upload.chunkSize < MIN_PART_BYTES) {
      throw new DestinationError('BWN_ERR_DESTINATION_REFUSED', `s3 parts other than the last must be at least ${MIN_PART_BYTES} bytes`)
    }
    const key = this.#keyPrefix + upload.filename
    const out = await this.#send('CreateMultipartUpload', async (abortSignal) => await this.#client.send(new CreateMultipartUploadCommand({
      Bucket: this.#bucket, Key: key, ContentType: 'application/octet-stream', Metadata: { [TRANSFER_ID_METADATA]: upload.transferId }
    }), { abortSignal }))
    if (!out.UploadId) throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', 'CreateMultipartUpload answered without an UploadId')
    return { kind: 's3', bucket: this.#bucket, key, uploadId: out.UploadId, totalSize: upload.totalSize, chunkSize: upload.chunkSize, totalChunks: upload.totalChunks }
  }

  async target (state: UploadState, chunk: ChunkCoordinates, expiresAt: number): Promise<DeliveryTarget> {
    const s = this.#state(state)
    if (chunk.index < 0 || chunk.index >= s.totalChunks) throw new RangeError(`chunk ${chunk.index} outside 0..${s.totalChunks - 1}`)
    // One instant for the lifetime, the signature and the expiry reported: SigV4 counts whole seconds
    // from its signing time (X-Amz-Date, to the second), so the URL expires at that second plus ttlS.
    const signedAt = this.#now()
    const ttlS = Math.ceil((expiresAt - signedAt) / 1000)
    if (ttlS < 1 || ttlS > MAX_PRESIGN_TTL_S) throw new RangeError(`presigned URL lifetime ${ttlS} s outside 1..${MAX_PRESIGN_TTL_S}`)
    const url = await getSignedUrl(this.#client, new UploadPartCommand({
      Bucket: s.bucket, Key: s.key, UploadId: s.uploadId, PartNumber: this.partNumber(chunk.index, chunk.attemptSlot)
    }), { expiresIn: ttlS, signingDate: new Date(signedAt) })
    return { method: 'PUT', url, headers: { 'content-type': 'application/octet-stream' }, expiresAt: Math.floor(signedAt / 1000) * 1000 + ttlS * 1000 }
  }

  async complete (state: UploadState, parts: DeliveredPart[]): Promise<void> {
    const s = this.#state(state)
    const ordered = partsInOrder(parts, s.totalChunks)
    const missingEtag = ordered.filter(p => p.etag === null || p.etag === '').map(p => p.index)
    if (missingEtag.length > 0) throw new DestinationError('BWN_ERR_DESTINATION_INCOMPLETE', `chunks without an ETag: ${missingEtag.join(', ')}`, { chunks: missingEtag })
    const chosen: Part[] = ordered.map(part => ({ PartNumber: this.partNumber(part.index, part.attemptSlot), ETag: part.etag! }))
    // The stored part must still hold the reported bytes: an attempt may have failed after its
    // report, or (shared part numbers) a stale attempt may have replaced them.
    const stored = new Map<number, string>()
    let listed: StoredPart[]
    try {
      listed = await this.listParts(state)
    } catch (err) {
      // Completed already (a coordinator that crashed after completing asks again): done, if the object is this one.
      if (isNoSuchUpload(err) && await this.#completedAs(s, ordered)) return
      throw err
    }
    for (const p of listed) stored.set(this.partNumber(p.index, p.attemptSlot), normaliseEtag(p.etag))
    const stale = ordered.filter((part, i) => stored.get(chosen[i]!.PartNumber!) !== normaliseEtag(part.etag!)).map(p => p.index)
    if (stale.length > 0) {
      throw new DestinationError('BWN_ERR_DESTINATION_INCOMPLETE', `stored parts do not match the reported ETags for chunks ${stale.join(', ')}`, { chunks: stale })
    }
    try {
      await this.#send('CompleteMultipartUpload', async (abortSignal) => await this.#client.send(new CompleteMultipartUploadCommand({
        Bucket: s.bucket, Key: s.key, UploadId: s.uploadId, MultipartUpload: { Parts: chosen }
      }), { abortSignal }), undefined, this.#completeTimeoutMs)
    } catch (err) {
      if (isNoSuchUpload(err) && await this.#completedAs(s, ordered)) return // the answer to an earlier try was lost
      throw err
    }
  }

  /**
   * True when the key holds the object these parts make: its size and its multipart ETag
   * (md5 of the parts' md5s, then `-<parts>`), which no other upload of other bytes has.
   */
  async #completedAs (s: S3State, parts: DeliveredPart[]): Promise<boolean> {
    try {
      const head = await this.#send('HeadObject', async (abortSignal) => await this.#client.send(new HeadObjectCommand({ Bucket: s.bucket, Key: s.key }), { abortSignal }))
      const md5s = Buffer.concat(parts.map(p => Buffer.from(normaliseEtag(p.etag ?? ''), 'hex')))
      const expected = `${createHash('md5').update(md5s).digest('hex')}-${parts.length}`
      return head.ContentLength === s.totalSize && normaliseEtag(head.ETag ?? '') === expected
    } catch {
      return false
    }
  }

  async abort (state: UploadState): Promise<void> {
    const s = this.#state(state)
    try {
      await this.#send('AbortMultipartUpload', async (abortSignal) => await this.#client.send(new AbortMultipartUploadCommand({ Bucket: s.bucket, Key: s.key, UploadId: s.uploadId }), { abortSignal }))
    } catch (err) {
      if ((err as { cause?: { name?: string } }).cause?.name === 'NoSuchUpload') return // already aborted or completed
      throw err
    }
  }

  async readRange (state: UploadState, offset: number, length: number): Promise<Uint8Array> {
    const s = this.#state(state)
    checkRange(offset, length, s.totalSize)
    // The deadline covers the body too: the call's signal ends its response stream.
    const bytes = await this.#send('GetObject', async (abortSignal) => await this.#client.send(new GetObjectCommand({ Bucket: s.bucket, Key: s.key, Range: `bytes=${offset}-${offset + length - 1}` }), { abortSignal }), async (out) => {
      if (!out.Body) throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', 'GetObject answered without a body')
      return await out.Body.transformToByteArray()
    })
    if (bytes.length !== length) throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `GetObject returned ${bytes.length} bytes, asked for ${length}`)
    return bytes
  }

  /**
   * Every stored part of the plan with its chunk index and slot, from ListParts (paged). The endpoint is
   * the tenant's: a part number outside the plan is ignored (one per part number is kept), and the pages
   * end within the plan's (its part numbers at 1,000 a page, and one) with a marker that moves forward
   * each time, so an endpoint that pages for ever fails the call rather than growing it without bound.
   */
  async listParts (state: UploadState): Promise<StoredPart[]> {
    const s = this.#state(state)
    const lastPart = s.totalChunks * ATTEMPT_SLOTS_PER_CHUNK
    const maxPages = Math.ceil(lastPart / LIST_PARTS_PAGE) + 1
    const parts = new Map<number, StoredPart>()
    let marker = 0
    for (let page = 1; ; page++) {
      const out = await this.#send('ListParts', async (abortSignal) => await this.#client.send(new ListPartsCommand({ Bucket: s.bucket, Key: s.key, UploadId: s.uploadId, MaxParts: LIST_PARTS_PAGE, PartNumberMarker: marker === 0 ? undefined : String(marker) }), { abortSignal }))
      for (const p of out.Parts ?? []) {
        if (p.PartNumber === undefined || p.ETag === undefined) continue
        if (!Number.isSafeInteger(p.PartNumber) || p.PartNumber < 1 || p.PartNumber > lastPart) continue
        const zeroBased = p.PartNumber - 1
        parts.set(p.PartNumber, { index: Math.floor(zeroBased / ATTEMPT_SLOTS_PER_CHUNK), attemptSlot: zeroBased % ATTEMPT_SLOTS_PER_CHUNK, etag: p.ETag, size: p.Size ?? 0 })
      }
      if (out.IsTruncated !== true || out.NextPartNumberMarker === undefined) break
      const next = Number(out.NextPartNumberMarker)
      if (!Number.isSafeInteger(next) || next <= marker) {
        throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `ListParts: the next page's marker ${JSON.stringify(out.NextPartNumberMarker).slice(0, 40)} does not follow ${marker}`)
      }
      if (next >= lastPart) break // no part of the plan lies beyond it
      if (page >= maxPages) throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `ListParts: more than ${maxPages} pages for ${lastPart} part numbers`)
      marker = next
    }
    return [...parts.values()].sort((a, b) => a.index - b.index || a.attemptSlot - b.attemptSlot)
  }

  /** Releases the HTTP agent's sockets. */
  destroy (): void { this.#client.destroy() }

  /**
   * Makes one call with its deadline (S3_CALL_TIMEOUT_MS unless given), and `read`s its answer within
   * the same deadline (a body is read under it). Its errors are DestinationErrors.
   */
  async #send<O, T = O> (what: string, call: (abortSignal: AbortSignal) => Promise<O>, read?: (out: O) => Promise<T>, timeoutMs = this.#callTimeoutMs): Promise<T> {
    const signal = AbortSignal.timeout(timeoutMs)
    try {
      const out = await call(signal)
      return read !== undefined ? await read(out) : out as unknown as T
    } catch (err) {
      if (err instanceof DestinationError) throw err
      if (signal.aborted) throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `${what}: no answer within ${timeoutMs} ms`, { cause: err })
      throw toDestinationError(what, err)
    }
  }

  #state (state: UploadState): S3State {
    expectKind(state, 's3')
    return {
      bucket: stateString(state, 'bucket'),
      key: stateString(state, 'key'),
      uploadId: stateString(state, 'uploadId'),
      totalSize: stateInteger(state, 'totalSize'),
      chunkSize: stateInteger(state, 'chunkSize'),
      totalChunks: stateInteger(state, 'totalChunks')
    }
  }
}

const normaliseEtag = (etag: string): string => etag.replace(/"/g, '').toLowerCase()

/** The upload is gone (completed or aborted): NoSuchUpload, or radosgw's 404 NoSuchKey. */
function isNoSuchUpload (err: unknown): boolean {
  const e = err as { name?: string, status?: number, cause?: { name?: string, $metadata?: { httpStatusCode?: number } } }
  const names = [e.name, e.cause?.name]
  return names.includes('NoSuchUpload') || names.includes('NoSuchKey') || e.status === 404 || e.cause?.$metadata?.httpStatusCode === 404
}

function toDestinationError (what: string, err: unknown): DestinationError {
  const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode
  const name = (err as { name?: string }).name ?? 'Error'
  const message = `${what}: ${name}${status ? ` (HTTP ${status})` : ''}: ${(err as Error).message}`
  const retryable = status === undefined || status >= 500 || status === 429 || status === 408
  return new DestinationError(retryable ? 'BWN_ERR_DESTINATION_UNAVAILABLE' : 'BWN_ERR_DESTINATION_REFUSED', message, { status, cause: err })
}
