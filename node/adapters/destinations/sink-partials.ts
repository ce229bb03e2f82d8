// The partial files of a node sink (node-sink.ts) and the sweep that reclaims abandoned ones
// (docs/node.md#disk-sweep).
//
// An upload in progress is `<sink>/.partial/<uploadId>` (preallocated, sparse, to the file's size) with
// its record `<uploadId>.json` (written through `<uploadId>.json.tmp`). complete() links the file into
// its organization's namespace and unlinks the partial; abort() deletes both. An abort that failed (the
// coordinator gives up after logging it), a process that died mid-upload or mid-abort, leaves them for
// ever: the sweep deletes the partial file (and its record, unless the record says completed: that one
// names the delivered file for read-back) of an upload no live transfer names, once every one of its
// files is older than the grace period. A node's sink takes uploads signed by that node's own
// coordinator only (node/roles/index.ts), so that node's transfers table knows every upload it holds:
// a sink that trusted other coordinators could not be swept this way.
import { createHash } from 'node:crypto'
import { readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { entries, pacer, statOrNull, onDisk, type Reclaimed } from '../blob-sweep.ts'

/** Under the sink directory: the uploads in progress. */
export const PARTIAL_DIR = '.partial'
export const UPLOAD_ID_PATTERN = '^[A-Za-z0-9_-]{1,128}$'
const UPLOAD_ID = new RegExp(UPLOAD_ID_PATTERN)

/** The sink upload a transfer delivers into: its id, or, for an id the sink's routes would refuse, its sha256. */
export function uploadIdOf (transferId: string): string {
  return UPLOAD_ID.test(transferId) ? transferId : createHash('sha256').update(transferId).digest('hex')
}

/** An upload's files in the partial directory. */
export function partialFiles (partialDir: string, id: string): { data: string, meta: string, metaTmp: string } {
  return { data: join(partialDir, id), meta: join(partialDir, `${id}.json`), metaTmp: join(partialDir, `${id}.json.tmp`) }
}

/** What a mounted sink lends the sweep: discarding one upload in step with its own routes. */
export interface PartialGuard {
  /**
   * In the upload's turn (after any begin, complete or abort of it under way), runs `stale` and, when it
   * still answers true and no chunk write or complete of the upload is running, forgets the upload and
   * removes its files (`removePartial`). Null when it is kept.
   */
  discard (id: string, stale: () => Promise<boolean>): Promise<Reclaimed | null>
  /**
   * In the upload's turn, forgets it and removes all its files, a completed record included (its
   * transfer is deleted whole: node/sweep.ts pruneRecords); the delivered file stays. Null while a chunk
   * write or complete of it runs.
   */
  remove (id: string): Promise<Reclaimed | null>
}

export interface PartialSweepOptions {
  /** Whether a live (non-terminal) transfer names the upload; asked again right before its files go. */
  isLive (uploadId: string): boolean | Promise<boolean>
  /** An upload any of whose files is younger than this (by mtime) is kept. */
  graceMs: number
  /** Wall-clock milliseconds, as file times are (default Date.now). */
  now?: () => number
  stopped?: () => boolean
}

/** A node sink's partial directory, as the disk sweep sees it. */
export class SinkPartials {
  /** The sink directory (`<data>/sink`). */
  readonly dir: string
  readonly partialDir: string
  #guard: PartialGuard | null = null

  constructor (sinkDir: string) {
    this.dir = sinkDir
    this.partialDir = join(sinkDir, PARTIAL_DIR)
  }

  /** Called by the sink's routes once mounted: from then on uploads are discarded through them. */
  attach (guard: PartialGuard): void { this.#guard = guard }

  /**
   * Removes every file of upload `id`, its completed record included (the delivered file stays), through
   * the sink when one is mounted here. Null when the sink keeps it for now (a write of it is running).
   */
  async remove (id: string): Promise<Reclaimed | null> {
    if (!UPLOAD_ID.test(id)) return { files: 0, bytes: 0 }
    return this.#guard !== null ? await this.#guard.remove(id) : await removePartial(this.partialDir, id, false)
  }

  /**
   * One pass over the partial directory. Each upload is visited at its partial file (or, without one, at
   * a stray temp record); a record alone is left (almost always a completed upload's, kept on purpose).
   */
  async sweep (o: PartialSweepOptions): Promise<{ partials: Reclaimed, errors: number }> {
    const now = o.now ?? Date.now
    const out = { partials: { files: 0, bytes: 0 }, errors: 0 }
    const pace = pacer()
    for await (const e of entries(this.partialDir)) {
      if (o.stopped?.() === true) break
      await pace()
      const dot = e.name.indexOf('.')
      const id = dot < 0 ? e.name : e.name.slice(0, dot)
      const suffix = dot < 0 ? '' : e.name.slice(dot)
      if (!e.isFile() || !UPLOAD_ID.test(id) || (suffix !== '' && suffix !== '.json.tmp')) continue
      try {
        const files = partialFiles(this.partialDir, id)
        if (suffix !== '' && await statOrNull(files.data) !== null) continue // visited at its partial file
        if (await o.isLive(id)) continue
        const stale = async (): Promise<boolean> => {
          const newest = await newestMtime(files)
          return newest !== null && newest <= now() - o.graceMs && !(await o.isLive(id))
        }
        if (!(await stale())) continue
        const got = this.#guard !== null
          ? await this.#guard.discard(id, stale)
          : await (async () => {
            // No sink mounted in this process: nothing else touches its files here.
            if (!(await stale())) return null
            return await removePartial(this.partialDir, id, (await readRecord(files.meta))?.status === 'completed')
          })()
        if (got !== null) { out.partials.files += got.files; out.partials.bytes += got.bytes }
      } catch { out.errors++ }
    }
    return out
  }
}

/**
 * Removes an upload's partial file and temp record, and its record unless `keepRecord`. Bytes are those
 * the files held on disk (a partial file is sparse; one still linked as a delivered file frees none).
 */
export async function removePartial (partialDir: string, id: string, keepRecord: boolean): Promise<Reclaimed> {
  const files = partialFiles(partialDir, id)
  const out = { files: 0, bytes: 0 }
  for (const path of keepRecord ? [files.data, files.metaTmp] : [files.data, files.metaTmp, files.meta]) {
    const st = await statOrNull(path)
    if (st === null) continue
    await rm(path, { force: true })
    out.files++
    out.bytes += onDisk(st)
  }
  return out
}

async function newestMtime (files: { data: string, meta: string, metaTmp: string }): Promise<number | null> {
  let newest: number | null = null
  for (const path of [files.data, files.meta, files.metaTmp]) {
    const st = await statOrNull(path)
    if (st !== null) newest = Math.max(newest ?? 0, st.mtimeMs)
  }
  return newest
}

/**
 * An upload's record, or undefined when it is missing or not JSON (a record cut short). Any other
 * failure to read it (EMFILE, EIO) throws: the sweep then keeps the files, as a completed upload's
 * record must never go for a passing error.
 */
async function readRecord (path: string): Promise<{ status?: unknown } | undefined> {
  let text: string
  try { text = await readFile(path, 'utf8') } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  try { return JSON.parse(text) as { status?: unknown } } catch { return undefined }
}
