// The world around the actors: modelled destinations (multipart uploads whose parts record a content
// marker instead of bytes), the chunk mover of a simulated worker (its moves share the worker's link
// equally, as TCP flows on one bottleneck do), and a blob store that only remembers what was staged.
import { createHash } from 'node:crypto'
import type { BlobStore, Timer } from '../actors/ports.ts'
import { DestinationError, MoveError } from '../actors/errors.ts'
import type { ChunkMover, MoveOptions } from '../actors/transfer/worker.ts'
import type { DestinationDriver, UploadState, UploadSpec, ChunkCoordinates, DeliveryTarget, DeliveredPart, StoredPart, ReadBackTarget } from '../actors/destination.ts'
import type { TaskOffer } from '../protocol/index.ts'
import type { VirtualClock } from './clock.ts'
import type { Rng } from './rng.ts'

/**
 * Synthetic content of one staged chunk: a 64-hex-digit digest standing for its sha256, from the transfer
 * id and index. Nothing hashes real bytes in the simulator, so the marker only has to be distinct per chunk
 * and replayable: eight FNV-1a words with distinct offsets, each through murmur3's finalizer (crypto's
 * sha256 cost a context object per call, twice per chunk).
 */
export function chunkSha256 (transferId: string, index: number): string {
  const text = `${transferId}/${index}`
  let out = ''
  for (let w = 0; w < 8; w++) {
    let h = (0x811c9dc5 ^ Math.imul(w + 1, 0x9e3779b9)) >>> 0
    for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
    h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b); h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35); h ^= h >>> 16
    out += (h >>> 0).toString(16).padStart(8, '0')
  }
  return out
}
/** The ETag a correct write of the chunk gets (an S3 single-part ETag is the md5 of the bytes). */
export function chunkMd5 (sha256: string): string { return sha256.slice(0, 32) }
const CORRUPT_MARK = 'c0ffee'

/** A cancelled move fails as the platform's aborts do (the worker reads its own signal, not this). */
const aborted = (): Error => new DOMException('aborted', 'AbortError')

export interface DestinationModel { id: string, bandwidthMbps: number, latencyMs: number, failureRate: number }

interface Upload { spec: UploadSpec, parts: Map<number, StoredPart>, /** The last part written at each chunk index: what a read of that range returns. */ last: Map<number, StoredPart> }

/** A modelled S3-like destination: parts are listed before completion; bytes are never returned, only a validator's read of a chunk range (its last write's marker). */
export class SimDestination implements DestinationDriver {
  readonly model: DestinationModel
  readonly #clock: VirtualClock
  readonly #rng: Rng
  readonly kind = 's3' as const
  readonly readableBeforeComplete = false
  /** Written only through offers (no tenant writes the model): a mismatch here is the worker's, as at a node's own sink. */
  readonly attributable = true
  readonly #uploads = new Map<string, Upload>()
  /** Objects completed, and their chunks checked against the staged content (the first invariant); nothing of them is kept. */
  completedObjects = 0
  checkedChunks = 0
  mismatchedChunks = 0
  /** Part listings: the coordinator's own integrity checks (a delivery no validator gave a verdict on). */
  partListings = 0
  writes = 0
  failedWrites = 0

  constructor (model: DestinationModel, clock: VirtualClock, rng: Rng) {
    this.model = model
    this.#clock = clock
    this.#rng = rng
  }

