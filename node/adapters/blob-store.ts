// Chunk bytes on the filesystem, content-addressed by sha256. A `put` resolves only after the file
// and its directory entry are fsynced, so an acknowledged chunk survives a crash.
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, open, rename, readFile, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { BlobStore } from '../../actors/ports.ts'

export class DigestMismatchError extends Error {
  readonly code = 'BWN_ERR_DIGEST_MISMATCH'
  constructor (readonly expected: string, readonly actual: string) { super(`sha256 is ${actual}, expected ${expected}`) }
}

const HEX64 = /^[0-9a-f]{64}$/

export class FileBlobStore implements BlobStore {
  readonly #dir: string
  readonly #tmp: string

  constructor (dir: string) {
    this.#dir = dir
    this.#tmp = join(dir, 'tmp')
  }

  async open (): Promise<void> {
    await rm(this.#tmp, { recursive: true, force: true }) // partial writes of a previous run
    await mkdir(this.#tmp, { recursive: true })
  }

  #path (sha: string): string {
    if (!HEX64.test(sha)) throw new TypeError(`not a sha256 digest: ${sha}`)
    return join(this.#dir, sha.slice(0, 2), sha)
  }

  async put (bytes: Uint8Array, expectedSha256?: string): Promise<string> {
    const sha = createHash('sha256').update(bytes).digest('hex')
    if (expectedSha256 !== undefined && expectedSha256 !== sha) throw new DigestMismatchError(expectedSha256, sha)
    const final = this.#path(sha)
    if (await this.has(sha)) return sha
    const shard = join(this.#dir, sha.slice(0, 2))
    await mkdir(shard, { recursive: true })
    const tmp = join(this.#tmp, `${sha}.${randomBytes(6).toString('hex')}`)
    const fh = await open(tmp, 'w')
    try {
      await fh.write(bytes)
      await fh.sync()
    } finally {
      await fh.close()
    }
    await rename(tmp, final)
    await fsyncDir(shard)
    return sha
  }

  async get (sha: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(this.#path(sha))
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
    }
  }

  async has (sha: string): Promise<boolean> {
    try { await stat(this.#path(sha)); return true } catch { return false }
  }

  async delete (sha: string): Promise<void> {
    await rm(this.#path(sha), { force: true })
  }

  pathOf (sha: string): string { return this.#path(sha) }
}

export async function fsyncDir (dir: string): Promise<void> {
  const fh = await open(dir, 'r')
  try { await fh.sync() } finally { await fh.close() }
}
