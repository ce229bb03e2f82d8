// Transport over hyperswarm: every connection carries two protomux channels,
//   bwnet/control/1 — signed control frames (protocol/codec.ts), one frame per protomux message;
//   bwnet/bulk/1    — chunk bytes on request, the fallback data path when HTTP is not reachable.
// Peers are named here by their swarm (noise) public key in hex; the messenger maps them to hotkeys.
// A bulk read belongs to the connection it was asked on: only that connection's replies reach it, under a
// random request id. Bulk requests are served to admitted peers only (node/peer-gate.ts), at most
// MAX_BULK_REQUESTS_PER_PEER at once per connection, and a chunk on file is streamed a frame at a time.
import Hyperswarm, { type NoiseStream, type Discovery, type PeerInfo } from 'hyperswarm'
import type DHT from 'hyperdht'
import Protomux, { type Message } from 'protomux'
import c from 'compact-encoding'
import { createHash, randomInt } from 'node:crypto'
import { open } from 'node:fs/promises'
import { pack, unpack } from '../../protocol/index.ts'
import type { Logger } from '../../actors/ports.ts'
import { BulkError } from '../errors.ts'
export { BulkError }

export const CONTROL_PROTOCOL = 'bwnet/control/1'
export const BULK_PROTOCOL = 'bwnet/bulk/1'
export const BULK_FRAME_BYTES = 256 * 1024 // 256 KiB per data message
export const BULK_TIMEOUT_MS = 30_000 // 30 s without progress fails a bulk read
/**
 * A peer whose connection takes less than BULK_PROGRESS_BYTES of a bulk read (or the rest of it) in this
 * long loses that connection: the read ends and lets its file go, and no more frames pile up behind a
 * connection that does not take them. About 17 KiB/s, the HTTP endpoint's own minimum (STALL_MS over a
 * 1 MiB piece, file-response.ts): a reader cannot keep a read alive, and so count as reading it, on less.
 * Honest peers reconnect.
 */
export const BULK_SEND_STALL_MS = 60_000
export const BULK_PROGRESS_BYTES = 1024 * 1024

/** A served read's progress: `mark` bytes had gone out when its current window began. */
interface Pace { total: number, sent: number, mark: number, windowStart: number }
/**
 * Bulk requests one connection may have served at once; beyond it a request is refused (`busy`). Each
 * costs a signed-path check, a file and a frame of memory while it streams. A reader keeps to it too: its
 * further reads wait on its side and are sent as earlier ones end.
 */
export const MAX_BULK_REQUESTS_PER_PEER = 8
/** Noise keys whose ban this transport remembers at most. */
export const MAX_BANNED_KEYS = 16_384
/** A bulk request is a request id and a signed path: anything longer is not one, and is not decoded. */
const MAX_BULK_REQUEST_BYTES = 4096
// Peers that join at the same moment miss each other's announcements in their first lookup, so
// discovery is refreshed soon after start, then at a slow steady pace.
export const DISCOVERY_REFRESH_AFTER_MS = [1_000, 3_000, 6_000, 10_000, 15_000, 20_000, 30_000, 45_000] // after start: a peer met late must not wait a minute
export const DISCOVERY_REFRESH_EVERY_MS = 60_000 // 1 min
export const DISCOVERY_REFRESH_ALONE_MS = 2_000 // while no peer is connected

/** The swarm topic of a network: every node of one network id meets there. */
export function networkTopic (networkId: string): Buffer {
  return createHash('sha256').update(`bwnet/network/${networkId}`).digest()
}

/** One bulk data message on the wire: the request id as a 4-byte big-endian head, then the bytes. */
interface BulkPiece { id: number, piece: Uint8Array }

const BULK_HEAD_BYTES = 4
// Writes the head and the piece straight into protomux's frame buffer: building the message with
// Buffer.concat first cost one extra copy (and allocation) of every byte served.
const bulkPieceEncoding = {
  preencode (state: { end: number }, m: BulkPiece): void { state.end += BULK_HEAD_BYTES + m.piece.byteLength },
  encode (state: { buffer: Uint8Array, start: number }, m: BulkPiece): void {
    new DataView(state.buffer.buffer, state.buffer.byteOffset + state.start, BULK_HEAD_BYTES).setUint32(0, m.id >>> 0)
    state.buffer.set(m.piece, state.start + BULK_HEAD_BYTES)
    state.start += BULK_HEAD_BYTES + m.piece.byteLength
  },
  // A message shorter than its head decodes to null and is ignored (a throw would tear down the stream).
  decode (state: { buffer: Uint8Array, start: number, end: number }): BulkPiece | null {
    const m = state.buffer.subarray(state.start, state.end)
    state.start = state.end
    if (m.byteLength < BULK_HEAD_BYTES) return null
    return { id: new DataView(m.buffer, m.byteOffset, BULK_HEAD_BYTES).getUint32(0), piece: m.subarray(BULK_HEAD_BYTES) }
  }
}