  #after<T> (fn: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#clock.setTimer(this.model.latencyMs, () => { try { resolve(fn()) } catch (err) { reject(err) } })
    })
  }

  #upload (state: UploadState): Upload {
    const u = typeof state.uploadId === 'string' ? this.#uploads.get(state.uploadId) : undefined
    if (u === undefined) throw new DestinationError('BWN_ERR_DESTINATION_STATE', 'no such upload')
    return u
  }

  begin (spec: UploadSpec): Promise<UploadState> {
    return this.#after(() => {
      const uploadId = `${this.model.id}/${spec.transferId}`
      this.#uploads.set(uploadId, { spec, parts: new Map(), last: new Map() })
      return { kind: 's3', uploadId }
    })
  }

  async target (state: UploadState, chunk: ChunkCoordinates, expiresAt: number): Promise<DeliveryTarget> {
    return { method: 'PUT', url: `sim://${state.uploadId as string}#${chunk.index}.${chunk.attemptSlot}`, headers: {}, expiresAt }
  }

  complete (state: UploadState, parts: DeliveredPart[]): Promise<void> {
    return this.#after(() => {
      const u = this.#upload(state)
      const missing: number[] = []
      const etags: string[] = []
      for (const p of parts) {
        const stored = u.parts.get(p.index * 3 + p.attemptSlot)
        if (stored === undefined) missing.push(p.index)
        else etags.push(stored.etag)
      }
      if (missing.length > 0 || parts.length !== u.spec.totalChunks) throw new DestinationError('BWN_ERR_DESTINATION_INCOMPLETE', 'parts missing', { chunks: missing })
      this.completedObjects++
      etags.forEach((etag, i) => { this.checkedChunks++; if (etag.replaceAll('"', '') !== chunkMd5(chunkSha256(u.spec.transferId, i))) this.mismatchedChunks++ })
      this.#uploads.delete(state.uploadId as string)
    })
  }

  async abort (state: UploadState): Promise<void> {
    if (typeof state.uploadId === 'string') this.#uploads.delete(state.uploadId)
  }

  async readRange (): Promise<Uint8Array> {
    throw new DestinationError('BWN_ERR_DESTINATION_STATE', 'a simulated destination models bytes and cannot return them')
  }

  /**
   * A validator's read URL for one chunk's range (validators.* in the scenario). The coordinator's own
   * check stays the S3-style part listing; only a validator reads a range back before completion.
   */
  async readTarget (state: UploadState, offset: number, length: number, expiresAt: number): Promise<ReadBackTarget> {
    const u = this.#upload(state)
    return { method: 'GET', url: `sim://${state.uploadId as string}@${Math.floor(offset / u.spec.chunkSize)}`, headers: { range: `bytes=${offset}-${offset + length - 1}` }, expiresAt }
  }

  /**
   * What a read of a chunk's range finds (sim/validators.ts `SimRangeReader`): the marker of the last
   * write at that index, as the digest of its bytes; null when nothing was written or the upload is gone.
   */
  readBack (url: string): { sha256: string, bytes: number } | null {
    const m = /^sim:\/\/(.+)@(\d+)$/.exec(url)
    const u = m === null ? undefined : this.#uploads.get(m[1]!)
    const part = u?.last.get(Number(m![2]))
    if (u === undefined || part === undefined) return null
    const sha = chunkSha256(u.spec.transferId, part.index)
    // A correct write carries the staged chunk's md5; anything else reads back as other bytes.
    return { sha256: part.etag.replaceAll('"', '') === chunkMd5(sha) ? sha : createHash('sha256').update(part.etag).digest('hex'), bytes: part.size }
  }

  async listParts (state: UploadState): Promise<StoredPart[]> {
    this.partListings++
    return [...this.#upload(state).parts.values()]
  }

  /** A worker's PUT landing: records the part's marker, or fails as the model says. */
  write (url: string, length: number, etag: string): void {
    const m = /^sim:\/\/(.+)#(\d+)\.(\d+)$/.exec(url)
    const u = m === null ? undefined : this.#uploads.get(m[1]!)
    if (m === null || u === undefined) throw new DestinationError('BWN_ERR_DESTINATION_REFUSED', 'no such upload')
    if (this.#rng.chance(this.model.failureRate)) { this.failedWrites++; throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', 'destination write failed') }
    const index = Number(m[2])
    const slot = Number(m[3])
    this.writes++
    const part = { index, attemptSlot: slot, etag: `"${etag}"`, size: length }
    u.parts.set(index * 3 + slot, part)
    u.last.set(index, part)
  }
}

export interface WorkerModel {
  id: string
  orchestrator: string
  site: number
  bandwidthMbps: number
  latencyMs: number
  failureRate: number
  corrupting: boolean
  stalling: boolean
  online: boolean
  moved: number
  bytes: number
}

/** One chunk on a worker's link: bytes still to go, the most its destination stream takes, its current rate, and what to do when it is through. */
interface LinkFlow { left: number, capMbps: number, rateMbps: number, done: () => void }

/**
 * A worker's link shared by its moves: every move in flight gets an equal share of the bandwidth (at most
 * its destination stream's rate, the rest going to the others), as TCP flows on one bottleneck roughly
 * do; a move starting or ending changes everyone's rate. The worker pulls and pushes each chunk at once
 * (a streamed relay), so one pass over the link is the move. 4 moves at once each take 4 times as long
 * as one alone, and end close together, as on a real link. One timer per link, for the next flow to end.
 */
export class SimLink {
  readonly #clock: VirtualClock
  readonly #mbps: number
  readonly #flows = new Set<LinkFlow>()
  #at = 0
  #timer: Timer | null = null

  constructor (clock: VirtualClock, mbps: number) { this.#clock = clock; this.#mbps = mbps }

  /** Starts `bytes` on the link now; `done` runs when they are through. Returns the bytes through so far, and a cancel. */
  add (bytes: number, capMbps: number, done: () => void): { through: () => number, cancel: () => void } {
    this.#advance()
    const f: LinkFlow = { left: bytes, capMbps, rateMbps: 0, done }
    this.#flows.add(f)
    this.#share()
    return {
      through: () => { if (this.#flows.has(f)) this.#advance(); return bytes - Math.max(0, f.left) },
      cancel: () => { if (!this.#flows.has(f)) return; this.#advance(); this.#flows.delete(f); this.#share() }
    }
  }

  /** Bytes each flow moved since the last change, at its rate. */
  #advance (): void {
    const now = this.#clock.now()
    const ms = now - this.#at
    this.#at = now
    if (ms <= 0) return
    for (const f of this.#flows) f.left -= f.rateMbps * 125 * ms // Mbit/s → bytes per ms
  }

  /** Equal shares with caps (water-filling), then one timer for the flow that ends first at those rates. */
  #share (): void {
    this.#timer?.cancel()
    this.#timer = null
    if (this.#flows.size === 0) return
    let free = this.#mbps
    let open = [...this.#flows]
    while (open.length > 0) {
      const share = free / open.length
      const capped = open.filter(f => f.capMbps <= share)
      if (capped.length === 0) { for (const f of open) f.rateMbps = share; break }
      for (const f of capped) { f.rateMbps = f.capMbps; free -= f.capMbps }
      open = open.filter(f => f.capMbps > share)
    }
    let soonest = Infinity
    for (const f of this.#flows) soonest = Math.min(soonest, f.left <= 0 ? 0 : f.left / (Math.max(1e-6, f.rateMbps) * 125))
    this.#timer = this.#clock.setTimer(Math.ceil(soonest), () => {
      this.#timer = null
      this.#advance()
      // Every flow through by now ends (the whole ms rounds up, so the soonest is always among them).
      const ended = [...this.#flows].filter(f => f.left <= 1e-6)
      for (const f of ended) { this.#flows.delete(f); f.left = 0 }
      this.#share()
      for (const f of ended) f.done()
    })
  }
}

/** Moves a chunk in virtual time over the worker's shared link; writes a wrong marker when corrupting; never answers when stalling. */
export class SimChunkMover implements ChunkMover {
  readonly #worker: WorkerModel
  readonly #clock: VirtualClock
  readonly #rng: Rng
  readonly #destinationOf: (url: string) => SimDestination | undefined
  readonly #latencyOf: (node: string) => number
  readonly #link: SimLink
  constructor (worker: WorkerModel, clock: VirtualClock, rng: Rng, destinationOf: (url: string) => SimDestination | undefined, latencyOf: (node: string) => number) {
    this.#worker = worker
    this.#clock = clock
    this.#rng = rng
    this.#destinationOf = destinationOf
    this.#latencyOf = latencyOf
    this.#link = new SimLink(clock, Math.max(1e-6, worker.bandwidthMbps))
  }

  move (offer: TaskOffer, opts: MoveOptions): Promise<{ sha256: string, etag: string | null, bytes: number, via: 'http' | 'bulk' }> {
    const w = this.#worker
    return new Promise((resolve, reject) => {
      if (opts.signal.aborted) { reject(aborted()); return }
      if (w.stalling) {
        opts.signal.addEventListener('abort', () => reject(aborted()), { once: true })
        return
      }
      const dest = this.#destinationOf(offer.target.url)
      const fails = this.#rng.chance(w.failureRate)
      let flow: { through: () => number, cancel: () => void } | null = null
      let timer: Timer | null = null
      // Bytes reach the destination as the link carries them (the worker's progress reports).
      opts.progress?.(() => flow === null ? 0 : flow.through())
      const finish = (): void => {
        opts.signal.removeEventListener('abort', onAbort)
        if (fails) { reject(new MoveError('worker_io', 'worker failed to move the chunk')); return }
        if (dest === undefined) { reject(new MoveError('destination_refused', 'unknown destination')); return }
        const md5 = chunkMd5(offer.sha256)
        const etag = opts.corrupt ? `${CORRUPT_MARK}${md5.slice(CORRUPT_MARK.length)}` : md5
        // A failed PUT is reported as the node's mover reports it: a failure reason, not the driver's code.
        try { dest.write(offer.target.url, offer.length, etag) } catch (err) {
          reject(new MoveError((err as DestinationError).code === 'BWN_ERR_DESTINATION_UNAVAILABLE' ? 'destination_unavailable' : 'destination_refused', (err as Error).message)); return
        }
        w.moved++
        w.bytes += offer.length
        resolve({ sha256: opts.corrupt ? createHash('sha256').update(etag).digest('hex') : offer.sha256, etag: `"${etag}"`, bytes: offer.length, via: 'http' })
      }
      // Pull from the coordinator (a round trip), then the chunk streams over the worker's link; its last
      // byte reaches the destination one destination latency later.
      const pullLatency = 2 * (w.latencyMs + this.#latencyOf(offer.source.coordinator))
      timer = this.#clock.setTimer(Math.ceil(pullLatency), () => {
        timer = null
        flow = this.#link.add(offer.length, dest?.model.bandwidthMbps ?? Infinity, () => {
          timer = this.#clock.setTimer(Math.ceil(dest?.model.latencyMs ?? 0), finish)
        })
      })
      const onAbort = (): void => { timer?.cancel(); flow?.cancel(); reject(aborted()) }
      opts.signal.addEventListener('abort', onAbort, { once: true })
    })
  }
}

/** Remembers which chunks are staged (by sha256) and their sizes; bytes are never allocated. */
export class SimBlobStore implements BlobStore {
  readonly #staged = new Map<string, number>()
  stage (sha256: string, length: number): void { this.#staged.set(sha256, length) }
  async put (bytes: Uint8Array, expectedSha256?: string): Promise<string> {
    const sha = expectedSha256 ?? createHash('sha256').update(bytes).digest('hex')
    this.#staged.set(sha, bytes.length)
    return sha
  }
  async get (): Promise<Uint8Array | undefined> { return undefined }
  async has (sha256: string): Promise<boolean> { return this.#staged.has(sha256) }
  async delete (sha256: string): Promise<void> { this.#staged.delete(sha256) }
  get size (): number { return this.#staged.size }
}
