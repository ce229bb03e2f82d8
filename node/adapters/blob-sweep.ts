// Reclaims staged chunk bytes nothing references any more (docs/node.md#disk-sweep).
//
// A blob is normally deleted with its last reference (actors/transfer/blob-refs.ts). One outlives every
// reference when an upload made it durable but its chunk was never recorded: the coordinator did not
// answer in time (the upload then leaves the blob rather than delete bytes a late record may still
// name), or the process died between the rename and the coordinator's batch. A temp file outlives its
// ingest only on a failure path that skipped its discard (the start of the next run empties `tmp/`).
//
// The sweep walks the shard directories with async directory reads, a batch at a time, and deletes a
// blob only when, inside its digest's lock (the lock a commit renames under), it has no `index`
// reference, no pin and a file older than the grace period: an ingest of the same bytes either made its
// copy before (pinned until its chunk is recorded, and fresh) or makes it after the delete.
import { lstat, opendir, stat, rm } from 'node:fs/promises'
import type { Dir, Dirent, Stats } from 'node:fs'
import { join } from 'node:path'
import type { Store } from '../../actors/ports.ts'
import { reclaimOrphanBlob } from '../../actors/transfer/blob-refs.ts'
import type { FileBlobStore } from './blob-store.ts'

/** Files a sweep deleted and the bytes on disk they held. */
export interface Reclaimed { files: number, bytes: number }

/** Directory entries handled between two turns of the event loop. */
export const SWEEP_BATCH = 256

const HEX64 = /^[0-9a-f]{64}$/
const SHARD = /^[0-9a-f]{2}$/

export interface BlobSweepOptions {
  store: Store
  blobs: FileBlobStore
  /** A file younger than this (by its mtime) is never deleted. */
  graceMs: number
  /** Wall-clock milliseconds, as file times are (default Date.now). */
  now?: () => number
  /**
   * Digests a chunk row of a live transfer names: kept whatever the `index` says (belt and braces: the
   * coordinator writes a chunk and its reference in one batch).
   */
  keep?: ReadonlySet<string>
  /** Checked between entries: true ends the sweep where it is (the node is stopping). */
  stopped?: () => boolean
}

export interface BlobSweepResult { blobs: Reclaimed, temps: Reclaimed, errors: number }

/** One pass over the blob store; see the header. Never throws for one entry: it is counted in `errors` and left. */
export async function sweepBlobs (o: BlobSweepOptions): Promise<BlobSweepResult> {
  const now = o.now ?? Date.now
  const out: BlobSweepResult = { blobs: { files: 0, bytes: 0 }, temps: { files: 0, bytes: 0 }, errors: 0 }
  const pace = pacer()
  const old = (st: Stats | null): st is Stats => st !== null && st.isFile() && st.mtimeMs <= now() - o.graceMs
  for await (const shard of entries(o.blobs.dir)) {
    if (!shard.isDirectory() || !SHARD.test(shard.name)) continue
    const shardDir = join(o.blobs.dir, shard.name)
    for await (const e of entries(shardDir)) {
      if (o.stopped?.() === true) return out
      await pace()
      if (!e.isFile() || !HEX64.test(e.name) || !e.name.startsWith(shard.name) || o.keep?.has(e.name) === true) continue
      const path = join(shardDir, e.name)
      try {
        if (!old(await statOrNull(path))) continue // fresh: not worth the lock and the index read
        // Again inside the lock: an ingest of the same bytes may have renamed a new copy over it since.
        const bytes = await reclaimOrphanBlob(o.store, o.blobs, e.name, async () => {
          const st = await statOrNull(path)
          return old(st) ? onDisk(st) : null
        })
        if (bytes !== null) { out.blobs.files++; out.blobs.bytes += bytes }
      } catch { out.errors++ }
    }
  }
  for await (const e of entries(o.blobs.tmpDir)) {
    if (o.stopped?.() === true) return out
    await pace()
    if (!e.isFile() || o.blobs.staging(e.name)) continue // a body staged now, whatever its file's time says
    const path = join(o.blobs.tmpDir, e.name)
    try {
      const st = await statOrNull(path)
      if (!old(st)) continue // an ingest still writing touches its file at every piece
      await rm(path, { force: true })
      out.temps.files++; out.temps.bytes += onDisk(st)
    } catch { out.errors++ }
  }
  return out
}

/**
 * A directory's entries, read a few at a time: none when it does not exist, or is not a directory of its
 * own (a symbolic link put in its place would lead the sweep's deletes elsewhere).
 */
export async function * entries (dir: string): AsyncGenerator<Dirent> {
  let d: Dir
  try {
    if (!(await lstat(dir)).isDirectory()) return
    d = await opendir(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    throw err
  }
  yield * d // closed when the loop ends, breaks or throws
}

export async function statOrNull (path: string): Promise<Stats | null> {
  try { return await stat(path) } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
}

/** Bytes a file frees when deleted: its blocks on disk (a sparse file holds fewer than its size), none while another link holds it. */
export const onDisk = (st: Stats): number => st.nlink > 1 ? 0 : typeof st.blocks === 'number' ? st.blocks * 512 : st.size

/** Resolves at once, except every SWEEP_BATCH calls, when it waits for the next turn of the event loop. */
export function pacer (): () => Promise<void> {
  let n = 0
  return async () => {
    if (++n % SWEEP_BATCH !== 0) return
    await new Promise<void>(resolve => setImmediate(resolve))
  }
}
