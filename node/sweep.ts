// The disk sweep of an orchestrator (docs/node.md#disk-sweep): at start and then every `sweepIntervalMs`,
// deletes what its data directory holds for nobody — blobs no chunk references (adapters/blob-sweep.ts)
// and node-sink partial files of uploads no live transfer names (adapters/destinations/sink-partials.ts)
// — each only once older than `sweepGraceMs`; the delivery history of transfers finished longer ago
// than `historyRetentionMs` (pruneHistory); and everything of transfers finished longer ago than
// `recordRetentionMs` (pruneRecords). One pass at a time; logged at info when it freed anything.
import type { Clock, Logger, Store, StoreOp, TableName, Timer } from '../actors/ports.ts'
import { TERMINAL, keys, type TransferRow, type ChunkRow, type OfferBatchRow } from '../actors/transfer/model.ts'
import { prefixRange } from '../actors/store.ts'
import { blobRefKey } from '../actors/transfer/blob-refs.ts'
import { sweepBlobs, pacer, type Reclaimed } from './adapters/blob-sweep.ts'
import type { FileBlobStore } from './adapters/blob-store.ts'
import { uploadIdOf, type SinkPartials } from './adapters/destinations/sink-partials.ts'

/** Between two sweeps. */
export const SWEEP_INTERVAL_MS = 3_600_000 // 1 h
/**
 * Nothing younger than this is deleted: far longer than any path from a blob's write to its chunk's
 * record (an upload waits 30 s for the coordinator, ASK_TIMEOUT_MS) or from a transfer's create to its
 * sink upload's begin.
 */
export const SWEEP_GRACE_MS = 3_600_000 // 1 h
/** Days a finished transfer keeps its delivery history (`--history-retention-days`; 0: for ever). */
export const HISTORY_RETENTION_DAYS = 30
/**
 * Days a finished transfer keeps its record, its chunks and its index keys (`--record-retention-days`;
 * 0: for ever): after it, `GET /transfers/{id}` answers 404. Without it every transfer stays on disk,
 * and the coordinator's start and every sweep read each one.
 */
export const RECORD_RETENTION_DAYS = 180
/**
 * A transfer's delivery history: its rows keyed `<transferId>/…` in these tables. Its record
 * (`transfers`), its chunks (`GET /transfers/{id}/chunks`) and its organization index key stay until
 * the record's own retention (pruneRecords).
 */
export const HISTORY_TABLES: readonly TableName[] = ['tasks', 'task_attempts', 'task_results', 'transfer_assignment_plans', 'task_offer_batches', 'overseer_interventions', 'transfer_events']
/** Deletes per store batch while pruning. */
const PRUNE_BATCH = 512
/**
 * Transfers whose history one sweep deletes at most: the first sweep after an upgrade (or after the
 * retention was shortened) spreads a large backlog over the following sweeps.
 */
export const MAX_HISTORY_PRUNED_PER_SWEEP = 2000
/** Transfers whose record one sweep deletes at most (the backlog spreads over the next sweeps). */
export const MAX_RECORDS_PRUNED_PER_SWEEP = 2000
/** Rows of other coordinators' transfers (offer batches this node routed) one sweep deletes at most. */
export const MAX_FOREIGN_ROWS_PRUNED_PER_SWEEP = 20_000

export interface SweepResult {
  /** Unreferenced blobs deleted. */
  blobs: Reclaimed
  /** Ingest temp files left by a failed ingest. */
  blobTemps: Reclaimed
  /** Node-sink partial files and records of abandoned uploads. */
  partials: Reclaimed
  /** Finished transfers whose delivery history was deleted, and the rows deleted. */
  history: { transfers: number, rows: number }
  /** Finished transfers deleted whole (record, chunks, history, index keys), and the rows deleted. */
  records: { transfers: number, rows: number }
  /** Other coordinators' transfers whose routed offer batches were deleted, and the rows deleted. */
  foreign: { transfers: number, rows: number }
  /** Entries that could not be checked or deleted (left as they are; tried again next time). */
  errors: number
  ms: number
}

