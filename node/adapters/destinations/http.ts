// The `http` destination: a plain HTTP server that accepts ranged PUTs. Each chunk is one
//   PUT <url>   Content-Range: bytes <start>-<end>/<total>   (body = the chunk bytes)
// sent by the worker; the server writes it at its offset. The object URL may name the transfer and the
// file: `{transferId}` and `{filename}` in the configured URL are replaced (percent-encoded).
//
// Credentials: the server cannot check presigned URLs of its own, so two sets of headers are kept
// apart. `uploadHeaders` travel to workers with every target (use a token scoped to this destination,
// never an account-wide credential); `controlHeaders` never leave the coordinator and go only with
// complete, abort and read-back. With `signer` set, target URLs also carry a bwnet signature and expiry
// (protocol/signed-url.ts) that the server can check against the coordinator's hotkey: audience
// `http-destination`, bound to the server's own host:port, method and path, so no bwnet endpoint (a
// sink, a data endpoint) ever accepts it, whatever path a tenant put in the destination URL.
//
// complete: when `completeUrl` is set, POST there a JSON body
//   { "transferId", "url", "totalSize", "chunkSize", "parts": [{ "index", "etag" }] }   (expects 2xx);
// otherwise nothing is sent: once every range is written the object is whole.
// abort: DELETE <url> unless `deleteOnAbort` is false (404 counts as done).
// readRange: GET <url> with Range: bytes=<start>-<end>; works before complete on servers that serve
// what they have written (expects 206, or 200 with exactly the asked length).
import type { KeyPair } from '../../../protocol/index.ts'
import { signUrl } from '../../../protocol/index.ts'
import type {
  DestinationDriver, UploadState, UploadSpec, ChunkCoordinates, DeliveryTarget, DeliveredPart, ReadBackTarget } from '../../../actors/destination.ts'
import { fillPlaceholders } from './url-policy.ts'
import { DestinationError, expectKind, stateString, stateInteger, partsInOrder, checkRange, httpFailure, networkFailure, boundedBody, bodySha256, errorText, discard } from './errors.ts'

/** Time limit for the coordinator's own calls (complete, abort, read-back). */
export const CONTROL_TIMEOUT_MS = 60_000 // 1 min

export interface HttpDestinationConfig {
  /** Object URL, http(s); may contain `{transferId}` and `{filename}`. */
  url: string
  /** Sent by workers with each chunk PUT: visible to workers. */
  uploadHeaders?: Record<string, string>
  /** Sent only by the coordinator (complete, abort, read-back). */
  controlHeaders?: Record<string, string>
  completeUrl?: string
  /** Default true. */
  deleteOnAbort?: boolean
}

export interface HttpDriverOptions {
  /** Signs target URLs with this hotkey (bwnet signed URL), so the server can verify them. */
  signer?: KeyPair
  fetch?: typeof fetch
}

/** `{ kind: 'http', url, transferId, totalSize, chunkSize, totalChunks }` */
export class HttpDriver implements DestinationDriver {
  readonly kind = 'http' as const
  readonly readableBeforeComplete = true
  readonly #config: HttpDestinationConfig
  readonly #signer: KeyPair | undefined
  readonly #fetch: typeof fetch
  /** The user, password and origin its url names, placeholders aside: every transfer's URL must name these. */
  readonly #origin: string

  constructor (config: HttpDestinationConfig, options: HttpDriverOptions = {}) {
    const probe = new URL(fillPlaceholders(config.url, 'x'))
    if (probe.protocol !== 'http:' && probe.protocol !== 'https:') throw new TypeError(`http destination needs an http(s) URL, not ${probe.protocol}`)
    this.#origin = `${probe.username}:${probe.password}@${probe.origin}`
    this.#config = config
    this.#signer = options.signer
    this.#fetch = options.fetch ?? fetch
  }

