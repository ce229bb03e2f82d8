// Payload files for the multi-host lab (test/net and bench/net): random bytes written in 16 MiB pieces
// with their sha256, and the sha256 of a file as it arrived.
import { createHash, randomBytes } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'

const PIECE = 16 * 1024 * 1024

/** Writes `size` random bytes to `path`; resolves with their sha256 (hex). */
export async function writeRandomFile (path: string, size: number): Promise<string> {
  const fh = await open(path, 'w')
  const hash = createHash('sha256')
  try {
    for (let off = 0; off < size; off += PIECE) {
      const piece = randomBytes(Math.min(PIECE, size - off))
      hash.update(piece)
      await fh.write(piece, 0, piece.byteLength, off)
    }
  } finally { await fh.close() }
  return hash.digest('hex')
}

/** The sha256 (hex) of a file's bytes. */
export async function sha256File (path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const piece of createReadStream(path)) hash.update(piece as Buffer)
  return hash.digest('hex')
}
