// The worker's I/O: stream a chunk from its coordinator's HTTP data endpoint (signed URL) into the
// destination's PUT — `pipeline(pull, check, put)` — hashing it on the way; or, when that endpoint
// cannot be reached, read it over the swarm bulk channel and stream that into the same PUT. No whole
// chunk is held on the HTTP path: the check passes pieces on as they arrive and holds back only the
// last one until the chunk's sha256 and length match the offer, so a chunk that does not match is
// never completed at the destination (its PUT is cut short) and the attempt fails.
import type { IncomingMessage, ClientRequest } from 'node:http'
import { Readable, Transform, type TransformCallback } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { request as undiciRequest, type Dispatcher } from 'undici'
import { MAX_CHUNK_BODY_BYTES, type TaskOffer } from '../../protocol/index.ts'
import type { ChunkMover, MoveOptions } from '../../actors/transfer/worker.ts'
import { MoveError } from '../../actors/errors.ts'
import type { MoveFailure } from '../../protocol/index.ts'
import { BULK_TIMEOUT_MS, type SwarmTransport } from './swarm-transport.ts'
import type { Messenger } from '../messenger.ts'
import type { InflightBudget } from './inflight-budget.ts'
import { guardedDispatcher, guardedRequest, interfaceAddresses, joinedAddresses, liveAddresses, type AddressPolicy } from './destinations/url-policy.ts'
import { streamHash, HASH_BYTES_PER_STREAM, type StreamHash } from './hash-pool.ts'

/**
 * A move fails once it brings less than MOVE_PROGRESS_BYTES (or the rest of the chunk) in this long:
 * judged by progress, not by a total time, so a large chunk on a slow but steady link is never cut off
 * (docs/transfers.md#overseer); a source that sends a byte now and then no longer holds a slot for ever.
 */
export const MOVE_IDLE_TIMEOUT_MS = 60_000 // 1 min
/** What a move must bring per MOVE_IDLE_TIMEOUT_MS: the rate the node sink asks of a chunk PUT too. */
export const MOVE_PROGRESS_BYTES = 1024 * 1024
/** Bytes a streamed move holds at most: socket and stream buffers on both sides, the held-back piece (1 MiB), its hash's buffers. */
export const STREAM_WINDOW_BYTES = 1024 * 1024 + HASH_BYTES_PER_STREAM
const PIECE_BYTES = 256 * 1024 // stream buffer (highWaterMark) of the PUT side
const EMPTY = new Uint8Array(0)

export { MoveError }

/** Errors that mean "the coordinator's HTTP endpoint is not reachable from here" (try the swarm). */
function unreachable (err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } }).cause
  const code = cause?.code ?? (err as { code?: string }).code
  return err instanceof TypeError || ['BWN_ERR_ADDRESS_REFUSED', 'ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET'].includes(code ?? '')
}

/** Closes a body that will not be read (further): what it still has is dropped, its late errors with it. */
function drop (body: Readable): void {
  body.on('error', () => {})
  body.destroy()
}

/**
 * GET the chunk from the coordinator's data endpoint; resolves once the answer's head arrives. Through
 * undici: its client takes about half the CPU per byte received of node:http's (docs/benchmarks.md#e2e).
 */
async function get (url: string, signal: AbortSignal, dispatcher: Dispatcher): Promise<Dispatcher.ResponseData> {
  const u = new URL(url)
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new MoveError('bad_url', `not an http(s) URL: ${u.protocol}`)
  return await undiciRequest(u, { method: 'GET', signal, dispatcher })
}

/**
 * Hashes and counts the bytes passing through, refuses more than `length`, and holds back the last
 * piece until the end: it goes out only when the bytes are exactly `length` long and hash to `sha256`.
 * With `corrupt` (a test fault) the byte in the middle is flipped after hashing, as a lying worker would.
 */
