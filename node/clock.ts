// The real Clock: system time and Node timers. Timers are unref'd so they never hold the process open.
import type { Clock, Timer } from '../actors/ports.ts'

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer (ms, fn): Timer {
    const t = setTimeout(fn, ms)
    t.unref()
    return { cancel: () => clearTimeout(t) }
  },
  every (ms, fn): Timer {
    const t = setInterval(fn, ms)
    t.unref()
    return { cancel: () => clearInterval(t) }
  }
}
