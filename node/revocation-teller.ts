// An issuing orchestrator's side of revocation notices (`attachments_revoked`, docs/node.md#attaching-workers):
// who is told what, and when the revoked worker's session ends. The notices themselves come from the
// issuer (node/attachments.ts `notices()`); receivers keep them in node/revocation-notices.ts.
import { MAX_REVOCATIONS_PER_MESSAGE, type Role } from '../protocol/index.ts'
import type { Clock, Timer } from '../actors/ports.ts'
import type { AttachmentIssuer } from './attachments.ts'
import type { Messenger } from './messenger.ts'

/** How long a revoked worker stays connected to its issuer after being told, so that the notice reaches it. */
export const REVOKED_NOTICE_GRACE_MS = 1_000

export class RevocationTeller {
  readonly #clock: Clock
  readonly #issuer: Pick<AttachmentIssuer, 'notice' | 'notices'>
  readonly #messenger: Pick<Messenger, 'broadcast' | 'send' | 'peerOf' | 'withdraw'>
  readonly #self: string
  readonly #timers = new Set<Timer>()
  /** The connection each validator or orchestrator was last told on, by hotkey. */
  readonly #told = new Map<string, string>()

  constructor (o: { clock: Clock, issuer: Pick<AttachmentIssuer, 'notice' | 'notices'>, messenger: Pick<Messenger, 'broadcast' | 'send' | 'peerOf' | 'withdraw'>, self: string }) {
    this.#clock = o.clock
    this.#issuer = o.issuer
    this.#messenger = o.messenger
    this.#self = o.self
  }

  /**
   * `worker` was just revoked by the issuer: every admitted peer hears of it now (validators, other
   * orchestrators, the worker itself). Told, the worker can take another orchestrator's attachment at
   * once instead of when the revoked one is half spent. Its connection ends a moment later, once the
   * notice is on its way (a connection ended at once drops what is queued for it); it has no standing
   * here meanwhile. Reinstated within that moment, it is cut all the same, and attaches again when it
   * reconnects.
   */
  revoked (worker: string): void {
    const notice = this.#issuer.notice(worker)
    if (notice !== undefined) this.#messenger.broadcast('attachments_revoked', { revocations: [notice] })
    if (notice === undefined || this.#messenger.peerOf(worker) === undefined) {
      this.#messenger.withdraw(worker, 'attachment revoked')
      return
    }
    const timer = this.#clock.setTimer(REVOKED_NOTICE_GRACE_MS, () => {
      this.#timers.delete(timer)
      this.#messenger.withdraw(worker, 'attachment revoked')
    })
    this.#timers.add(timer)
  }

  /**
   * A registered peer announced (or sent a heartbeat) on connection `peer`. A validator or orchestrator is told the revocations
   * that may still cover a valid attachment, once per connection (one that comes back on a new
   * connection, restarted, is told again). A worker is not: it re-announces at every renewal, and has no
   * use for other workers' revocations.
   */
  announced (hotkey: string, peer: string, role: Role): void {
    if (hotkey === this.#self || role === 'worker' || this.#told.get(hotkey) === peer) return
    this.#told.set(hotkey, peer)
    const notices = this.#issuer.notices()
    for (let i = 0; i < notices.length; i += MAX_REVOCATIONS_PER_MESSAGE) this.#messenger.send(hotkey, 'attachments_revoked', { revocations: notices.slice(i, i + MAX_REVOCATIONS_PER_MESSAGE) })
  }

  /** The peer's connection is down: forgotten (bounded by the connected peers). */
  down (hotkey: string): void { this.#told.delete(hotkey) }

  stop (): void {
    for (const timer of this.#timers) timer.cancel()
    this.#timers.clear()
  }
}
