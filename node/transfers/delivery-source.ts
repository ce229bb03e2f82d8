// Where `bwnet transfer put` (and `transfer status --follow`) learns how delivery goes after
// finalize. A DeliverySource turns "follow transfer X" into a stream of records ending in a terminal
// status. The events source follows the pushed events of GET /transfers/{id}/events (the live
// interface); when the API refuses the upgrade (an older API, a proxy without WebSockets) or the stream
// keeps dropping, it falls back to the polling source: GET /transfers/{id} (250 ms, ×1.5, capped at 5 s:
// 12 requests a minute at most, within a Free key's budget).
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

/** What one status poll saw: chunks delivered so far, and when (ms). */
export interface PollSample { delivered: number, atMs: number }
export interface PollIntervals { startMs: number, maxMs: number, factor: number }

/**
 * The wait before the next status poll. It backs off (× factor, up to maxMs) as long as the transfer is
 * far from done, but never waits past the moment the last two polls' delivery rate predicts the last
 * chunk delivered; once every chunk is delivered (verification and the destination's completion follow
 * within moments) it starts again from startMs. So `put` returns close to the transfer's completion
 * instead of up to maxMs after it, at the cost of a few extra polls near the end.
 */
export function nextPollDelay (delay: number, prev: PollSample | null, cur: PollSample, total: number, iv: PollIntervals = { startMs: POLL_START_MS, maxMs: POLL_MAX_MS, factor: POLL_FACTOR }): number {
  const backoff = Math.min(iv.maxMs, delay * iv.factor)
  if (cur.delivered >= total) return prev !== null && prev.delivered < total ? iv.startMs : backoff
  if (prev === null || cur.delivered <= prev.delivered || cur.atMs <= prev.atMs) return backoff
  const perMs = (cur.delivered - prev.delivered) / (cur.atMs - prev.atMs)
  const untilDelivered = (total - cur.delivered) / perMs
  return Math.max(iv.startMs, Math.min(backoff, Math.round(untilDelivered)))
}

/** Follows a transfer by polling its record: backing off, but not past the predicted last delivery. */
export class PollingDeliverySource implements DeliverySource {
  readonly client: TransferApiClient
  readonly intervals: PollIntervals
  readonly name = 'poll'
  constructor (client: TransferApiClient, intervals: PollIntervals = { startMs: POLL_START_MS, maxMs: POLL_MAX_MS, factor: POLL_FACTOR }) {
    this.client = client
    this.intervals = intervals
  }

  async follow (start: TransferRecord, onUpdate: (record: TransferRecord) => void, opts: FollowOptions = {}): Promise<TransferRecord> {
    let record = start
    let delay = this.intervals.startMs
    let sample: PollSample = { delivered: start.chunks.delivered, atMs: Date.now() }
    while (!TERMINAL.has(record.status)) {
      if (opts.deadline !== undefined && Date.now() + delay > opts.deadline) return record
      await sleep(delay, undefined, opts.signal !== undefined ? { signal: opts.signal } : {}).catch((err: unknown) => { throw opts.signal?.aborted === true ? opts.signal.reason : err })
      const next = await this.client.get(record.id)
      const seen: PollSample = { delivered: next.chunks.delivered, atMs: Date.now() }
      delay = nextPollDelay(delay, sample, seen, next.total_chunks, this.intervals)
      sample = seen
      // A newer view only: chunks counts never go back, so a stale answer is not shown.
      if (next.updated_at !== record.updated_at || next.status !== record.status) onUpdate(next)
      record = next
    }
    return record
  }
}

/**
 * Follows a transfer's pushed events (api/client/events.ts), building each newer record from the
 * event's counts and status; the final record is read once at the end. Falls back to polling from the
 * last record it saw when the live route is refused or the stream keeps dropping.
 */
export class EventsDeliverySource implements DeliverySource {
  readonly client: TransferApiClient
  readonly key: string
  readonly fallback: DeliverySource
  readonly name = 'events'
  /** The source actually used by the last follow(): 'events', or 'poll' after a fallback. */
  used: 'events' | 'poll' | null = null
  constructor (client: TransferApiClient, key: string, fallback: DeliverySource = new PollingDeliverySource(client)) {
    this.client = client
    this.key = key
    this.fallback = fallback
  }

  async follow (start: TransferRecord, onUpdate: (record: TransferRecord) => void, opts: FollowOptions = {}): Promise<TransferRecord> {
    if (TERMINAL.has(start.status)) return start
    let record = start
    const stop = new AbortController()
    const abort = (): void => stop.abort()
    opts.signal?.addEventListener('abort', abort, { once: true })
    const timer = opts.deadline !== undefined ? setTimeout(abort, Math.max(0, opts.deadline - Date.now())) : null
    try {
      // Loaded only here: `bwnet transfer …` starts without the protocol and ws modules.
      const { followTransferEvents } = await import('../../api/client/events.ts')
      this.used = 'events'
      const r = await followTransferEvents(this.client.api, this.key, start.id, {
        signal: stop.signal,
        onEvent: (e) => {
          // The stream replays from the first event: counts behind what the caller holds are not news.
          if (e.chunks.delivered < record.chunks.delivered || e.chunks.verified < record.chunks.verified) return
          record = { ...record, status: e.status, chunks: e.chunks, bytes: e.bytes, error: e.error, updated_at: e.at }
          onUpdate(record)
        }
      })
      if (opts.signal?.aborted === true) throw opts.signal.reason
      if (r.status === null) return record // the deadline passed
      const final = await this.client.get(start.id)
      if (final.updated_at !== record.updated_at || final.status !== record.status) onUpdate(final)
      return final
    } catch {
      if (opts.signal?.aborted === true) throw opts.signal.reason
      // Refused at the upgrade, a stream that kept dropping, a socket error: polling (with its own retries) takes over.
      this.used = 'poll'
      return await this.fallback.follow(record, onUpdate, opts)
    } finally {
      if (timer !== null) clearTimeout(timer)
      opts.signal?.removeEventListener('abort', abort)
    }
  }
}

/** The source a put follows delivery with: pushed events, polling when the API offers none. */
export function deliverySourceFor (client: TransferApiClient, key: string): DeliverySource {
  return new EventsDeliverySource(client, key)
}
