// Latency: one-way delay = access latency of the sender + access latency of the receiver.
import type { Channel } from '../transport.ts'

export function latencyChannel (accessLatencyMs: (node: string) => number): Channel {
  return (msg) => ({ kind: 'deliver', delayMs: Math.max(0, Math.round(accessLatencyMs(msg.from) + accessLatencyMs(msg.to))) })
}
