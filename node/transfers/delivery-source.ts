// Where `bwnet transfer put` (and `transfer status --follow`) learns how delivery goes after
// finalize. A DeliverySource turns "follow transfer X" into a stream of records ending in a terminal
// status. Today the only source polls GET /transfers/{id} (250 ms, ×1.5, capped at 5 s: 12 requests a
// minute at most, within a Free key's budget); an event-pushing source (a WebSocket route) implements
// the same interface and `deliverySourceFor` picks it when the API offers one.
import { setTimeout as sleep } from 'node:timers/promises'
import type { TransferRecord } from '../../api/transfers.ts'
import type { TransferApiClient } from './api-client.ts'

export const POLL_START_MS = 250 // first status poll after finalize
export const POLL_MAX_MS = 5_000 // status poll interval cap
const POLL_FACTOR = 1.5

export type Status = TransferRecord['status']
export const TERMINAL: ReadonlySet<Status> = new Set(['completed', 'failed', 'cancelled'])

export interface FollowOptions {
  signal?: AbortSignal
  /** Absolute time (ms since the epoch) to stop waiting; follow() then resolves with the last record. */
  deadline?: number
}

export interface DeliverySource {
  readonly name: string
  /**
   * Calls `onUpdate` with each newer view of the transfer and resolves with the last one: terminal,
   * or the latest when the deadline passed. Rejects with the signal's reason when it aborts.
   */
  follow (start: TransferRecord, onUpdate: (record: TransferRecord) => void, opts?: FollowOptions): Promise<TransferRecord>
}

/** Follows a transfer by polling its record with a growing interval. */
export class PollingDeliverySource implements DeliverySource {
  readonly name = 'poll'
  constructor (readonly client: TransferApiClient, readonly intervals = { startMs: POLL_START_MS, maxMs: POLL_MAX_MS, factor: POLL_FACTOR }) {}

  async follow (start: TransferRecord, onUpdate: (record: TransferRecord) => void, opts: FollowOptions = {}): Promise<TransferRecord> {
    let record = start
    let delay = this.intervals.startMs
    while (!TERMINAL.has(record.status)) {
      if (opts.deadline !== undefined && Date.now() + delay > opts.deadline) return record
      await sleep(delay, undefined, opts.signal !== undefined ? { signal: opts.signal } : {}).catch((err: unknown) => { throw opts.signal?.aborted === true ? opts.signal.reason : err })
      delay = Math.min(this.intervals.maxMs, delay * this.intervals.factor)
      const next = await this.client.get(record.id)
      // A newer view only: chunks counts never go back, so a stale answer is not shown.
      if (next.updated_at !== record.updated_at || next.status !== record.status) onUpdate(next)
      record = next
    }
    return record
  }
}

/** The source a put follows delivery with: the polling one until the API pushes events. */
export function deliverySourceFor (client: TransferApiClient): DeliverySource {
  return new PollingDeliverySource(client)
}
