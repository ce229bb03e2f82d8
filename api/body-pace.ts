// A minimum rate for request bodies that hold the node's resources while they stream (a chunk's temp
// file, its descriptor, its socket): every 2 minutes (the socket idle timeout) at least 16 KiB, or the
// rest of the body, must arrive: about 1 kbit/s, which a client on the poorest link, or the CLI sharing
// a low --bwlimit among many bodies, still keeps. Judged by progress, not by a total time, so a large
// chunk on a slow but steady link is never cut off; a body that trickles a byte now and then is. The
// time the server itself takes with a piece (hashing, writing, the disk) is not counted.
import type { Readable } from 'node:stream'

export const BODY_PROGRESS_BYTES = 16 * 1024
export const BODY_STALL_MS = 120_000

/** Why a body was cut off: it brought less than BODY_PROGRESS_BYTES (or the rest) in a window. */
export const BODY_STALLED = 'BODY_STALLED'
export const isBodyStalled = (err: unknown): err is Error & { code: typeof BODY_STALLED, received: number } => (err as { code?: unknown } | null)?.code === BODY_STALLED
const bodyStalled = (received: number, stallMs: number): Error =>
  Object.assign(new Error(`the body brought less than ${BODY_PROGRESS_BYTES} bytes (or its rest) in ${stallMs} ms`), { code: BODY_STALLED, received })

/**
 * The pieces of `body`, read from `pieces` (its iterator), while `body` keeps the minimum rate for a
 * body of `total` bytes; a body that falls below it is destroyed with a BODY_STALLED error, which the
 * reader then meets.
 */
export async function * paced (body: Readable, pieces: AsyncIterable<Uint8Array>, total: number, stallMs = BODY_STALL_MS): AsyncGenerator<Uint8Array> {
  let got = 0
  let mark = 0
  let windowStart = Date.now()
  let serverMs = 0 // time of this window spent by the server with the pieces (not the client's)
  let withServerSince: number | null = null // a piece the server holds now
  let timer: NodeJS.Timeout
  const check = (): void => {
    const now = Date.now()
    const clientMs = now - windowStart - serverMs - (withServerSince !== null ? now - withServerSince : 0)
    if (clientMs >= stallMs) body.destroy(bodyStalled(got, stallMs))
    else { timer = setTimeout(check, stallMs - clientMs); timer.unref() }
  }
  timer = setTimeout(check, stallMs)
  timer.unref()
  try {
    for await (const piece of pieces) {
      got += piece.byteLength
      if (got - mark >= Math.max(1, Math.min(BODY_PROGRESS_BYTES, total - mark))) { mark = got; windowStart = Date.now(); serverMs = 0 }
      withServerSince = Date.now()
      yield piece
      serverMs += Date.now() - withServerSince
      withServerSince = null
    }
  } finally { clearTimeout(timer!) }
}
