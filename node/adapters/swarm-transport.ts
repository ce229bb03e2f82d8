// Transport over hyperswarm: every connection carries two protomux channels,
//   bwnet/control/1 — signed control frames (protocol/codec.ts), one frame per protomux message;
//   bwnet/bulk/1    — chunk bytes on request, the fallback data path when HTTP is not reachable.
// Peers are named here by their swarm (noise) public key in hex; the messenger maps them to hotkeys.
import Hyperswarm, { type NoiseStream, type Discovery, type PeerInfo } from 'hyperswarm'
import type DHT from 'hyperdht'
import Protomux, { type Message } from 'protomux'
import c from 'compact-encoding'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { pack, unpack } from '../../protocol/index.ts'
import type { Logger } from '../../actors/ports.ts'
import { BulkError } from '../errors.ts'
export { BulkError }

export const CONTROL_PROTOCOL = 'bwnet/control/1'
export const BULK_PROTOCOL = 'bwnet/bulk/1'
export const BULK_FRAME_BYTES = 256 * 1024 // 256 KiB per data message
export const BULK_TIMEOUT_MS = 30_000 // 30 s without progress fails a bulk read
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

export type BulkHandler = (peer: string, key: string) => Promise<Uint8Array | null>

export interface TransportEvents {
  onFrame (peer: string, frame: Uint8Array): void
  /** `address`: the remote IP of the connection, when known (the per-address cap, node/peer-gate.ts). */
  onPeerUp (peer: string, address: string | null): void
  onPeerDown (peer: string): void
}

interface PeerLink {
  conn: NoiseStream
  control: Message<Uint8Array>
  bulkReq: Message<Uint8Array>
  bulkData: Message<BulkPiece | null>
  bulkEnd: Message<Uint8Array>
  ready: boolean
}

interface PendingBulk {
  parts: Uint8Array[]
  bytes: number
  /** More than this many bytes fails the read at once: a peer cannot make us buffer without bound. */
  maxBytes: number
  /** Told the bytes received so far after every piece (a caller's progress reading). */
  onBytes: ((received: number) => void) | undefined
  resolve (b: Uint8Array): void
  reject (e: Error): void
  timer: NodeJS.Timeout
}

export class SwarmTransport {
  readonly swarm: Hyperswarm
  readonly #topic: Buffer
  readonly #log: Logger
  readonly #links = new Map<string, PeerLink>()
  readonly #pending = new Map<number, PendingBulk>()
  #nextBulkId = 1
  #events: TransportEvents
  #bulkHandler: BulkHandler | null = null
  #stopped = false
  #discovery: Discovery | null = null
  #refreshTimers: NodeJS.Timeout[] = []
  /** Connection keys refused until a time (ms, wall clock): peers disconnected for their score. */
  readonly #banned = new Map<string, number>()

  readonly #server: boolean