export interface DiskSweepOptions {
  store: Store
  blobs: FileBlobStore
  /** The node sink's partial directory (null: no sink on this node). */
  partials: SinkPartials | null
  clock: Clock
  logger: Logger
  intervalMs?: number
  graceMs?: number
  /** A finished transfer's delivery history is deleted this long after it ended; null or absent: kept. */
  historyRetentionMs?: number | null
  /** A finished transfer is deleted whole this long after it ended; null or absent: kept. */
  recordRetentionMs?: number | null
  /** Wall-clock milliseconds for file ages (file times are wall clock whatever `clock` is; default Date.now). */
  now?: () => number
  /** Hears every finished sweep (the node's metrics). */
  onSwept?: (r: SweepResult) => void
}

/**
 * What live transfers still need: their sink uploads, and the digests their chunks name; and the
 * finished transfers whose history is due (ended before `historyBefore`, cleaned up, not pruned yet),
 * and those due to go whole (ended before `recordBefore`, cleaned up).
 */
export interface LiveTransfers { uploads: Set<string>, digests: Set<string>, historyDue: string[], recordsDue: string[] }

/** When a terminal transfer ended (ms, wall clock): its completion, else its last change. */
function endedAt (row: TransferRow): number {
  return Date.parse(row.completed_at ?? row.updated_at)
}

/**
 * Reads the transfers table: every transfer not terminal names its sink upload (by its id, and by the
 * upload state it stored once begun); every transfer not terminal or not yet cleaned up names its
 * chunks' digests.
 */
export async function liveTransfers (store: Store, stopped: () => boolean = () => false, historyBefore: number | null = null, recordBefore: number | null = null): Promise<LiveTransfers> {
  const out: LiveTransfers = { uploads: new Set(), digests: new Set(), historyDue: [], recordsDue: [] }
  const pace = pacer()
  const transfers = store.table<TransferRow>('transfers')
  const chunks = store.table<ChunkRow>('chunks')
  for await (const [, row] of transfers.entries()) {
    if (stopped()) break
    await pace()
    const live = !TERMINAL.has(row.status)
    if (live) {
      out.uploads.add(uploadIdOf(row.id))
      const id = (row.upload as { uploadId?: unknown } | null)?.uploadId
      if (typeof id === 'string') out.uploads.add(id)
    }
    if (!live && row.cleanup_pending !== true) {
      const ended = endedAt(row)
      if (recordBefore !== null && ended < recordBefore) {
        if (out.recordsDue.length < MAX_RECORDS_PRUNED_PER_SWEEP) out.recordsDue.push(row.id)
        continue
      }
      if (historyBefore !== null && row.history_pruned_at === undefined && out.historyDue.length < MAX_HISTORY_PRUNED_PER_SWEEP && endedAt(row) < historyBefore) out.historyDue.push(row.id)
      continue
    }
    for await (const [, c] of chunks.entries(prefixRange(keys.prefix(row.id)))) {
      await pace()
      out.digests.add(c.sha256)
    }
  }
  return out
}

/**
 * Deletes the delivery history (HISTORY_TABLES) of each transfer in `ids` that is still terminal,
 * cleaned up, ended before `before` and not pruned yet (its row is read again first), then marks its row
 * `history_pruned_at`. Only keys under the transfer's own `<id>/` prefix go.
 */
export async function pruneHistory (store: Store, ids: readonly string[], before: number, now: number, stopped: () => boolean = () => false): Promise<{ transfers: number, rows: number }> {
  const out = { transfers: 0, rows: 0 }
  const pace = pacer()
  const transfers = store.table<TransferRow>('transfers')
  for (const id of ids) {
    if (stopped()) break
    const row = await transfers.get(id)
    if (row === undefined || !TERMINAL.has(row.status) || row.cleanup_pending === true || row.history_pruned_at !== undefined || !(endedAt(row) < before)) continue
    for (const table of HISTORY_TABLES) out.rows += await deletePrefix(store, table, id, pace)
    // Marked only if the row is still the one read above (nothing writes a closed transfer's row today but
    // its cleanup, which this skips; should something, its change is not overwritten, and the next sweep
    // finds the history gone and marks it then).
    const current = await transfers.get(id)
    if (current === undefined || current.updated_at !== row.updated_at || current.status !== row.status || current.cleanup_pending === true) continue
    await store.batch([{ type: 'put', table: 'transfers', key: id, value: { ...current, history_pruned_at: new Date(now).toISOString() } }])
    out.transfers++
  }
  return out
}

