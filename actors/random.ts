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
    // Sixteen bytes drawn in order, hex with the dashes of 8-4-4-4-12, built in one pass (the simulator
    // draws one per task, attempt and batch).
    uuid: () => {
      let h = ''
      for (let i = 0; i < 16; i++) {
        let x = Math.floor(next() * 256)
        if (i === 6) x = (x & 0x0f) | 0x40 // version 4
        else if (i === 8) x = (x & 0x3f) | 0x80 // RFC 9562 variant
        h += HEX[x]!
        if (i === 3 || i === 5 || i === 7 || i === 9) h += '-'
      }
      return h
    }
  }
}

/** The environment's source, or the system's where none was injected (a node's default). */
export const randomOf = (env: { random?: Random }): Random => env.random ?? systemRandom
