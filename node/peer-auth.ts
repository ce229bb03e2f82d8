// Authorization of peers: what a hotkey may do comes from its chain registration (role, UID, stake,
// validator permit), never from its own announce. Role-scoped messages from hotkeys without the needed
// standing are refused before any actor sees them: they change no state, are logged, counted, and cost
// the sender score (node/messenger.ts disconnects a peer that keeps trying). Standings are cached
// briefly; messages of a sender whose standing is being looked up wait, in order, for the answer.
// Admission follows the same answers: a connection whose announce or heartbeat comes from a registered
// hotkey is admitted (it receives broadcasts); one whose announce comes from an unregistered hotkey is
// disconnected and banned briefly (Messenger.refuse, node/peer-gate.ts REFUSED_BAN_MS).
// A test network may list trusted peers (`trustedPeers`) instead of registering them.
// Workers hold no registration: a worker's standing is an attachment signed by a registered orchestrator
// (protocol/attachment.ts), presented in its announce or a `worker_attachment` message, or carried by a
// coordinator's verify request. A hotkey without a registration is a worker while it holds a valid
// attachment (checked again, issuer's standing included, every STANDING_TTL_MS and at its expiry). An
// orchestrator's issuer (node/attachments.ts) attaches unregistered workers on their first announce.
import { checkAttachment, type Announce, type Attachment, type AttachmentCheck, type AttachmentsRevoked, type Envelope, type MessageType, type Role, type WorkerAttachment } from '../protocol/index.ts'
import type { Chain, Standing } from '../actors/chain/index.ts'
import type { Clock, Logger, Timer } from '../actors/ports.ts'
import type { Messenger } from './messenger.ts'
import { logEvery } from './log-every.ts'
import { RevocationNotices } from './revocation-notices.ts'

export const STANDING_TTL_MS = 30_000 // a registration or permit change is seen within 30 s
/** Issuers' registrations kept at most (PeerAuth.#registrations). */
const MAX_REGISTRATIONS_KEPT = 4096
export const UNREGISTERED_TTL_MS = 10_000 // a refused hotkey is not looked up again for 10 s
const MAX_WAITING_PER_SENDER = 1_024 // messages held while a sender's standing is looked up
const REFUSAL_LOG_EVERY_MS = 60_000 // one log line per sender and message type per minute (floods are counted, not logged)
export const LOOKUP_RETRY_MS = 1_000 // the chain host may not be connected yet
export const LOOKUP_ATTEMPTS = 15 // then the held messages are dropped
/**
 * How long the announce of an unregistered hotkey claiming to be a worker, without an attachment, waits
 * for one (the worker's announce again, carrying it, or a `worker_attachment`: a worker meets its peers
 * before its orchestrator has attached it). Then it is refused as any unregistered announce is. Nothing it sent is acted on meanwhile.
 */
export const ATTACHMENT_WAIT_MS = 5_000 // 5 s

/** What a message needs of its sender. */
export type Need = 'registered' | 'orchestrator' | 'worker' | 'validator'

export interface PeerStanding {
  hotkey: string
  role: Role
  uid: number | null
  stakeRao: bigint
  validatorPermit: boolean
  source: 'chain' | 'trusted' | 'self' | 'attachment'
}

/** An orchestrator's side: attach an unregistered worker on its first announce (null: refused, logged), and its revocations. */
export interface AttachmentPolicy {
  issue (worker: string, announce: Announce): Attachment | null
  isRevoked (a: Attachment): boolean
}

export type AuthorizedHandler = (msg: Envelope, peer: string, standing: PeerStanding) => void

/** Parses `role:hotkey` entries of the `trustedPeers` setting. */
export function parseTrustedPeers (entries: readonly string[]): Map<string, Role> {
  const out = new Map<string, Role>()
  for (const e of entries) {
    const [role, hotkey] = e.split(':') as [Role, string]
    out.set(hotkey, role)
  }
  return out
}

