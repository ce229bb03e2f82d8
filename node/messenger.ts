// Signed messages over the transport, addressed by hotkey. Implements the Network port.
// Every inbound frame is verified (protocol/codec.ts); a bad one is dropped with a logged reason.
// A connection is bound to a hotkey by a valid `announce` that names this very connection (the sender's
// and our Noise keys); frames on it from another sender are dropped, so one peer cannot speak for
// another, and a captured announce replayed elsewhere binds nothing. Frame ids are remembered for the
// freshness window, so a frame is accepted once. Each connection has a frame budget (token bucket,
// checked before any decoding) and a score, as gossipsub scores peers: floods, invalid or repeated frames
// and unauthorized messages cost points, and a peer below the threshold is disconnected and banned with
// a growing back-off. Connections are admitted (node/peer-gate.ts): broadcasts go to admitted peers only,
// pending connections are capped and must announce within a deadline, and a peer whose announce is
// refused (node/peer-auth.ts) is disconnected and banned for REFUSED_BAN_MS.
// What this node sends is paced to stay inside the same budget at the receiver (OUTBOUND_SHARE of it):
// frames beyond it wait in a per-connection queue, signed when they go, instead of being dropped there
// unseen. A burst of 200 verify requests or offers arrives a little later, not 100 of them never.
// Heartbeats and chain lookups go ahead of queued task frames, and nothing waits past MAX_OUTBOUND_WAIT_MS.
import { randomBytes } from 'node:crypto'
import { encodeFrame, decodeFrame, MAX_CLOCK_SKEW_MS, type Envelope, type KeyPair, type MessageType, type MessageBody, type AnnounceFacts, type DropReason } from '../protocol/index.ts'
import type { Clock, Logger, Network, Timer } from '../actors/ports.ts'
import { PeerGate, type GateLimits, type GateCloseReason } from './peer-gate.ts'

export interface FrameLink {
  /** This node's Noise public key (hex) on the link: what announces name as the recipient. */
  readonly publicKey: string
  send (peer: string, frame: Uint8Array): boolean
  /** Closes the connection to `peer` and refuses it for `banMs`. */
  disconnect? (peer: string, banMs: number): void
}

export interface PeerLimits {
  /** Frames per second a connection may send on average. */
  framesPerSecond: number
  /** Frames a connection may send in a burst. */
  burst: number
  /** Score below which a peer is disconnected and banned. */
  disconnectScore: number
  /** Points a peer regains per second (up to 0). */
  decayPerSecond: number
  /** First ban; each later ban of the same peer doubles, up to maxBanMs. */
  banMs: number
  maxBanMs: number
  /** The budget of a connection whose hotkey is not (known to be) registered: it can do little but announce. */
  unregisteredFramesPerSecond: number
  unregisteredBurst: number
  /** Time frames may take in one event-loop turn before the rest wait for later turns (FRAME_SLICE_MS). */
  sliceMs: number
}

/**
 * Frames are verified inline until this much time went to them in one event-loop turn; then they wait
 * in per-connection queues drained round-robin on later turns, so HTTP requests (/healthz) and timers run
 * in between and one busy peer cannot starve another's frames.
 */
export const FRAME_SLICE_MS = 5

export const PEER_LIMITS: PeerLimits = {
  // Each frame admitted costs a signature check (~0.1-1 ms of CPU): the budget bounds what one peer can
  // make us spend. A busy coordinator ↔ orchestrator link (per chunk a result and an ack, and the worker's
  // accept relayed in batches of up to 64) stays far below.
  framesPerSecond: 100,
  burst: 100,
  disconnectScore: -100,
  decayPerSecond: 5,
  banMs: 60_000, // 1 min, doubling
  maxBanMs: 3_600_000, // 1 h
  unregisteredFramesPerSecond: 5,
  unregisteredBurst: 20,
  sliceMs: FRAME_SLICE_MS
}

/**
 * The share of a receiver's budget (rate and burst) this node's own sends keep to: the margin covers
 * frames that leave spaced and arrive together, and the few frames sent outside the pacing (announces).
 */
