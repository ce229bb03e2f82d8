// What orchestrators told this node they revoked (`attachments_revoked`, sent by the issuer itself):
// per issuer and worker, the time up to which every attachment that issuer signed for that worker is
// refused here. A notice is kept only while an attachment it covers could still be valid (the longest
// lifetime an attachment may have, and the clock skew a peer is allowed), so the set stays small; it is
// bounded besides, per issuer and in issuers, so a registered orchestrator sending made-up workers
// cannot grow it (docs/security.md#peers).
import { ATTACHMENT_MAX_LIFETIME_MS, MAX_CLOCK_SKEW_MS, type Attachment } from '../protocol/index.ts'

/**
 * Workers remembered per issuer, issuers remembered, and notices in all: beyond the first two the oldest
 * go first; beyond the total, the oldest of the issuer holding the most (a hostile issuer fills its own
 * share, not everyone's).
 */
export const NOTICES_PER_ISSUER_MAX = 4_096
export const NOTICE_ISSUERS_MAX = 1_024
export const NOTICES_MAX = 65_536
/** How long a notice matters: after it, every attachment issued before it has expired. */
export const NOTICE_KEPT_MS = ATTACHMENT_MAX_LIFETIME_MS + MAX_CLOCK_SKEW_MS

export type NoticeOutcome = 'recorded' | 'stale' | 'future'

export class RevocationNotices {
  readonly #byIssuer = new Map<string, Map<string, number>>()
  #size = 0
  #taken = 0

  /**
   * Records that `issuer` revoked what it issued to `worker` up to `revokedAt`, as of `now`. A notice for
   * a time further ahead than the allowed clock skew is refused (it would refuse attachments not yet
   * issued); one older than any attachment it could cover is not kept.
   */
  record (issuer: string, worker: string, revokedAt: number, now: number): NoticeOutcome {
    if (revokedAt > now + MAX_CLOCK_SKEW_MS) return 'future'
    if (revokedAt <= now - NOTICE_KEPT_MS) return 'stale'
    let workers = this.#byIssuer.get(issuer)
    if (workers === undefined) {
      if (this.#byIssuer.size >= NOTICE_ISSUERS_MAX) {
        const oldest = this.#byIssuer.keys().next().value!
        this.#size -= this.#byIssuer.get(oldest)!.size
        this.#byIssuer.delete(oldest)
      }
      workers = new Map()
      this.#byIssuer.set(issuer, workers)
    }
    const before = workers.get(worker)
    if (before !== undefined) { workers.delete(worker); this.#size-- } // the newest at the end: the oldest go first at the cap
    workers.set(worker, Math.max(revokedAt, before ?? -Infinity))
    this.#size++
    if (workers.size > NOTICES_PER_ISSUER_MAX) this.#dropOldest(workers)
    if (this.#size > NOTICES_MAX) {
      let largest = workers
      for (const w of this.#byIssuer.values()) if (w.size > largest.size) largest = w
      this.#dropOldest(largest)
    }
    if (++this.#taken % 256 === 0) this.sweep(now)
    return 'recorded'
  }

  #dropOldest (workers: Map<string, number>): void {
    workers.delete(workers.keys().next().value!)
    this.#size--
  }

  /** Whether a notice from the attachment's own issuer covers it (issued at or before the revocation). */
  covers (a: Attachment): boolean {
    const at = this.#byIssuer.get(a.orchestrator)?.get(a.worker)
    return at !== undefined && a.issuedAt <= at
  }

  /** Forgets notices that no longer cover any attachment that could be valid at `now`. */
  sweep (now: number): void {
    for (const [issuer, workers] of this.#byIssuer) {
      for (const [worker, at] of workers) if (at <= now - NOTICE_KEPT_MS) { workers.delete(worker); this.#size-- }
      if (workers.size === 0) this.#byIssuer.delete(issuer)
    }
  }

  /** Notices held (tests, metrics). */
  get size (): number { return this.#size }
}