/**
 * What a bulk request is answered with: bytes in memory, or a file streamed a frame at a time; `ended`
 * runs once, when the send ends: `whole` once its every byte has gone out on the connection, else not.
 */
export type BulkBody = Uint8Array | { file: string, ended?: (whole: boolean) => void } | { bytes: Uint8Array, ended?: (whole: boolean) => void }
export type BulkHandler = (peer: string, key: string) => Promise<BulkBody | null>

export interface BulkServing {
  /** Whether the peer on a connection is admitted (node/peer-gate.ts): nobody else is served. */
  admitted (peer: string): boolean
}

/** Why the bulk channel ignored or refused something (a bounded label, counted in `bulkDropped`). */
export type BulkDropReason = 'not_served' | 'not_admitted' | 'malformed' | 'busy' | 'unsolicited'

export interface TransportEvents {
  onFrame (peer: string, frame: Uint8Array): void
  /** `address`: the remote IP of the connection, when known (the per-address cap, node/peer-gate.ts). */
  onPeerUp (peer: string, address: string | null): void
  onPeerDown (peer: string): void
}

interface PeerLink {
  peer: string
  conn: NoiseStream
  control: Message<Uint8Array>
  bulkReq: Message<Uint8Array>
  bulkData: Message<BulkPiece | null>
  bulkEnd: Message<Uint8Array>
  ready: boolean
  /** This node's reads on this connection, by request id: a reply on another connection never reaches them. */
  reads: Map<number, PendingBulk>
  /** Reads not sent yet, waiting for one of the peer's MAX_BULK_REQUESTS_PER_PEER. */
  queued: PendingBulk[]
  /** Reads sent and not ended. */
  sent: number
  /** The peer's requests being served now. */
  serving: number
}

interface PendingBulk {
  id: number
  key: string
  sent: boolean
  parts: Uint8Array[]
  bytes: number
  /** More than this many bytes fails the read at once: a peer cannot make us buffer without bound. */
  maxBytes: number
  /** Told the bytes received so far after every piece (a caller's progress reading). */
  onBytes: ((received: number) => void) | undefined
  resolve (pieces: Uint8Array[]): void
  reject (e: Error): void
  timer: NodeJS.Timeout
  /** Stops listening to the caller's signal (once settled). */
  unlisten: () => void
  /**
   * Its caller gave up while the peer serves it: the caller was answered, but the read keeps its place
   * (the peer still counts it among the reads it serves) and drops what arrives, until its end or its
   * timeout.
   */
  abandoned: boolean
}

export class SwarmTransport {
  readonly swarm: Hyperswarm
  readonly #topic: Buffer
  readonly #log: Logger
  readonly #links = new Map<string, PeerLink>()
  #events: TransportEvents
  #bulk: (BulkServing & { handler: BulkHandler }) | null = null
  /** What the bulk channel ignored or refused, by reason (metrics, tests). */
  readonly bulkDropped = new Map<BulkDropReason, number>()
  #stopped = false
  #discovery: Discovery | null = null
  #refreshTimers: NodeJS.Timeout[] = []
  /** Connection keys refused until a time (ms, wall clock): peers disconnected for their score. */
  readonly #banned = new Map<string, number>()

  readonly #server: boolean

