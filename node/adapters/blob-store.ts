// Chunk bytes on the filesystem, content-addressed by sha256.
//
// `ingest` streams a body into a temp file while hashing it in the same pass (sha256, and md5 when
// asked), refusing it the moment it grows past the expected length; nothing is held whole in
// memory. `commit` fsyncs the temp file, renames it over the blob's name and fsyncs the directory,
// so an acknowledged chunk survives a crash. A commit always replaces the file by name: an existing
// file is never trusted for its name alone, so a blob damaged on disk is healed by the next upload
// of the same content. docs/transfers.md#staging.
import { randomBytes } from 'node:crypto'
import { mkdir, open, rename, readFile, rm, stat, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import type { BlobStore } from '../../actors/ports.ts'
import { withBlobLock } from '../../actors/transfer/blob-refs.ts'
import { DigestMismatchError, BodyTooLongError, BodyTooShortError } from '../errors.ts'
import { streamHash } from './hash-pool.ts'
import { PieceWriter } from './piece-writer.ts'
export { DigestMismatchError, BodyTooLongError, BodyTooShortError }

const HEX64 = /^[0-9a-f]{64}$/
/** Most bytes queued behind the write in flight before the body's reader waits (PieceWriter). */
export const WRITE_BATCH_BYTES = 1024 * 1024

export interface IngestOptions {
  /** Exact length the body must have. */
  length: number
  /** Also compute the md5 (for destinations whose parts are checked by ETag). */
  md5?: boolean
  /** sha256 the body must hash to (hex, lower case). */
  sha256?: string | null
}

/** A body written to a temp file and hashed; not yet durable, not yet under its name. */
export interface StagedBody {
  readonly sha256: string
  readonly md5: string | null
  readonly bytes: number
  /**
   * Makes it durable under its name: fsyncs the file, then, alone on its digest, renames it over
   * the blob (replacing any file of that name), fsyncs the directory and runs `linked` (which pins
   * the blob, so its existence and the pin are one step for every releaser; blob-refs.ts).
   */
  commit (linked?: () => Promise<void>): Promise<void>
  /** Drops the temp file. */
  discard (): Promise<void>
}

export class FileBlobStore implements BlobStore {
  readonly #dir: string
  readonly #tmp: string
  /** Temp files of bodies being staged now (names in #tmp). */
  readonly #staging = new Set<string>()
  /** Each shard directory made, once its entry in the blobs directory is on disk (one fsync per shard). */
  readonly #shards = new Map<string, Promise<void>>()

  constructor (dir: string) {
    this.#dir = dir
    this.#tmp = join(dir, 'tmp')
  }

  async open (): Promise<void> {
    await rm(this.#tmp, { recursive: true, force: true }) // partial writes of a previous run
    await mkdir(this.#tmp, { recursive: true })
  }

  /**
   * The shard directory, made if needed, with its own entry durable: the blobs directory is fsynced
   * once it is made, and every blob of that shard (however many commit at once) waits for that sync.
   */
  async #shardReady (shard: string): Promise<void> {
    let ready = this.#shards.get(shard)
    if (ready === undefined) {
      ready = mkdir(shard, { recursive: true }).then(async (made) => { if (made !== undefined) await fsyncDir(this.#dir) })
      this.#shards.set(shard, ready)
      ready.catch(() => { if (this.#shards.get(shard) === ready) this.#shards.delete(shard) })
    }
    await ready
  }

  #path (sha: string): string {
    if (!HEX64.test(sha)) throw new TypeError(`not a sha256 digest: ${sha}`)
    return join(this.#dir, sha.slice(0, 2), sha)
  }

  /** Streams `source` to a temp file, hashing every piece as it passes; see StagedBody. */
  async ingest (source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, opts: IngestOptions): Promise<StagedBody> {
    const hash = streamHash(opts.md5 === true ? ['sha256', 'md5'] : ['sha256'])
    const name = randomBytes(12).toString('hex')
    const tmp = join(this.#tmp, name)
    this.#staging.add(name)
    let fh: FileHandle
    try { fh = await open(tmp, 'w') } catch (err) { this.#staging.delete(name); throw err }
    let closed = false
    const close = async (): Promise<void> => { if (!closed) { closed = true; await fh.close() } }
    const done = (): void => { this.#staging.delete(name) }
    try {
      const total = await writeAll(fh, source, opts.length, async (piece) => await hash.update(piece))
      if (total < opts.length) throw new BodyTooShortError(opts.length, total)
      const [digest, md5hex = null] = await hash.digest() as [string, string?]
      if (opts.sha256 != null && opts.sha256 !== digest) throw new DigestMismatchError(opts.sha256, digest)
      return {
        sha256: digest,
        md5: md5hex,
        bytes: total,
        commit: async (linked) => {
          try {
            await fh.sync()
            await close()
            await withBlobLock(this, digest, async () => {
              const shard = join(this.#dir, digest.slice(0, 2))
              await this.#shardReady(shard)
              await rename(tmp, this.#path(digest))
              await fsyncDir(shard)
              await linked?.()
            })
          } catch (err) {
            await close().catch(() => {})
            await rm(tmp, { force: true })
            throw err
          } finally { done() }
        },
        discard: async () => { try { await close().catch(() => {}); await rm(tmp, { force: true }) } finally { done() } }
      }
    } catch (err) {
      hash.abort()
      try {
        await close().catch(() => {})
        await rm(tmp, { force: true })
      } finally { done() }
      throw err
    }
  }

  /**
   * Whether a temp file (its name in tmpDir) belongs to a body this process is staging now (written, or
   * written and not yet committed or discarded): the disk sweep never takes one, however old its time.
   */
  staging (name: string): boolean { return this.#staging.has(name) }

  async put (bytes: Uint8Array, expectedSha256?: string): Promise<string> {
    const staged = await this.ingest([bytes], { length: bytes.byteLength, sha256: expectedSha256 ?? null })
    await staged.commit()
    return staged.sha256
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

  /** The blobs directory: one shard directory per first two hex digits, and `tmp/` (blob-sweep.ts walks it). */
  get dir (): string { return this.#dir }
  /** Where ingests write before their commit. */
  get tmpDir (): string { return this.#tmp }
}

/**
 * Copies `source` into `fh` as it arrives (PieceWriter: one write in flight, at most WRITE_BATCH_BYTES
 * queued behind it). `seen` sees every piece before it is queued; a piece that takes the total past
 * `limit` throws BodyTooLongError before it is hashed or written. Returns the bytes written.
 */
async function writeAll (fh: FileHandle, source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, limit: number, seen: (piece: Uint8Array) => Promise<void>): Promise<number> {
  const out = new PieceWriter(fh, null, WRITE_BATCH_BYTES)
  let total = 0
  try {
    for await (const piece of source) {
      if (total + piece.byteLength > limit) throw new BodyTooLongError(limit)
      total += piece.byteLength
      await seen(piece)
      await out.write(piece)
    }
    await out.flush()
  } finally {
    await out.settle()
  }
  return total
}

export async function fsyncDir (dir: string): Promise<void> {
  const fh = await open(dir, 'r')
  try { await fh.sync() } finally { await fh.close() }
}

/** A blob store that can take a streamed body (what the chunk ingest route needs). */
export interface IngestingBlobStore extends BlobStore {
  ingest (source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, opts: IngestOptions): Promise<StagedBody>
}
