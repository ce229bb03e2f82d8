// Loss: each message is dropped with probability `rate` (seeded). The sender is not told, as with a
// lossy link; the actors' own timeouts (the overseer) must recover.
import { DELIVER_NOW, LOST, type Channel } from '../transport.ts'
import type { Rng } from '../rng.ts'

export function lossChannel (rate: number, rng: Rng): Channel {
  return () => (rate > 0 && rng.chance(rate) ? LOST : DELIVER_NOW)
}

/** Drops messages the predicate selects (adversarial behaviour, e.g. an orchestrator that never relays). */
export function dropChannel (drop: (msg: Parameters<Channel>[0]) => boolean): Channel {
  return (msg) => (drop(msg) ? LOST : DELIVER_NOW)
}
