// The worker's I/O: pull a chunk from its coordinator's HTTP data endpoint (signed URL), or over the
// swarm bulk channel when that endpoint cannot be reached; check it against the offered hash; write
// it to the destination target; report the destination's ETag.
import { createHash } from 'node:crypto'
import type { TaskOffer } from '../../protocol/index.ts'
import type { ChunkMover } from '../../actors/transfer/worker.ts'
import type { SwarmTransport } from './swarm-transport.ts'
import type { Messenger } from '../messenger.ts'
import { guardedFetch, type AddressPolicy } from './destinations/url-policy.ts'

export const FETCH_TIMEOUT_MS = 60_000 // 1 min for one chunk either way

export class MoveError extends Error {
  constructor (readonly code: string, message: string) { super(message) }
}

/** Errors that mean "the coordinator's HTTP endpoint is not reachable from here" (try the swarm). */
function unreachable (err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } }).cause
  const code = cause?.code ?? (err as { code?: string }).code
  return err instanceof TypeError || ['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET'].includes(code ?? '')
}

export class HttpChunkMover implements ChunkMover {
  readonly #put: typeof fetch
  /** `policy`: the destination addresses this worker may write to (url-policy.ts), checked per connection. */
  constructor (private readonly transport: SwarmTransport, private readonly messenger: Messenger, policy: AddressPolicy) {
    this.#put = guardedFetch(policy)
  }

  async #pull (offer: TaskOffer, signal: AbortSignal): Promise<{ bytes: Uint8Array, via: 'http' | 'bulk' }> {
    try {
      const res = await fetch(offer.source.url, { signal: AbortSignal.any([signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]) })
      if (!res.ok) throw new MoveError('source_refused', `coordinator answered ${res.status}`)
      const len = Number(res.headers.get('content-length') ?? NaN)
      if (Number.isFinite(len) && len !== offer.length) throw new MoveError('source_size_mismatch', `source sends ${len} bytes, offer says ${offer.length}`)
      return { bytes: new Uint8Array(await res.arrayBuffer()), via: 'http' }
    } catch (err) {
      if (signal.aborted || err instanceof MoveError || !unreachable(err)) throw err
      const peer = this.messenger.peerOf(offer.source.coordinator)
      if (peer === undefined) throw new MoveError('source_unreachable', 'coordinator reachable neither over HTTP nor the swarm')
      return { bytes: await this.transport.fetchBulk(peer, offer.source.path), via: 'bulk' }
    }
  }

  async move (offer: TaskOffer, opts: { signal: AbortSignal, corrupt: boolean }): Promise<{ sha256: string, etag: string | null, bytes: number, via: 'http' | 'bulk' }> {
    const { bytes, via } = await this.#pull(offer, opts.signal)
    if (bytes.byteLength !== offer.length) throw new MoveError('source_size_mismatch', `got ${bytes.byteLength} bytes, offer says ${offer.length}`)
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    if (sha256 !== offer.sha256) throw new MoveError('source_hash_mismatch', 'the chunk from the coordinator does not match its offered hash')
    let body = bytes
    if (opts.corrupt && bytes.byteLength > 0) {
      body = Uint8Array.from(bytes)
      body[body.byteLength >> 1]! ^= 0xff
    }
    if (opts.signal.aborted) throw new MoveError('cancelled', 'cancelled')
    const res = await this.#put(offer.target.url, {
      method: 'PUT',
      headers: { ...offer.target.headers, 'content-type': offer.target.headers['content-type'] ?? 'application/octet-stream' },
      body: body as unknown as BodyInit,
      signal: AbortSignal.any([opts.signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)])
    })
    const text = res.ok ? '' : (await res.text()).slice(0, 200)
    if (!res.ok) throw new MoveError(res.status >= 500 ? 'destination_unavailable' : 'destination_refused', `destination answered ${res.status} ${text}`)
    await res.body?.cancel().catch(() => {})
    return { sha256, etag: res.headers.get('etag'), bytes: body.byteLength, via }
  }
}
