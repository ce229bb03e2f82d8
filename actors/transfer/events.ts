// Per-transfer event log: what a client following GET /transfers/{id}/events sees. The coordinator
// hands every step's store operations to `TransferEventLog.record` before it writes them; the log
// compares the transfer and chunk rows the step puts with what it last saw, numbers each change
// (status, chunk received / delivered / verified / requeued) per transfer, and returns the rows of the
// `transfer_events` table to write in the same atomic batch. A sequence number is therefore durable
// exactly when the change it describes is, and a reconnecting client resumes from the store with no
// gap and no duplicate (docs/api.md#live-interface). The events are published live only after the
// batch is written (TransferEventHub).
import type { Store, StoreOp } from '../ports.ts'
import { collect, prefixRange } from '../store.ts'
import { isoFromMs } from '../domain/chain-time.ts'
import type { TransferEvent, TransferEventType } from '../../protocol/index.ts'
import { keys, TERMINAL, type ChunkRow, type ChunkState, type TransferRow, type TransferStatus } from './model.ts'

/** Events read from the store per page of a replay. */
export const REPLAY_PAGE = 500

export const eventKey = (transferId: string, seq: number): string => `${transferId}/${String(seq).padStart(10, '0')}`

interface Track {
  seq: number
  status: TransferStatus | null
  chunks: Map<number, ChunkState>
  progress: Pick<TransferEvent, 'chunks' | 'bytes' | 'error'>
}

const progressOf = (row: TransferRow): Track['progress'] => ({
  chunks: { received: row.chunks_received, delivered: row.chunks_delivered, verified: row.chunks_verified, total: row.total_chunks },
  bytes: { received: row.bytes_received, delivered: row.bytes_delivered, total: row.total_size },
  error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? '' }
})

export class TransferEventLog {
  readonly #store: Store
  readonly #tracks = new Map<string, Track>()
  readonly #beforeRead: () => Promise<void>
  /** `beforeRead`: awaited before the store is read (the coordinator's queued steps are written first). */
  constructor (store: Store, beforeRead: () => Promise<void> = async () => {}) {
    this.#store = store
    this.#beforeRead = beforeRead
  }