export class ChunkCheck extends Transform {
  readonly #length: number
  readonly #sha256: string
  readonly #corrupt: boolean
  readonly #onPiece: (() => void) | undefined
  readonly #hash: StreamHash = streamHash(['sha256'])
  #bytes = 0
  #held: Buffer | null = null
  #digest: string | null = null
  /** Why the check refused the chunk, when it did. */
  failure: MoveError | null = null

  /** `onPiece`: told of every piece that comes in (the mover's idle timer). */
  constructor (length: number, sha256: string, corrupt: boolean, onPiece?: () => void) {
    super({ highWaterMark: PIECE_BYTES })
    this.#length = length
    this.#sha256 = sha256
    this.#corrupt = corrupt
    this.#onPiece = onPiece
  }

  get bytes (): number { return this.#bytes }
  /** The sha256 of every byte that came in, once the stream ended. */
  get digest (): string | null { return this.#digest }

  override _transform (piece: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const start = this.#bytes
    this.#bytes += piece.length
    this.#onPiece?.()
    if (this.#bytes > this.#length) { done(this.#fail('source_size_mismatch', `the source sends more than the offered ${this.#length} bytes`)); return }
    this.#hash.update(piece).then(() => {
      const middle = this.#length >> 1
      if (this.#corrupt && middle >= start && middle < this.#bytes) {
        piece = Buffer.from(piece) // a copy: the source's buffer stays as it was
        piece[middle - start]! ^= 0xff
      }
      const previous = this.#held
      this.#held = piece
      done(null, previous ?? undefined)
    }, done)
  }

  override _flush (done: TransformCallback): void {
    this.#hash.digest().then(([digest]) => {
      this.#digest = digest!
      if (this.#bytes !== this.#length) { done(this.#fail('source_size_mismatch', `got ${this.#bytes} bytes, offer says ${this.#length}`)); return }
      if (this.#digest !== this.#sha256) { done(this.#fail('source_hash_mismatch', 'the chunk from the coordinator does not match its offered hash')); return }
      const last = this.#held
      this.#held = null
      done(null, last ?? undefined)
    }, done)
  }

  override _destroy (err: Error | null, done: (err: Error | null) => void): void {
    this.#hash.abort() // nothing once digested
    done(err)
  }

  #fail (code: MoveFailure, message: string): MoveError {
    this.failure = new MoveError(code, message)
    return this.failure
  }
}

async function text (res: IncomingMessage, max = 200): Promise<string> {
  let out = ''
  for await (const piece of res) {
    out += (piece as Buffer).toString('utf8')
    if (out.length >= max) break // the rest is not read
  }
  return out.slice(0, max)
}

/** How long a refusal answered before the body is done may take to say why before the send is cut. */
const REFUSAL_READ_MS = 1_000

/**
 * The addresses a worker may read a coordinator's data endpoint at, from its destination `policy`.
 * Another coordinator's endpoint is a URL that coordinator chose: not on this host (loopback, or any of
 * its interfaces' addresses), nor in a range the node refuses (nodes on one private network pull from
 * each other over HTTP where the operator allows private addresses, as the devnet and the lab do;
 * elsewhere such a chunk comes over the swarm). The worker's own orchestrator's (`ownNode`) may be on
 * this host, in any range. Link-local addresses (cloud metadata at 169.254.169.254) never, on any node.
 */
export function sourcePolicy (policy: AddressPolicy, ownNode: boolean): AddressPolicy {
  const always = ['link_local'] as const
  if (ownNode) return { ...policy, own: [], ranges: false, always }
  const own = policy.own
  const hostOwn = typeof own === 'function' ? own : () => own ?? []
  return { ...policy, own: joinedAddresses(hostOwn, liveAddresses(interfaceAddresses)), ranges: true, always }
}

export interface HttpChunkMoverOptions {
  /** Bytes this node may hold in chunk buffers at once; a streamed move reserves its window, a bulk read its chunk. */
  budget?: InflightBudget
  /** The window a move must bring `moveProgressBytes` (or the rest) in, the coordinator's answer included; default MOVE_IDLE_TIMEOUT_MS. */
  moveTimeoutMs?: number
  /** Default MOVE_PROGRESS_BYTES. */
  moveProgressBytes?: number
}

