// Sends a byte range of an open file as an HTTP response body through a few reused buffers.
//
// Why not a fs.ReadStream: it allocates a fresh buffer for every read, and the collector pays for each
// one. On the data endpoint and the sink's read-backs every byte a devnet moves is read from a file
// once or twice; a read buffer lives for as long as the receiving socket takes to drain it, often long
// enough to be promoted to V8's old generation, and each 64 MiB of those starts a full marking of the
// heap (bench:e2e, docs/benchmarks.md#e2e). Here a buffer is read into, handed to the socket, and
// reused only after the socket reports it written (the write callback), so the file's bytes never
// touch the collector. One read runs ahead of the write in flight.
import type { ServerResponse } from 'node:http'
import type { FileHandle } from 'node:fs/promises'

/** Size of each read, like the blob store's and the sink's writes. */
export const FILE_PIECE_BYTES = 1024 * 1024
/** Free buffers kept for the next response; more in use at once are allocated and dropped. */
const KEEP_FREE = 16
const free: Buffer[] = []

const take = (): Buffer => free.pop() ?? Buffer.allocUnsafeSlow(FILE_PIECE_BYTES)
const give = (buf: Buffer): void => { if (free.length < KEEP_FREE) free.push(buf) }

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

/**
 * Writes `length` bytes of `fh` from `start` as the body of `res` (whose status and headers, including
 * Content-Length, the caller has set) and ends it. Resolves when the last byte is handed to the socket;
 * rejects (after destroying the response) when the file is shorter than promised, a read fails, or the
 * client goes away. Never closes `fh`.
 */
export async function sendFileRange (res: ServerResponse, fh: FileHandle, start: number, length: number): Promise<void> {
  let closed = false
  let onClose: (() => void) | null = null
  const gone = new Promise<never>((_resolve, reject) => {
    onClose = () => { closed = true; reject(new Error('the client closed the connection')) }
    res.once('close', onClose)
  })
  gone.catch(() => {}) // observed only while a write is waiting
  // A buffer goes back to the pool only once its write has called back: until then the socket may still read it.
  let inFlight: { buf: Buffer, done: Promise<void> } | null = null
  const writeOut = (buf: Buffer, n: number): { buf: Buffer, done: Promise<void> } => {
    const done = new Promise<void>((resolve, reject) => {
      res.write(n === buf.length ? buf : buf.subarray(0, n), (err) => { if (err) reject(err); else resolve() })
    })
    // The write may fail while the next read is still running: observed here, awaited (and thrown) below.
    done.catch(() => {})
    return { buf, done }
  }
  try {
    for (let sent = 0; sent < length;) {
      const buf = take()
      const want = Math.min(buf.length, length - sent)
      let n: number
      try { n = await readFull(fh, buf, want, start + sent) } catch (err) { give(buf); throw err }
      if (n < want) { give(buf); throw new Error(`the file ended ${length - sent - n} bytes early`) }
      if (inFlight !== null) {
        await Promise.race([inFlight.done, gone])
        give(inFlight.buf)
        inFlight = null
      }
      if (closed) { give(buf); throw new Error('the client closed the connection') }
      inFlight = writeOut(buf, n)
      sent += n
    }
    if (inFlight !== null) {
      await Promise.race([inFlight.done, gone])
      give(inFlight.buf)
      inFlight = null
    }
    res.end()
  } catch (err) {
    // A write that has not called back keeps its buffer out of the pool (the collector takes it).
    if (!res.destroyed) res.destroy(err as Error)
    throw err
  } finally {
    res.off('close', onClose!)
  }
}