/** Deletes every key under the transfer's `<id>/` prefix in `table`, a batch at a time; returns how many. */
async function deletePrefix (store: Store, table: TableName, id: string, pace: () => Promise<void>): Promise<number> {
  const doomed: string[] = []
  for await (const [key] of store.table(table).entries(prefixRange(keys.prefix(id)))) doomed.push(key)
  for (let i = 0; i < doomed.length; i += PRUNE_BATCH) {
    await store.batch(doomed.slice(i, i + PRUNE_BATCH).map((key): StoreOp => ({ type: 'del', table, key })))
    await pace()
  }
  return doomed.length
}

/**
 * Deletes each transfer in `ids` whole that is still terminal, cleaned up and ended before `before` (its
 * row is read again first): its delivery history, its chunks with any blob reference they left, then its
 * organization index key and its record in one batch, last, so that a sweep cut short leaves the record
 * for the next one to finish. Only keys of that transfer go: its `<id>/` prefix, and the keys its row and
 * chunks name. With `partials` (this node's sink), the sink's files of the upload the transfer delivered
 * into go too, its completed record included (the delivered file stays: it is the client's).
 */
export async function pruneRecords (store: Store, ids: readonly string[], before: number, stopped: () => boolean = () => false, partials: SinkPartials | null = null): Promise<{ transfers: number, rows: number, errors: number }> {
  const out = { transfers: 0, rows: 0, errors: 0 }
  const pace = pacer()
  const transfers = store.table<TransferRow>('transfers')
  for (const id of ids) {
    if (stopped()) break
    const row = await transfers.get(id)
    if (row === undefined || !TERMINAL.has(row.status) || row.cleanup_pending === true || !(endedAt(row) < before)) continue
    // This node's sink files of its upload first, named by the upload id the sink gives the transfer
    // (derived from its id; the upload state in its row is what a destination answered, and a remote sink
    // could name another transfer's upload there). While they cannot go (a write of them runs, a
    // file-system error), nothing of the transfer goes, and the next sweep tries again.
    if (partials !== null) {
      const removed = await partials.remove(uploadIdOf(id)).catch(() => null)
      if (removed === null) { out.errors++; continue }
    }
    for (const table of HISTORY_TABLES) out.rows += await deletePrefix(store, table, id, pace)
    // A chunk's blob reference is released by the transfer's cleanup; one left over would keep its blob for ever.
    const refs: StoreOp[] = []
    for await (const [, c] of store.table<ChunkRow>('chunks').entries(prefixRange(keys.prefix(id)))) refs.push({ type: 'del', table: 'index', key: blobRefKey(c.sha256, id, c.chunk_index) })
    for (let i = 0; i < refs.length; i += PRUNE_BATCH) { await store.batch(refs.slice(i, i + PRUNE_BATCH)); await pace() }
    out.rows += await deletePrefix(store, 'chunks', id, pace)
    await store.batch([
      { type: 'del', table: 'index', key: keys.orgTransfer(row.org_id, row.created_at, id) },
      { type: 'del', table: 'transfers', key: id }
    ])
    out.rows += 1
    out.transfers++
  }
  return out
}

/**
 * Deletes the offer batches this orchestrator routed to its workers for transfers it does not store
 * (other coordinators': actors/transfer/router.ts records them under `<transferId>/<batchId>` in
 * `task_offer_batches`): a transfer's rows go once every one of them was offered before `before`.
 * Rows of a transfer this node stores go with its history. At most MAX_FOREIGN_ROWS_PRUNED_PER_SWEEP rows.
 */