  async begin (upload: UploadSpec): Promise<UploadState> {
    if (upload.totalSize < 1) throw new DestinationError('BWN_ERR_DESTINATION_REFUSED', 'an http destination needs at least one byte')
    const url = this.#config.url
      .replaceAll('{transferId}', encodeURIComponent(upload.transferId))
      // A relative path keeps its '/' between percent-encoded segments (docs/transfers.md#filenames).
      .replaceAll('{filename}', upload.filename.split('/').map(encodeURIComponent).join('/'))
    // A destination stored before placeholders were kept out of the host could let a filename pick it.
    let origin: string | null = null
    try { const u = new URL(url); origin = `${u.username}:${u.password}@${u.origin}` } catch {}
    if (origin !== this.#origin) throw new DestinationError('BWN_ERR_DESTINATION_REFUSED', 'the destination\'s url has a placeholder outside its path and query; create it again with a fixed host')
    return { kind: 'http', url, transferId: upload.transferId, totalSize: upload.totalSize, chunkSize: upload.chunkSize, totalChunks: upload.totalChunks }
  }

  async target (state: UploadState, chunk: ChunkCoordinates, expiresAt: number): Promise<DeliveryTarget> {
    const s = this.#state(state)
    if (chunk.index < 0 || chunk.index >= s.totalChunks) throw new RangeError(`chunk ${chunk.index} outside 0..${s.totalChunks - 1}`)
    const offset = chunk.index * s.chunkSize
    const length = Math.min(s.chunkSize, s.totalSize - offset)
    if (chunk.offset !== offset || chunk.length !== length) throw new RangeError(`chunk ${chunk.index} is ${offset}+${length}, not ${chunk.offset}+${chunk.length}`)
    const url = this.#signer ? signUrl({ method: 'PUT', url: s.url, audience: 'http-destination', expiresAt, key: this.#signer }) : s.url
    return {
      method: 'PUT',
      url,
      headers: {
        ...this.#config.uploadHeaders,
        'content-type': 'application/octet-stream',
        'content-range': `bytes ${offset}-${offset + length - 1}/${s.totalSize}`
      },
      expiresAt
    }
  }

  async complete (state: UploadState, parts: DeliveredPart[]): Promise<void> {
    const s = this.#state(state)
    const ordered = partsInOrder(parts, s.totalChunks)
    if (this.#config.completeUrl === undefined) return
    const body = JSON.stringify({ transferId: s.transferId, url: s.url, totalSize: s.totalSize, chunkSize: s.chunkSize, parts: ordered.map(p => ({ index: p.index, etag: p.etag })) })
    const res = await this.#call('complete', this.#config.completeUrl, { method: 'POST', body, headers: { 'content-type': 'application/json' } })
    if (!res.ok) throw httpFailure('http destination complete', res.status, await errorText(res))
    await discard(res)
  }

  async abort (state: UploadState): Promise<void> {
    const s = this.#state(state)
    if (this.#config.deleteOnAbort === false) return
    const res = await this.#call('abort', s.url, { method: 'DELETE' })
    if (!res.ok && res.status !== 404) throw httpFailure('http destination abort', res.status, await errorText(res))
    await discard(res)
  }

  async readTarget (state: UploadState, offset: number, length: number, expiresAt: number): Promise<ReadBackTarget> {
    const s = this.#state(state)
    checkRange(offset, length, s.totalSize)
    return { method: 'GET', url: s.url, headers: { ...this.#config.uploadHeaders, range: `bytes=${offset}-${offset + length - 1}` }, expiresAt }
  }

  async readRange (state: UploadState, offset: number, length: number): Promise<Uint8Array> {
    const s = this.#state(state)
    checkRange(offset, length, s.totalSize)
    const bytes = await boundedBody(await this.#read(s, offset, length), length, 'http destination read')
    if (bytes.length !== length) throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `http destination read: answered ${bytes.length} bytes for ${offset}+${length}`)
    return bytes
  }

  /** The coordinator's check: the chunk's bytes read back and hashed as they stream, never whole in memory. */
  async chunkSha256 (state: UploadState, chunk: { index: number, length: number }): Promise<string> {
    const s = this.#state(state)
    const offset = chunk.index * s.chunkSize
    checkRange(offset, chunk.length, s.totalSize)
    return await bodySha256(await this.#read(s, offset, chunk.length), chunk.length, 'http destination read')
  }

  /** A ranged GET; its body is the caller's to read. */
  async #read (s: { url: string, totalSize: number }, offset: number, length: number): Promise<Response> {
    const res = await this.#call('read', s.url, { method: 'GET', headers: { range: `bytes=${offset}-${offset + length - 1}` } })
    if (res.status !== 206 && res.status !== 200) throw httpFailure('http destination read', res.status, await errorText(res))
    // A 200 is the whole object: acceptable only when that is exactly the range asked for.
    if (res.status === 200 && (offset !== 0 || length !== s.totalSize)) {
      await discard(res)
      throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `http destination read: answered 200 (the whole object) for ${offset}+${length}`)
    }
    return res
  }

  async #call (what: string, url: string, init: { method: string, body?: string, headers?: Record<string, string> }): Promise<Response> {
    try {
      return await this.#fetch(url, { ...init, headers: { ...this.#config.controlHeaders, ...init.headers }, signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS) })
    } catch (err) {
      throw networkFailure(`http destination ${what}`, err)
    }
  }

  #state (state: UploadState): { url: string, transferId: string, totalSize: number, chunkSize: number, totalChunks: number } {
    expectKind(state, 'http')
    return {
      url: stateString(state, 'url'),
      transferId: stateString(state, 'transferId'),
      totalSize: stateInteger(state, 'totalSize'),
      chunkSize: stateInteger(state, 'chunkSize'),
      totalChunks: stateInteger(state, 'totalChunks')
    }
  }
}
