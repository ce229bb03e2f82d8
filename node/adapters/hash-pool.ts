// Incremental sha256/md5 of the bytes a node moves (four passes per byte on the devnet: ingest, the
// worker's check, the sink, the validator's read-back), computed on worker threads where the machine has
// cores to spare, so that hashing does not run on the event loop that also carries every socket and
// actor; on two cores or fewer on the event loop, which costs less CPU in all (docs/benchmarks.md#e2e,
// "Hashing off the event loop").
//
// A hash copies each piece into one of its own staging buffers (BUFFER_BYTES each, at most
// BUFFERS_PER_HASH of them) and hands full buffers to its thread by transfer; the thread hashes them and
// hands them back. So a hash never holds more than BUFFERS_PER_HASH × BUFFER_BYTES, the caller may reuse
// a piece as soon as `update` resolves, and a hash whose thread falls behind makes its caller wait
// instead of queueing memory. Threads are created on first use and let the process exit while idle.
import { Worker } from 'node:worker_threads'
import { availableParallelism } from 'node:os'
import { createHash } from 'node:crypto'

export type HashAlgorithm = 'sha256' | 'md5'

export interface StreamHash {
  /** Adds `piece`. Resolves once it is copied (the caller may then reuse it) and the next may be added; one at a time. */
  update (piece: Uint8Array): Promise<void>
  /** The hex digests, in the order the algorithms were given; the hash is closed after this. */
  digest (): Promise<string[]>
  /** Drops the hash without a digest (error paths). Does nothing once the hash is closed. */
  abort (): void
}