export async function pruneForeignRouted (store: Store, before: number, stopped: () => boolean = () => false): Promise<{ transfers: number, rows: number }> {
  const out = { transfers: 0, rows: 0 }
  const pace = pacer()
  const transfers = store.table<TransferRow>('transfers')
  type Group = { id: string, keys: string[], count: number, old: boolean }
  let group: Group | null = null
  const settle = async (g: Group): Promise<void> => {
    if (!g.old) return
    // Read when its rows are done: a transfer this node stores keeps them with its history.
    if (await transfers.get(g.id) !== undefined) return
    // Up to what is left of this sweep's budget: the rest of a large transfer's rows are as old, and go next time.
    const doomed = g.keys.slice(0, MAX_FOREIGN_ROWS_PRUNED_PER_SWEEP - out.rows)
    for (let i = 0; i < doomed.length; i += PRUNE_BATCH) { await store.batch(doomed.slice(i, i + PRUNE_BATCH).map((key): StoreOp => ({ type: 'del', table: 'task_offer_batches', key }))); await pace() }
    out.rows += doomed.length
    if (doomed.length === g.count) out.transfers++
  }
  for await (const [key, row] of store.table<OfferBatchRow>('task_offer_batches').entries()) {
    if (stopped() || out.rows >= MAX_FOREIGN_ROWS_PRUNED_PER_SWEEP) return out
    await pace()
    const id = key.slice(0, key.indexOf('/'))
    if (group === null || group.id !== id) {
      if (group !== null) await settle(group)
      group = { id, keys: [], count: 0, old: true }
    }
    // A group is never held whole past the budget (one coordinator can send many batches under one id).
    if (group.keys.length < MAX_FOREIGN_ROWS_PRUNED_PER_SWEEP) group.keys.push(key)
    group.count++
    // A row whose time cannot be read counts as recent: nothing is deleted on a guess.
    if (!(Date.parse(row.offered_at) < before)) group.old = false
  }
  if (group !== null && !stopped()) await settle(group)
  return out
}

export class DiskSweep {
  readonly #o: DiskSweepOptions
  #running: Promise<SweepResult> | null = null
  /** Whether a sweep may delete rows: not the one at start (a host's clock may still be wrong at boot). */
  #rowsAllowed = true
  #timer: Timer | null = null
  #stopped = false

