// A minimum rate for request bodies that hold the node's resources while they stream (a chunk's temp
// file, its descriptor, its socket): every 2 minutes (the socket idle timeout) at least 16 KiB, or the
// rest of the body, must arrive: about 1 kbit/s, which a client on the poorest link, or the CLI sharing
// a low --bwlimit among many bodies, still keeps. Judged by progress, not by a total time, so a large
// chunk on a slow but steady link is never cut off; a body that trickles a byte now and then is. The
// time the server itself takes with a piece (hashing, writing, the disk) is not counted.
// Other bodies must arrive whole within a deadline, and a body answered before it was read closes its
// connection after the answer (closeStalledBodies, the app's first hook).
import type { Readable } from 'node:stream'
import type { Socket } from 'node:net'
import type { onRequestHookHandler } from 'fastify'

export const BODY_PROGRESS_BYTES = 16 * 1024
export const BODY_STALL_MS = 120_000

/** Why a body was cut off: it brought less than BODY_PROGRESS_BYTES (or the rest) in a window. */
export const BODY_STALLED = 'BODY_STALLED'
export const isBodyStalled = (err: unknown): err is Error & { code: typeof BODY_STALLED, received: number } => (err as { code?: unknown } | null)?.code === BODY_STALLED
const bodyStalled = (received: number, stallMs: number): Error =>
  Object.assign(new Error(`the body brought less than ${BODY_PROGRESS_BYTES} bytes (or its rest) in ${stallMs} ms`), { code: BODY_STALLED, received })

/** The time a pace is judged by: the wall clock, or a test's. */
export interface PaceClock {
  now (): number
  /** Runs `fn` after `ms`; the function returned cancels it. */
  after (ms: number, fn: () => void): () => void
}
const wallClock: PaceClock = {
  now: () => performance.now(), // monotonic: a step of the wall clock cuts nothing off
  after: (ms, fn) => { const t = setTimeout(fn, ms); t.unref(); return () => clearTimeout(t) }
}

/**
 * The pieces of `body`, read from `pieces` (its iterator), while `body` keeps the minimum rate for a
 * body of `total` bytes; a body that falls below it is destroyed with a BODY_STALLED error, which the
 * reader then meets.
 */
export async function * paced (body: Readable, pieces: AsyncIterable<Uint8Array>, total: number, stallMs = BODY_STALL_MS, clock: PaceClock = wallClock): AsyncGenerator<Uint8Array> {
  let got = 0
  let mark = 0
  let windowStart = clock.now()
  let serverMs = 0 // time of this window spent by the server with the pieces (not the client's)
  let withServerSince: number | null = null // a piece the server holds now
  let cancel: () => void
  // The client's time in this window: all of it but what the server spent with the pieces.
  const clientMs = (): number => clock.now() - windowStart - serverMs
  const check = (): void => {
    // A piece with the server: not judged now; the check is armed again when it comes back.
    if (withServerSince !== null) return
    const spent = clientMs()
    if (spent >= stallMs) body.destroy(bodyStalled(got, stallMs))
    else cancel = clock.after(stallMs - spent, check)
  }
  cancel = clock.after(stallMs, check)
  try {
    for await (const piece of pieces) {
      got += piece.byteLength
      if (got - mark >= Math.max(1, Math.min(BODY_PROGRESS_BYTES, total - mark))) { mark = got; windowStart = clock.now(); serverMs = 0 }
      withServerSince = clock.now()
      yield piece
      serverMs += clock.now() - withServerSince
      withServerSince = null
      cancel()
      cancel = clock.after(Math.max(0, stallMs - clientMs()), check)
    }
  } finally { cancel() }
}

/** How long, and for how many bytes, a refused body is still read (and dropped) after the answer. */
export const LINGER_MS = 2_000
export const LINGER_BYTES = 64 * 1024 * 1024

/**
 * Node closes a `Connection: close` socket as soon as the answer is written. Closing it with body bytes
 * still arriving makes the kernel answer them with a reset, and a client that is still writing then
 * fails on its next write (EPIPE, ECONNRESET) before it has read the answer waiting for it. So, as web
 * servers do, end our side after the answer and keep reading and dropping the body until the client
 * stops, for at most LINGER_MS and LINGER_BYTES, then close. Nothing is buffered.
 */
export function lingerBeforeClose (socket: Socket): void {
  socket.destroySoon = function lingeringClose (this: Socket) {
    const drop = (): void => {
      this.removeAllListeners('data') // the HTTP parser's: the rest is not a request
      let dropped = 0
      const timer = setTimeout(() => this.destroy(), LINGER_MS)
      timer.unref()
      this.on('data', (piece: Buffer) => { dropped += piece.length; if (dropped > LINGER_BYTES) this.destroy() })
      this.once('end', () => this.destroy())
      this.once('close', () => clearTimeout(timer))
      this.resume()
    }
    this.end()
    if (this.writableFinished) drop()
    else this.once('finish', drop)
  }
}

/**
 * A body other than a chunk's (JSON, text: at most 1 MiB; a create or a destination is a few hundred
 * bytes) is read in whole within this, or its connection is closed: a body sent a byte at a time never
 * trips the idle timeout, and would hold its socket for ever. Chunk bodies (application/octet-stream)
 * are judged by their pace instead (`paced`).
 */
export const BODY_DEADLINE_MS = 120_000

/**
 * The app's first onRequest hook, for requests with a body: one other than a chunk's must arrive whole
 * within `deadlineMs`, and one answered before it was read in whole (refused, unknown route, no parser)
 * closes its connection after the answer, as a chunk's refusal does (lingerBeforeClose), instead of Node
 * reading the rest of a body no one reads for as long as it trickles. A route that already said
 * `Connection: close` closes it itself.
 */
export function closeStalledBodies (deadlineMs: number): onRequestHookHandler {
  return function closeStalledBody (req, reply, done) {
    const raw = req.raw
    const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0
    if (raw.complete || !hasBody) { done(); return }
    reply.raw.once('finish', () => {
      if (raw.complete || String(reply.raw.getHeader('connection') ?? '').toLowerCase() === 'close' || raw.socket === null) return
      lingerBeforeClose(raw.socket)
      raw.socket.destroySoon()
    })
    if (/^application\/octet-stream\b/i.test(req.headers['content-type'] ?? '')) { done(); return }
    const timer = setTimeout(() => {
      if (raw.complete) return
      req.log.info({ event: 'body_deadline', deadlineMs }, 'a body not received in time: connection closed')
      raw.socket?.destroy()
    }, deadlineMs)
    timer.unref()
    const clear = (): void => { clearTimeout(timer) }
    raw.once('end', clear).once('close', clear)
    done()
  }
}
