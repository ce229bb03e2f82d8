// Failed signature checks, per remote address and node-wide. A full sr25519 check costs ~0.3 ms of CPU,
// and anyone who reaches a signed route (the data endpoint, the node sink) can ask for one by sending a
// made-up signature under the node's own key, or by replaying a genuine URL that has expired. A URL this
// node minted is checked against what it signed, without the curve arithmetic and without any limit
// (protocol/signed-url.ts): only the full checks count and are limited here.
// - Per address: after `max` failed full checks within a window, an address's requests that need a full
//   check are refused with 429 and Retry-After, unchecked, until its window ends. IPv4 addresses count
//   one by one; IPv6 ones by their /64, which one host usually holds whole.
// - Node-wide: at most `maxPerSecond` failed full checks a second from all addresses together; past
//   that, full checks wait for the next second (429, Retry-After: 1). This bounds the CPU an attacker
//   holding many addresses can take, whatever their number.
// The table is bounded: when full, an address below its limit goes first, else the oldest.
import { addressKey } from '../../api/client-address.ts'
import { RateLimited, withExtensions } from '../../api/errors.ts'

export { addressKey }

export const BAD_SIGNATURES_PER_WINDOW = 16
export const BAD_SIGNATURE_WINDOW_MS = 60_000
/** ~20 ms of CPU a second at ~0.3 ms a check. */
export const BAD_SIGNATURES_PER_SECOND = 64
const MAX_ADDRESSES = 4096

export interface BadSignaturesOptions {
  now: () => number
  max?: number
  windowMs?: number
  maxPerSecond?: number
  maxAddresses?: number
}

export class BadSignatures {
  readonly #now: () => number
  readonly #max: number
  readonly #windowMs: number
  readonly #maxPerSecond: number
  readonly #maxAddresses: number
  readonly #failures = new Map<string, { count: number, windowEnds: number }>()
  #second = { count: 0, ends: 0 }
  /** Requests refused unchecked (metrics, tests). */
  refused = 0

  constructor (options: BadSignaturesOptions) {
    this.#now = options.now
    this.#max = options.max ?? BAD_SIGNATURES_PER_WINDOW
    this.#windowMs = options.windowMs ?? BAD_SIGNATURE_WINDOW_MS
    this.#maxPerSecond = options.maxPerSecond ?? BAD_SIGNATURES_PER_SECOND
    this.#maxAddresses = options.maxAddresses ?? MAX_ADDRESSES
  }

  /** Throws the 429 when a full check for `address` is not to be made now; returns when it may be. */
  admit (address: string): void {
    const now = this.#now()
    const key = addressKey(address)
    const entry = this.#failures.get(key)
    if (entry !== undefined && now >= entry.windowEnds) this.#failures.delete(key)
    else if (entry !== undefined && entry.count >= this.#max) {
      const retryS = Math.max(1, Math.ceil((entry.windowEnds - now) / 1000))
      this.#refuse(`${entry.count} requests from this address carried signatures that did not verify; signed requests from it are refused for ${retryS} s`, entry.count, retryS)
    }
    if (now < this.#second.ends && this.#second.count >= this.#maxPerSecond) {
      this.#refuse(`The node has checked ${this.#second.count} signatures that did not verify in the last second; retry in a second`, undefined, 1)
    }
  }

  /** Counts a full check for `address` that did not pass. */
  failed (address: string): void {
    const now = this.#now()
    if (now >= this.#second.ends) this.#second = { count: 0, ends: now + 1000 }
    this.#second.count++
    const key = addressKey(address)
    const entry = this.#failures.get(key)
    if (entry !== undefined && now < entry.windowEnds) { entry.count++; return }
    if (entry !== undefined) this.#failures.delete(key)
    else if (this.#failures.size >= this.#maxAddresses) this.#evict(now)
    this.#failures.set(key, { count: 1, windowEnds: now + this.#windowMs })
  }

  /** Addresses with failures on record. */
  get size (): number { return this.#failures.size }

  /** Makes room for one address: one whose window ended or that is below its limit, else the oldest. */
  #evict (now: number): void {
    for (const [key, entry] of this.#failures) {
      if (now >= entry.windowEnds || entry.count < this.#max) { this.#failures.delete(key); return }
    }
    const oldest = this.#failures.keys().next()
    if (oldest.done !== true) this.#failures.delete(oldest.value)
  }

  #refuse (detail: string, count: number | undefined, retryS: number): never {
    this.refused++
    throw withExtensions(new RateLimited(detail), count !== undefined ? { bad_signatures: count } : {}, { 'retry-after': String(retryS) })
  }
}