  /** `server: false` joins the topic as a client only: this node dials peers and is not announced (test rogues). */
  constructor (opts: { dht: DHT, networkId: string, logger: Logger, events: TransportEvents, seed?: Uint8Array, server?: boolean }) {
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

  serveBulk (handler: BulkHandler): void { this.#bulkHandler = handler }

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

  isBanned (peer: string): boolean {
    const until = this.#banned.get(peer)
    if (until === undefined) return false
    if (until > Date.now()) return true
    this.#banned.delete(peer)
    return false
  }

  /** Closes the connection to `peer` and refuses it (incoming and outgoing) for `banMs`. */
  disconnect (peer: string, banMs: number): void {
    this.#banned.set(peer, Date.now() + banMs)
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
   * Reads the bytes the peer serves under `key` over the bulk channel (at most `maxBytes`); `onBytes`
   * hears the bytes received so far as pieces arrive.
   */
  fetchBulk (peer: string, key: string, timeoutMs = BULK_TIMEOUT_MS, maxBytes = Number.POSITIVE_INFINITY, onBytes?: (received: number) => void): Promise<Uint8Array> {
    const link = this.#links.get(peer)
    if (link === undefined || !link.ready) return Promise.reject(new BulkError(`no connection to ${peer.slice(0, 12)}`))
    const id = this.#nextBulkId++
    return new Promise((resolve, reject) => {
      const fail = (): void => { this.#pending.delete(id); reject(new BulkError(`bulk read ${key} timed out`)) }
      const entry: PendingBulk = { parts: [], bytes: 0, maxBytes, onBytes, resolve, reject, timer: setTimeout(fail, timeoutMs) }
      this.#pending.set(id, entry)
      link.bulkReq.send(pack({ id, key }))
    })
  }

  async stop (): Promise<void> {
    this.#stopped = true
    for (const t of this.#refreshTimers) clearTimeout(t)
    for (const p of this.#pending.values()) { clearTimeout(p.timer); p.reject(new BulkError('transport stopped')) }
    this.#pending.clear()
    await this.swarm.destroy()
  }

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
    link = {
      conn,
      ready: false,
      control: control.addMessage<Uint8Array>({ encoding: c.raw, onmessage: (frame) => this.#safe(() => this.#events.onFrame(peer, frame)) }),
      bulkReq: bulk.addMessage<Uint8Array>({ encoding: c.raw, onmessage: (m) => { void this.#serveBulkRequest(peer, mux, m) } }),
      bulkData: bulk.addMessage<BulkPiece | null>({ encoding: bulkPieceEncoding, onmessage: (m) => this.#safe(() => this.#onBulkData(m)) }),
      bulkEnd: bulk.addMessage<Uint8Array>({ encoding: c.raw, onmessage: (m) => this.#safe(() => this.#onBulkEnd(m)) })
    }
    this.#links.set(peer, link)
    control.open()
    bulk.open()
    conn.once('close', () => {
      if (this.#links.get(peer) !== link) return
      this.#links.delete(peer)
      if (link!.ready) this.#events.onPeerDown(peer)
    })
  }

  #safe (fn: () => void): void {
    // An exception in a handler must not tear down the connection (protomux destroys the stream).
    try { fn() } catch (err) { this.#log.warn({ err }, 'inbound handler failed') }
  }

  async #serveBulkRequest (peer: string, mux: Protomux, raw: Uint8Array): Promise<void> {
    let id = 0
    const link = this.#links.get(peer)
    if (link === undefined) return
    try {
      const req = unpack<{ id: number, key: string }>(raw)
      id = req.id
      if (typeof req.id !== 'number' || typeof req.key !== 'string') throw new BulkError('malformed bulk request')
      const bytes = this.#bulkHandler === null ? null : await this.#bulkHandler(peer, req.key)
      if (bytes === null) { link.bulkEnd.send(pack({ id, bytes: 0, error: 'not_found' })); return }
      for (let off = 0; off < bytes.byteLength; off += BULK_FRAME_BYTES) {
        const piece = bytes.subarray(off, Math.min(off + BULK_FRAME_BYTES, bytes.byteLength))
        const ok = link.bulkData.send({ id, piece })
        if (!ok && !link.conn.destroyed) await once(mux.stream, 'drain')
        if (link.conn.destroyed) return
      }
      link.bulkEnd.send(pack({ id, bytes: bytes.byteLength }))
    } catch (err) {
      this.#log.warn({ peer: peer.slice(0, 12), err: (err as Error).message }, 'bulk request failed')
      if (!link.conn.destroyed) link.bulkEnd.send(pack({ id, bytes: 0, error: 'failed' }))
    }
  }

  #onBulkData (m: BulkPiece | null): void {
    if (m === null) return
    const p = this.#pending.get(m.id)
    if (p === undefined) return
    const piece = m.piece
    p.bytes += piece.byteLength
    if (p.bytes > p.maxBytes) {
      this.#pending.delete(m.id)
      clearTimeout(p.timer)
      p.parts.length = 0
      p.reject(new BulkError(`bulk read over its ${p.maxBytes}-byte limit`))
      return
    }
    p.parts.push(piece)
    p.timer.refresh()
    p.onBytes?.(p.bytes)
  }

  #onBulkEnd (m: Uint8Array): void {
    const end = unpack<{ id: number, bytes: number, error?: string }>(m)
    const p = this.#pending.get(end.id)
    if (p === undefined) return
    this.#pending.delete(end.id)
    clearTimeout(p.timer)
    if (end.error !== undefined) p.reject(new BulkError(`peer refused bulk read: ${end.error}`))
    else if (end.bytes !== p.bytes) p.reject(new BulkError(`bulk read got ${p.bytes} bytes, peer sent ${end.bytes}`))
    else p.resolve(p.parts.length === 1 ? p.parts[0]! : Buffer.concat(p.parts))
  }
}

/** The remote IP of a swarm connection (its UDX stream's), or null when not known. */
function remoteAddress (conn: NoiseStream): string | null {
  const raw = (conn as unknown as { rawStream?: { remoteHost?: string | null } }).rawStream
  return typeof raw?.remoteHost === 'string' ? raw.remoteHost : null
}