export function satisfies (s: PeerStanding | null, need: Need): boolean {
  if (s === null) return false
  if (need === 'registered') return true
  if (need === 'validator') return s.role === 'validator' && s.validatorPermit
  return s.role === need
}

/** Standings (and verified attachments) kept at most; see PeerAuth#sweep. */
export const STANDINGS_MAX = 16_384
/** Standings or attachments taken in between two sweeps of the expired ones. */
const SWEEP_EVERY = 256

interface CacheEntry { standing: PeerStanding | null, until: number }
interface Waiting { msg: Envelope, peer: string, need: Need, handler: AuthorizedHandler }

export class PeerAuth {
  readonly #self: { hotkey: string, role: Role }
  readonly #clock: Clock
  readonly #log: Logger
  readonly #messenger: Messenger
  readonly #trusted: Map<string, Role>
  #chain: Chain | null = null
  readonly #cache = new Map<string, CacheEntry>()
  readonly #waiting = new Map<string, Waiting[]>()
  readonly #refreshing = new Set<string>()
  /**
   * Lookups in flight, by hotkey: callers asking meanwhile share one (a burst of 200 verify requests
   * naming two workers asks the chain twice, not 200 times). Dropped when the hotkey's standing is
   * invalidated, so a caller after a change never gets an answer begun before it.
   */
  readonly #lookups = new Map<string, Promise<{ standing: PeerStanding | null, until: number }>>()
  /**
   * Issuers' registrations (chain only, never an attachment), kept as standings are and looked up once
   * for concurrent callers: every verify request carries an attachment whose issuer is checked.
   */
  readonly #registrations = new Map<string, CacheEntry>()
  readonly #registrationLookups = new Map<string, Promise<PeerStanding | null>>()
  readonly #logRefusal = logEvery(REFUSAL_LOG_EVERY_MS)
  #sinceSweep = 0
  /** Verified attachments of unregistered workers, by worker hotkey. */
  readonly #attachments = new Map<string, Attachment>()
  /**
   * Workers whose held attachment came carried by another node (a coordinator's verify request), not
   * presented by the worker itself. A carried one never displaces one the worker presented (a coordinator
   * could otherwise plant an attachment it signed for another operator's worker, then revoke it to have
   * the worker dropped), and its issuer's revocation drops it without ending the worker's connection.
   */
  readonly #carried = new Set<string>()
  /** Attachments being checked, by worker hotkey: that sender's messages wait for the answer. */
  readonly #presenting = new Map<string, Promise<void>>()
  /** Unattached workers whose announce waits for their attachment: ends the wait. */
  readonly #awaiting = new Map<string, { done: () => void, timer: Timer }>()
  #policy: AttachmentPolicy | null = null
  /** What issuers told this node they revoked (`attachments_revoked`): refused here too. */
  readonly notices = new RevocationNotices()
  /** The orchestrator this worker attaches to (null: any that issues one). */
  readonly #attachTo: string | null
  /** This node's own attachment (a worker), once its orchestrator issued one. */
  own: Attachment | null = null
  /** Called when this worker receives a new attachment from its orchestrator. */
  onOwnAttachment: (a: Attachment) => void = () => {}
  /** Called when this worker's orchestrator revoked its attachment: it is no longer presented. */
  onOwnAttachmentRevoked: () => void = () => {}
  /** Refused messages by type, for metrics and tests. */
  readonly refused = new Map<string, number>()

