// What a put reads chunks from: a file (any order) or stdin (in order, once); and the name it sends.
import { open, stat, type FileHandle } from 'node:fs/promises'
import { CliError } from '../common.ts'
import { InputShort } from '../../errors.ts'
import { pathProblem, normalizeFilename } from '../../adapters/destinations/filename.ts'

/** What a put reads chunks from: a file (any order) or stdin (in order, once). */
export interface ChunkSource {
  readonly path: string | null // null: stdin
  readonly filename: string
  readonly size: number
  readonly mtimeMs: number
  read (offset: number, length: number): Promise<Buffer>
  /** A buffer `read` gave out is no longer used: the next read may fill it again. */
  release (buf: Buffer): void
  close (): Promise<void>
}

/** Chunk buffers kept for reuse: a put holds at most `--parallel` + 1 chunks (see upload), rarely more than this. */
const SPARE_CHUNK_BUFFERS = 16

/**
 * The name a put sends: NFC, a filename or a relative path (`sub/b.txt`), refused here with the API's
 * own rule before any request (docs/transfers.md#filenames).
 */
export function sendableName (name: string, hint = 'pass another with --name'): string {
  const nfc = normalizeFilename(name)
  const problem = pathProblem(nfc)
  if (problem !== null) throw new CliError(`cannot send as ${JSON.stringify(name)}: the name ${problem}; ${hint}`)
  return nfc
}

export async function fileSource (path: string, filename: string, hint?: string): Promise<ChunkSource> {
  filename = sendableName(filename, hint)
  const info = await stat(path).catch((err: NodeJS.ErrnoException) => { throw new CliError(`cannot read ${path}: ${err.code ?? err.message}`) })
  if (!info.isFile()) throw new CliError(`${path} is not a regular file`)
  if (info.size === 0) throw new CliError(`${path} is empty; there is nothing to send`)
  let fh: FileHandle | null = null
  // Chunks are mostly of one size: reusing their buffers spares a fresh 16 MiB allocation (page faults,
  // and the collections external memory sets off) per chunk.
  const spare: Buffer[] = []
  return {
    path, filename, size: info.size, mtimeMs: info.mtimeMs,
    async read (offset, length) {
      fh ??= await open(path, 'r')
      const i = spare.findIndex(b => b.length === length)
      const buf = i >= 0 ? spare.splice(i, 1)[0]! : Buffer.allocUnsafeSlow(length)
      let filled = 0
      while (filled < length) {
        const { bytesRead } = await fh.read(buf, filled, length - filled, offset + filled)
        if (bytesRead === 0) throw new CliError(`${path} is shorter than when the transfer started (read ended at ${offset + filled})`)
        filled += bytesRead
      }
      return buf
    },
    release (buf) { if (spare.length < SPARE_CHUNK_BUFFERS && !spare.includes(buf)) spare.push(buf) },
    async close () { await fh?.close(); fh = null; spare.length = 0 }
  }
}

export function stdinSource (size: number, filename: string, input: NodeJS.ReadableStream = process.stdin): ChunkSource {
  filename = sendableName(filename)
  const iterator = (input as AsyncIterable<Buffer>)[Symbol.asyncIterator]()
  let pending: Buffer = Buffer.alloc(0)
  let position = 0
  return {
    path: null, filename, size, mtimeMs: 0,
    async read (offset, length) {
      if (offset !== position) throw new CliError('stdin can only be read once, in order (a stdin upload cannot resend a chunk)')
      const parts: Buffer[] = []
      let have = 0
      while (have < length) {
        if (pending.length === 0) {
          const next = await iterator.next()
          if (next.done === true) throw new InputShort(`stdin ended after ${position + have} bytes; --size said ${size}`)
          pending = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value as string)
        }
        const take = Math.min(length - have, pending.length)
        parts.push(pending.subarray(0, take))
        pending = pending.subarray(take)
        have += take
      }
      position += length
      if (position === size) {
        // More input than --size promised is an error, not silently dropped.
        if (pending.length > 0 || (await iterator.next()).done !== true) throw new CliError(`stdin holds more than --size ${size} bytes`)
      }
      return Buffer.concat(parts, length)
    },
    release () {}, // its buffers are slices of what stdin gave
    async close () {}
  }
}
