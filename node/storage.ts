// Free space as a state, not a crash (docs/node.md#storage).
//
// - A flood stage, as Elasticsearch's and Kafka's log-dir handling have one: new transfers and chunk
//   bodies are refused with 507 BWN_ERR_STORAGE_FULL while what they need would leave less than the
//   watermark free on the data directory's filesystem. Metadata writes (status changes, cancels,
//   cleanup) are never refused: they are what frees space.
// - Reservations: a write admitted by `reserve` holds its bytes against the free space every later
//   check sees until it is written or fails, so writes admitted together cannot overshoot the watermark.
// - A ballast file holds a little room back. When a write fails anyway (another process filled the
//   disk), the ballast is released, so the node's own records (a cancel, a cleanup) still fit.
// - A store write that failed for space marks the storage as failing (what /readyz reports) until a
//   probe write succeeds. LevelDB refuses every later write after a failed compaction even once space
//   returns, so the probe reopens the database when a write fails while space is there.
import { statfs, open, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import type { Store, Table, TableName, StoreOp } from '../actors/ports.ts'
import type { Logger } from '../actors/ports.ts'
import { StorageFull, withExtensions } from '../api/errors.ts'
import { formatBytes } from './transfers/progress.ts'

/** Free space kept on the data directory's filesystem: this share of its size... */
export const FLOOD_STAGE_FRACTION = 0.05
/** ...but never more than this (a large disk need not keep 5% idle). */
export const FLOOD_STAGE_MAX_BYTES = 1024 * 1024 * 1024 // 1 GiB
/** Room held back for the node's own records when the disk fills anyway: this share of the filesystem... */
export const BALLAST_FRACTION = 0.02
/** ...at most this much. */
export const BALLAST_MAX_BYTES = 16 * 1024 * 1024 // 16 MiB
/** Between probes of a failing store. */
export const PROBE_INTERVAL_MS = 1_000 // 1 s
const BALLAST_NAME = 'storage-ballast'
/** The probe's key, outside every table (tables are sublevels, whose keys start with '!'). */
export const STORAGE_PROBE_KEY = 'storage-probe'

export interface StorageGuardOptions {
  /** The data directory. */
  dir: string
  /** This node's hotkey, named in refusals (a client may talk to several orchestrators). */
  node: string
  /** Bytes kept free; default: FLOOD_STAGE_FRACTION of the filesystem, at most FLOOD_STAGE_MAX_BYTES. */
  minFreeBytes?: number | null
  logger: Logger
  /** A small durable write that tells whether the store takes writes again. */
  probe: () => Promise<void>
  /** Closes and reopens the store (after a failed compaction LevelDB refuses writes until reopened). */
  reopen: () => Promise<void>
  /** The data directory's filesystem, free (to this user) and total bytes; default statfs(dir). Tests give a fake. */
  space?: (dir: string) => Promise<{ freeBytes: number, totalBytes: number }>
}

/** Out of space: ENOSPC / EDQUOT from the filesystem, or LevelDB's IO error saying so. */
export function isNoSpace (err: unknown): boolean {
  const e = err as { code?: string, message?: string, cause?: unknown } | null
  if (e === null || typeof e !== 'object') return false
  if (e.code === 'ENOSPC' || e.code === 'EDQUOT' || e.code === 'BWN_ERR_STORAGE_FULL') return true
  if (e.code === 'LEVEL_IO_ERROR' && /no space left|quota exceeded/i.test(String(e.message))) return true
  return e.cause !== undefined && e.cause !== err && isNoSpace(e.cause)
}

export class StorageGuard {
  readonly #opts: StorageGuardOptions
  readonly #ballast: string
  #minFree = 0
  /** Bytes promised to writes admitted by `reserve` and not yet written or failed. */
  #reserved = 0
  /** Bytes ever released (a counter): what a check's statfs may have read before those writes landed. */
  #released = 0
  #ballastBytes = 0
  #ballastHeld = false
  /** Why writes fail now, or null. */
  #failing: string | null = null
  #probing: ReturnType<typeof setTimeout> | null = null
  #closed = false
  #refilling: Promise<void> | null = null
  #releasing: Promise<void> | null = null

  constructor (opts: StorageGuardOptions) {
    this.#opts = opts
    this.#ballast = join(opts.dir, BALLAST_NAME)
  }

  async open (): Promise<void> {
    const { totalBytes } = await this.#space()
    this.#minFree = this.#opts.minFreeBytes ?? Math.min(FLOOD_STAGE_MAX_BYTES, Math.floor(totalBytes * FLOOD_STAGE_FRACTION))
    this.#ballastBytes = Math.min(BALLAST_MAX_BYTES, Math.floor(totalBytes * BALLAST_FRACTION))
    this.#ballastHeld = await stat(this.#ballast).then(s => s.size >= this.#ballastBytes, () => false)
    await this.#refillBallast()
  }

  close (): void {
    this.#closed = true
    if (this.#probing !== null) clearTimeout(this.#probing)
    this.#probing = null
  }

  get minFreeBytes (): number { return this.#minFree }

  /** Bytes held by reservations now (writes admitted and not yet written or failed). */
  get reservedBytes (): number { return this.#reserved }

  /** Why the store fails writes now (for /readyz), or null while it takes them. */
  problem (): string | null { return this.#failing }

  async #space (): Promise<{ freeBytes: number, totalBytes: number }> {
    if (this.#opts.space !== undefined) return await this.#opts.space(this.#opts.dir)
    const s = await statfs(this.#opts.dir)
    return { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize }
  }

  /**
   * Refuses (507 BWN_ERR_STORAGE_FULL) when writing `bytes` more would leave less than the watermark
   * free, counting what reservations hold as used, or while the store fails writes.
   */
  async room (bytes: number, what: string): Promise<void> {
    const released = this.#released
    this.#admit(bytes, what, await this.#space(), this.#released - released)
  }

  /**
   * As `room`, and holds `bytes` against the free space every later check sees until the returned
   * release is called (once the write is durable or has failed; a second call does nothing). The check
   * and the hold happen in one step, so writes admitted at the same time cannot overshoot the
   * watermark together. A write in progress is counted twice, by its reservation and by what of it the
   * filesystem already holds: conservative, for the few seconds it runs.
   */
  async reserve (bytes: number, what: string): Promise<() => void> {
    const released = this.#released
    this.#admit(bytes, what, await this.#space(), this.#released - released)
    this.#reserved += bytes
    let held = true
    return () => {
      if (!held) return
      held = false
      this.#reserved -= bytes
      this.#released += bytes
    }
  }

  /**
   * `releasedMeanwhile`: bytes released while the free space was being read, whose writes may have
   * landed after the reading: still counted as held, so a write that just finished is counted once.
   */
  #admit (bytes: number, what: string, space: { freeBytes: number }, releasedMeanwhile = 0): void {
    if (this.#failing === null && space.freeBytes - this.#reserved - releasedMeanwhile - bytes >= this.#minFree) {
      if (!this.#ballastHeld) void this.#refillBallast().catch(() => {})
      return
    }
    throw this.refusal(what, bytes, space.freeBytes)
  }

  refusal (what: string, bytes: number, freeBytes: number | null): Error {
    const free = freeBytes === null ? 'too little' : formatBytes(freeBytes)
    const held = this.#reserved > 0 ? `; writes in progress hold ${formatBytes(this.#reserved)} of it` : ''
    const detail = this.#failing !== null
      ? `Node ${this.#opts.node} cannot store ${what}: its data directory is out of space (${this.#failing}); retry once space is freed.`
      : `Node ${this.#opts.node} cannot store ${what}: it needs ${formatBytes(bytes)} and has ${free} free, ${formatBytes(this.#minFree)} of which it keeps free${held}.`
    return withExtensions(new StorageFull(detail), {
      node: this.#opts.node, needed_bytes: bytes, free_bytes: freeBytes, reserved_bytes: this.#reserved, min_free_bytes: this.#minFree
    })
  }

  /**
   * Reports a failed write. Returns true when it failed for space: the ballast is released, the
   * storage is marked failing and probed until a write succeeds.
   */
  failed (err: unknown): boolean {
    if (!isNoSpace(err)) return false
    if (this.#failing === null) {
      this.#failing = String((err as Error).message ?? err).slice(0, 200)
      this.#opts.logger.error({ event: 'storage_failing', err: this.#failing, dir: this.#opts.dir }, 'a store write failed for space; probing until writes succeed')
    }
    this.#releasing ??= this.#releaseBallast().finally(() => { this.#releasing = null })
    this.#scheduleProbe()
    return true
  }

  /** Resolves once a release of the ballast started by `failed` is done. */
  async ballastReleased (): Promise<void> {
    await this.#releasing
  }

  #scheduleProbe (): void {
    if (this.#probing !== null || this.#closed) return
    this.#probing = setTimeout(() => { this.#probing = null; void this.#probe() }, PROBE_INTERVAL_MS)
    this.#probing.unref?.()
  }

  async #probe (): Promise<void> {
    if (this.#failing === null || this.#closed) return
    try {
      await this.#opts.probe()
    } catch (err) {
      // With space there, a write that still fails means the store holds on to an old error: reopen it.
      const { freeBytes } = await this.#space().catch(() => ({ freeBytes: 0 }))
      if (freeBytes > this.#ballastBytes) {
        try {
          await this.#opts.reopen()
          await this.#opts.probe()
        } catch (again) {
          this.#opts.logger.warn({ event: 'storage_probe_failed', err: (again as Error).message }, 'the store still fails writes after reopening')
          this.#scheduleProbe()
          return
        }
      } else {
        this.#opts.logger.debug({ event: 'storage_probe_failed', err: (err as Error).message }, 'the store still fails writes')
        this.#scheduleProbe()
        return
      }
    }
    this.#failing = null
    this.#opts.logger.info({ event: 'storage_writable', dir: this.#opts.dir }, 'the store takes writes again')
    await this.#refillBallast()
  }

  async #releaseBallast (): Promise<void> {
    if (!this.#ballastHeld) return
    this.#ballastHeld = false
    await rm(this.#ballast, { force: true }).catch(() => {})
    this.#opts.logger.warn({ event: 'storage_ballast_released', bytes: this.#ballastBytes }, 'released the storage ballast to keep the node\'s own records writable')
  }

  /** Puts the ballast back once it fits above the watermark (one refill at a time). */
  #refillBallast (): Promise<void> {
    this.#refilling ??= this.#writeBallast().finally(() => { this.#refilling = null })
    return this.#refilling
  }

  async #writeBallast (): Promise<void> {
    if (this.#ballastHeld || this.#ballastBytes === 0 || this.#failing !== null) return
    const { freeBytes } = await this.#space()
    if (freeBytes - this.#reserved < this.#minFree + this.#ballastBytes) return
    const fh = await open(this.#ballast, 'w')
    try {
      const block = Buffer.alloc(1024 * 1024)
      for (let at = 0; at < this.#ballastBytes; at += block.byteLength) await fh.write(block, 0, Math.min(block.byteLength, this.#ballastBytes - at))
      await fh.sync()
      this.#ballastHeld = true
    } catch {
      await rm(this.#ballast, { force: true }).catch(() => {})
    } finally {
      await fh.close().catch(() => {})
    }
  }
}

/**
 * A store whose failed writes are reported to the guard. A write that failed for space is tried once
 * more after the ballast is released (a cancel or a cleanup then still lands on a full disk), and
 * answered as 507 BWN_ERR_STORAGE_FULL when it fails again.
 */
export function guardStore (inner: Store, guard: StorageGuard): Store {
  const wrap = async (write: () => Promise<void>): Promise<void> => {
    try {
      await write()
      return
    } catch (err) {
      if (!guard.failed(err)) throw err
    }
    await guard.ballastReleased()
    try {
      await write()
    } catch (err) {
      if (!guard.failed(err)) throw err
      const full = guard.refusal('a record', 0, null)
      ;(full as { cause?: unknown }).cause = err
      throw full
    }
  }
  return {
    table<V> (name: TableName): Table<V> {
      const t = inner.table<V>(name)
      return {
        get: async (key) => await t.get(key),
        put: async (key, value) => { await wrap(async () => { await t.put(key, value) }) },
        del: async (key) => { await wrap(async () => { await t.del(key) }) },
        entries: (range) => t.entries(range)
      }
    },
    // `opts` carries `sync`: what a client is told is stored must reach the disk, not only the process.
    batch: async (ops: StoreOp[], opts?: { sync?: boolean }) => { await wrap(async () => { await inner.batch(ops, opts) }) }
  }
}