  constructor (deps: { self: { hotkey: string, role: Role }, clock: Clock, logger: Logger, messenger: Messenger, trusted?: Map<string, Role>, attachTo?: string | null }) {
    this.#self = deps.self
    this.#attachTo = deps.attachTo ?? null
    this.#clock = deps.clock
    this.#log = deps.logger.child({ component: 'peer-auth' })
    this.#messenger = deps.messenger
    this.#trusted = deps.trusted ?? new Map()
    // First of the announce handlers: the attachment is checked before any handler decides on the sender.
    deps.messenger.on('announce', (msg) => this.#announced(msg))
    deps.messenger.on('worker_attachment', (msg) => this.#handed(msg))
    this.on('attachments_revoked', 'orchestrator', (msg) => this.#revocationsNoticed(msg))
    // This worker's own, from its issuer: taken in the order frames arrive, so an attachment handed right
    // after it (a reinstated worker) is taken in place of the revoked one, not refused as no renewal.
    deps.messenger.on('attachments_revoked', (msg) => this.#ownRevoked(msg))
  }

  /** Our own attachment, revoked by its issuer (whose standing was checked when we took it): dropped. */
  #ownRevoked (msg: Envelope): void {
    const own = this.own
    if (own === null || msg.from !== own.orchestrator) return
    const mine = (msg.body as AttachmentsRevoked).revocations.find(r => r.worker === this.#self.hotkey)
    if (mine === undefined || own.issuedAt > mine.revokedAt) return
    this.own = null
    this.#log.warn({ orchestrator: msg.from, event: 'own_attachment_revoked' }, 'this worker\'s attachment was revoked by its orchestrator')
    this.onOwnAttachmentRevoked()
  }

  /** Revoked by this node's own policy (an issuer), or by the issuer's notice. */
  readonly #revoked = (a: Attachment): boolean => this.#policy?.isRevoked(a) === true || this.notices.covers(a)

  /** This node issues attachments (an orchestrator). */
  useAttachmentPolicy (policy: AttachmentPolicy): void { this.#policy = policy }

  /** How many standings and verified attachments this node holds (bounded: #sweep). */
  get remembered (): { standings: number, attachments: number } { return { standings: this.#cache.size, attachments: this.#attachments.size } }

  /** The verified attachment held for `worker`, if any (for verify requests naming it). */
  attachmentOf (worker: string): Attachment | undefined { return this.#attachments.get(worker) }

  /**
   * Checks `value` as the attachment of `worker` (signature, times, the issuer's standing now, the
   * issuer's revocations when this node is the issuer) and, when valid, holds it as the worker's standing.
   */
  async present (value: unknown, worker: string, opts: { carried?: boolean } = {}): Promise<AttachmentCheck> {
    const pre = checkAttachment(value, { worker, now: this.#clock.now(), issuer: { role: 'orchestrator', uid: 0, source: 'pending' } })
    if (!pre.ok) return pre
    const issuer = pre.attachment.orchestrator === worker ? null : await this.#issuerStanding(pre.attachment.orchestrator)
    const check = checkAttachment(value, { worker, now: this.#clock.now(), issuer, revoked: this.#revoked })
    if (!check.ok) return check
    const held = this.#attachments.get(worker)
    // The attachment held already (every verify request naming a worker carries it): nothing changes,
    // and the worker's cached standing stays (dropping it cost a chain lookup per verify request).
    const carried = opts.carried === true
    if (held !== undefined && held.signature === check.attachment.signature) {
      if (!carried) this.#carried.delete(worker) // the worker presents it itself now
      return check
    }
    // One the worker presented itself, still valid, stays against a carried one; a carried one gives way
    // to the worker's own whatever their expiries.
    const heldByWorker = held !== undefined && !this.#carried.has(worker) && held.expiresAt > this.#clock.now()
    if (carried && heldByWorker) return check
    if (held === undefined || (!carried && this.#carried.has(worker)) || held.expiresAt <= check.attachment.expiresAt) {
      this.#attachments.delete(worker) // a renewal moves to the end: the oldest go first at the cap
      this.#attachments.set(worker, check.attachment)
      if (carried) this.#carried.add(worker)
      else this.#carried.delete(worker)
      this.#sweep()
      const cached = this.#cache.get(worker)
      if (cached !== undefined && (cached.standing === null || cached.standing.source === 'attachment')) this.#cache.delete(worker)
      this.#lookups.delete(worker) // a lookup begun before this attachment was held may answer without it
    }
    return check
  }

  /** Forgets a worker's attachment (revoked here): its standing is looked up afresh. */
  dropAttachment (worker: string): void {
    this.#attachments.delete(worker)
    this.#carried.delete(worker)
    this.#cache.delete(worker)
    this.#lookups.delete(worker)
  }

  /**
   * An orchestrator's notice of what it revoked: it speaks only for attachments it signed itself (the
   * frame is its own). A worker standing on one now covered loses it here at once: its attachment is
   * dropped and its connection ended (refused for a while, as a revoked worker is at its issuer).
   */
  #revocationsNoticed (msg: Envelope): void {
    const issuer = msg.from
    const now = this.#clock.now()
    for (const { worker, revokedAt } of (msg.body as AttachmentsRevoked).revocations) {
      const outcome = this.notices.record(issuer, worker, revokedAt, now)
      if (outcome !== 'recorded') {
        if (this.#logRefusal(`${issuer}/notice/${outcome}`, now)) this.#log.warn({ peer: issuer, worker, revokedAt, reason: outcome, event: 'revocation_notice_ignored' }, `revocation notice ignored: ${outcome}`)
        continue
      }
      if (worker === this.#self.hotkey) continue // this worker's own (#ownRevoked)
      const held = this.#attachments.get(worker)
      if (held === undefined || !this.notices.covers(held)) continue
      const presentedByWorker = !this.#carried.has(worker)
      this.dropAttachment(worker)
      this.#log.info({ worker, orchestrator: issuer, event: 'attachment_revoked_by_issuer' }, 'worker attachment revoked by its issuer')
      // Its standing is looked up afresh: a worker registered on the chain keeps its connection, as does
      // one that presented a new attachment meanwhile (reinstated), and one that did not stand here on
      // this attachment by its own presentation (it came carried).
      if (presentedByWorker) void this.standing(worker).then((s) => { if (s === null && !this.#attachments.has(worker)) this.#messenger.withdraw(worker, 'attachment revoked by its issuer') }, () => {})
    }
  }

  #hold (worker: string, work: () => Promise<void>): void {
    const prev = this.#presenting.get(worker) ?? Promise.resolve()
    const p = prev.then(work).catch((err: Error) => { this.#log.warn({ peer: worker, err: err.message }, 'attachment check failed') })
      .finally(() => { if (this.#presenting.get(worker) === p) this.#presenting.delete(worker) })
    this.#presenting.set(worker, p)
  }

  #refusedAttachment (worker: string, reason: string): void {
    // A refused worker announces again and again: one line per worker and reason a minute.
    if (this.#logRefusal(`${worker}/attachment/${reason}`, this.#clock.now())) this.#log.warn({ peer: worker, reason, event: 'attachment_refused' }, `worker attachment refused: ${reason}`)
  }

  #announced (msg: Envelope): void {
    if (msg.from === this.#self.hotkey) return
    const body = msg.body as Announce
    if (body.role !== 'worker') return
    const issuing = this.#policy !== null && (body.attachTo === null || body.attachTo === this.#self.hotkey)
    if (body.attachment === undefined && !issuing) {
      this.#hold(msg.from, async () => {
        // A chain host not reachable yet is no answer: the wait (and the sender's own lookup after it) goes on.
        const known = await this.standing(msg.from).catch(() => null)
        if (known !== null || this.#attachments.has(msg.from)) return
        await new Promise<void>(resolve => {
          const done = (): void => { entry.timer.cancel(); if (this.#awaiting.get(msg.from) === entry) this.#awaiting.delete(msg.from); resolve() }
          const entry = { done, timer: this.#clock.setTimer(ATTACHMENT_WAIT_MS, done) }
          this.#awaiting.get(msg.from)?.done()
          this.#awaiting.set(msg.from, entry)
        })
      })
      return
    }
    // A worker re-announcing with its new attachment may have an earlier announce waiting for one.
    // Checked at once when an earlier announce is held (waiting, or still reading the sender's standing).
    const presented = body.attachment !== undefined && (this.#awaiting.has(msg.from) || this.#presenting.has(msg.from)) ? this.#presentAwaited(body.attachment, msg.from) : null
    this.#hold(msg.from, async () => {
      if (body.attachment !== undefined) {
        const check = await (presented ?? this.present(body.attachment, msg.from))
        if (check.ok) return
        this.#refusedAttachment(msg.from, check.reason)
      }
      // An orchestrator attaches a worker without a registration on its first contact, within its limits.
      if (this.#policy === null || body.role !== 'worker' || (body.attachTo !== null && body.attachTo !== this.#self.hotkey)) return
      if (await this.standing(msg.from) !== null) return
      const issued = this.#policy.issue(msg.from, body)
      if (issued === null) return
      const check = await this.present(issued, msg.from)
      if (!check.ok) { this.#refusedAttachment(msg.from, check.reason); return }
      this.#messenger.send(msg.from, 'worker_attachment', { attachment: issued })
    })
  }

  #handed (msg: Envelope): void {
    const { attachment } = msg.body as WorkerAttachment
    if (attachment.worker === this.#self.hotkey) {
      // Ours, from the orchestrator that issued it, and only the one we attach to when we name one.
      if (attachment.orchestrator !== msg.from) return
      if (this.#attachTo !== null && msg.from !== this.#attachTo) return
      // Taken (and announced on every connection) only when it is a renewal: none held, the one held in
      // the second half of its life, or from our orchestrator in place of another's. Any registered
      // orchestrator can send attachments; it must not make this worker re-announce at its pace.
      if (!this.#wantsAttachment(msg.from)) return
      this.#hold(this.#self.hotkey, async () => {
        if (!this.#wantsAttachment(msg.from)) return
        const check = await this.present(attachment, this.#self.hotkey)
        if (!check.ok) { this.#refusedAttachment(this.#self.hotkey, check.reason); return }
        this.own = check.attachment
        this.onOwnAttachment(check.attachment)
      })
      return
    }
    // A worker presenting (or renewing) its own attachment; anyone else's is not its to present.
    if (attachment.worker !== msg.from) { this.#messenger.penalize(msg.from, 'unauthorized', 'worker_attachment of another hotkey'); return }
    // Checked at once, not behind the sender's queue: its announce may be waiting for exactly this.
    this.#presentAwaited(attachment, msg.from)
      .then((check) => { if (!check.ok) this.#refusedAttachment(msg.from, check.reason) }, (err: Error) => { this.#log.warn({ peer: msg.from, err: err.message }, 'attachment check failed') })
  }

  /** Whether this worker takes a new attachment of its own from `issuer` now (see #handed). */
  #wantsAttachment (issuer: string): boolean {
    const own = this.own
    if (own === null) return true
    const now = this.#clock.now()
    if (own.expiresAt - now <= (own.expiresAt - own.issuedAt) / 2) return true
    return this.#attachTo !== null && issuer === this.#attachTo && own.orchestrator !== this.#attachTo
  }

  /** Presents an attachment a held announce may be waiting for: the wait lasts as long as the check. */
  #presentAwaited (attachment: unknown, worker: string): Promise<AttachmentCheck> {
    this.#awaiting.get(worker)?.timer.cancel()
    // The held announce may start its wait only while this check runs: whichever wait is held then ends.
    return this.present(attachment, worker).finally(() => this.#awaiting.get(worker)?.done())
  }

  /** The issuer's standing, retried while the chain host cannot answer yet (as a sender's lookup is). */
  async #issuerStanding (hotkey: string): Promise<PeerStanding | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#registeredStanding(hotkey)
      } catch (err) {
        if (attempt >= LOOKUP_ATTEMPTS) throw err
        await new Promise<void>(resolve => this.#clock.setTimer(LOOKUP_RETRY_MS, resolve))
      }
    }
  }

  /** The chain registrations are read from (the hosted DevChain, or a RemoteChain to the host). */
  useChain (chain: Chain): void { this.#chain = chain }

  /** The cached standing of a hotkey: undefined when not looked up (or expired). */
  cached (hotkey: string): PeerStanding | null | undefined {
    const fixed = this.#fixed(hotkey)
    if (fixed !== undefined) return fixed
    const e = this.#cache.get(hotkey)
    return e !== undefined && e.until > this.#clock.now() ? e.standing : undefined
  }

  /**
   * Whether a hotkey's standing satisfies `need`, for synchronous choices (a verifier for a delivery): the
   * fresh cached standing; once it has expired, the last one looked up while a refresh runs (a quiet,
   * connected validator must not drop out of the choice every TTL); false when never looked up, and
   * then a lookup starts so the next choice knows.
   */
  allows (hotkey: string, need: Need): boolean {
    const fresh = this.cached(hotkey)
    if (fresh !== undefined) return satisfies(fresh, need)
    this.#refresh(hotkey)
    return satisfies(this.#cache.get(hotkey)?.standing ?? null, need)
  }

  #refresh (hotkey: string): void {
    if (this.#refreshing.has(hotkey) || this.#chain === null) return
    this.#refreshing.add(hotkey)
    this.standing(hotkey).catch((err: Error & { code?: string }) => {
      this.#log.debug({ peer: hotkey, err: err.code ?? err.message }, 'standing refresh failed; the last known standing stays')
    }).finally(() => this.#refreshing.delete(hotkey))
  }

  /** The standing of a hotkey, from the chain when it is not cached. */
  async standing (hotkey: string): Promise<PeerStanding | null> {
    const known = this.cached(hotkey)
    if (known !== undefined) return known
    if (this.#chain === null && !this.#attachments.has(hotkey)) return null
    const lookup = shared(this.#lookups, hotkey, () => this.#lookUp(hotkey), (entry) => { this.#cache.delete(hotkey); this.#cache.set(hotkey, entry); this.#sweep() })
    return (await lookup).standing
  }

  async #lookUp (hotkey: string): Promise<{ standing: PeerStanding | null, until: number }> {
    let standing = await this.#chainStanding(hotkey)
    let until = this.#clock.now() + (standing === null ? UNREGISTERED_TTL_MS : STANDING_TTL_MS)
    if (standing === null) {
      const held = this.#attachments.get(hotkey)
      if (held !== undefined) {
        // Checked again in full: the issuer may have lost its UID, or revoked it, since.
        const issuer = held.orchestrator === hotkey ? null : await this.#registeredStanding(held.orchestrator)
        const check = checkAttachment(held, { worker: hotkey, now: this.#clock.now(), issuer, revoked: this.#revoked })
        if (check.ok) {
          standing = { hotkey, role: 'worker', uid: null, stakeRao: 0n, validatorPermit: false, source: 'attachment' }
          until = Math.min(this.#clock.now() + STANDING_TTL_MS, held.expiresAt)
        } else if (this.#attachments.get(hotkey) === held) {
          this.#attachments.delete(hotkey)
        }
      }
    }
    return { standing, until }
  }

  /**
   * An issuer's standing: its registration only (chain, trusted or self), never an attachment of its
   * own, as only a registered orchestrator issues attachments. So a lookup never waits on another
   * attachment's lookup: two hotkeys holding attachments from each other cannot wait on each other.
   */
  async #registeredStanding (hotkey: string): Promise<PeerStanding | null> {
    const known = this.cached(hotkey)
    if (known !== undefined) return known?.source === 'attachment' ? null : known
    const kept = this.#registrations.get(hotkey)
    if (kept !== undefined && this.#clock.now() < kept.until) return kept.standing
    return await shared(this.#registrationLookups, hotkey, () => this.#chainStanding(hotkey), (standing) => {
      // Bounded: attachments signed by made-up issuers must not grow it (the oldest go first).
      if (this.#registrations.size >= MAX_REGISTRATIONS_KEPT) this.#registrations.delete(this.#registrations.keys().next().value!)
      this.#registrations.set(hotkey, { standing, until: this.#clock.now() + (standing === null ? UNREGISTERED_TTL_MS : STANDING_TTL_MS) })
    })
  }

  /** The hotkey's registration on the chain (null: none, or no chain). */
  async #chainStanding (hotkey: string): Promise<PeerStanding | null> {
    const fixed = this.#fixed(hotkey)
    if (fixed !== undefined) return fixed
    if (this.#chain === null) return null
    const st: Standing | null = await this.#chain.standing(hotkey)
    return st === null ? null : { hotkey, role: st.role, uid: st.uid, stakeRao: st.stakeRao, validatorPermit: st.validatorPermit, source: 'chain' }
  }

  /** The role a hotkey had when last looked up (however long ago), or undefined: for disconnect handling. */
  lastKnownRole (hotkey: string): Role | undefined {
    return (this.#fixed(hotkey) ?? this.#cache.get(hotkey)?.standing ?? undefined)?.role
  }

  /** Whether the hotkey was registered when last looked up (however long ago): for frame budgets. */
  wasRegistered (hotkey: string): boolean {
    return this.#fixed(hotkey) !== undefined || (this.#cache.get(hotkey)?.standing ?? null) !== null
  }

  /**
   * Every SWEEP_EVERY standings or attachments taken in: forgets "not registered" answers that have
   * expired and attachments past their expiry (every fresh hotkey a Sybil announces with, or a rogue
   * issuer mints, would otherwise stay for ever), and keeps at most STANDINGS_MAX of each, the oldest
   * "not registered" answers out first. Registered standings stay: they are the last known ones.
   */
  #sweep (): void {
    if (++this.#sinceSweep < SWEEP_EVERY && this.#cache.size <= STANDINGS_MAX && this.#attachments.size <= STANDINGS_MAX) return
    this.#sinceSweep = 0
    const now = this.#clock.now()
    for (const [h, e] of this.#cache) if (e.standing === null && e.until <= now) this.#cache.delete(h)
    for (const [w, a] of this.#attachments) if (a.expiresAt <= now) this.#attachments.delete(w)
    for (const w of this.#carried) if (!this.#attachments.has(w)) this.#carried.delete(w)
    // Over the cap, only "not registered" answers go (oldest first): registered standings are bounded by
    // the chain's registrations and the attachments kept, and are what a disconnect is handled with.
    for (const [h, e] of this.#cache) { if (this.#cache.size <= STANDINGS_MAX) break; if (e.standing === null) this.#cache.delete(h) }
    for (const w of this.#attachments.keys()) { if (this.#attachments.size <= STANDINGS_MAX) break; this.#attachments.delete(w) }
  }

  /** Forgets a cached standing (a registration just changed). */
  forget (hotkey: string): void {
    this.#cache.delete(hotkey); this.#lookups.delete(hotkey)
    this.#registrations.delete(hotkey); this.#registrationLookups.delete(hotkey)
  }

  /**
   * Delivers `type` messages to `handler` only from senders whose standing satisfies `need`; others are
   * refused. Messages of one sender keep their order, also while its standing is looked up.
   */
  on (type: MessageType, need: Need, handler: AuthorizedHandler): void {
    this.#messenger.on(type, (msg, peer) => this.#admit({ msg, peer, need, handler }))
  }

  #admit (w: Waiting): void {
    const from = w.msg.from
    const queue = this.#waiting.get(from)
    if (queue !== undefined) {
      if (queue.length < MAX_WAITING_PER_SENDER) queue.push(w)
      return
    }
    const known = this.#presenting.has(from) ? undefined : this.cached(from)
    if (known !== undefined) return this.#decide(w, known)
    this.#waiting.set(from, [w])
    this.#lookup(from, 1)
  }

  /**
   * Resolves once no attachment of `from` is being checked: a worker's announce held for an attachment
   * may be followed by the announce that carries it, checked after the first (#hold chains them); the
   * sender's standing is read after the last of them, not the one that was running when it was asked.
   */
  async #presented (from: string): Promise<void> {
    for (let p = this.#presenting.get(from); p !== undefined; p = this.#presenting.get(from)) await p
  }

  #lookup (from: string, attempt: number): void {
    ;(this.#presenting.has(from) ? this.#presented(from).then(() => this.standing(from)) : this.standing(from)).then(
      (s) => { const list = this.#waiting.get(from) ?? []; this.#waiting.delete(from); for (const x of list) this.#decide(x, s) },
      (err: Error & { code?: string }) => {
        if (attempt < LOOKUP_ATTEMPTS) { this.#clock.setTimer(LOOKUP_RETRY_MS, () => this.#lookup(from, attempt + 1)); return }
        // No answer from the chain: nothing is admitted on a guess, and the sender is not blamed.
        const list = this.#waiting.get(from) ?? []
        this.#waiting.delete(from)
        for (const x of list) this.#count(x.msg.type)
        this.#log.warn({ peer: from, err: err.code ?? err.message, dropped: list.length, event: 'standing_unavailable' }, 'could not read a sender\'s registration; its messages were dropped')
      }
    )
  }

  #decide (w: Waiting, s: PeerStanding | null): void {
    const membership = w.msg.type === 'announce' || w.msg.type === 'heartbeat'
    if (membership && s !== null && w.peer !== 'self') this.#messenger.admit(w.msg.from, w.peer)
    if (satisfies(s, w.need)) {
      try { w.handler(w.msg, w.peer, s!) } catch (err) { this.#log.error({ err, type: w.msg.type }, 'message handler failed') }
      return
    }
    this.#count(w.msg.type)
    const detail = `${w.msg.type} needs ${w.need}; sender is ${s === null ? 'not registered' : `${s.role}${s.role === 'validator' && !s.validatorPermit ? ' without a permit' : ''}`}`
    if (this.#logRefusal(`${w.msg.from}/${w.msg.type}`, this.#clock.now())) {
      this.#log.warn({ peer: w.msg.from, type: w.msg.type, need: w.need, registered: s !== null, refused: this.refused.get(w.msg.type), event: 'message_refused' }, detail)
    }
    // Announces and heartbeats of an unregistered node are not an offence; role-scoped messages are. An
    // announce without any registration ends the connection: nothing it could say would be admitted.
    if (w.msg.type === 'announce' && s === null) this.#messenger.refuse(w.msg.from, w.peer, detail)
    else if (!membership) this.#messenger.penalize(w.msg.from, 'unauthorized', detail)
  }

  #count (type: string): void { this.refused.set(type, (this.refused.get(type) ?? 0) + 1) }

  #fixed (hotkey: string): PeerStanding | undefined {
    if (hotkey === this.#self.hotkey) return { hotkey, role: this.#self.role, uid: null, stakeRao: 0n, validatorPermit: true, source: 'self' }
    const role = this.#trusted.get(hotkey)
    return role === undefined ? undefined : { hotkey, role, uid: null, stakeRao: 0n, validatorPermit: role === 'validator', source: 'trusted' }
  }
}

/**
 * One lookup per key at a time: callers while `inflight` holds one share it. `keep` stores an answer only
 * when nothing invalidated the key meanwhile (removing it from `inflight`), so a caller after a change
 * never gets an answer begun before it, and none is cached over the change.
 */
function shared<T> (inflight: Map<string, Promise<T>>, key: string, start: () => Promise<T>, keep: (value: T) => void): Promise<T> {
  const running = inflight.get(key)
  if (running !== undefined) return running
  const started = start()
  inflight.set(key, started)
  const settled = (): void => { if (inflight.get(key) === started) inflight.delete(key) }
  started.then((value) => {
    if (inflight.get(key) === started) keep(value)
    settled()
  }, settled)
  return started
}
