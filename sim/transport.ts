// The simulated transport: one hub delivers control messages between the simulated nodes after the
// delay a composed channel decides (latency, loss, partitions, adversaries; sim/transport/*), on the
// virtual clock. Envelopes are built directly: no signing or framing, since every node is ours.
import type { Network } from '../actors/ports.ts'
import type { MessageType, MessageBody } from '../protocol/index.ts'
import type { VirtualClock } from './clock.ts'

export interface SimEnvelope { type: MessageType, from: string, to: string, body: unknown, sentAt: number }

/** What a channel decides for one message. */
export type Verdict = { kind: 'deliver', delayMs: number } | { kind: 'lost' } | { kind: 'unreachable' }
export type Channel = (msg: SimEnvelope) => Verdict

export const DELIVER_NOW: Verdict = Object.freeze({ kind: 'deliver', delayMs: 0 })
export const LOST: Verdict = Object.freeze({ kind: 'lost' })
export const UNREACHABLE: Verdict = Object.freeze({ kind: 'unreachable' })

/** Channels in a row: delays add up; the first loss or unreachability decides. */
export function compose (...channels: Channel[]): Channel {
  return (msg) => {
    let delay = 0
    for (const c of channels) {
      const v = c(msg)
      if (v.kind !== 'deliver') return v
      delay += v.delayMs
    }
    return delay === 0 ? DELIVER_NOW : { kind: 'deliver', delayMs: delay }
  }
}

export type Inbound = (msg: SimEnvelope) => void

export interface TransportStats { sent: number, delivered: number, lost: number, unreachable: number, byType: Record<string, number> }

export class SimHub {
  readonly #clock: VirtualClock
  readonly #channel: Channel
  readonly #nodes = new Map<string, Inbound>()
  readonly #taps: Array<(msg: SimEnvelope) => void> = []
  readonly stats: TransportStats = { sent: 0, delivered: 0, lost: 0, unreachable: 0, byType: {} }

  constructor (clock: VirtualClock, channel: Channel) {
    this.#clock = clock
    this.#channel = channel
  }

  register (node: string, inbound: Inbound): Network {
    this.#nodes.set(node, inbound)
    return new SimNetwork(node, this)
  }

  /** Observes every message handed to the hub (before the channel decides), for metrics. */
  tap (fn: (msg: SimEnvelope) => void): void { this.#taps.push(fn) }

  send (msg: SimEnvelope): boolean {
    const inbound = this.#nodes.get(msg.to)
    if (inbound === undefined) return false
    this.stats.sent++
    this.stats.byType[msg.type] = (this.stats.byType[msg.type] ?? 0) + 1
    for (const t of this.#taps) t(msg)
    const v = msg.to === msg.from ? DELIVER_NOW : this.#channel(msg)
    if (v.kind === 'unreachable') { this.stats.unreachable++; return false }
    if (v.kind === 'lost') { this.stats.lost++; return true }
    this.#clock.setTimerWith(v.delayMs, this.#deliver, msg)
    return true
  }

  readonly #deliver = (msg: SimEnvelope): void => {
    this.stats.delivered++
    this.#nodes.get(msg.to)!(msg)
  }

  nodes (): IterableIterator<string> { return this.#nodes.keys() }
}

/** The Network port of one simulated node. */
export class SimNetwork implements Network {
  readonly self: string
  readonly hub: SimHub
  constructor (self: string, hub: SimHub) {
    this.self = self
    this.hub = hub
  }

  send<T extends MessageType> (to: string, type: T, body: MessageBody<T>): boolean {
    return this.hub.send({ type, from: this.self, to, body, sentAt: 0 })
  }

  broadcast<T extends MessageType> (type: T, body: MessageBody<T>): number {
    let n = 0
    for (const to of this.hub.nodes()) if (to !== this.self && this.send(to, type, body)) n++
    return n
  }
}