export const OUTBOUND_SHARE = 0.8
/**
 * How long a frame may expect to wait for its connection's budget: a send that would queue past this
 * (the rate times this long, 400 frames at the default budget) is refused (false) and logged, as a send
 * on a dead connection is. Every timeout that rests on a frame (a chain lookup's 10 s, a peer's 15 s of
 * silence, an offer's wave) is longer.
 */
export const MAX_OUTBOUND_WAIT_MS = 5_000
/**
 * Frames that go ahead of the queued bulk (still within the budget): liveness and chain lookups, whose
 * order against task frames means nothing. Task frames keep their order (a cancel never overtakes its offer).
 */
const AHEAD: ReadonlySet<MessageType> = new Set(['heartbeat', 'chain_request', 'chain_response'] as MessageType[])

/** Score cost of each kind of misbehaviour. */
export const PENALTY_POINTS: Partial<Record<DropReason, number>> & { default: number } = {
  rate_limited: 1, stale: 2, not_for_us: 2, duplicate: 5, unauthorized: 5, default: 10
} as never

/** Seen frame ids kept at most (oldest forgotten first); rate limits keep this far from full. */
const MAX_SEEN_IDS = 200_000
/** Frames one connection may have waiting to be read: 10 s of a registered peer's budget. */
export const MAX_BACKLOG_FRAMES = 1_000

/** Why a connection was closed by this node (a bounded metric label). */
export type DisconnectReason = 'score' | 'refused' | 'banned' | 'superseded' | GateCloseReason

export interface MessengerOptions {
  /** Caps and deadlines of connections not yet admitted (node/peer-gate.ts). */
  gate?: Partial<GateLimits>
  /**
   * When a peer is admitted (receives broadcasts): `announce`, once its announce binds the connection
   * (no registrations to check: in-memory links, benches); `auth`, once PeerAuth finds its hotkey
   * registered (`admit`), the node's mode.
   */
  admission?: 'announce' | 'auth'
}

interface PeerState { tokens: number, refilledAt: number, score: number, scoredAt: number, warned: boolean, full: boolean }
/** This node's sends to one connection: the tokens left of its share of the receiver's budget, and what waits. */
interface Outbound { tokens: number, refilledAt: number, ahead: Array<() => Uint8Array>, queue: Array<() => Uint8Array>, timer: Timer | null, warned: boolean }

export type InboundHandler = (msg: Envelope, peer: string) => void

/** Bans remembered at most (connection keys, and hotkeys), oldest forgotten first. */
export const BAN_MEMORY_MAX = 16_384
/** Bans recorded between two sweeps of those that are over. */
const BAN_SWEEP_EVERY = 256

export class Messenger implements Network {
  readonly self: string
  readonly #key: KeyPair
  readonly #clock: Clock
  readonly #log: Logger
  #link: FrameLink | null = null
  readonly #peerOfHotkey = new Map<string, string>()
  readonly #hotkeyOfPeer = new Map<string, string>()
  readonly #handlers = new Map<string, InboundHandler[]>()
  #onConnect: ((peer: string) => void) | null = null
  #onDisconnect: ((hotkey: string | undefined, peer: string) => void) | null = null
  /** Counts of dropped frames by reason, for metrics and tests. */
  readonly dropped = new Map<string, number>()
  /**
   * Peers disconnected for their score, by connection key. An entry outlives its ban by maxBanMs (the
   * memory that doubles a repeat offender's next ban), then goes; at most BAN_MEMORY_MAX are kept.
   */
  readonly disconnected = new Map<string, { hotkey: string | undefined, until: number, bans: number }>()
  #bansSinceSweep = 0
  readonly #limits: PeerLimits
  readonly #peers = new Map<string, PeerState>()
  /** `from/id` of every frame accepted within the freshness window → when it may be forgotten. */
  readonly #seen = new Map<string, number>()
  readonly #bannedHotkeys = new Map<string, number>()
  /** Frames waiting for a later turn, per connection (Map order = round-robin order), with when each arrived. */
  readonly #backlog = new Map<string, Array<{ frame: Uint8Array, at: number }>>()
  /** Sends paced per connection (OUTBOUND_SHARE of the receiver's budget). */
  readonly #outbound = new Map<string, Outbound>()
  /** Connections this node closed whose close the transport has not reported yet: their frames are ignored. */
  readonly #closing = new Set<string>()
  #drainScheduled = false
  #turnStart = -1
  /** Whether a hotkey is registered (node/peer-auth.ts): registered peers get the full frame budget. */
  isRegistered: (hotkey: string) => boolean = () => true
  /** Called on every disconnect this node makes, with its reason (metrics). */
  onDisconnected: (reason: DisconnectReason) => void = () => {}
  /** Connections this node closed, by reason, for metrics and tests. */
  readonly disconnects = new Map<DisconnectReason, number>()
  readonly gate: PeerGate
  readonly #admission: 'announce' | 'auth'

