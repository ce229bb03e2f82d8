// --bwlimit: one token bucket shared by every chunk body in flight (all files of a put), paced in
// slices (api-client BODY_SLICE_BYTES), so the limit holds below chunk size and across parallel
// uploads. Rates are bytes per second with binary suffixes, as rclone's --bwlimit: 512K, 10M, 1.5G.
import { setTimeout as sleep } from 'node:timers/promises'
import { performance } from 'node:perf_hooks'

const UNITS: Record<string, number> = { '': 1, B: 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 }

/** "10M" → 10485760 bytes/s; null for a string that is not a rate. */
export function parseRate (text: string): number | null {
  const m = /^([0-9]+(?:\.[0-9]+)?)\s*([BKMGT]?)(?:i?B)?(?:\/s)?$/i.exec(text.trim())
  if (m === null) return null
  const value = Number(m[1]) * UNITS[m[2]!.toUpperCase()]!
  return Number.isFinite(value) && value >= 1 ? Math.floor(value) : null
}

export class TokenBucket {
  readonly bytesPerSecond: number
  #tokens: number
  #last = performance.now()
  #queue: Promise<void> = Promise.resolve()
  readonly burst: number

  /** `bytesPerSecond` on average; at most `burst` bytes (default: a tenth of a second, ≥ 64 KiB) at once. */
  constructor (bytesPerSecond: number, burst?: number) {
    this.bytesPerSecond = bytesPerSecond
    this.burst = burst ?? Math.max(64 * 1024, Math.floor(bytesPerSecond / 10))
    this.#tokens = this.burst
  }

  #refill (): void {
    const now = performance.now()
    this.#tokens = Math.min(this.burst, this.#tokens + (now - this.#last) / 1000 * this.bytesPerSecond)
    this.#last = now
  }

  /** Resolves once `n` bytes may go; callers are served in order. */
  take (n: number, signal?: AbortSignal): Promise<void> {
    const turn = this.#queue.then(async () => {
      this.#refill()
      this.#tokens -= n // may go negative for a slice larger than the burst: the debt is waited off
      if (this.#tokens < 0) await sleep(Math.ceil(-this.#tokens / this.bytesPerSecond * 1000), undefined, signal !== undefined ? { signal } : {})
    })
    this.#queue = turn.catch(() => {})
    return turn
  }
}
