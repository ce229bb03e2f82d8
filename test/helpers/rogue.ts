// A rogue node for peer-trust tests: a freshly generated hotkey that nobody registered, speaking the real
// protocol with the project's own transport, codec and keys. It joins a devnet's swarm topic, announces
// itself properly (bound to each connection), captures what honest nodes send it, and sends whatever
// signed frames a test asks for, including replays of frames it captured.
import type DHT from 'hyperdht'
import { randomBytes } from 'node:crypto'
import { SwarmTransport } from '../../node/adapters/swarm-transport.ts'
import { encodeFrame, decodeFrame, newHotkey, type Envelope, type KeyPair, type MessageBody, type MessageType, type Role } from '../../protocol/index.ts'
import { silentLogger } from './logger.ts'

export interface RogueOptions {
  /** false: dial the network's nodes without being announced on the topic (so rogues do not meet each other). */
  server?: boolean
  /** Announce in this role on every new connection from the start (see `autoAnnounce`). */
  autoAnnounce?: Role
}

export interface Captured { peer: string, msg: Envelope, raw: Uint8Array }

export class Rogue {
  readonly key: KeyPair
  readonly transport: SwarmTransport
  readonly captured: Captured[] = []
  readonly up = new Set<string>()
  readonly down = new Set<string>()
  /** When each connection came up and went down (ms, wall clock), per peer, in order. */
  readonly upAt = new Map<string, number[]>()
  readonly downAt = new Map<string, number[]>()
  #waiters: Array<() => void> = []
  /** When set, the rogue announces itself in this role on every new connection (as a node does). */
  autoAnnounce: Role | null = null
  /** Called with each frame as it is captured: a rogue that answers what it is sent, as it arrives. */
  onCapture: ((c: Captured) => void) | null = null
  #seq = 0

  private constructor (dht: DHT, networkId: string, key: KeyPair, opts: RogueOptions) {
    this.key = key
    this.autoAnnounce = opts.autoAnnounce ?? null
    this.transport = new SwarmTransport({
      dht, networkId, logger: silentLogger(), server: opts.server,
      events: {
        onFrame: (peer, frame) => {
          const res = decodeFrame(frame, { now: Date.now() })
          if (res.ok) { const c = { peer, msg: res.msg, raw: frame }; this.captured.push(c); this.onCapture?.(c) }
          this.#wake()
        },
        onPeerUp: (peer) => { this.upAt.set(peer, [...this.upAt.get(peer) ?? [], Date.now()]); this.up.add(peer); this.down.delete(peer); if (this.autoAnnounce !== null) this.announce(peer, this.autoAnnounce); this.#wake() },
        onPeerDown: (peer) => { this.downAt.set(peer, [...this.downAt.get(peer) ?? [], Date.now()]); this.up.delete(peer); this.down.add(peer); this.#wake() }
      }
    })
  }

  static async join (dht: DHT, networkId: string, key: KeyPair = newHotkey(), opts: RogueOptions = {}): Promise<Rogue> {
    const r = new Rogue(dht, networkId, key, opts)
    await r.transport.start()
    return r
  }

  get hotkey (): string { return this.key.address }
  get publicKey (): string { return this.transport.publicKey }

  /** Resolves once `pred` holds, re-checked on every event; rejects after `timeoutMs`. */
  async until (pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const end = Date.now() + timeoutMs
    while (!pred()) {
      if (Date.now() > end) throw new Error(`rogue: timed out waiting for ${what}`)
      await new Promise<void>(resolve => { this.#waiters.push(resolve); setTimeout(resolve, 100) })
    }
  }

  /** An announce made for the connection to `peer`, claiming `role`. */
  announce (peer: string, role: Role): boolean {
    return this.send(peer, 'announce', {
      role, hotkey: this.hotkey, software: 'rogue/1', capacity: { slots: 8, bandwidthMbps: 10_000 }, dataUrl: null, attachTo: null,
      noiseKey: this.publicKey, peerNoiseKey: peer, nonce: randomBytes(16).toString('hex')
    })
  }

  /** A heartbeat to `peer` in `role`, advertising `workers` attached (a coordinator routes only to orchestrators with some). */
  heartbeat (peer: string, role: Role, workers: number): boolean {
    return this.send(peer, 'heartbeat', { role, seq: ++this.#seq, capacity: { slots: 8, bandwidthMbps: 10_000 }, load: 0, workers })
  }

  frame<T extends MessageType> (type: T, body: MessageBody<T>, to: string | null = null): Uint8Array {
    return encodeFrame(this.key, type, body, { ts: Date.now(), to })
  }

  send<T extends MessageType> (peer: string, type: T, body: MessageBody<T>, to: string | null = null): boolean {
    return this.transport.send(peer, this.frame(type, body, to))
  }

  sendRaw (peer: string, frame: Uint8Array): boolean { return this.transport.send(peer, frame) }

  /** Frames of `type` captured (optionally only from `from`). */
  got (type: MessageType, from?: string): Captured[] {
    return this.captured.filter(c => c.msg.type === type && (from === undefined || c.msg.from === from))
  }

  stop (): Promise<void> { return this.transport.stop() }

  #wake (): void { const w = this.#waiters; this.#waiters = []; for (const f of w) f() }
}