export const BUFFER_BYTES = 256 * 1024
export const BUFFERS_PER_HASH = 4
/** The most a running hash holds: what a stream's memory window counts for it. */
export const HASH_BYTES_PER_STREAM = BUFFER_BYTES * BUFFERS_PER_HASH
/** Finished hashes leave their buffers here for the next ones, up to this many. */
const SPARE_BUFFERS = 64

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads')
const { createHash } = require('node:crypto')
const open = new Map()
parentPort.on('message', (m) => {
  if (m.op === 'open') {
    try { open.set(m.id, m.algorithms.map((a) => createHash(a))) } catch (err) { open.set(m.id, String(err && err.message)) }
    return
  }
  if (m.op === 'data') {
    const hashes = open.get(m.id)
    if (Array.isArray(hashes)) { const view = new Uint8Array(m.buf, 0, m.len); for (const h of hashes) h.update(view) }
    parentPort.postMessage({ op: 'buf', id: m.id, buf: m.buf }, [m.buf])
    return
  }
  if (m.op === 'end') {
    const hashes = open.get(m.id)
    open.delete(m.id)
    if (Array.isArray(hashes)) parentPort.postMessage({ op: 'digest', id: m.id, hex: hashes.map((h) => h.digest('hex')), error: null })
    else parentPort.postMessage({ op: 'digest', id: m.id, hex: null, error: hashes === undefined ? 'unknown hash' : hashes })
    return
  }
  if (m.op === 'drop') open.delete(m.id)
})
`

type ToThread =
  | { op: 'open', id: number, algorithms: HashAlgorithm[] }
  | { op: 'data', id: number, buf: ArrayBuffer, len: number }
  | { op: 'end', id: number }
  | { op: 'drop', id: number }
type FromThread =
  | { op: 'buf', id: number, buf: ArrayBuffer }
  | { op: 'digest', id: number, hex: string[] | null, error: string | null }

export interface HashPoolOptions {
  /** Worker threads; 0 hashes on the calling thread (same results, no threads). */
  threads: number
}

export interface HashPoolStats { threads: number, openHashes: number, buffersInUse: number, spareBuffers: number }

/**
 * The thread count `env` asks for (BWN_HASH_THREADS), else one per core beyond two, at most four: the
 * copies and messages a thread costs pay only where a core would otherwise idle. On two cores, where the
 * event loop, the file pool and the collector already keep both busy, hashing on the event loop used
 * 1.5-7.5 CPU s less per GiB moved (docs/benchmarks.md#e2e).
 */
export function hashThreadsFrom (env: NodeJS.ProcessEnv = process.env, cores: number = availableParallelism()): number {
  const raw = env.BWN_HASH_THREADS
  if (raw === undefined || raw.trim() === '') return Math.max(0, Math.min(4, cores - 2))
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0 || n > 64) throw Object.assign(new Error(`BWN_HASH_THREADS must be an integer 0..64, not ${JSON.stringify(raw)}`), { code: 'BWN_ERR_CONFIG' })
  return n
}

class HashThread {
  readonly #pool: HashPool
  readonly worker: Worker
  readonly hashes = new Map<number, ThreadHash>()
  dead: Error | null = null

  constructor (pool: HashPool) {
    this.#pool = pool
    this.worker = new Worker(WORKER_SOURCE, { eval: true, name: 'bwnet-hash', execArgv: [] }) // plain JS: no loaders, no profiler flags
    this.worker.unref()
    this.worker.on('message', (m: FromThread) => {
      const h = this.hashes.get(m.id)
      if (m.op === 'buf') {
        if (h !== undefined) h.returned(m.buf)
        else this.#pool.spare(m.buf)
        return
      }
      if (h !== undefined) { this.forget(m.id); h.finished(m.hex, m.error) }
    })
    const die = (err: Error): void => {
      if (this.dead !== null) return
      this.dead = err
      this.#pool.lost(this)
      for (const h of [...this.hashes.values()]) h.fail(err)
      this.hashes.clear()
    }
    this.worker.on('error', (err) => { die(Object.assign(new Error(`hash thread failed: ${err.message}`), { code: 'BWN_ERR_HASH_THREAD' })) })
    this.worker.on('exit', (code) => { die(Object.assign(new Error(`hash thread exited (${code})`), { code: 'BWN_ERR_HASH_THREAD' })) })
  }

  send (m: ToThread, transfer?: ArrayBuffer[]): void { this.worker.postMessage(m, transfer) }

  adopt (id: number, h: ThreadHash): void {
    if (this.hashes.size === 0) this.worker.ref() // a pending digest keeps the process alive
    this.hashes.set(id, h)
  }

  forget (id: number): void {
    this.hashes.delete(id)
    if (this.hashes.size === 0) this.worker.unref()
  }
}

class ThreadHash implements StreamHash {
  readonly #pool: HashPool
  readonly #thread: HashThread
  readonly #id: number
  readonly #algorithms: HashAlgorithm[]
  readonly #free: ArrayBuffer[] = []
  #owned = 0
  #current: Uint8Array | null = null
  #fill = 0
  #waiting: { resolve: () => void, reject: (err: Error) => void } | null = null
  #result: { resolve: (hex: string[]) => void, reject: (err: Error) => void } | null = null
  #closed = false
  #busy = false
  #opened = false
  #failure: Error | null = null

  constructor (pool: HashPool, thread: HashThread, id: number, algorithms: HashAlgorithm[]) {
    this.#pool = pool
    this.#thread = thread
    this.#id = id
    this.#algorithms = algorithms
  }

  /** Opened at first use, so a hash made and never used holds nothing. */
  #open (): void {
    if (this.#opened) return
    this.#opened = true
    if (this.#thread.dead !== null) throw (this.#failure = this.#thread.dead)
    this.#thread.adopt(this.#id, this)
    this.#thread.send({ op: 'open', id: this.#id, algorithms: this.#algorithms })
  }

  async update (piece: Uint8Array): Promise<void> {
    if (this.#closed) throw this.#failure ?? new Error('update after digest or abort')
    if (this.#busy) throw new Error('one update at a time: await the previous one')
    this.#open()
    this.#busy = true
    try {
      let at = 0
      while (at < piece.byteLength) {
        this.#current ??= this.#take() ?? await this.#returnedBuffer()
        if (this.#closed) throw this.#failure ?? new Error('hash closed during update') // aborted while waiting
        const n = Math.min(piece.byteLength - at, BUFFER_BYTES - this.#fill)
        this.#current.set(piece.subarray(at, at + n), this.#fill)
        this.#fill += n
        at += n
        if (this.#fill === BUFFER_BYTES) this.#post()
      }
    } finally { this.#busy = false }
  }

  async digest (): Promise<string[]> {
    if (this.#closed) throw this.#failure ?? new Error('digest after digest or abort')
    if (this.#busy) throw new Error('one call at a time: await the update before the digest')
    this.#open()
    if (this.#fill > 0) this.#post()
    this.#closed = true
    return await new Promise<string[]>((resolve, reject) => {
      this.#result = { resolve, reject }
      this.#thread.send({ op: 'end', id: this.#id })
    })
  }

  abort (): void {
    if (this.#closed) return
    this.#closed = true
    this.#failure = new Error('hash aborted')
    this.#waiting?.reject(this.#failure)
    this.#waiting = null
    if (this.#opened) {
      this.#thread.forget(this.#id)
      if (this.#thread.dead === null) this.#thread.send({ op: 'drop', id: this.#id })
    }
    this.#release()
  }

  /** A buffer the thread has hashed. */
  returned (buf: ArrayBuffer): void {
    if (this.#closed && this.#result === null) { this.#owned--; this.#pool.spare(buf); return }
    this.#free.push(buf)
    const w = this.#waiting
    this.#waiting = null
    w?.resolve()
  }

  finished (hex: string[] | null, error: string | null): void {
    this.#release()
    if (hex === null) this.#result?.reject(Object.assign(new Error(`hash failed: ${error ?? 'unknown'}`), { code: 'BWN_ERR_HASH' }))
    else this.#result?.resolve(hex)
    this.#result = null
  }

  fail (err: Error): void {
    this.#failure = err
    this.#closed = true
    this.#waiting?.reject(err)
    this.#waiting = null
    this.#result?.reject(err)
    this.#result = null
    this.#free.length = 0
  }

  #post (): void {
    const buf = this.#current!.buffer as ArrayBuffer
    this.#thread.send({ op: 'data', id: this.#id, buf, len: this.#fill }, [buf])
    this.#current = null
    this.#fill = 0
  }

  /** A free buffer, or a new one while this hash owns fewer than BUFFERS_PER_HASH. */
  #take (): Uint8Array | undefined {
    const buf = this.#free.pop() ?? (this.#owned < BUFFERS_PER_HASH ? (this.#owned++, this.#pool.take()) : undefined)
    return buf === undefined ? undefined : new Uint8Array(buf)
  }

  /** Waits for the thread to hand one back. */
  async #returnedBuffer (): Promise<Uint8Array> {
    for (;;) {
      if (this.#failure !== null) throw this.#failure
      await new Promise<void>((resolve, reject) => { this.#waiting = { resolve, reject } })
      const buf = this.#take()
      if (buf !== undefined) return buf
    }
  }

  /** Hands the buffers this hash holds back to the pool; the ones still at the thread follow as they return. */
  #release (): void {
    if (this.#current !== null) this.#free.push(this.#current.buffer as ArrayBuffer)
    this.#current = null
    for (const buf of this.#free) { this.#owned--; this.#pool.spare(buf) }
    this.#free.length = 0
  }

  get buffersOwned (): number { return this.#owned }
}

class InlineHash implements StreamHash {
  readonly #hashes
  #closed = false
  constructor (algorithms: HashAlgorithm[]) { this.#hashes = algorithms.map(a => createHash(a)) }
  async update (piece: Uint8Array): Promise<void> {
    if (this.#closed) throw new Error('update after digest or abort')
    for (const h of this.#hashes) h.update(piece)
  }

  async digest (): Promise<string[]> {
    if (this.#closed) throw new Error('digest after digest or abort')
    this.#closed = true
    return this.#hashes.map(h => h.digest('hex'))
  }

  abort (): void { this.#closed = true }
}

export class HashPool {
  readonly options: HashPoolOptions
  readonly #threads: Array<HashThread | null>
  readonly #spare: ArrayBuffer[] = []
  #next = 0
  #ids = 0
  #closed = false

  constructor (options: HashPoolOptions) {
    this.options = options
    this.#threads = new Array<HashThread | null>(options.threads).fill(null)
  }

  /** A new incremental hash over `algorithms`, on the next thread in turn. */
  create (algorithms: HashAlgorithm[] = ['sha256']): StreamHash {
    if (this.#closed) throw new Error('hash pool closed')
    if (this.#threads.length === 0) return new InlineHash(algorithms)
    const slot = this.#next++ % this.#threads.length
    const thread = this.#threads[slot] ??= new HashThread(this)
    return new ThreadHash(this, thread, ++this.#ids, algorithms)
  }

  stats (): HashPoolStats {
    const live = this.#threads.filter((t): t is HashThread => t !== null)
    const hashes = live.flatMap(t => [...t.hashes.values()])
    return { threads: live.length, openHashes: hashes.length, buffersInUse: hashes.reduce((n, h) => n + h.buffersOwned, 0), spareBuffers: this.#spare.length }
  }

  /** Stops the threads; pending hashes reject. */
  async close (): Promise<void> {
    this.#closed = true
    const live = this.#threads.filter((t): t is HashThread => t !== null)
    this.#threads.fill(null)
    await Promise.all(live.map(async t => await t.worker.terminate()))
  }

  /** @internal */
  take (): ArrayBuffer { return this.#spare.pop() ?? new ArrayBuffer(BUFFER_BYTES) }
  /** @internal */
  spare (buf: ArrayBuffer): void { if (this.#spare.length < SPARE_BUFFERS && buf.byteLength === BUFFER_BYTES) this.#spare.push(buf) }
  /** @internal A thread died: the next hash on its slot gets a new one. */
  lost (thread: HashThread): void {
    const i = this.#threads.indexOf(thread)
    if (i >= 0) this.#threads[i] = null
  }
}

let shared: HashPool | null = null

/** The process's hash pool (BWN_HASH_THREADS threads, see hashThreadsFrom), created on first use. */
export function hashPool (): HashPool {
  return shared ??= new HashPool({ threads: hashThreadsFrom() })
}

/** sha256 (and md5 when asked) of a stream of pieces, on the process's pool. */
export function streamHash (algorithms: HashAlgorithm[] = ['sha256']): StreamHash {
  return hashPool().create(algorithms)
}

/**
 * The sha256 of `pieces`, hashed as they come, read until they end or pass `limit` bytes: then `bytes`
 * is over the limit, the hash is moot and nothing more is read.
 */
export async function sha256OfPieces (pieces: AsyncIterable<Uint8Array>, limit: number): Promise<{ sha256: string, bytes: number }> {
  const hash = streamHash(['sha256'])
  let bytes = 0
  try {
    for await (const piece of pieces) {
      bytes += piece.byteLength
      if (bytes > limit) return { sha256: '', bytes } // leaving the loop ends the stream
      await hash.update(piece)
    }
    const [sha256] = await hash.digest()
    return { sha256: sha256!, bytes }
  } finally { hash.abort() } // nothing once digested
}
