// An orchestrator operator's revocations of workers (/admin/workers, `bwnet admin worker revoke`): kept in the
// store (table `workers`, key `revocation/<hotkey>`), so a revoked worker stays refused across restarts,
// and applied to the attachment issuer (node/attachments.ts). A revocation is answered once its row is
// flushed to disk; the worker's session ends then (docs/node.md#attaching-workers).
import type { Clock, Logger, Store, Table } from '../actors/ports.ts'
import { collect, prefixRange } from '../actors/store.ts'
import type { WorkerAttachments, WorkerAttachmentView } from '../api/deps.ts'
import type { AttachmentIssuer } from './attachments.ts'
import { WorkerRegistered } from '../api/errors.ts'
import PQueue from 'p-queue'

const PREFIX = 'revocation/'
/**
 * How long a revocation waits for the chain to say whether the hotkey is registered. A chain that does
 * not answer in time (or fails) does not stop the revocation: an operator's control must not fail open.
 */
export const REGISTRATION_CHECK_MS = 3_000

interface RevocationRow { hotkey: string, revoked_at: string }

export class WorkerRevocations implements WorkerAttachments {
  readonly #store: Store
  readonly #rows: Table<RevocationRow>
  readonly #clock: Clock
  readonly #issuer: AttachmentIssuer
  readonly #end: (hotkey: string) => void
  readonly #registered: (hotkey: string) => Promise<boolean>
  readonly #log: Logger | undefined
  /** One change at a time, in order: a revoke and a reinstate of one worker must land as they were asked. */
  readonly #queue = new PQueue({ concurrency: 1 })

  /**
   * `end`: what a revocation does to a connected worker besides the issuer's refusal (its session, its
   * routing). `registered`: whether the hotkey holds a chain registration, by which it stands whatever
   * this orchestrator revokes (refused with 409 BWN_ERR_WORKER_REGISTERED).
   */
  constructor (o: { store: Store, clock: Clock, issuer: AttachmentIssuer, end: (hotkey: string) => void, registered?: (hotkey: string) => Promise<boolean>, logger?: Logger }) {
    this.#store = o.store
    this.#rows = o.store.table<RevocationRow>('workers')
    this.#clock = o.clock
    this.#issuer = o.issuer
    this.#end = o.end
    this.#registered = o.registered ?? (async () => false)
    this.#log = o.logger
  }

  /** Applies the stored revocations to the issuer (at start, before any worker is attached); how many. */
  async load (): Promise<number> {
    const rows = await collect(this.#rows, prefixRange(PREFIX))
    for (const [, r] of rows) this.#issuer.revoke(r.hotkey, { restored: true, at: Date.parse(r.revoked_at) })
    return rows.length
  }

  async list (): Promise<WorkerAttachmentView[]> {
    const revoked = new Map((await collect(this.#rows, prefixRange(PREFIX))).map(([, r]) => [r.hotkey, r.revoked_at]))
    const views = new Map<string, WorkerAttachmentView>()
    for (const { worker, expiresAt } of this.#issuer.attached()) views.set(worker, { hotkey: worker, attached: true, expiresAt: new Date(expiresAt).toISOString(), revoked: false, revokedAt: null })
    for (const [hotkey, at] of revoked) views.set(hotkey, { hotkey, attached: false, expiresAt: null, ...views.get(hotkey), revoked: true, revokedAt: at })
    return [...views.values()].sort((a, b) => (a.hotkey < b.hotkey ? -1 : a.hotkey > b.hotkey ? 1 : 0))
  }

  async revoke (hotkey: string): Promise<WorkerAttachmentView> {
    return await this.#queue.add(async () => {
      // In its turn, so changes land in the order asked; the chain holds the queue up REGISTRATION_CHECK_MS at most.
      if (await this.#knownRegistered(hotkey)) throw new WorkerRegistered(`${hotkey} is registered on the chain: it stands by its registration, not by an attachment from this orchestrator, and a revocation would not keep it out`)
      const existing = await this.#rows.get(PREFIX + hotkey)
      const row = existing ?? { hotkey, revoked_at: new Date(this.#clock.now()).toISOString() }
      if (existing === undefined) await this.#store.batch([{ type: 'put', table: 'workers', key: PREFIX + hotkey, value: row }], { sync: true })
      this.#end(hotkey)
      return { hotkey, attached: false, expiresAt: null, revoked: true, revokedAt: row.revoked_at }
    })
  }

  async reinstate (hotkey: string): Promise<{ view: WorkerAttachmentView, wasRevoked: boolean }> {
    return await this.#queue.add(async () => {
      const existing = await this.#rows.get(PREFIX + hotkey)
      if (existing !== undefined) await this.#store.batch([{ type: 'del', table: 'workers', key: PREFIX + hotkey }], { sync: true })
      const wasRevoked = existing !== undefined || this.#issuer.revoked(hotkey)
      this.#issuer.reinstate(hotkey)
      const live = this.#issuer.attached().find(a => a.worker === hotkey)
      return { view: { hotkey, attached: live !== undefined, expiresAt: live === undefined ? null : new Date(live.expiresAt).toISOString(), revoked: false, revokedAt: null }, wasRevoked }
    })
  }

  /**
   * True only when the chain says, within REGISTRATION_CHECK_MS, that the hotkey is registered. When it
   * does not say (no answer, an error), the revocation goes ahead and a warning says that a registered
   * worker would keep its standing by its registration.
   */
  async #knownRegistered (hotkey: string): Promise<boolean> {
    let timer: { cancel (): void } | undefined
    let said = false
    const unchecked = (why: string): false => {
      // Once per revocation: a chain that fails after the time ran out has been spoken for.
      if (!said) this.#log?.warn({ event: 'worker_registration_unchecked', worker: hotkey, why }, 'revoked without knowing whether the chain registers this hotkey; a registered worker keeps its standing by its registration')
      said = true
      return false
    }
    const late = new Promise<boolean>(resolve => { timer = this.#clock.setTimer(REGISTRATION_CHECK_MS, () => resolve(unchecked('no answer'))) })
    try {
      return await Promise.race([this.#registered(hotkey).catch((err: Error) => unchecked(err.message)), late])
    } finally {
      timer?.cancel()
    }
  }

}
