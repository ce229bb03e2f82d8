// The Random port's two sources: the system's (cryptographic, for nodes) and one driven by any
// uniform [0, 1) function (the simulator's seeded streams, tests). The only module in actors/ that
// may reach the system's randomness (test/actors/no-wall-clock.test.ts).
import { randomBytes, randomUUID } from 'node:crypto'
import type { Random } from './ports.ts'

export const systemRandom: Random = {
  uuid: () => randomUUID(),
  next: () => Math.random(),
  bytes: (n) => new Uint8Array(randomBytes(n))
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

/** A Random drawing every bit from `next` (uniform in [0, 1)): deterministic when `next` is seeded. */
export function randomFrom (next: () => number): Random {
  const bytes = (n: number): Uint8Array => {
    const out = new Uint8Array(n)
    for (let i = 0; i < n; i++) out[i] = Math.floor(next() * 256)
    return out
  }
  return {
    next,
    bytes,
    uuid: () => {
      const b = bytes(16)
      b[6] = (b[6]! & 0x0f) | 0x40 // version 4
      b[8] = (b[8]! & 0x3f) | 0x80 // RFC 9562 variant
      const h = Array.from(b, x => HEX[x]!).join('')
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
    }
  }
}

/** The environment's source, or the system's where none was injected (a node's default). */
export const randomOf = (env: { random?: Random }): Random => env.random ?? systemRandom
