// Signed messages over the transport, addressed by hotkey. Implements the Network port.
// Every inbound frame is verified (protocol/codec.ts); a bad one is dropped with a logged reason.
// A connection is bound to a hotkey by its first valid `announce`; frames on it from another sender
// are dropped, so one peer cannot speak for another.
import { encodeFrame, decodeFrame, type Envelope, type KeyPair, type MessageType, type MessageBody } from '../protocol/index.ts'
import type { Clock, Logger, Network } from '../actors/ports.ts'

export interface FrameLink {
  send (peer: string, frame: Uint8Array): boolean
  broadcast (frame: Uint8Array): number
}

export type InboundHandler = (msg: Envelope, peer: string) => void

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

  constructor (key: KeyPair, clock: Clock, logger: Logger) {
    this.#key = key
    this.self = key.address
    this.#clock = clock
    this.#log = logger.child({ component: 'messenger' })
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
      queueMicrotask(() => this.#deliver(msg, 'self'))
      return true
    }
    const peer = this.#peerOfHotkey.get(to)
    if (peer === undefined || this.#link === null) return false
    return this.#link.send(peer, this.frame(type, body, to))
  }

  sendToPeer<T extends MessageType> (peer: string, type: T, body: MessageBody<T>): boolean {
    return this.#link?.send(peer, this.frame(type, body)) ?? false
  }

  broadcast<T extends MessageType> (type: T, body: MessageBody<T>): number {
    return this.#link?.broadcast(this.frame(type, body)) ?? 0
  }

  hotkeyOf (peer: string): string | undefined { return this.#hotkeyOfPeer.get(peer) }
  peerOf (hotkey: string): string | undefined { return this.#peerOfHotkey.get(hotkey) }
  connectedHotkeys (): string[] { return [...this.#peerOfHotkey.keys()] }

  peerUp (peer: string): void { this.#onConnect?.(peer) }

  peerDown (peer: string): void {
    const hotkey = this.#hotkeyOfPeer.get(peer)
    this.#hotkeyOfPeer.delete(peer)
    // A hotkey that reconnected (or opened a newer session) elsewhere is still here: only the old
    // connection went away, so nobody is told the hotkey left.
    if (hotkey !== undefined && this.#peerOfHotkey.get(hotkey) !== peer) return
    if (hotkey !== undefined) this.#peerOfHotkey.delete(hotkey)
    this.#onDisconnect?.(hotkey, peer)
  }

  /** Entry point for every inbound frame from the transport. Never throws. */
  receive (peer: string, frame: Uint8Array): void {
    const res = decodeFrame(frame, { now: this.#clock.now(), self: this.self })
    if (!res.ok) return this.#drop(peer, res.reason, res.detail)
    const msg = res.msg
    const bound = this.#hotkeyOfPeer.get(peer)
    if (msg.type === 'announce') {
      const body = msg.body as MessageBody<'announce'>
      if (body.hotkey !== msg.from) return this.#drop(peer, 'sender_mismatch', 'announce names another hotkey')
      if (bound !== undefined && bound !== msg.from) return this.#drop(peer, 'sender_mismatch', `connection is bound to ${bound}`)
      if (msg.from === this.self) return this.#drop(peer, 'sender_mismatch', 'peer claims our own hotkey')
      this.#hotkeyOfPeer.set(peer, msg.from)
      this.#peerOfHotkey.set(msg.from, peer)
    } else if (bound === undefined) {
      return this.#drop(peer, 'not_announced', `${msg.type} before announce`)
    } else if (bound !== msg.from) {
      return this.#drop(peer, 'sender_mismatch', `connection is bound to ${bound}, frame from ${msg.from}`)
    }
    this.#deliver(msg, peer)
  }

  #deliver (msg: Envelope, peer: string): void {
    for (const h of [...(this.#handlers.get(msg.type) ?? []), ...(this.#handlers.get('*') ?? [])]) {
      try { h(msg, peer) } catch (err) { this.#log.error({ err, type: msg.type }, 'message handler failed') }
    }
  }

  #drop (peer: string, reason: string, detail: string): void {
    this.dropped.set(reason, (this.dropped.get(reason) ?? 0) + 1)
    this.#log.warn({ peer: peer.slice(0, 16), reason, detail, event: 'message_dropped' }, 'message dropped')
  }
}
