// A manual clock for tests: time moves only when the test says so.
import type { Clock, Timer } from '../../actors/ports.ts'

export class ManualClock implements Clock {
  #now: number
  #timers: Array<{ at: number, fn: () => void, every: number | null, id: number }> = []
  #id = 0
  constructor (start = 1_700_000_000_000) { this.#now = start }
  now (): number { return this.#now }
  setTimer (ms: number, fn: () => void): Timer { return this.#add(ms, fn, null) }
  every (ms: number, fn: () => void): Timer { return this.#add(ms, fn, ms) }
  #add (ms: number, fn: () => void, every: number | null): Timer {
    const id = ++this.#id
    this.#timers.push({ at: this.#now + ms, fn, every, id })
    return { cancel: () => { this.#timers = this.#timers.filter(t => t.id !== id) } }
  }
  /** Moves time forward by `ms`, firing due timers in order. */
  advance (ms: number): void {
    const end = this.#now + ms
    for (;;) {
      this.#timers.sort((a, b) => a.at - b.at || a.id - b.id)
      const t = this.#timers[0]
      if (t === undefined || t.at > end) break
      this.#now = t.at
      if (t.every !== null) t.at += t.every
      else this.#timers.shift()
      t.fn()
    }
    this.#now = end
  }
}
