// Sends a byte range of an open file as an HTTP response body through a few reused buffers.
//
// Why not a fs.ReadStream: it allocates a fresh buffer for every read, and the collector pays for each
// one. On the data endpoint and the sink's read-backs every byte a devnet moves is read from a file
// once or twice; a read buffer lives for as long as the receiving socket takes to drain it, often long
// enough to be promoted to V8's old generation, and the promoted buffers start full collections of the
// heap (bench:e2e, docs/benchmarks.md#e2e). Here a buffer is read into, handed to the socket, and
// reused only after the socket reports it written (the write callback), so the file's bytes never
// touch the collector. One read runs ahead of the write in flight: at most 2 MiB per response.
import type { ServerResponse } from 'node:http'
import type { FileHandle } from 'node:fs/promises'
import { SendCut } from '../errors.ts'
export { SendCut }

/** Size of each read, like the blob store's and the sink's writes. */
export const FILE_PIECE_BYTES = 1024 * 1024
/** Free buffers kept for the next response (16 MiB at most); more in use at once are allocated and dropped. */
const KEEP_FREE = 16
/** A response whose last write has not called back for this long is cut: a reader that stopped reading. */
export const STALL_MS = 60_000

/** Free buffers are let go once no response has used the pool for this long: an idle node keeps none (10 s). */
export const KEEP_IDLE_MS = 10_000

/**
 * Reused read buffers: at most KEEP_FREE free ones, and none once the pool has been idle for
 * `keepIdleMs` (a node that moved a file then holds no 16 MiB it no longer uses; the collector frees
 * them, docs/benchmarks.md#devnet-memory). One per thread; tests make their own.
 */
export class FileBufferPool {
  readonly keepIdleMs: number
  #free: Buffer[] = []
  #lastUse = 0
  #idleTimer: NodeJS.Timeout | null = null

  constructor (keepIdleMs = KEEP_IDLE_MS) { this.keepIdleMs = keepIdleMs }

  /** Free buffers held now. */
  get free (): number { return this.#free.length }

  take (): Buffer {
    this.#lastUse = performance.now()
    return this.#free.pop() ?? Buffer.allocUnsafeSlow(FILE_PIECE_BYTES)
  }

  give (buf: Buffer): void {
    this.#lastUse = performance.now()
    if (this.#free.length < KEEP_FREE) this.#free.push(buf)
    this.#idleTimer ??= setTimeout(() => { this.#dropIfIdle() }, this.keepIdleMs).unref()
  }

  /** Lets the free buffers go once the pool has been idle for keepIdleMs, else looks again when it will have been. */
  #dropIfIdle (): void {
    const idleFor = performance.now() - this.#lastUse
    if (idleFor >= this.keepIdleMs) { this.#free.length = 0; this.#idleTimer = null; return }
    this.#idleTimer = setTimeout(() => { this.#dropIfIdle() }, this.keepIdleMs - idleFor).unref()
  }
}

const shared = new FileBufferPool()

/** Logs a cut send: a client that left or stalled is routine (debug), a file that failed is not (warn). */
export function logSendCut (log: { debug: (o: object, m: string) => void, warn: (o: object, m: string) => void }, err: unknown, what: string): void {
  if (err instanceof SendCut && err.side === 'client') log.debug({ err }, `${what} cut short: ${err.message}`)
  else log.warn({ err }, `${what} cut short`)
}

/** Reads exactly `length` bytes at `position` into `buf` (fewer only at end of file). */
async function readFull (fh: FileHandle, buf: Buffer, length: number, position: number): Promise<number> {
  let got = 0
  while (got < length) {
    const { bytesRead } = await fh.read(buf, got, length - got, position + got)
    if (bytesRead === 0) break
    got += bytesRead
  }
  return got
}

/** A minimal view of the response, so tests can hold write callbacks back. */
export type FileResponse = Pick<ServerResponse, 'write' | 'end' | 'destroy' | 'once' | 'off' | 'destroyed'> & { req?: { method?: string } }

/**
 * Writes `length` bytes of `fh` from `start` as the body of `res` (whose status and headers, including
 * Content-Length, the caller has set) and ends it. Resolves when the last byte is handed to the socket.
 * Rejects with a SendCut, after destroying the response, when the file is shorter than promised or a
 * read fails (`file`), or the client goes away or stops reading for `stallMs` (`client`). Never closes
 * `fh`. A HEAD request gets no body and no reads. `pool`: the buffers to read into (the thread's own by default).
 */
export async function sendFileRange (res: FileResponse, fh: FileHandle, start: number, length: number, opts: { stallMs?: number, pool?: FileBufferPool } = {}): Promise<void> {
  if (res.req?.method === 'HEAD') { res.end(); return }
  const stallMs = opts.stallMs ?? STALL_MS
  const pool = opts.pool ?? shared
  const take = (): Buffer => pool.take()
  const give = (buf: Buffer): void => { pool.give(buf) }
  let cut: SendCut | null = null
  let stop: ((err: SendCut) => void) | null = null
  // Settles only when the send must stop: the response closed, or the write in flight stalled.
  const stopped = new Promise<never>((_resolve, reject) => { stop = (err) => { cut ??= err; reject(err) } })
  stopped.catch(() => {}) // observed only while a write is waiting
  const onClose = (): void => stop!(new SendCut('the client closed the connection', 'client'))
  res.once('close', onClose)
  // A buffer goes back to the pool only once its write has called back: until then the socket may still read it.
  let inFlight: { buf: Buffer, done: Promise<void> } | null = null
  const writeOut = (buf: Buffer, n: number): { buf: Buffer, done: Promise<void> } => {
    const done = new Promise<void>((resolve, reject) => {
      res.write(n === buf.length ? buf : buf.subarray(0, n), (err) => { if (err) reject(new SendCut(err.message, 'client')); else resolve() })
    })
    // The write may fail while the next read is still running: observed here, awaited (and thrown) below.
    done.catch(() => {})
    return { buf, done }
  }
  const settle = async (): Promise<void> => {
    if (inFlight === null) return
    const timer = setTimeout(() => stop!(new SendCut(`no write completed in ${stallMs} ms`, 'client')), stallMs)
    try { await Promise.race([inFlight.done, stopped]) } finally { clearTimeout(timer) }
    give(inFlight.buf)
    inFlight = null
  }
  try {
    for (let sent = 0; sent < length;) {
      const buf = take()
      const want = Math.min(buf.length, length - sent)
      let n: number
      try { n = await readFull(fh, buf, want, start + sent) } catch (err) { give(buf); throw new SendCut(`reading the file: ${(err as Error).message}`, 'file') }
      if (n < want) { give(buf); throw new SendCut(`the file ended ${length - sent - n} bytes early`, 'file') }
      await settle().catch((err: unknown) => { give(buf); throw err })
      if (cut !== null) { give(buf); throw cut }
      inFlight = writeOut(buf, n)
      sent += n
    }
    await settle()
    res.end()
  } catch (err) {
    // A write that has not called back keeps its buffer out of the pool (the collector takes it).
    if (!res.destroyed) res.destroy(err as Error)
    throw err
  } finally {
    res.off('close', onClose)
  }
}