  constructor (o: DiskSweepOptions) { this.#o = o }

  get intervalMs (): number { return this.#o.intervalMs ?? SWEEP_INTERVAL_MS }
  get graceMs (): number { return this.#o.graceMs ?? SWEEP_GRACE_MS }

  /**
   * Sweeps now (in the background), then every interval. The sweep at start reclaims files only: a row
   * is judged by its age against the wall clock, which on a host just booted may not be set yet (a clock
   * far ahead would make every finished transfer look old); rows go from the next sweep on.
   */
  start (): void {
    if (this.#timer !== null || this.#stopped) return
    this.#rowsAllowed = false
    void this.#background().finally(() => { this.#rowsAllowed = true })
    this.#timer = this.#o.clock.every(this.intervalMs, () => { void this.#background() })
  }

  /** One sweep; a call while one runs gets that one. */
  run (): Promise<SweepResult> {
    this.#running ??= this.#sweep().finally(() => { this.#running = null })
    return this.#running
  }

  /** No sweep starts after this; resolves once the one running (cut short between entries) has ended. */
  async stop (): Promise<void> {
    this.#stopped = true
    this.#timer?.cancel()
    this.#timer = null
    await this.#running?.catch(() => {})
  }

  async #background (): Promise<void> {
    if (this.#stopped) return
    try { await this.run() } catch (err) {
      this.#o.logger.warn({ event: 'disk_sweep_failed', err: (err as Error).message }, 'disk sweep failed; tried again at the next interval')
    }
  }

  async #sweep (): Promise<SweepResult> {
    const { store, blobs, partials, logger } = this.#o
    const now = this.#o.now ?? Date.now
    const stopped = (): boolean => this.#stopped
    const t0 = performance.now()
    const rows = this.#rowsAllowed
    const retention = rows ? this.#o.historyRetentionMs ?? null : null
    const historyBefore = retention === null ? null : now() - retention
    const recordRetention = rows ? this.#o.recordRetentionMs ?? null : null
    const recordBefore = recordRetention === null ? null : now() - recordRetention
    const live = await liveTransfers(store, stopped, historyBefore, recordBefore)
    // Cut short, the scan may have missed live transfers: nothing is judged against it.
    if (stopped()) return { blobs: { files: 0, bytes: 0 }, blobTemps: { files: 0, bytes: 0 }, partials: { files: 0, bytes: 0 }, history: { transfers: 0, rows: 0 }, records: { transfers: 0, rows: 0 }, foreign: { transfers: 0, rows: 0 }, errors: 0, ms: 0 }
    const b = await sweepBlobs({ store, blobs, graceMs: this.graceMs, now, keep: live.digests, stopped })
    const transfers = store.table<TransferRow>('transfers')
    const p = partials === null
      ? { partials: { files: 0, bytes: 0 }, errors: 0 }
      : await partials.sweep({
        graceMs: this.graceMs,
        now,
        stopped,
        // Read again right before an upload's files go: a transfer created since the scan above is live.
        isLive: async (id) => {
          if (live.uploads.has(id)) return true
          const row = await transfers.get(id)
          return row !== undefined && !TERMINAL.has(row.status)
        }
      })
    const history = historyBefore === null ? { transfers: 0, rows: 0 } : await pruneHistory(store, live.historyDue, historyBefore, now(), stopped)
    const pruned = recordBefore === null ? { transfers: 0, rows: 0, errors: 0 } : await pruneRecords(store, live.recordsDue, recordBefore, stopped, partials)
    const records = { transfers: pruned.transfers, rows: pruned.rows }
    // Other coordinators' transfers leave only their routed offer batches here: they go with the history's retention.
    const foreign = historyBefore === null ? { transfers: 0, rows: 0 } : await pruneForeignRouted(store, historyBefore, stopped)
    const r: SweepResult = { blobs: b.blobs, blobTemps: b.temps, partials: p.partials, history, records, foreign, errors: b.errors + p.errors + pruned.errors, ms: Math.round(performance.now() - t0) }
    const freed = r.blobs.files + r.blobTemps.files + r.partials.files
    const line = {
      event: 'disk_swept',
      blobs: r.blobs.files, blob_bytes: r.blobs.bytes,
      blob_temps: r.blobTemps.files, blob_temp_bytes: r.blobTemps.bytes,
      partials: r.partials.files, partial_bytes: r.partials.bytes,
      history_transfers: r.history.transfers, history_rows: r.history.rows,
      records_transfers: r.records.transfers, records_rows: r.records.rows,
      foreign_transfers: r.foreign.transfers, foreign_rows: r.foreign.rows,
      errors: r.errors, ms: r.ms
    }
    const bytes = r.blobs.bytes + r.blobTemps.bytes + r.partials.bytes
    if (freed > 0 || r.history.transfers > 0 || r.records.transfers > 0 || r.foreign.transfers > 0) logger.info(line, `disk sweep: ${freed} file(s), ${bytes} bytes reclaimed; delivery history of ${r.history.transfers} finished transfer(s) deleted (${r.history.rows} rows); ${r.records.transfers} finished transfer(s) deleted whole (${r.records.rows} rows); offer batches routed for ${r.foreign.transfers} other coordinators' transfer(s) deleted (${r.foreign.rows} rows)`)
    else logger.debug(line, 'disk sweep: nothing to reclaim')
    if (r.errors > 0) logger.warn({ event: 'disk_sweep_errors', errors: r.errors }, `disk sweep: ${r.errors} entr(y/ies) could not be checked or deleted; left for the next sweep`)
    this.#o.onSwept?.(r)
    return r
  }
}