  /** A transfer created now, which the store cannot know yet: followed without reading it. */
  fresh (row: TransferRow): void {
    if (this.#tracks.has(row.id)) return
    this.#tracks.set(row.id, { seq: 0, status: null, chunks: new Map(), progress: progressOf(row) })
  }

  /** Transfers followed in memory now (terminal ones leave). */
  get size (): number { return this.#tracks.size }

  /**
   * The events `ops` amount to and the rows that persist them (to be written in the same batch as
   * `ops`). Reads the store only the first time a transfer is seen in this process.
   */
  async record (ops: readonly StoreOp[], nowMs: number): Promise<{ ops: StoreOp[], events: TransferEvent[] }> {
    const rows = new Map<string, TransferRow>()
    const chunks = new Map<string, ChunkRow[]>()
    for (const op of ops) {
      if (op.type !== 'put') continue
      if (op.table === 'transfers') rows.set(op.key, op.value as TransferRow)
      else if (op.table === 'chunks') {
        const c = op.value as ChunkRow
        const list = chunks.get(c.transfer_id)
        if (list === undefined) chunks.set(c.transfer_id, [c]); else list.push(c)
      }
    }
    if (rows.size === 0 && chunks.size === 0) return { ops: [], events: [] }
    const at = isoFromMs(nowMs)
    const events: TransferEvent[] = []
    for (const id of new Set([...chunks.keys(), ...rows.keys()])) {
      const row = rows.get(id)
      const track = this.#tracks.get(id) ?? await this.#load(id, row)
      if (track === null) continue
      if (row !== undefined) track.progress = progressOf(row)
      const status = row?.status ?? track.status ?? 'pending'
      const push = (type: TransferEventType, chunkIndex: number | null): void => {
        track.seq++
        events.push({ seq: track.seq, type, at, transfer_id: id, status, chunk_index: chunkIndex, chunks: { ...track.progress.chunks }, bytes: { ...track.progress.bytes }, error: track.progress.error === null ? null : { ...track.progress.error } })
      }
      for (const c of chunks.get(id) ?? []) {
        const before = track.chunks.get(c.chunk_index)
        const next = c.state
        track.chunks.set(c.chunk_index, next)
        if (before === undefined) push('chunk_received', c.chunk_index)
        const wasDelivered = before === 'delivered' || before === 'verified'
        if ((next === 'delivered' || next === 'verified') && !wasDelivered) push('chunk_delivered', c.chunk_index)
        if (next === 'verified' && before !== 'verified') push('chunk_verified', c.chunk_index)
        if ((next === 'staged' || next === 'delivering') && wasDelivered) push('chunk_requeued', c.chunk_index)
      }
      if (row !== undefined && row.status !== track.status) {
        track.status = row.status
        push('status', null)
      }
      if (track.status !== null && TERMINAL.has(track.status)) this.#tracks.delete(id)
    }
    return { ops: events.map(e => ({ type: 'put', table: 'transfer_events', key: eventKey(e.transfer_id, e.seq), value: e })), events }
  }

  /** What the store holds about a transfer first seen now; null for a chunk of a transfer the store does not know. */
  async #load (id: string, row: TransferRow | undefined): Promise<Track | null> {
    await this.#beforeRead()
    const stored = await this.#store.table<TransferRow>('transfers').get(id)
    if (stored === undefined && row === undefined) return null
    const last = await collect(this.#store.table<TransferEvent>('transfer_events'), { ...prefixRange(keys.prefix(id)), reverse: true, limit: 1 })
    const track: Track = {
      seq: last[0]?.[1].seq ?? 0,
      status: stored?.status ?? null,
      chunks: new Map(),
      progress: progressOf(stored ?? row!)
    }
    if (stored !== undefined) {
      for await (const [, c] of this.#store.table<ChunkRow>('chunks').entries(prefixRange(keys.prefix(id)))) track.chunks.set(c.chunk_index, c.state)
    }
    this.#tracks.set(id, track)
    return track
  }
}

/** Events of one transfer after `after`, in order, at most `limit`. */
export async function readTransferEvents (store: Store, transferId: string, after: number, limit = REPLAY_PAGE): Promise<TransferEvent[]> {
  const rows = await collect(store.table<TransferEvent>('transfer_events'), { gt: eventKey(transferId, after), lt: keys.prefix(transferId) + '\xff', limit })
  return rows.map(([, e]) => e)
}

/**
 * The live side: events published once durable, to the subscribers of their transfer; `read` answers
 * from the store (the API's TransferEventFeed).
 */
export class TransferEventHub {
  readonly #subs = new Map<string, Set<(e: TransferEvent) => void>>()
  readonly #store: Store
  constructor (store: Store) { this.#store = store }

  async read (transferId: string, after: number, limit = REPLAY_PAGE): Promise<TransferEvent[]> {
    return await readTransferEvents(this.#store, transferId, after, limit)
  }

  subscribe (transferId: string, fn: (e: TransferEvent) => void): () => void {
    let set = this.#subs.get(transferId)
    if (set === undefined) { set = new Set(); this.#subs.set(transferId, set) }
    set.add(fn)
    return () => {
      const s = this.#subs.get(transferId)
      if (s === undefined) return
      s.delete(fn)
      if (s.size === 0) this.#subs.delete(transferId)
    }
  }

  /** Subscribers now (all transfers). */
  get subscribers (): number {
    let n = 0
    for (const s of this.#subs.values()) n += s.size
    return n
  }

  publish (events: readonly TransferEvent[]): void {
    for (const e of events) {
      const set = this.#subs.get(e.transfer_id)
      if (set === undefined) continue
      for (const fn of [...set]) {
        try { fn(e) } catch { /* a subscriber's failure is its own; the others still get the event */ }
      }
    }
  }
}
