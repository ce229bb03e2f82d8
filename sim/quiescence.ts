// Knowing when the actors are idle. nact runs every message in its own setImmediate and keeps a
// per-actor `busy` flag from the first message until the mailbox is empty. Counting busy actors (by
// wrapping the two methods that flip the flag) tells the engine exactly when no actor work is pending;
// everything else the actors wait on (timers, transport, movers, destinations) is on the virtual clock
// or settles in microtasks, which always drain before the next setImmediate.
import { createRequire } from 'node:module'

interface ActorInternals {
  busy: boolean
  stopped?: boolean
  __simBusy?: boolean
  handleMessage (message: unknown, sender: unknown): void
  processNext (): void
  stop (): void
}

const require = createRequire(import.meta.url)
let installed = false
let busyActors = 0

/** Installs the busy counter on nact's Actor class (idempotent). */
export function installQuiescence (): void {
  if (installed) return
  installed = true
  const { Actor } = require('nact/lib/actor.js') as { Actor: { prototype: ActorInternals } }
  const proto = Actor.prototype
  const handleMessage = proto.handleMessage
  const processNext = proto.processNext
  const stop = proto.stop
  proto.handleMessage = function (this: ActorInternals, message: unknown, sender: unknown) {
    if (this.__simBusy !== true) { this.__simBusy = true; busyActors++ }
    handleMessage.call(this, message, sender)
  }
  proto.processNext = function (this: ActorInternals) {
    processNext.call(this)
    if ((!this.busy || this.stopped === true) && this.__simBusy === true) { this.__simBusy = false; busyActors-- }
  }
  proto.stop = function (this: ActorInternals) {
    stop.call(this)
    if (this.__simBusy === true) { this.__simBusy = false; busyActors-- }
  }
}

export function busyActorCount (): number { return busyActors }

const turn = (): Promise<void> => new Promise(resolve => setImmediate(resolve))

/** Most event-loop turns one settle may take before the engine reports a livelock. */
export const MAX_SETTLE_TURNS = 1_000_000
/**
 * Idle turns in a row that count as quiescent. One is enough: the busy counter is exact, and every
 * microtask queued before the turn has run when it ends (measured: a second turn costs 15% of a run).
 */
export const QUIET_TURNS = 1

/**
 * Waits until no actor is busy and `extraPending()` is 0 for two turns in a row. Returns the number
 * of turns taken.
 */
export async function settle (extraPending: () => number = () => 0): Promise<number> {
  let turns = 0
  let quiet = 0
  while (quiet < QUIET_TURNS) {
    await turn()
    turns++
    if (busyActors === 0 && extraPending() === 0) quiet++
    else quiet = 0
    if (turns > MAX_SETTLE_TURNS) throw new Error('simulation livelock: actors never became idle')
  }
  return turns
}
