// Virtual time: the Clock port over a seeded-order event queue. Events at the same instant run in the
// order they were scheduled (insertion sequence breaks ties), so a run is a pure function of its inputs.
import { Heap } from 'heap-js'
import type { Clock, Timer } from '../actors/ports.ts'

/** A queued event is its own Timer handle (one allocation per timer on the hot path). */
const NOTHING = (): void => {}

class SimEvent implements Timer {
  readonly at: number
  readonly seq: number
  fn: (arg?: any) => void
  arg: unknown
  cancelled = false
  constructor (at: number, seq: number, fn: (arg?: any) => void, arg?: unknown) {
    this.at = at
    this.seq = seq
    this.fn = fn
    this.arg = arg
  }
  /** A cancelled event stays queued until its time (lazy deletion) but lets go of what it would have run. */
  cancel (): void { this.cancelled = true; this.fn = NOTHING; this.arg = undefined }
}

interface TickGroup { period: number, nextAt: number, members: Array<{ fn: () => void, stopped: boolean }>, stopped: number, key: string, timer: Timer | null }

const byTimeThenSeq = (a: SimEvent, b: SimEvent): number => a.at - b.at || a.seq - b.seq

export class VirtualClock implements Clock {
  #now: number
  #seq = 0
  readonly #queue = new Heap<SimEvent>(byTimeThenSeq)
  readonly #groups = new Map<string, TickGroup>()
  /** Events run so far (for progress and the report). */
  fired = 0

  constructor (startMs: number) {
    this.#now = startMs
  }

  now (): number { return this.#now }

  setTimer (ms: number, fn: () => void): Timer {
    const ev = new SimEvent(this.#now + Math.max(0, ms), this.#seq++, fn)
    this.#queue.push(ev)
    return ev
  }

  /** `setTimer` for `fn(arg)`, without a closure per event (the transport's deliveries). */
  setTimerWith<A> (ms: number, fn: (arg: A) => void, arg: A): Timer {
    const ev = new SimEvent(this.#now + Math.max(0, ms), this.#seq++, fn, arg)
    this.#queue.push(ev)
    return ev
  }

  /**
   * Periodic timers with the same period and phase share one queued event (batched timers): at 100
   * coordinators their overseer ticks were most of the queue. Members run in the order they joined,
   * at the instant and queue position of the group's event; a cancelled member leaves at once.
   */
  every (ms: number, fn: () => void): Timer {
    const period = Math.max(1, ms)
    const nextAt = this.#now + period
    const key = `${period}@${nextAt}`
    let group = this.#groups.get(key)
    if (group === undefined) {
      const g: TickGroup = { period, nextAt, members: [], stopped: 0, key, timer: null }
      group = g
      this.#groups.set(key, g)
      const fire = (): void => {
        this.#groups.delete(g.key)
        if (g.stopped > 0) { g.members = g.members.filter(m => !m.stopped); g.stopped = 0 }
        if (g.members.length === 0) return
        g.nextAt = this.#now + g.period
        g.key = `${g.period}@${g.nextAt}`
        this.#groups.set(g.key, g)
        g.timer = this.setTimer(g.period, fire)
        for (const m of g.members) if (!m.stopped) m.fn()
      }
      g.timer = this.setTimer(period, fire)
    }
    const g = group
    const member = { fn, stopped: false }
    g.members.push(member)
    return {
      cancel: () => {
        if (member.stopped) return
        member.stopped = true
        g.stopped++
        // The last member gone: the group's event leaves the queue too.
        if (g.stopped === g.members.length) { g.timer?.cancel(); this.#groups.delete(g.key) }
      }
    }
  }

  /** Time of the next live event, or null when the queue is empty. */
  nextAt (): number | null {
    let top = this.#queue.peek()
    while (top !== undefined && top.cancelled) { this.#queue.pop(); top = this.#queue.peek() }
    return top === undefined ? null : top.at
  }

  /**
   * Advances to the next instant (never past `limitMs`) and runs every event due at it that was queued
   * before this call; events they schedule for the same instant wait for the next call. Returns the
   * number of events run (0 when nothing is due before the limit).
   */
  step (limitMs: number): number {
    const at = this.nextAt()
    if (at === null || at > limitMs) return 0
    this.#now = at
    const horizon = this.#seq
    let ran = 0
    for (;;) {
      const top = this.#queue.peek()
      if (top === undefined || top.at !== at || top.seq >= horizon) break
      this.#queue.pop()
      if (top.cancelled) continue
      ran++
      top.fn(top.arg)
    }
    this.fired += ran
    return ran
  }

  /** Moves time forward to `ms` without running anything (only when nothing is due before it). */
  advanceTo (ms: number): void {
    const at = this.nextAt()
    if (at !== null && at < ms) throw new RangeError('events are due before the requested time')
    if (ms > this.#now) this.#now = ms
  }

  get pending (): number { return this.#queue.size() }
}
