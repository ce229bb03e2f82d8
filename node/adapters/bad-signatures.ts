// Failed signature checks per remote address. A full sr25519 check costs ~0.3 ms of CPU, and anyone who
// reaches a signed route (the data endpoint, the node sink) can ask for one by sending a made-up
// signature under the node's own key. After `max` such failures within a window, an address's signed
// requests are refused with 429 and Retry-After, without any check, until its window ends. A URL this
// node signed never fails, so an honest worker or validator is never counted. IPv4 addresses count one
// by one; IPv6 ones by their /64, which one host usually holds whole. The table is bounded (the oldest
// address goes first); an attacker rotating addresses gets `max` checks per address it holds.
import { isIPv6 } from 'node:net'
import { RateLimited, withExtensions } from '../../api/errors.ts'

export const BAD_SIGNATURES_PER_WINDOW = 16
export const BAD_SIGNATURE_WINDOW_MS = 60_000
const MAX_ADDRESSES = 4096

export interface BadSignaturesOptions {
  now: () => number
  max?: number
  windowMs?: number
  maxAddresses?: number
}

/** The key an address counts under: IPv4 as is (also when mapped into IPv6), IPv6 by its /64. */
export function addressKey (address: string): string {
  const bare = address.replace(/%.*$/, '') // an IPv6 zone id
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)
  if (mapped !== null) return mapped[1]!
  if (!isIPv6(bare)) return bare
  const [head = '', tail] = bare.split('::')
  const front = head === '' ? [] : head.split(':')
  const back = tail === undefined || tail === '' ? [] : tail.split(':')
  // An IPv4 tail (::1.2.3.4) counts as two groups; only the first four groups matter here anyway.
  const backGroups = back.flatMap(g => g.includes('.') ? ['0', '0'] : [g])
  const groups = tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - backGroups.length)).fill('0'), ...backGroups]
  return groups.slice(0, 4).map(g => parseInt(g, 16).toString(16)).join(':') + '::/64'
}

export class BadSignatures {
  readonly #now: () => number
  readonly #max: number
  readonly #windowMs: number
  readonly #maxAddresses: number
  readonly #failures = new Map<string, { count: number, windowEnds: number }>()
  /** Requests refused unchecked (metrics, tests). */
  refused = 0

  constructor (options: BadSignaturesOptions) {
    this.#now = options.now
    this.#max = options.max ?? BAD_SIGNATURES_PER_WINDOW
    this.#windowMs = options.windowMs ?? BAD_SIGNATURE_WINDOW_MS
    this.#maxAddresses = options.maxAddresses ?? MAX_ADDRESSES
  }

  /** Throws the 429 for an address over its failures; returns when its request may be checked. */
  admit (address: string): void {
    const key = addressKey(address)
    const entry = this.#failures.get(key)
    if (entry === undefined) return
    const now = this.#now()
    if (now >= entry.windowEnds) { this.#failures.delete(key); return }
    if (entry.count < this.#max) return
    this.refused++
    const retryS = Math.max(1, Math.ceil((entry.windowEnds - now) / 1000))
    throw withExtensions(
      new RateLimited(`${entry.count} requests from this address carried signatures that did not verify; signed requests from it are refused for ${retryS} s`),
      { bad_signatures: entry.count }, { 'retry-after': String(retryS) })
  }

  /** Counts a signature from `address` that did not verify. */
  failed (address: string): void {
    const key = addressKey(address)
    const now = this.#now()
    const entry = this.#failures.get(key)
    if (entry !== undefined && now < entry.windowEnds) { entry.count++; return }
    if (entry !== undefined) this.#failures.delete(key)
    else if (this.#failures.size >= this.#maxAddresses) {
      const oldest = this.#failures.keys().next()
      if (oldest.done !== true) this.#failures.delete(oldest.value)
    }
    this.#failures.set(key, { count: 1, windowEnds: now + this.#windowMs })
  }

  /** Addresses with failures on record. */
  get size (): number { return this.#failures.size }
}
