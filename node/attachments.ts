// The orchestrator's side of worker attachments: it attaches workers automatically on first contact,
// within the limits its operator sets (`maxWorkers`, `maxPerAddress`, an optional allowlist), keeps what it issued,
// renews each attachment before it expires, and revokes. A revoked worker is refused here at once (the
// issuer checks its own list on every announce), and its peers are told (`attachments_revoked`, from
// `notices()`): a peer that was not connected then learns it when it connects, and at the latest the
// revoked attachment expires, since it is never renewed (docs/security.md#peers).
import { ATTACHMENT_MAX_LIFETIME_MS, ATTACHMENT_RENEW_BEFORE_MS, ATTACHMENT_TTL_MS, MAX_CLOCK_SKEW_MS, signAttachment, type Attachment, type KeyPair } from '../protocol/index.ts'
import type { Clock, Logger, Timer } from '../actors/ports.ts'
import { addressGroup, isLoopback } from './peer-gate.ts'
import { logEvery } from './log-every.ts'

/** Workers an orchestrator attaches by default. */
export const DEFAULT_MAX_WORKERS = 256
/**
 * Workers attached at once from one remote address (IPv6: one /64) by default. Without it one host
 * announcing fresh hotkeys takes every place under `maxWorkers`, each for the 10 minutes its attachment
 * is honoured; with it a flood needs DEFAULT_MAX_WORKERS ÷ this many addresses. An operator whose
 * workers share one address (behind NAT) raises it (`--max-workers-per-address`).
 */
export const DEFAULT_MAX_WORKERS_PER_ADDRESS = 16
/** A refusal of one worker for one reason is logged at most this often. */
export const REFUSAL_LOG_EVERY_MS = 60_000
/** How often issued attachments are looked at for renewal. */
export const RENEW_CHECK_MS = 30_000 // 30 s

export type AttachRefusal = 'max_workers' | 'max_per_address' | 'not_allowed' | 'revoked'
export type IssueResult = { ok: true, attachment: Attachment, renewed: boolean } | { ok: false, reason: AttachRefusal }

export interface IssuerOptions {
  key: KeyPair
  clock: Clock
  logger: Logger
  maxWorkers: number
  /**
   * Workers attached at once from one remote address (`addressGroup`: IPv6 by its /64); 0 or unset: no
   * cap. Loopback is exempt (a devnet runs every node on 127.0.0.1), as is a worker whose address is unknown.
   */
  maxPerAddress?: number
  /**
   * Whether the worker is connected now. One that is not at a renewal check is taken as gone (as
   * `release` does): not renewed, its place held until its attachment expires. Unset: every worker is.
   */
  connected?: (worker: string) => boolean
  /** Worker hotkeys allowed to attach; null: any. */
  allowlist?: ReadonlySet<string> | null
  ttlMs?: number
  /** Hands a new or renewed attachment to its worker. */
  deliver: (attachment: Attachment) => void
}

export class AttachmentIssuer {
  readonly #o: IssuerOptions
  readonly #log: Logger
  /** The current attachment of each attached worker, and of each that left while it is still valid. */
  readonly #issued = new Map<string, Attachment>()
  /**
   * Workers that left with a valid attachment: it is honoured everywhere until it expires, so it keeps
   * its place in `maxWorkers` until then (a Sybil cannot collect attachments by connecting, announcing
   * and leaving, one hotkey after another). Not renewed; the worker's next contact takes it back.
   */
  readonly #left = new Set<string>()
  /** The address group each worker holding an attachment was last seen from (capped ones only). */
  readonly #groupOf = new Map<string, string>()
  readonly #revokedWorkers = new Set<string>()
  /**
   * When each worker was last revoked: every attachment issued to it until then stays refused here, also
   * once the revocation is lifted (while this process runs). A worker can hold several live ones (each
   * announce and each renewal issues one), and this covers them all. Kept for the longest lifetime an
   * attachment may have; by then every one it covers has expired.
   */
  readonly #revokedAt = new Map<string, number>()
  /**
   * The latest `issuedAt` of any attachment issued to each worker (on a clock stepped back, an older one
   * can carry a later time than the current): what a revocation must cover. Kept as long as `#revokedAt`.
   */
  readonly #newestIssuedAt = new Map<string, number>()
  /**
   * What peers are told, by worker: the time of its last revocation as a notice says it (every attachment
   * issued to it up to then). Kept while an attachment it covers could be valid anywhere.
   */
  readonly #notices = new Map<string, number>()
  #timer: Timer | null = null
  readonly #logRefusal = logEvery(REFUSAL_LOG_EVERY_MS)

  constructor (o: IssuerOptions) {
    this.#o = o
    this.#log = o.logger.child({ component: 'attachments' })
  }

