// Admission of connections. A connection is pending from the moment it opens until its peer is admitted
// (its announce named a registered hotkey, node/peer-auth.ts); only admitted peers receive broadcasts.
// Pending connections are what an attacker can open for free (a fresh Noise key per connection), so they
// are bounded: per remote address, in total, and in time (a connection that has not announced within
// the deadline is closed, and one that announced but is not admitted within the admission deadline from
// its first announce is closed too: an announce whose check is held, re-sent forever, must not keep a
// slot). Admitted peers never count against a cap, and a full cap closes the oldest pending connection,
// never the one that just opened, so a registered node that connects during a flood is always given its
// chance to announce.
import ipaddr from 'ipaddr.js'
import type { Clock, Timer } from '../actors/ports.ts'

/** Connections not yet admitted, from one remote address (IPv4; IPv6: one /64, `addressGroup`), before the oldest of them is closed. */
export const MAX_PENDING_PER_ADDRESS = 8
/** Connections not yet admitted, from all addresses, before the oldest of them is closed. */
export const MAX_PENDING_TOTAL = 64
/** A connection that has not sent a valid announce by then is closed. */
export const ANNOUNCE_DEADLINE_MS = 5_000 // 5 s
/**
 * A connection that announced but is not admitted this long after its first announce is closed. Room
 * for an unattached worker's wait for its attachment (node/peer-auth.ts ATTACHMENT_WAIT_MS, 5 s) and a
 * slow chain lookup; re-announcing does not extend it.
 */
export const ADMISSION_DEADLINE_MS = 20_000 // 20 s
/**
 * How long a hotkey whose announce was refused (not registered in any role), and its connection key,
 * are refused after the disconnect: long enough that it cannot spin on reconnects, short enough that a
 * registration made meanwhile is honoured soon (node/peer-auth.ts looks a refused hotkey up again after
 * UNREGISTERED_TTL_MS, the same 10 s).
 */
export const REFUSED_BAN_MS = 10_000 // 10 s
/**
 * Loopback addresses are exempt from the per-address cap: a devnet or a test network runs every node
 * (and its rogues) on 127.0.0.1, and a remote attacker cannot connect from loopback. The total cap and
 * the deadline still apply.
 */
export const CAP_LOOPBACK = false

export interface GateLimits {
  maxPendingPerAddress: number
  maxPendingTotal: number
  announceDeadlineMs: number
  admissionDeadlineMs: number
  refusedBanMs: number
  /** Whether loopback addresses count against the per-address cap. */
  capLoopback: boolean
}

export const GATE_LIMITS: GateLimits = {
  maxPendingPerAddress: MAX_PENDING_PER_ADDRESS,
  maxPendingTotal: MAX_PENDING_TOTAL,
  announceDeadlineMs: ANNOUNCE_DEADLINE_MS,
  admissionDeadlineMs: ADMISSION_DEADLINE_MS,
  refusedBanMs: REFUSED_BAN_MS,
  capLoopback: CAP_LOOPBACK
}

/** Why the gate closes a connection (a bounded metric label). */
export type GateCloseReason = 'cap_address' | 'cap_pending' | 'announce_timeout' | 'admission_timeout'

interface Entry { address: string | null, group: string | null, seq: number, announced: boolean, admitted: boolean, deadline: Timer | null }

/** Whether `address` is a loopback address (IPv4 127/8, ::1, or IPv4-mapped loopback). */
export function isLoopback (address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.')
}

/**
 * What a per-address cap counts `address` as: an IPv4 address itself (an IPv4-mapped IPv6 one too), an
 * IPv6 address by its /64 (`2001:db8:0:1::/64`): one host or link is given a whole /64, so capping single
 * IPv6 addresses would cap nothing. Anything else (not an IP) is its own group.
 */
export function addressGroup (address: string): string {
  if (!ipaddr.isValid(address)) return address
  const ip = ipaddr.process(address) // an IPv4-mapped IPv6 address, in any spelling, becomes its IPv4 one
  if (ip.kind() === 'ipv4') return ip.toString()
  return `${(ip as ipaddr.IPv6).parts.slice(0, 4).map(p => p.toString(16)).join(':')}::/64`
}