export class HttpChunkMover implements ChunkMover {
  readonly #transport: SwarmTransport
  readonly #messenger: Messenger
  readonly #options: HttpChunkMoverOptions
  readonly #put: ReturnType<typeof guardedRequest>
  readonly #putOwnNode: ReturnType<typeof guardedRequest>
  readonly #get: Dispatcher
  readonly #getOwnNode: Dispatcher
  /**
   * `policy`: the addresses this worker may write chunks to (url-policy.ts), checked per connection. A
   * coordinator's data endpoint is judged by the same ranges (private ones only where the operator allows
   * private addresses) and `own` addresses (this host's), except the worker's own orchestrator's node: its
   * data endpoint, and a target on that same origin (its sink), which a worker beside it reaches at this
   * host's address. Link-local addresses (cloud metadata) are refused for every data endpoint, on every
   * node. A source refused so is read over the swarm.
   */
  constructor (transport: SwarmTransport, messenger: Messenger, policy: AddressPolicy, options: HttpChunkMoverOptions = {}) {
    this.#transport = transport
    this.#messenger = messenger
    this.#options = options
    this.#put = guardedRequest(policy)
    this.#putOwnNode = guardedRequest({ ...policy, own: [] })
    this.#get = guardedDispatcher(sourcePolicy(policy, false))
    this.#getOwnNode = guardedDispatcher(sourcePolicy(policy, true))
  }

