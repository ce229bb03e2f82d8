// Seeded randomness. One seed feeds independent named streams (stream = hash of seed and name), so
// adding a consumer of randomness never shifts the numbers another consumer sees.
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus'
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64'
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator'

/** FNV-1a over the text, folded into a 32-bit seed. */
function hash32 (text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h | 0
}

export class Rng {
  readonly seed: number
  readonly name: string
  readonly #gen: RandomGenerator
  constructor (seed: number, name = 'root') {
    this.seed = seed
    this.name = name
    this.#gen = xoroshiro128plus(hash32(`${seed}/${name}`))
  }

  /** An independent stream for `name`. */
  stream (name: string): Rng { return new Rng(this.seed, `${this.name}/${name}`) }

  /** Uniform in [0, 1). */
  next (): number { return uniformFloat64(this.#gen) }

  /** Integer in [0, n). */
  int (n: number): number { return Math.floor(this.next() * n) }

  /** True with probability p. */
  chance (p: number): boolean { return p > 0 && this.next() < p }

  /** Standard normal (Box-Muller). */
  normal (): number {
    const u = 1 - this.next()
    const v = this.next()
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
  }

  /** Exponential with the given mean. */
  exponential (mean: number): number { return -Math.log(1 - this.next()) * mean }

  /** Fisher-Yates shuffle of a copy. */
  shuffle<T> (items: readonly T[]): T[] {
    const out = [...items]
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1)
      const t = out[i]!; out[i] = out[j]!; out[j] = t
    }
    return out
  }
}