  get maxWorkers (): number { return this.#o.maxWorkers }

  /** Workers holding an unexpired attachment from this orchestrator, attached now or gone since. */
  count (): number {
    const now = this.#o.clock.now()
    let n = 0
    for (const a of this.#issued.values()) if (a.expiresAt > now) n++
    return n
  }

  /** The attachment of a worker attached now (not of one that left: its next contact issues it again). */
  current (worker: string): Attachment | undefined { return this.#left.has(worker) ? undefined : this.#issued.get(worker) }

  /** Workers holding an unexpired attachment from this orchestrator whose address counts as `group`. */
  countAt (group: string): number {
    const now = this.#o.clock.now()
    let n = 0
    for (const [worker, g] of this.#groupOf) if (g === group && (this.#issued.get(worker)?.expiresAt ?? 0) > now) n++
    return n
  }

  /**
   * An attachment for `worker` on first contact (or a fresh one for a worker already attached): refused
   * when the worker was revoked, is not on the allowlist, `maxWorkers` are attached, or `maxPerAddress`
   * from the address it connects from (`address`: its remote IP; null when unknown, as at a renewal,
   * which keeps the address it was attached from). Refusals are logged.
   */
  issue (worker: string, address: string | null = null): IssueResult {
    const refuse = (reason: AttachRefusal): IssueResult => {
      // A refused worker tries again about every 10 s (its ban's length): one line per worker and reason a minute.
      if (this.#logRefusal(`${worker}/${reason}`, this.#o.clock.now())) this.#log.warn({ worker, reason, address, maxWorkers: this.#o.maxWorkers, maxPerAddress: this.#o.maxPerAddress ?? 0, attached: this.count(), event: 'worker_attach_refused' }, `worker not attached: ${reason}`)
      return { ok: false, reason }
    }
    if (this.#revokedWorkers.has(worker)) return refuse('revoked')
    const allow = this.#o.allowlist ?? null
    if (allow !== null && !allow.has(worker)) return refuse('not_allowed')
    const now = this.#o.clock.now()
    const prev = this.#issued.get(worker)
    const live = prev !== undefined && prev.expiresAt > now
    if (!live && this.count() >= this.#o.maxWorkers) return refuse('max_workers')
    // A new attachment needs room at its address too. A live one is renewed wherever its worker is now
    // (it holds its place already), and its place moves to the new address only where there is room: a
    // place that moved for free would let one address attach, leave, come back from another address and
    // attach again, without bound.
    const perAddress = this.#o.maxPerAddress ?? 0
    let group = address !== null && perAddress > 0 && !isLoopback(address) ? addressGroup(address) : null
    // An expired attachment holds no place: a group left from it (until the next renewal check) counts for nothing.
    const held = live ? (this.#groupOf.get(worker) ?? null) : null
    if (group !== null && group !== held && this.countAt(group) >= perAddress) {
      if (!live) return refuse('max_per_address')
      group = held
    }
    // After the worker's last revocation even within the same millisecond: what a revocation covers
    // (issued at or before it) is told apart by time alone.
    const issuedAt = Math.max(now, (this.#revokedAt.get(worker) ?? -Infinity) + 1)
    this.#newestIssuedAt.set(worker, Math.max(issuedAt, this.#newestIssuedAt.get(worker) ?? -Infinity))
    const attachment = signAttachment(this.#o.key, { worker, issuedAt, ...(this.#o.ttlMs !== undefined ? { ttlMs: this.#o.ttlMs } : {}) })
    this.#issued.set(worker, attachment)
    this.#left.delete(worker)
    if (group !== null) this.#groupOf.set(worker, group)
    else if (!live || (address !== null && held !== null)) this.#groupOf.delete(worker) // new here, or moved to an address not counted
    if (!live) this.#log.info({ worker, expiresAt: attachment.expiresAt, event: 'worker_attachment_issued' }, 'worker attached by attachment')
    this.#arm()
    return { ok: true, attachment, renewed: live }
  }

  /** Whether this orchestrator revoked `a` (or its worker). Attachments of other issuers are not ours to judge. */
  isRevoked (a: Attachment): boolean {
    if (a.orchestrator !== this.#o.key.address) return false
    return this.#revokedWorkers.has(a.worker) || a.issuedAt <= (this.#revokedAt.get(a.worker) ?? -Infinity)
  }

  /** Workers holding an unexpired attachment from this orchestrator (attached now, or gone with it), with its expiry. */
  attached (): Array<{ worker: string, expiresAt: number }> {
    const now = this.#o.clock.now()
    const out: Array<{ worker: string, expiresAt: number }> = []
    for (const [worker, a] of this.#issued) if (a.expiresAt > now) out.push({ worker, expiresAt: a.expiresAt })
    return out
  }

  /** Whether `worker` is revoked here. */
  revoked (worker: string): boolean { return this.#revokedWorkers.has(worker) }

  /**
   * Revokes the worker's attachment and refuses it from now on; true when it held one. `restored`: a
   * revocation read back from the store at start (logged once for all by the caller, not per worker).
   */
  revoke (worker: string, opts: { restored?: boolean, at?: number } = {}): boolean {
    this.#revokedWorkers.add(worker)
    const a = this.#issued.get(worker)
    this.#issued.delete(worker)
    this.#left.delete(worker)
    this.#groupOf.delete(worker)
    // A restored one made at a time the clock has since stepped back from covers up to that time.
    const madeAt = opts.at !== undefined && Number.isFinite(opts.at) ? opts.at : -Infinity
    const revokedAt = Math.max(this.#o.clock.now(), this.#newestIssuedAt.get(worker) ?? -Infinity, madeAt)
    this.#revokedAt.set(worker, revokedAt)
    this.#newestIssuedAt.delete(worker)
    // One read back at start covers everything issued before the start (what was issued before the
    // restart is not known here), and is told to peers for as long as that may be valid; unless it was
    // made (`at`) longer ago than any attachment lives: nothing was issued to the worker since, and what
    // was issued before has expired.
    const spent = opts.restored === true && opts.at !== undefined && this.#o.clock.now() - opts.at >= ATTACHMENT_MAX_LIFETIME_MS + MAX_CLOCK_SKEW_MS
    if (!spent) this.#notices.set(worker, revokedAt)
    if (opts.restored !== true) this.#log.warn({ worker, event: 'worker_attachment_revoked' }, 'worker attachment revoked')
    return a !== undefined
  }

  /**
   * The revocations peers must hear of: those that may still cover a valid attachment (made within the
   * longest lifetime one may have), each with the time up to which it covers.
   */
  notices (): Array<{ worker: string, revokedAt: number }> {
    const now = this.#o.clock.now()
    const out: Array<{ worker: string, revokedAt: number }> = []
    for (const [worker, revokedAt] of this.#notices) {
      if (now - revokedAt >= ATTACHMENT_MAX_LIFETIME_MS + MAX_CLOCK_SKEW_MS) this.#notices.delete(worker)
      else out.push({ worker, revokedAt })
    }
    return out
  }

  /** The notice of `worker`'s revocation, while peers must hear of it. */
  notice (worker: string): { worker: string, revokedAt: number } | undefined {
    return this.notices().find(n => n.worker === worker)
  }

  /** Lifts a revocation (the worker may attach again, within the limits). */
  reinstate (worker: string): void { this.#revokedWorkers.delete(worker) }

  /**
   * The worker left: it attaches again on its next contact. Its place stays taken while the attachment
   * it left with is valid elsewhere (at most the TTL), and is its own again if it comes back.
   */
  release (worker: string): void {
    const a = this.#issued.get(worker)
    if (a === undefined) return
    if (a.expiresAt > this.#o.clock.now()) this.#left.add(worker)
    else { this.#issued.delete(worker); this.#left.delete(worker); this.#groupOf.delete(worker) }
  }

  stop (): void { this.#timer?.cancel(); this.#timer = null }

  #arm (): void {
    if (this.#timer !== null) return
    this.#timer = this.#o.clock.setTimer(RENEW_CHECK_MS, () => {
      this.#timer = null
      this.#renew()
      if (this.#issued.size > 0) this.#arm()
    })
  }

  #renew (): void {
    const now = this.#o.clock.now()
    const stale = (at: number): boolean => now - at > ATTACHMENT_MAX_LIFETIME_MS + MAX_CLOCK_SKEW_MS // everything issued by then has expired
    for (const [worker, at] of this.#revokedAt) if (stale(at) && !this.#revokedWorkers.has(worker)) this.#revokedAt.delete(worker)
    for (const [worker, at] of this.#newestIssuedAt) if (stale(at)) this.#newestIssuedAt.delete(worker)
    for (const [worker, a] of this.#issued) {
      if (a.expiresAt <= now) { this.#issued.delete(worker); this.#left.delete(worker); this.#groupOf.delete(worker); continue }
      if (this.#left.has(worker)) continue
      if (this.#o.connected?.(worker) === false) { this.#left.add(worker); continue }
      if (a.expiresAt - now > Math.min(ATTACHMENT_RENEW_BEFORE_MS, (this.#o.ttlMs ?? ATTACHMENT_TTL_MS) / 2)) continue
      const r = this.issue(worker)
      if (r.ok) this.#o.deliver(r.attachment)
    }
  }
}