export class PeerGate {
  readonly #clock: Clock
  readonly #limits: GateLimits
  readonly #close: (peer: string, reason: GateCloseReason) => void
  /** Every open connection, in the order it opened (Map order = oldest first). */
  readonly #conns = new Map<string, Entry>()
  readonly #admitted = new Set<string>()
  #seq = 0

  constructor (deps: { clock: Clock, limits?: Partial<GateLimits>, close: (peer: string, reason: GateCloseReason) => void }) {
    this.#clock = deps.clock
    this.#limits = { ...GATE_LIMITS, ...deps.limits }
    this.#close = deps.close
  }

  get limits (): Readonly<GateLimits> { return this.#limits }

  /** A connection opened (either direction); closes the oldest pending ones beyond the caps. */
  open (peer: string, address: string | null = null): void {
    this.closed(peer) // a reconnect replaces the old stream
    const group = address === null ? null : addressGroup(address)
    const entry: Entry = { address, group, seq: this.#seq++, announced: false, admitted: false, deadline: null }
    entry.deadline = this.#clock.setTimer(this.#limits.announceDeadlineMs, () => {
      entry.deadline = null
      if (this.#conns.get(peer) === entry && !entry.announced) this.#evict(peer, 'announce_timeout')
    })
    this.#conns.set(peer, entry)
    if (address !== null && (this.#limits.capLoopback || !isLoopback(address))) {
      while (this.#pending(e => e.group === group).length > this.#limits.maxPendingPerAddress) {
        this.#evict(this.#oldest(peer, e => e.group === group) ?? peer, 'cap_address')
      }
    }
    while (this.#pending(() => true).length > this.#limits.maxPendingTotal) this.#evict(this.#oldest(peer, () => true) ?? peer, 'cap_pending')
  }

  /**
   * The connection sent a valid announce (bound to a hotkey): the announce deadline gives way to the
   * admission deadline, armed once, at the first announce.
   */
  announced (peer: string): void {
    const e = this.#conns.get(peer)
    if (e === undefined || e.announced || e.admitted) return
    e.announced = true
    e.deadline?.cancel()
    e.deadline = this.#clock.setTimer(this.#limits.admissionDeadlineMs, () => {
      e.deadline = null
      if (this.#conns.get(peer) === e && !e.admitted) this.#evict(peer, 'admission_timeout')
    })
  }

  /** The connection's peer is admitted: it receives broadcasts and no longer counts as pending. */
  admit (peer: string): void {
    const e = this.#conns.get(peer)
    if (e === undefined) {
      // A connection the transport never reported (in-memory links): admitted all the same.
      this.#conns.set(peer, { address: null, group: null, seq: this.#seq++, announced: true, admitted: true, deadline: null })
    } else {
      e.announced = true
      e.admitted = true
      e.deadline?.cancel()
      e.deadline = null
    }
    this.#admitted.add(peer)
  }

  isAdmitted (peer: string): boolean { return this.#admitted.has(peer) }

  /** The remote IP of an open connection, when the transport reported it. */
  addressOf (peer: string): string | null { return this.#conns.get(peer)?.address ?? null }

  /** Admitted connections, for broadcasts. */
  admitted (): IterableIterator<string> { return this.#admitted.values() }

  /** Every open connection the transport reported. */
  connections (): IterableIterator<string> { return this.#conns.keys() }

  /** Connections open and not admitted. */
  pendingCount (): number { return this.#pending(() => true).length }

  /** The connection went away. */
  closed (peer: string): void {
    const e = this.#conns.get(peer)
    if (e === undefined) return
    e.deadline?.cancel()
    this.#conns.delete(peer)
    this.#admitted.delete(peer)
  }

  #pending (pred: (e: Entry) => boolean): string[] {
    const out: string[] = []
    for (const [peer, e] of this.#conns) if (!e.admitted && pred(e)) out.push(peer)
    return out
  }

  /**
   * The pending connection to close first: the oldest, announced or not (a hotkey to announce with costs
   * an attacker nothing either), and never `newest`, the one just opened: were pending connections
   * that announced spared, a cap full of them would close every newcomer before it could announce.
   */
  #oldest (newest: string, pred: (e: Entry) => boolean): string | undefined {
    for (const [peer, e] of this.#conns) if (!e.admitted && peer !== newest && pred(e)) return peer
    return undefined
  }

  #evict (peer: string, reason: GateCloseReason): void {
    this.closed(peer)
    this.#close(peer, reason)
  }
}
