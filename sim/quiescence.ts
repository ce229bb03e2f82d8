// Knowing when the actors are idle, and dispatching their messages cheaply.
//
// nact runs every message in its own setImmediate and keeps a per-actor `busy` flag from the first
// message until the mailbox is empty. Counting busy actors (in the methods that flip the flag) tells
// the engine exactly when no actor work is pending; everything else the actors wait on (timers,
// transport, movers, destinations) is on the virtual clock or settles in microtasks, which always
// drain before the next setImmediate.
//
// The simulator also replaces nact's per-message plumbing with a leaner equivalent (the handlers, their
// order and the one-message-at-a-time mailbox semantics are unchanged): nact wraps every message in an
// async closure, copies the actor's children into a new Map for each message's context and resolves
// the reference by walking the system's tree on every tell. At millions of messages that bookkeeping
// and its garbage were a large share of a run (docs/benchmarks.md#simulator).
import { createRequire } from 'node:module'

interface Reference { type?: string, system: { name?: string }, __simActor?: ActorInternals }
interface ActorInternals {
  busy: boolean
  stopped?: boolean
  __simBusy?: boolean
  parent?: { reference: unknown }
  path: unknown
  reference: unknown
  name: string
  childReferences: Map<string, unknown>
  log: unknown
  __simCtx?: { parent: unknown, path: unknown, self: unknown, name: string, children: unknown, sender: unknown, log: unknown }
  __simNext?: unknown
  __simNextSender?: unknown
  __simRun?: () => void
  __simMsg?: unknown
  __simSender?: unknown
  __simThen?: [(next: unknown) => void, (e: unknown) => void]
  state: unknown
  immediate: unknown
  f: (this: unknown, state: unknown, message: unknown, ctx: unknown) => unknown
  afterMessage (): void
  handleFault (message: unknown, sender: unknown, error: unknown): void
  dispatch (message: unknown, sender: unknown): void
  handleMessage (message: unknown, sender: unknown): void
  processNext (): void
  stop (): void
}

const require = createRequire(import.meta.url)
const resolved = Promise.resolve()
let installed = false
let busyActors = 0

function finish (actor: ActorInternals, next: unknown, message: unknown, sender: unknown): void {
  try {
    actor.state = next
    actor.afterMessage()
    actor.processNext()
  } catch (e) {
    actor.handleFault(message, sender, e)
  }
}

/** One message through its handler, as nact's handleMessage does, without the async wrapper's garbage. */
function runMessage (actor: ActorInternals, message: unknown, sender: unknown): void {
  let result: unknown
  try {
    // The context nact builds, one per actor instead of one per message with a copy of the children
    // map: no actor reads its context (they get what they need at spawn).
    let ctx = actor.__simCtx
    if (ctx === undefined || ctx.parent !== actor.parent?.reference) {
      ctx = { parent: actor.parent?.reference, path: actor.path, self: actor.reference, name: actor.name, children: actor.childReferences, sender, log: actor.log }
      actor.__simCtx = ctx
    } else ctx.sender = sender
    result = actor.f.call(ctx, actor.state, message, ctx)
  } catch (e) {
    actor.handleFault(message, sender, e)
    return
  }
  if (result !== null && typeof result === 'object' && typeof (result as { then?: unknown }).then === 'function') {
    // One message at a time per actor: its continuations are made once and read the message in hand.
    actor.__simMsg = message
    actor.__simSender = sender
    let k = actor.__simThen
    if (k === undefined) {
      const a = actor
      k = actor.__simThen = [(next: unknown) => finish(a, next, a.__simMsg, a.__simSender), (e: unknown) => a.handleFault(a.__simMsg, a.__simSender, e)]
    }
    (result as Promise<unknown>).then(k[0], k[1])
  } else {
    finish(actor, result, message, sender)
  }
}

/** Installs the busy counter and the lean dispatch on nact (idempotent; simulator processes only). */
export function installQuiescence (): void {
  if (installed) return
  installed = true
  const { Actor } = require('nact/lib/actor.js') as { Actor: { prototype: ActorInternals } }
  const { Nobody } = require('nact/lib/references.js') as { Nobody: new () => unknown }
  const systemMap = require('nact/lib/system-map.js') as { find (name: string | undefined, ref: unknown): ActorInternals | undefined }
  const nact = require('nact') as { dispatch: (ref: Reference, message: unknown, sender?: unknown) => void }
  const proto = Actor.prototype
  const processNext = proto.processNext
  const stop = proto.stop
  proto.handleMessage = function (this: ActorInternals, message: unknown, sender: unknown) {
    if (this.__simBusy !== true) { this.__simBusy = true; busyActors++ }
    this.busy = true
    // A microtask instead of nact's setImmediate per message: still after the sender's handler, and the
    // engine's quiescence check (a setImmediate turn) still comes after every microtask.
    this.__simNext = message
    this.__simNextSender = sender
    let run = this.__simRun
    if (run === undefined) {
      const a = this
      run = this.__simRun = () => { if (a.stopped !== true) runMessage(a, a.__simNext, a.__simNextSender) }
    }
    void resolved.then(run) // queueMicrotask would allocate an async resource and a bound function per call
  }
  proto.processNext = function (this: ActorInternals) {
    processNext.call(this)
    if ((!this.busy || this.stopped === true) && this.__simBusy === true) { this.__simBusy = false; busyActors-- }
  }
  proto.stop = function (this: ActorInternals) {
    stop.call(this)
    if (this.__simBusy === true) { this.__simBusy = false; busyActors-- }
  }
  // A tell resolves its reference once and keeps the actor on it (again after the actor stopped, since
  // a new actor may take its path); nact looks the path up in the system's tree on every message.
  const nobody = new Nobody()
  nact.dispatch = (ref, message, sender) => {
    let actor = ref.__simActor
    if (actor === undefined || actor.stopped === true) {
      actor = systemMap.find(ref.system.name, ref)
      if (actor !== undefined && ref.type === 'actor') ref.__simActor = actor
    }
    if (actor !== undefined && typeof actor.dispatch === 'function') actor.dispatch(message, sender ?? nobody)
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
 * Runs `advance` at every quiescent point (no actor busy, checked once per event-loop turn as `settle`
 * does) until it returns false. The engine's loop: a callback per turn instead of a promise chain per
 * instant (one promise and two closures fewer per instant, millions in a large run).
 */
export function drive (advance: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    let turns = 0
    const tick = (): void => {
      try {
        if (busyActors !== 0) {
          if (++turns > MAX_SETTLE_TURNS) throw new Error('simulation livelock: actors never became idle')
          setImmediate(tick)
          return
        }
        turns = 0
        if (advance()) setImmediate(tick)
        else resolve()
      } catch (e) {
        reject(e)
      }
    }
    setImmediate(tick)
  })
}

/**
 * Waits until no actor is busy and `extraPending()` is 0 for QUIET_TURNS turns in a row. Returns the
 * number of turns taken.
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