  constructor (key: KeyPair, clock: Clock, logger: Logger, limits: Partial<PeerLimits> = {}, opts: MessengerOptions = {}) {
    this.#key = key
    this.self = key.address
    this.#clock = clock
    this.#log = logger.child({ component: 'messenger' })
    this.#limits = { ...PEER_LIMITS, ...limits }
    this.#admission = opts.admission ?? 'announce'
    this.gate = new PeerGate({ clock, limits: opts.gate, close: (peer, reason) => this.#close(peer, reason, 0, `closed by the connection gate: ${reason}`) })
  }

  attach (link: FrameLink, hooks: { onConnect (peer: string): void, onDisconnect (hotkey: string | undefined, peer: string): void }): void {
    this.#link = link
    this.#onConnect = hooks.onConnect
    this.#onDisconnect = hooks.onDisconnect
  }

  on (type: MessageType | '*', handler: InboundHandler): void {
    const list = this.#handlers.get(type) ?? []
    list.push(handler)
    this.#handlers.set(type, list)
  }

  /** Signs a frame as this node: also for sending to a peer not yet bound to a hotkey. */
  frame<T extends MessageType> (type: T, body: MessageBody<T>, to: string | null = null): Uint8Array {
    return encodeFrame(this.#key, type, body, { ts: this.#clock.now(), to })
  }

  send<T extends MessageType> (to: string, type: T, body: MessageBody<T>): boolean {
    if (to === this.self) {
      // A node that is both coordinator and orchestrator talks to itself without the wire.
      const msg = { v: 1, type, from: this.self, to, id: 'local', ts: this.#clock.now(), body } as unknown as Envelope
      // Evidence of a message to ourselves is a frame we sign, made only if a handler asks for it.
      let raw: Uint8Array | undefined
      Object.defineProperty(msg, 'raw', { get: () => (raw ??= this.frame(type, body, to)), enumerable: false })
      queueMicrotask(() => this.#deliver(msg, 'self'))
      return true
    }
    const peer = this.#peerOfHotkey.get(to)
    if (peer === undefined || this.#link === null) return false
    return this.#emit(peer, () => this.frame(type, body, to), AHEAD.has(type))
  }

  sendToPeer<T extends MessageType> (peer: string, type: T, body: MessageBody<T>): boolean {
    return this.#link?.send(peer, this.frame(type, body)) ?? false
  }

  /** Sends this node's announce on one connection, bound to it (both Noise keys and a fresh nonce). */
  announceTo (peer: string, facts: AnnounceFacts): boolean {
    if (this.#link === null) return false
    return this.sendToPeer(peer, 'announce', { ...facts, noiseKey: this.#link.publicKey, peerNoiseKey: peer, nonce: randomBytes(16).toString('hex') })
  }

  /** Sends to every admitted peer: a connection not (yet) admitted is told nothing. */
  broadcast<T extends MessageType> (type: T, body: MessageBody<T>): number {
    const link = this.#link
    if (link === null) return 0
    let frame: Uint8Array | undefined
    const make = (): Uint8Array => (frame ??= this.frame(type, body))
    let n = 0
    for (const peer of this.gate.admitted()) if (this.#emit(peer, make, AHEAD.has(type))) n++
    return n
  }

  /** Frames waiting for a connection's budget now (tests, metrics). */
  outboundQueued (hotkey?: string): number {
    const waiting = (o: Outbound | undefined): number => o === undefined ? 0 : o.ahead.length + o.queue.length
    if (hotkey !== undefined) return waiting(this.#outbound.get(this.#peerOfHotkey.get(hotkey) ?? ''))
    let n = 0
    for (const o of this.#outbound.values()) n += waiting(o)
    return n
  }

  /**
   * Sends a frame on `peer` within this node's share of the receiver's budget, or queues it (made, and
   * so signed and stamped, when it goes; `ahead`: before the queued bulk). False when the connection is
   * gone or the frame would wait longer than MAX_OUTBOUND_WAIT_MS.
   */
  #emit (peer: string, make: () => Uint8Array, ahead: boolean): boolean {
    const link = this.#link
    if (link === null) return false
    const o = this.#refillOutbound(peer)
    if (o.ahead.length === 0 && (ahead || o.queue.length === 0) && o.tokens >= 1) {
      o.tokens -= 1
      return link.send(peer, make())
    }
    const lane = ahead ? o.ahead : o.queue
    if (lane.length >= Math.ceil(this.#limits.framesPerSecond * OUTBOUND_SHARE * MAX_OUTBOUND_WAIT_MS / 1000)) {
      this.#count('send_queue_full')
      if (!o.warned) { o.warned = true; this.#log.warn({ peer: peer.slice(0, 16), queued: o.ahead.length + o.queue.length, event: 'send_queue_full' }, 'frames to a peer would wait past the bound; sends refused') }
      return false
    }
    lane.push(make)
    this.#scheduleOutbound(peer, o)
    return true
  }

  #refillOutbound (peer: string): Outbound {
    const now = this.#clock.now()
    const burst = Math.max(1, Math.floor(this.#limits.burst * OUTBOUND_SHARE))
    let o = this.#outbound.get(peer)
    if (o === undefined) {
      o = { tokens: burst, refilledAt: now, ahead: [], queue: [], timer: null, warned: false }
      this.#outbound.set(peer, o)
      return o
    }
    o.tokens = Math.min(burst, o.tokens + (now - o.refilledAt) / 1000 * this.#limits.framesPerSecond * OUTBOUND_SHARE)
    o.refilledAt = now
    return o
  }

  #scheduleOutbound (peer: string, o: Outbound): void {
    if (o.timer !== null) return
    const waitMs = Math.max(1, Math.ceil((1 - o.tokens) / (this.#limits.framesPerSecond * OUTBOUND_SHARE) * 1000))
    o.timer = this.#clock.setTimer(waitMs, () => {
      o.timer = null
      if (this.#outbound.get(peer) !== o) return // the connection went meanwhile
      this.#refillOutbound(peer)
      while ((o.ahead.length > 0 || o.queue.length > 0) && o.tokens >= 1) {
        o.tokens -= 1
        const make = o.ahead.length > 0 ? o.ahead.shift()! : o.queue.shift()!
        if (this.#link === null || !this.#link.send(peer, make())) { this.#dropOutbound(peer); return }
      }
      if (o.ahead.length > 0 || o.queue.length > 0) this.#scheduleOutbound(peer, o)
      else o.warned = false
    })
  }

  /** Forgets what waits for a connection that went away. */
  #dropOutbound (peer: string): void {
    const o = this.#outbound.get(peer)
    if (o === undefined) return
    o.timer?.cancel()
    this.#outbound.delete(peer)
  }

  /** The peer on `peer` (bound to `hotkey`) is registered: it is admitted and receives broadcasts. */
  admit (hotkey: string, peer: string): void {
    if (this.#hotkeyOfPeer.get(peer) !== hotkey || this.isBanned(peer) || this.#closing.has(peer)) return
    this.gate.admit(peer)
  }

  /**
   * The announce of `hotkey` on `peer` was refused (the hotkey holds no registration): the connection is
   * closed at once, told nothing more, and the connection key and the hotkey are refused for
   * refusedBanMs (node/peer-gate.ts), after which they may try again.
   */
  refuse (hotkey: string, peer: string, detail: string): void {
    if (this.#hotkeyOfPeer.get(peer) !== hotkey || this.isBanned(peer) || this.#closing.has(peer) || this.gate.isAdmitted(peer)) return
    const now = this.#clock.now()
    const banMs = this.gate.limits.refusedBanMs
    const prior = this.disconnected.get(peer)
    this.#rememberBan(peer, { hotkey, until: Math.max(prior?.until ?? 0, now + banMs), bans: prior?.bans ?? 0 })
    this.#banHotkey(hotkey, Math.max(this.#bannedHotkeys.get(hotkey) ?? 0, now + banMs))
    this.#banned(now)
    this.#close(peer, 'refused', banMs, detail, hotkey)
  }

  /** Ends the connection of an admitted peer whose standing was withdrawn (a revoked worker), refusing it for refusedBanMs. */
  withdraw (hotkey: string, detail: string): void {
    const peer = this.#peerOfHotkey.get(hotkey)
    if (peer === undefined || this.#closing.has(peer)) return
    const banMs = this.gate.limits.refusedBanMs
    this.#banHotkey(hotkey, Math.max(this.#bannedHotkeys.get(hotkey) ?? 0, this.#clock.now() + banMs))
    this.#banned(this.#clock.now())
    this.#close(peer, 'refused', banMs, detail, hotkey)
  }

  hotkeyOf (peer: string): string | undefined { return this.#hotkeyOfPeer.get(peer) }
  peerOf (hotkey: string): string | undefined { return this.#peerOfHotkey.get(hotkey) }
  /** The remote IP of `hotkey`'s connection, when it is connected and the transport knows the address. */
  addressOf (hotkey: string): string | null {
    const peer = this.#peerOfHotkey.get(hotkey)
    return peer === undefined ? null : this.gate.addressOf(peer)
  }
  connectedHotkeys (): string[] { return [...this.#peerOfHotkey.keys()] }

  /** A connection is up (`address`: the remote IP, when the transport knows it). */
  peerUp (peer: string, address: string | null = null): void {
    this.gate.open(peer, address)
    this.#onConnect?.(peer)
  }

  /**
   * After a ban is recorded: every BAN_SWEEP_EVERY bans, forgets bans long over (a peer refused once and
   * never seen again must not stay in memory for ever), and keeps at most BAN_MEMORY_MAX of each kind,
   * oldest out first.
   */
  #banned (now: number): void {
    if (++this.#bansSinceSweep < BAN_SWEEP_EVERY && this.disconnected.size <= BAN_MEMORY_MAX && this.#bannedHotkeys.size <= BAN_MEMORY_MAX) return
    this.#bansSinceSweep = 0
    for (const [peer, d] of this.disconnected) if (d.until + this.#limits.maxBanMs <= now) this.disconnected.delete(peer)
    for (const [hotkey, until] of this.#bannedHotkeys) if (until <= now) this.#bannedHotkeys.delete(hotkey)
    // Over the cap: bans that are over go first, then the oldest (a ban renewed moved to the end).
    for (const [k, d] of this.disconnected) { if (this.disconnected.size <= BAN_MEMORY_MAX) break; if (d.until <= now) this.disconnected.delete(k) }
    for (const k of this.disconnected.keys()) { if (this.disconnected.size <= BAN_MEMORY_MAX) break; this.disconnected.delete(k) }
    for (const k of this.#bannedHotkeys.keys()) { if (this.#bannedHotkeys.size <= BAN_MEMORY_MAX) break; this.#bannedHotkeys.delete(k) }
  }

  /** Records a ban as the newest entry (a renewed ban is not the first evicted at the cap). */
  #rememberBan (peer: string, d: { hotkey: string | undefined, until: number, bans: number }): void {
    this.disconnected.delete(peer)
    this.disconnected.set(peer, d)
  }

  #banHotkey (hotkey: string, until: number): void {
    this.#bannedHotkeys.delete(hotkey)
    this.#bannedHotkeys.set(hotkey, until)
  }

  /** True while `peer` (a connection key) or `hotkey` is banned for its score. */
  isBanned (peer: string, hotkey?: string): boolean {
    const now = this.#clock.now()
    const p = this.disconnected.get(peer)
    if (p !== undefined && p.until > now) return true
    if (hotkey !== undefined && (this.#bannedHotkeys.get(hotkey) ?? 0) > now) return true
    return false
  }

  /** Records misbehaviour of the peer bound to `hotkey` (an unauthorized message, say); may disconnect it. */
  penalize (hotkey: string, reason: DropReason, detail: string): void {
    const peer = this.#peerOfHotkey.get(hotkey)
    this.#drop(peer ?? hotkey.slice(0, 16), reason, detail, peer)
  }

  /** The current score of a connection (0 = clean; more negative = worse). */
  scoreOf (peer: string): number {
    const st = this.#peers.get(peer)
    if (st === undefined) return 0
    return Math.min(0, st.score + (this.#clock.now() - st.scoredAt) / 1000 * this.#limits.decayPerSecond)
  }

  peerDown (peer: string): void {
    const hotkey = this.#hotkeyOfPeer.get(peer)
    this.#hotkeyOfPeer.delete(peer)
    this.#peers.delete(peer)
    this.#backlog.delete(peer)
    this.#dropOutbound(peer)
    this.#closing.delete(peer)
    this.gate.closed(peer)
    // A hotkey that reconnected (or opened a newer session) elsewhere is still here: only the old
    // connection went away, so nobody is told the hotkey left.
    if (hotkey !== undefined && this.#peerOfHotkey.get(hotkey) !== peer) return
    if (hotkey !== undefined) this.#peerOfHotkey.delete(hotkey)
    this.#onDisconnect?.(hotkey, peer)
  }

  /** Entry point for every inbound frame from the transport. Never throws. */
  receive (peer: string, frame: Uint8Array): void {
    const now = this.#clock.now()
    if (this.isBanned(peer) || this.#closing.has(peer)) { this.#count('banned'); return }
    // The budget is checked before the frame is decoded or its signature verified: a flood costs us a
    // counter increment per frame, not a signature check.
    if (!this.#takeToken(peer, now)) return this.#drop(peer, 'rate_limited', 'frame budget exceeded')
    const waiting = this.#backlog.get(peer)
    if (waiting !== undefined || this.#turnSpent() > this.#limits.sliceMs) {
      // What waits per connection is bounded: past it the node is far behind, and a frame more is dropped
      // unread (counted; no score: the lag is this node's, not the peer's).
      if (waiting !== undefined && waiting.length >= MAX_BACKLOG_FRAMES) { this.#count('backlog_full'); return }
      if (waiting !== undefined) waiting.push({ frame, at: now }); else this.#backlog.set(peer, [{ frame, at: now }])
      this.#scheduleDrain()
      return
    }
    this.#process(peer, frame, now)
  }

  /**
   * When the oldest frame received and not yet read arrived (this node's clock), or null when none waits.
   * What a busy node has not read yet it cannot judge by: the overseer counts no stall time past it.
   */
  unreadSince (): number | null {
    let oldest: number | null = null
    for (const q of this.#backlog.values()) {
      const at = q[0]?.at
      if (at !== undefined && (oldest === null || at < oldest)) oldest = at
    }
    return oldest
  }

  /** Resolves once every frame received so far has been processed (tests). */
  async settled (): Promise<void> {
    while (this.#backlog.size > 0 || this.#drainScheduled) await new Promise(resolve => setImmediate(resolve))
  }

  /** Milliseconds spent on frames in this event-loop turn. */
  #turnSpent (): number {
    const t = performance.now()
    if (this.#turnStart < 0) {
      this.#turnStart = t
      setImmediate(() => { this.#turnStart = -1 })
      return 0
    }
    return t - this.#turnStart
  }

  #scheduleDrain (): void {
    if (this.#drainScheduled) return
    this.#drainScheduled = true
    setImmediate(() => this.#drain())
  }

  #drain (): void {
    this.#drainScheduled = false
    const start = performance.now()
    // At least one frame a turn, however short the slice: the backlog always moves.
    do {
      for (const [peer, q] of this.#backlog) {
        const { frame } = q.shift()!
        // Served: to the back of the round, so a turn cut short by the slice resumes with the next peer.
        this.#backlog.delete(peer)
        if (q.length > 0) this.#backlog.set(peer, q)
        if (!this.isBanned(peer) && !this.#closing.has(peer)) this.#process(peer, frame, this.#clock.now())
        if (performance.now() - start > this.#limits.sliceMs) break
      }
    } while (this.#backlog.size > 0 && performance.now() - start <= this.#limits.sliceMs)
    if (this.#backlog.size > 0) this.#scheduleDrain()
  }

  #process (peer: string, frame: Uint8Array, now: number): void {
    const res = decodeFrame(frame, { now, self: this.self, seen: (from, id) => this.#seen.has(`${from}/${id}`) })
    if (!res.ok) return this.#drop(peer, res.reason, res.detail)
    const msg = res.msg
    const seenKey = `${msg.from}/${msg.id}`
    const bound = this.#hotkeyOfPeer.get(peer)
    if (msg.type === 'announce') {
      const body = msg.body as MessageBody<'announce'>
      if (body.hotkey !== msg.from) return this.#drop(peer, 'sender_mismatch', 'announce names another hotkey')
      if (bound !== undefined && bound !== msg.from) return this.#drop(peer, 'sender_mismatch', `connection is bound to ${bound}`)
      if (msg.from === this.self) return this.#drop(peer, 'sender_mismatch', 'peer claims our own hotkey')
      if (body.noiseKey !== peer || (this.#link !== null && body.peerNoiseKey !== this.#link.publicKey)) {
        return this.#drop(peer, 'announce_unbound', 'announce was made for another connection')
      }
      if (this.isBanned(peer, msg.from)) {
        // A banned hotkey on a fresh connection: closed for the rest of its ban, so it cannot spin.
        this.#count('banned')
        return this.#close(peer, 'banned', Math.max(0, (this.#bannedHotkeys.get(msg.from) ?? 0) - now), `${msg.from} is banned`, msg.from)
      }
      // One session per hotkey: an older connection still bound to it is closed (no ban). Otherwise one
      // hotkey could hold any number of connections, each with a full frame budget of its own.
      const older = this.#peerOfHotkey.get(msg.from)
      if (older !== undefined && older !== peer && this.#hotkeyOfPeer.get(older) === msg.from) {
        this.#close(older, 'superseded', 0, `${msg.from} announced on a newer connection`, msg.from)
      }
      this.#hotkeyOfPeer.set(peer, msg.from)
      this.#peerOfHotkey.set(msg.from, peer)
      this.gate.announced(peer)
      if (this.#admission === 'announce') this.gate.admit(peer)
    } else if (bound === undefined) {
      return this.#drop(peer, 'not_announced', `${msg.type} before announce`)
    } else if (bound !== msg.from) {
      return this.#drop(peer, 'sender_mismatch', `connection is bound to ${bound}, frame from ${msg.from}`)
    }
    this.#remember(seenKey, now)
    msg.raw = frame
    this.#deliver(msg, peer)
  }

  #takeToken (peer: string, now: number): boolean {
    let st = this.#peers.get(peer)
    if (st === undefined) {
      st = { tokens: this.#limits.unregisteredBurst, refilledAt: now, score: 0, scoredAt: now, warned: false, full: false }
      this.#peers.set(peer, st)
    }
    const hotkey = this.#hotkeyOfPeer.get(peer)
    const full = hotkey !== undefined && this.isRegistered(hotkey)
    const burst = full ? this.#limits.burst : this.#limits.unregisteredBurst
    // Known registered now: the full budget from here on.
    if (full && !st.full) { st.full = true; st.tokens = burst }
    st.tokens = Math.min(burst, st.tokens + (now - st.refilledAt) / 1000 * (full ? this.#limits.framesPerSecond : this.#limits.unregisteredFramesPerSecond))
    st.refilledAt = now
    if (st.tokens < 1) return false
    st.tokens -= 1
    return true
  }

  /**
   * Remembers a frame id for as long as a frame with it could still be fresh: its `ts` is within the
   * skew of now, so at most twice the skew from now. Every entry lives that long from when it is added,
   * so the map's order (insertion) is expiry order: the expired are at its head and go from there, a few
   * at a time, never by a scan of the whole map (a peer's made-up `ts` cannot make one entry outlive
   * those added after it).
   */
  #remember (key: string, now: number): void {
    for (const [k, exp] of this.#seen) {
      if (exp > now) break
      this.#seen.delete(k)
    }
    if (this.#seen.size >= MAX_SEEN_IDS) this.#seen.delete(this.#seen.keys().next().value!)
    this.#seen.set(key, now + 2 * MAX_CLOCK_SKEW_MS)
  }

  /** Frame ids remembered against replays (tests, metrics). */
  get seenIds (): number { return this.#seen.size }

  #count (reason: string): void { this.dropped.set(reason, (this.dropped.get(reason) ?? 0) + 1) }

  #score (peer: string, points: number): void {
    if (points <= 0 || peer === 'self') return
    const st = this.#peers.get(peer)
    if (st === undefined) return
    const now = this.#clock.now()
    st.score = Math.min(0, st.score + (now - st.scoredAt) / 1000 * this.#limits.decayPerSecond) - points
    st.scoredAt = now
    if (st.score > this.#limits.disconnectScore) return
    const hotkey = this.#hotkeyOfPeer.get(peer)
    const prior = this.disconnected.get(peer)?.bans ?? 0
    const banMs = Math.min(this.#limits.maxBanMs, this.#limits.banMs * 2 ** prior)
    this.#rememberBan(peer, { hotkey, until: now + banMs, bans: prior + 1 })
    if (hotkey !== undefined) this.#banHotkey(hotkey, now + banMs)
    this.#banned(now)
    this.#peers.delete(peer)
    this.#backlog.delete(peer)
    this.#close(peer, 'score', banMs, `score ${Math.round(st.score)}`, hotkey)
  }

  /** Closes a connection (refusing it for `banMs` at the transport), counted and logged by reason. */
  #close (peer: string, reason: DisconnectReason, banMs: number, detail: string, hotkey = this.#hotkeyOfPeer.get(peer)): void {
    this.disconnects.set(reason, (this.disconnects.get(reason) ?? 0) + 1)
    this.#backlog.delete(peer)
    this.#dropOutbound(peer)
    this.gate.closed(peer)
    if (this.#link?.disconnect !== undefined) this.#closing.add(peer)
    try { this.onDisconnected(reason) } catch (err) { this.#log.error({ err }, 'disconnect hook failed') }
    // A score disconnect is misbehaviour (warn); the others are the gate doing its job, one line each.
    this.#log[reason === 'score' ? 'warn' : 'info']({ peer: peer.slice(0, 16), hotkey, reason, banMs, detail, event: 'peer_disconnected' }, 'peer disconnected')
    this.#link?.disconnect?.(peer, banMs)
  }

  #deliver (msg: Envelope, peer: string): void {
    for (const h of [...(this.#handlers.get(msg.type) ?? []), ...(this.#handlers.get('*') ?? [])]) {
      try { h(msg, peer) } catch (err) { this.#log.error({ err, type: msg.type }, 'message handler failed') }
    }
  }

  #drop (peer: string, reason: DropReason | 'sender_mismatch' | 'not_announced', detail: string, conn: string | undefined = peer): void {
    this.#count(reason)
    const st = conn === undefined ? undefined : this.#peers.get(conn)
    // A flood is logged once per connection, not once per frame.
    if (reason !== 'rate_limited' || (st !== undefined && !st.warned)) {
      if (st !== undefined && reason === 'rate_limited') st.warned = true
      this.#log.warn({ peer: peer.slice(0, 16), reason, detail, event: 'message_dropped' }, 'message dropped')
    }
    if (conn !== undefined) this.#score(conn, (PENALTY_POINTS as Record<string, number>)[reason] ?? PENALTY_POINTS.default)
  }
}