  /**
   * The chunk's bytes as a stream: the HTTP response, or the swarm bulk read when HTTP is unreachable.
   * `received` hears the bytes a bulk read has brought in so far (HTTP streams straight through).
   */
  async #open (offer: TaskOffer, ownNode: boolean, signal: AbortSignal, received: (bytes: number) => void, restart: () => void, reserve: () => Promise<void>): Promise<{ source: Readable, via: 'http' | 'bulk' }> {
    try {
      const res = await get(offer.source.url, signal, ownNode ? this.#getOwnNode : this.#get)
      if (res.statusCode !== 200) { drop(res.body); throw new MoveError('source_refused', `coordinator answered ${res.statusCode}`) }
      const len = Number(res.headers['content-length'] ?? NaN)
      if (Number.isFinite(len) && len !== offer.length) { drop(res.body); throw new MoveError('source_size_mismatch', `source sends ${len} bytes, offer says ${offer.length}`) }
      return { source: res.body, via: 'http' }
    } catch (err) {
      // The move's own time ran out before the coordinator answered (undici rejects with the signal's reason).
      if (signal.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError') throw new MoveError('source_unreachable', 'the coordinator did not answer in time')
      if (signal.aborted || err instanceof MoveError || !unreachable(err)) throw err
      const peer = this.#messenger.peerOf(offer.source.coordinator)
      if (peer === undefined) throw new MoveError('source_unreachable', 'coordinator reachable neither over HTTP nor the swarm')
      // The bulk channel hands over the whole chunk: it is held until written, so it is accounted before
      // the read begins (at most offer.length bytes come in). Its window starts then (the HTTP attempt's
      // time is not the bulk read's), and the move's signal ends it: a source that sends too little
      // loses the read, not only the move.
      await reserve()
      restart()
      let pieces: Uint8Array[]
      try {
        pieces = await this.#transport.fetchBulkPieces(peer, offer.source.path, BULK_TIMEOUT_MS, offer.length, received, signal)
      } catch (bulkErr) {
        if (signal.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError') throw new MoveError('move_stalled', (signal.reason as Error).message)
        if (signal.aborted) throw new MoveError('cancelled', 'cancelled')
        throw bulkErr
      }
      // Each piece is let go once passed on (the generator keeps none behind it).
      const each = function * (): Generator<Buffer> {
        for (let i = 0; i < pieces.length; i++) {
          const p = pieces[i]!
          pieces[i] = EMPTY
          yield Buffer.from(p.buffer, p.byteOffset, p.byteLength)
        }
      }
      return { source: Readable.from(each(), { objectMode: false }), via: 'bulk' }
    }
  }

  async move (offer: TaskOffer, opts: MoveOptions): Promise<{ sha256: string, etag: string | null, bytes: number, via: 'http' | 'bulk' }> {
    // No honest coordinator offers more (its plan refuses larger chunks): such an offer is not read at all.
    if (!Number.isSafeInteger(offer.length) || offer.length < 0 || offer.length > MAX_CHUNK_BODY_BYTES) {
      throw new MoveError('source_size_mismatch', `an offer of ${offer.length} bytes: over the ${MAX_CHUNK_BODY_BYTES}-byte chunk this node moves at most`)
    }
    const budget = this.#options.budget
    let release = await budget?.acquire(STREAM_WINDOW_BYTES, opts.signal)
    // A bulk read holds the whole chunk until it is written: before the read, its reservation takes the
    // stream window's place (a larger one than the budget takes all of it). One reservation per move,
    // never one held while waiting for another, so moves waiting for bytes cannot block each other.
    const holdChunk = async (): Promise<void> => {
      if (budget === undefined || offer.length <= STREAM_WINDOW_BYTES) return
      release?.()
      release = undefined
      release = await budget.acquire(offer.length, opts.signal)
    }
    try {
      return await this.#move(offer, opts, holdChunk)
    } finally { release?.() }
  }

  async #move (offer: TaskOffer, opts: MoveOptions, holdChunk: () => Promise<void>): Promise<{ sha256: string, etag: string | null, bytes: number, via: 'http' | 'bulk' }> {
    // An idle timer, pushed back by every piece that passes: it ends a move that stopped, not a slow one.
    const idleMs = this.#options.moveTimeoutMs ?? MOVE_IDLE_TIMEOUT_MS
    const idle = new AbortController()
    const least = this.#options.moveProgressBytes ?? MOVE_PROGRESS_BYTES
    // `paused` while this node itself waits (for its in-flight budget): that time is not the source's.
    let paused = false
    const idleTimer = setTimeout(() => { if (!paused) idle.abort(new DOMException(`too little progress: less than ${least} bytes (or the rest) in ${idleMs} ms`, 'TimeoutError')) }, idleMs)
    idleTimer.unref()
    const pause = (on: boolean): void => { paused = on; if (!on) idleTimer.refresh() }
    const signal = AbortSignal.any([opts.signal, idle.signal])
    // Bytes moved (a bulk read's pass in, then every pass out) since the window began; the window starts
    // again once a window's minimum, or what is left of the chunk, has passed.
    let mark = 0
    const moved = (bytes: number, total: number): void => {
      if (bytes - mark >= Math.max(1, Math.min(least, total - mark))) { mark = bytes; idleTimer.refresh() }
    }
    try {
      return await this.#moveWithin(offer, opts, signal, moved, () => idleTimer.refresh(), pause, holdChunk)
    } finally { clearTimeout(idleTimer) }
  }

  async #moveWithin (offer: TaskOffer, opts: MoveOptions, signal: AbortSignal, moved: (bytes: number, total: number) => void, restart: () => void, pause: (on: boolean) => void, holdChunk: () => Promise<void>): Promise<{ sha256: string, etag: string | null, bytes: number, via: 'http' | 'bulk' }> {
    // A bulk read passes the chunk's bytes twice, in from the coordinator and out to the destination:
    // its progress reading counts each byte half on each pass, so the overseer sees both passes move
    // (a slow bulk read is not taken for a stall, docs/transfers.md#overseer).
    let bulkIn = 0
    opts.progress?.(() => bulkIn / 2)
    // A bulk read's chunk is accounted before the read (holdChunk). The wait for the budget is this
    // node's, not the source's: the window is paused meanwhile.
    const reserve = async (): Promise<void> => {
      pause(true)
      try { await holdChunk() } finally { pause(false) }
    }
    let source: Readable | undefined
    try {
      const opened = await this.#open(offer, opts.fromOwnOrchestrator === true, signal, (bytes) => { bulkIn = bytes; moved(bytes, 2 * offer.length) }, restart, reserve)
      source = opened.source
      const via = opened.via
      restart() // the coordinator answered: a window starts for the bytes
      const total = via === 'bulk' ? 2 * offer.length : offer.length
      if (opts.signal.aborted) throw new MoveError('cancelled', 'cancelled')
      const check = new ChunkCheck(offer.length, offer.sha256, opts.corrupt, () => { moved(bulkIn + check.bytes, total) })
      opts.progress?.(via === 'bulk' ? () => (bulkIn + check.bytes) / 2 : () => check.bytes)
      const target = new URL(offer.target.url)
      let req: ClientRequest
      try {
        // The own orchestrator's sink: on the origin of its data endpoint, in an offer it made itself.
        const ownSink = opts.fromOwnOrchestrator === true && target.origin === new URL(offer.source.url).origin
        req = (ownSink ? this.#putOwnNode : this.#put)(target, {
        method: 'PUT',
        signal,
        headers: {
          ...offer.target.headers,
          'content-type': offer.target.headers['content-type'] ?? 'application/octet-stream',
          // Known up front: S3 UploadPart and the node sink refuse a body of any other length.
          'content-length': String(offer.length)
        }
        })
      } catch (err) {
        throw new MoveError('destination_refused', (err as Error).message)
      }
      let answer: IncomingMessage | null = null
      // A refusal answered before the body is done (the node sink answers 507 before reading a byte)
      // ends the send at once: a destination that stops reading would otherwise hold the move until its
      // idle timeout, and the coordinator would take the work back as a stall, never hearing why.
      // Its answer is read first (it says why, e.g. the sink's needed and free bytes), for at most a second.
      const refusedEarly = new AbortController()
      let refusal: Promise<MoveError> | null = null
      const response = new Promise<IncomingMessage>((resolve, reject) => {
        req.once('response', (res: IncomingMessage) => {
          answer = res
          if ((res.statusCode ?? 0) >= 300) {
            refusal = this.#refused(res)
            const stop = setTimeout(() => { refusedEarly.abort() }, REFUSAL_READ_MS)
            void refusal.finally(() => { clearTimeout(stop); refusedEarly.abort() })
          }
          resolve(res)
        })
        req.once('error', reject)
      })
      response.catch(() => {}) // observed below
      try {
        await pipeline(source, check, req, { signal: AbortSignal.any([signal, refusedEarly.signal]) })
      } catch (err) {
        if (check.failure !== null) throw check.failure
        if (opts.signal.aborted) throw new MoveError('cancelled', 'cancelled')
        if (signal.aborted) throw new MoveError('move_stalled', (signal.reason as Error).message)
        // The destination may have answered (and stopped reading) before the body was done: its answer says why.
        const early = answer as IncomingMessage | null
        if (early !== null && (early.statusCode ?? 0) >= 300) throw await (refusal ?? this.#refused(early))
        if ((err as { code?: string }).code === 'BWN_ERR_ADDRESS_REFUSED') throw new MoveError('destination_refused', (err as Error).message)
        throw err
      }
      const res = await response
      if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) throw await (refusal ?? this.#refused(res))
      res.resume()
      return { sha256: check.digest!, etag: typeof res.headers.etag === 'string' ? res.headers.etag : null, bytes: check.bytes, via }
    } finally {
      if (source !== undefined) drop(source)
    }
  }

  async #refused (res: IncomingMessage): Promise<MoveError> {
    const status = res.statusCode ?? 0
    const body = await text(res).catch(() => '')
    // 507: out of room, a state the destination may leave (the coordinator waits for it, no attempt spent).
    return new MoveError(status === 507 ? 'destination_full' : status >= 500 ? 'destination_unavailable' : 'destination_refused', `destination answered ${status} ${body}`)
  }
}