  /** `server: false` joins the topic as a client only: this node dials peers and is not announced (test rogues). */
  readonly #sendStallMs: number
  /** `sendStallMs`: BULK_SEND_STALL_MS unless a test says otherwise. */
  constructor (opts: { dht: DHT, networkId: string, logger: Logger, events: TransportEvents, seed?: Uint8Array, server?: boolean, sendStallMs?: number }) {
    this.#sendStallMs = opts.sendStallMs ?? BULK_SEND_STALL_MS
    // The firewall refuses a banned peer's handshake before any stream or channel exists.
    this.swarm = new Hyperswarm({ dht: opts.dht, seed: opts.seed, firewall: (remotePublicKey: Buffer) => this.isBanned(remotePublicKey.toString('hex')) })
    this.#topic = networkTopic(opts.networkId)
    this.#log = opts.logger.child({ component: 'transport' })
    this.#events = opts.events
    this.#server = opts.server ?? true
    this.swarm.on('connection', (conn, info) => this.#onConnection(conn, info.publicKey.toString('hex')))
    // Hyperswarm bans a key its firewall refused for as long as it remembers the peer (no expiry); our
    // bans expire, so the swarm's ban is lifted with ours and the peer may connect again.
    this.swarm.on('ban', (info: PeerInfo) => {
      const key = info.publicKey.toString('hex')
      const until = this.#banned.get(key)
      if (until === undefined) return
      setTimeout(() => { if (!this.isBanned(key)) info.ban(false) }, Math.max(0, until - Date.now()) + 10).unref()
    })
  }

  get publicKey (): string { return this.swarm.keyPair.publicKey.toString('hex') }

  /** Answers bulk requests of admitted peers with `handler`; until then none is served. */
  serveBulk (handler: BulkHandler, serving: BulkServing): void { this.#bulk = { handler, admitted: (peer) => serving.admitted(peer) } }

  async start (): Promise<void> {
    const discovery = this.swarm.join(this.#topic, { server: this.#server, client: true })
    this.#discovery = discovery
    await discovery.flushed()
    const refresh = (): void => {
      if (this.#stopped) return
      discovery.refresh({ client: true, server: this.#server }).catch((err: Error) => this.#log.debug({ err: err.message }, 'discovery refresh failed'))
    }
    for (const ms of DISCOVERY_REFRESH_AFTER_MS) this.#refreshTimers.push(setTimeout(refresh, ms).unref())
    this.#refreshTimers.push(setInterval(refresh, DISCOVERY_REFRESH_EVERY_MS).unref())
    this.#refreshTimers.push(setInterval(() => { if (this.#links.size === 0) refresh() }, DISCOVERY_REFRESH_ALONE_MS).unref())
  }

  /** Noise keys with a ban on record (tests, metrics). */
  get bannedKeys (): number { return this.#banned.size }

  isBanned (peer: string): boolean {
    const until = this.#banned.get(peer)
    if (until === undefined) return false
    if (until > Date.now()) return true
    this.#banned.delete(peer)
    return false
  }

  /** Closes the connection to `peer` and refuses it (incoming and outgoing) for `banMs`. */
  disconnect (peer: string, banMs: number): void {
    if (banMs > 0) {
      // Bounded: keys never seen again (a Sybil's fresh ones) must not stay for ever; when the table is
      // full the oldest ban goes (the messenger remembers banned hotkeys on its own, node/messenger.ts).
      this.#banned.delete(peer) // re-inserted last: the order is the order of the latest ban
      if (this.#banned.size >= MAX_BANNED_KEYS) this.#banned.delete(this.#banned.keys().next().value!)
      this.#banned.set(peer, Date.now() + banMs)
    }
    this.#links.get(peer)?.conn.destroy()
  }

  peers (): string[] {
    return [...this.#links.entries()].filter(([, l]) => l.ready).map(([k]) => k)
  }

  send (peer: string, frame: Uint8Array): boolean {
    const link = this.#links.get(peer)
    if (link === undefined || !link.ready) return false
    link.control.send(frame)
    return true
  }

  broadcast (frame: Uint8Array): number {
    let n = 0
    for (const peer of this.#links.keys()) if (this.send(peer, frame)) n++
    return n
  }

  /**
   * Reads the bytes the peer serves under `key` over the bulk channel (at most `maxBytes`), in one
   * buffer; `onBytes` hears the bytes received so far as pieces arrive. `signal` ends the read at once
   * (its place goes to the next, late pieces for it are dropped): a caller that gives up does not leave
   * the read holding the chunk's bytes.
   */
  async fetchBulk (peer: string, key: string, timeoutMs = BULK_TIMEOUT_MS, maxBytes = Number.POSITIVE_INFINITY, onBytes?: (received: number) => void, signal?: AbortSignal): Promise<Uint8Array> {
    const pieces = await this.fetchBulkPieces(peer, key, timeoutMs, maxBytes, onBytes, signal)
    return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces)
  }

  /**
   * fetchBulk's read, handed over as the pieces that arrived, in order: no copy of the whole, so a caller
   * that streams them on (the worker's move) holds the chunk once, not twice.
   */
  fetchBulkPieces (peer: string, key: string, timeoutMs = BULK_TIMEOUT_MS, maxBytes = Number.POSITIVE_INFINITY, onBytes?: (received: number) => void, signal?: AbortSignal): Promise<Uint8Array[]> {
    const link = this.#links.get(peer)
    if (link === undefined || !link.ready) return Promise.reject(new BulkError(`no connection to ${peer.slice(0, 12)}`))
    if (signal?.aborted === true) return Promise.reject(new BulkError(`bulk read ${key} aborted`))
    return new Promise((resolve, reject) => {
      // Random, so no other peer can guess it; unique among this connection's reads.
      let id = randomInt(2 ** 32)
      while (link.reads.has(id)) id = randomInt(2 ** 32)
      const abort = (): void => {
        const aborted = new BulkError(`bulk read ${key} aborted`)
        // Not sent yet: it goes from the queue. Sent: the peer still serves it, so it keeps its place
        // until the peer's end (a place given up early would meet the peer's "busy").
        if (!read.sent) { this.#settle(link, read, aborted); return }
        read.abandoned = true
        read.parts = []
        read.onBytes = undefined
        read.unlisten()
        read.reject(aborted)
      }
      const read: PendingBulk = {
        id, key, sent: false, parts: [], bytes: 0, maxBytes, onBytes, resolve, reject,
        timer: setTimeout(() => this.#settle(link, read, new BulkError(`bulk read ${key} timed out`)), timeoutMs),
        unlisten: () => signal?.removeEventListener('abort', abort),
        abandoned: false
      }
      signal?.addEventListener('abort', abort, { once: true })
      link.reads.set(id, read)
      link.queued.push(read)
      this.#sendQueued(link)
    })
  }

  async stop (): Promise<void> {
    this.#stopped = true
    for (const t of this.#refreshTimers) clearTimeout(t)
    for (const link of this.#links.values()) this.#failReads(link, 'transport stopped')
    await this.swarm.destroy()
  }

  /** Sends the reads waiting for a place within the peer's MAX_BULK_REQUESTS_PER_PEER (their clock restarts). */
  #sendQueued (link: PeerLink): void {
    while (link.sent < MAX_BULK_REQUESTS_PER_PEER && link.queued.length > 0 && !link.conn.destroyed && !this.#stopped) {
      const read = link.queued.shift()!
      read.sent = true
      link.sent++
      read.timer.refresh()
      link.bulkReq.send(pack({ id: read.id, key: read.key }))
    }
  }

  /** Ends a read with its bytes or an error, once; the next queued read takes its place. */
  #settle (link: PeerLink, read: PendingBulk, outcome: Uint8Array[] | Error): void {
    if (link.reads.get(read.id) !== read) return
    link.reads.delete(read.id)
    clearTimeout(read.timer)
    read.unlisten()
    if (read.sent) link.sent--
    else link.queued.splice(link.queued.indexOf(read), 1)
    read.parts = []
    if (outcome instanceof Error) read.reject(outcome); else read.resolve(outcome)
    this.#sendQueued(link)
  }

  #failReads (link: PeerLink, why: string): void {
    for (const read of [...link.reads.values()]) this.#settle(link, read, new BulkError(`bulk read ${read.key} failed: ${why}`))
  }

  #dropBulk (reason: BulkDropReason): void { this.bulkDropped.set(reason, (this.bulkDropped.get(reason) ?? 0) + 1) }

  #onConnection (conn: NoiseStream, peer: string): void {
    if (this.#stopped || this.isBanned(peer)) { conn.destroy(); return }
    const previous = this.#links.get(peer)
    if (previous !== undefined) previous.conn.destroy() // a reconnect replaces the old stream
    conn.on('error', (err: Error) => this.#log.debug({ peer: peer.slice(0, 12), err: err.message }, 'connection error'))
    const mux = Protomux.from(conn)
    let link: PeerLink | undefined
    const markReady = (): void => {
      if (link === undefined || link.ready) return
      link.ready = true
      this.#events.onPeerUp(peer, remoteAddress(conn))
    }
    const control = mux.createChannel({ protocol: CONTROL_PROTOCOL, onopen: markReady })
    const bulk = mux.createChannel({ protocol: BULK_PROTOCOL })
    if (control === null || bulk === null) { conn.destroy(); return }
    const self: PeerLink = link = {
      peer,
      conn,
      ready: false,
      control: control.addMessage<Uint8Array>({ encoding: c.raw, onmessage: (frame) => this.#safe(() => this.#events.onFrame(peer, frame)) }),
      // Handlers return nothing: protomux holds a batch's replies until the promises it is given settle.
      bulkReq: bulk.addMessage<Uint8Array>({ encoding: c.raw, onmessage: (m) => this.#safe(() => this.#onBulkRequest(self, m)) }),
      bulkData: bulk.addMessage<BulkPiece | null>({ encoding: bulkPieceEncoding, onmessage: (m) => this.#safe(() => this.#onBulkData(self, m)) }),
      bulkEnd: bulk.addMessage<Uint8Array>({ encoding: c.raw, onmessage: (m) => this.#safe(() => this.#onBulkEnd(self, m)) }),
      reads: new Map(),
      queued: [],
      sent: 0,
      serving: 0
    }
    this.#links.set(peer, link)
    control.open()
    bulk.open()
    conn.once('close', () => {
      // No reply can come on a closed connection: its reads fail now, not at their timeout.
      this.#failReads(self, 'connection closed')
      if (this.#links.get(peer) !== link) return
      this.#links.delete(peer)
      if (link!.ready) this.#events.onPeerDown(peer)
    })
  }

  #safe (fn: () => void): void {
    // An exception in a handler must not tear down the connection (protomux destroys the stream).
    try { fn() } catch (err) { this.#log.warn({ err }, 'inbound handler failed') }
  }

  #onBulkRequest (link: PeerLink, raw: Uint8Array): void {
    const bulk = this.#bulk
    // Nothing is decoded for a peer that is not served: dropping its request costs a lookup.
    if (bulk === null) return this.#dropBulk('not_served')
    if (!bulk.admitted(link.peer)) return this.#dropBulk('not_admitted')
    let req: { id?: unknown, key?: unknown } | null = null
    try { if (raw.byteLength <= MAX_BULK_REQUEST_BYTES) req = unpack(raw) } catch {}
    const id = req?.id
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= 2 ** 32) return this.#dropBulk('malformed')
    if (typeof req!.key !== 'string') { this.#dropBulk('malformed'); link.bulkEnd.send(pack({ id, bytes: 0, error: 'malformed' })); return }
    if (link.serving >= MAX_BULK_REQUESTS_PER_PEER) { this.#dropBulk('busy'); link.bulkEnd.send(pack({ id, bytes: 0, error: 'busy' })); return }
    link.serving++
    void this.#serve(link, bulk.handler, id, req!.key).finally(() => { link.serving-- })
  }

  async #serve (link: PeerLink, handler: BulkHandler, id: number, key: string): Promise<void> {
    let body: BulkBody | null = null
    let whole = false
    try {
      body = await handler(link.peer, key)
      if (link.conn.destroyed) return
      if (body === null) { link.bulkEnd.send(pack({ id, bytes: 0, error: 'not_found' })); return }
      const bytes = body instanceof Uint8Array ? body : 'bytes' in body ? body.bytes : null
      const sent = bytes !== null ? (await this.#sendPieces(link, id, bytes, this.#pace(bytes.byteLength)) ? bytes.byteLength : null) : await this.#sendFile(link, id, (body as { file: string }).file)
      if (sent !== null) {
        link.bulkEnd.send(pack({ id, bytes: sent }))
        whole = true
      }
    } catch (err) {
      // A blob file swept between the lookup and its open is a read of nothing there, as if never staged.
      const gone = (err as NodeJS.ErrnoException).code === 'ENOENT' && (err as NodeJS.ErrnoException).syscall === 'open'
      if (!gone) this.#log.warn({ peer: link.peer.slice(0, 12), err: (err as Error).message }, 'bulk request failed')
      if (!link.conn.destroyed) link.bulkEnd.send(pack({ id, bytes: 0, error: gone ? 'not_found' : 'failed' }))
    } finally {
      if (body !== null && !(body instanceof Uint8Array)) {
        try { body.ended?.(whole) } catch (err) { this.#log.warn({ err: (err as Error).message }, 'a bulk read\'s end report failed') }
      }
    }
  }

  #pace (total: number): Pace { return { total, sent: 0, mark: 0, windowStart: Date.now() } }

  /**
   * Sends `bytes` as data messages, waiting for the connection to drain; false once the connection is
   * gone, which it is once the read's pace falls below BULK_PROGRESS_BYTES per send stall.
   */
  async #sendPieces (link: PeerLink, id: number, bytes: Uint8Array, pace: Pace): Promise<boolean> {
    for (let off = 0; off < bytes.byteLength; off += BULK_FRAME_BYTES) {
      const piece = bytes.subarray(off, Math.min(off + BULK_FRAME_BYTES, bytes.byteLength))
      const ok = link.bulkData.send({ id, piece })
      const left = this.#sendStallMs - (Date.now() - pace.windowStart)
      if (!ok && !link.conn.destroyed && (left <= 0 || !await drained(link.conn, left))) {
        // Its frames and every later answer would pile up behind a connection that does not take them: it goes.
        this.#log.warn({ peer: link.peer.slice(0, 12), stallMs: this.#sendStallMs, sent: pace.sent }, 'bulk read stalled: the peer took too little; its connection is closed')
        link.conn.destroy()
      }
      if (link.conn.destroyed) return false
      pace.sent += piece.byteLength
      if (pace.sent - pace.mark >= Math.max(1, Math.min(BULK_PROGRESS_BYTES, pace.total - pace.mark))) { pace.mark = pace.sent; pace.windowStart = Date.now() }
    }
    return true
  }

  /** Streams a file: one frame's buffer, reused (each send copies it into its message). Null once the connection is gone. */
  async #sendFile (link: PeerLink, id: number, path: string): Promise<number | null> {
    const fh = await open(path, 'r')
    try {
      const buf = Buffer.allocUnsafe(BULK_FRAME_BYTES)
      const pace = this.#pace((await fh.stat()).size)
      let sent = 0
      for (;;) {
        const { bytesRead } = await fh.read(buf, 0, buf.byteLength, sent)
        if (bytesRead === 0) return sent
        if (!await this.#sendPieces(link, id, buf.subarray(0, bytesRead), pace)) return null
        sent += bytesRead
      }
    } finally { await fh.close() }
  }

  #onBulkData (link: PeerLink, m: BulkPiece | null): void {
    if (m === null) return
    const read = link.reads.get(m.id)
    if (read === undefined || !read.sent) return this.#dropBulk('unsolicited') // a late reply to a read that timed out, too
    // Its timeout is time without progress: an empty piece is none, and is not kept.
    if (m.piece.byteLength === 0) return
    read.bytes += m.piece.byteLength
    if (read.bytes > read.maxBytes) return this.#settle(link, read, new BulkError(`bulk read over its ${read.maxBytes}-byte limit`))
    read.timer.refresh()
    if (read.abandoned) return // its caller left: the bytes are dropped, its place kept until the end
    read.parts.push(m.piece)
    read.onBytes?.(read.bytes)
  }

  #onBulkEnd (link: PeerLink, m: Uint8Array): void {
    let end: { id?: unknown, bytes?: unknown, error?: unknown } | null = null
    try { end = unpack(m) } catch {}
    const read = typeof end?.id === 'number' ? link.reads.get(end.id) : undefined
    if (read === undefined || !read.sent) return this.#dropBulk(end === null ? 'malformed' : 'unsolicited')
    if (end!.error !== undefined) this.#settle(link, read, new BulkError(`peer refused bulk read: ${String(end!.error)}`))
    else if (end!.bytes !== read.bytes) this.#settle(link, read, new BulkError(`bulk read got ${read.bytes} bytes, peer sent ${String(end!.bytes)}`))
    else this.#settle(link, read, read.parts)
  }
}

/**
 * Resolves true when the stream drains or closes (a closed stream never drains: waiting for that alone
 * would hang), false when neither comes within `ms`.
 */
function drained (stream: NoiseStream, ms: number): Promise<boolean> {
  return new Promise(resolve => {
    const done = (ok: boolean): void => { clearTimeout(timer); stream.off('drain', drain); stream.off('close', drain); resolve(ok) }
    const drain = (): void => { done(true) }
    const timer = setTimeout(() => { done(false) }, ms)
    stream.on('drain', drain)
    stream.on('close', drain)
  })
}

/** The remote IP of a swarm connection (its UDX stream's), or null when not known. */
function remoteAddress (conn: NoiseStream): string | null {
  const raw = (conn as unknown as { rawStream?: { remoteHost?: string | null } }).rawStream
  return typeof raw?.remoteHost === 'string' ? raw.remoteHost : null
}
