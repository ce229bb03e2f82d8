// A thin facade over nact: the rest of the code never imports nact, so the engine can be swapped.
//
// - Supervision is explicit (nact's default stops a crashed actor and drops its later messages):
//   every actor restarts with fresh state, OTP style. One that crashed more than `maxRestarts` times
//   within `withinMs` (counted on the injected clock) is not stopped for good, since the fault is
//   usually outside it (a full disk, a store that fails writes): its restart waits, doubling from
//   RESTART_BACKOFF_MIN_MS to RESTART_BACKOFF_MAX_MS, while its mailbox holds. `env.health` hears
//   every crash and the first message handled after it (what /readyz reports).
// - Request/response carries its own reply object instead of nact's `query`, whose temporary reply
//   ids are short random numbers that collide under load; timeouts run on the injected clock.
import nact from 'nact'
import type { Ref, ActorContext } from 'nact'
import { createRequire } from 'node:module'
import type { Clock, Logger, Random } from './ports.ts'
import { AskTimeoutError } from './errors.ts'

export type { Ref }

// The engine's registry of systems (nact exports no accessor for mailbox depth).
const systemMap = createRequire(import.meta.url)('nact/lib/system-map.js') as { find (name: string): unknown }
export type SystemRef = Ref<never>

export interface SuperviseOptions {
  /** Restarts allowed within `withinMs` before the actor is stopped. */
  maxRestarts?: number
  withinMs?: number
}

export const DEFAULT_MAX_RESTARTS = 5
export const DEFAULT_RESTART_WINDOW_MS = 60_000 // 1 min
/** First wait before restarting an actor past its restart intensity; doubles per further crash. */
export const RESTART_BACKOFF_MIN_MS = 1_000 // 1 s
export const RESTART_BACKOFF_MAX_MS = 30_000 // 30 s

/** Hears actors go down (crash) and come back (a message handled after the crash). */
export interface ActorHealth {
  down (actor: string, err: Error | undefined, restartInMs: number): void
  up (actor: string): void
}

export interface Env {
  clock: Clock
  logger: Logger
  /** Ids and randomness; the system's source when absent (the simulator always seeds one). */
  random?: Random
  /** Actor crashes and recoveries (the node's readiness); none in the simulator. */
  health?: ActorHealth
  /**
   * True once the node has begun to stop: its store and connections close under handlers still
   * running, so a crash then is the shutdown's doing, not a fault (logged at debug, the actor stops).
   */
  stopping?: () => boolean
}

export function startSystem (): SystemRef {
  return nact.start() as SystemRef
}

/**
 * Messages waiting in each live actor's mailbox under `system`, by actor path (for metrics; reads the
 * engine's own queues, so nothing is counted twice or left behind when an actor restarts).
 */
export function mailboxDepths (system: SystemRef): Record<string, number> {
  const out: Record<string, number> = {}
  const root = systemMap.find((system as unknown as { system: { name: string } }).system.name) as { children?: Map<string, unknown> } | undefined
  const walk = (actor: { name?: string, mailbox?: { length: number }, children?: Map<string, unknown> }, path: string): void => {
    for (const child of (actor.children?.values() ?? []) as Iterable<typeof actor>) {
      const p = path === '' ? String(child.name) : `${path}/${String(child.name)}`
      out[p] = child.mailbox?.length ?? 0
      walk(child, p)
    }
  }
  if (root !== undefined) walk(root, '')
  return out
}

export function stopActor (ref: Ref<unknown>): void {
  nact.stop(ref as Ref<never>)
}

export function tell<M> (ref: Ref<M>, msg: M): void {
  nact.dispatch(ref, msg)
}

export type Handler<S, M> = (state: S, msg: M, ctx: ActorContext<M, Ref<any>>) => S | Promise<S>

/** Spawns a stateful actor under `parent` with restart supervision (see the top of this file). */
export function spawnSupervised<S, M> (
  parent: Ref<any>, name: string, env: Env, init: () => S, handler: Handler<S, M>, opts: SuperviseOptions = {}
): Ref<M> {
  const maxRestarts = opts.maxRestarts ?? DEFAULT_MAX_RESTARTS
  const withinMs = opts.withinMs ?? DEFAULT_RESTART_WINDOW_MS
  const crashes: number[] = []
  const log = env.logger.child({ actor: name })
  let restartAt = 0
  let down = false
  const supervised: Handler<S, M> = async (state, msg, ctx) => {
    const wait = restartAt - env.clock.now()
    if (wait > 0) await new Promise<void>(resolve => { env.clock.setTimer(wait, resolve) })
    const next = await handler(state, msg, ctx)
    if (down) { down = false; env.health?.up(name) }
    return next
  }
  return nact.spawn(parent, supervised as never, name, {
    initialStateFunc: (() => init()) as never,
    onCrash: (msg: unknown, err: Error | undefined, ctx: any) => {
      if (env.stopping?.() === true) {
        log.debug({ err, msgType: typeOf(msg) }, 'actor failed while the node stops; not restarted')
        return ctx.stop
      }
      const now = env.clock.now()
      crashes.push(now)
      while (crashes.length > 0 && crashes[0]! <= now - withinMs) crashes.shift()
      const msgType = typeOf(msg)
      const over = crashes.length - maxRestarts
      const backoffMs = over > 0 ? Math.min(RESTART_BACKOFF_MAX_MS, RESTART_BACKOFF_MIN_MS * 2 ** (over - 1)) : 0
      restartAt = now + backoffMs
      down = true
      env.health?.down(name, err, backoffMs)
      if (backoffMs > 0) log.error({ err, msgType, restarts: crashes.length, backoffMs }, 'actor crashed too often; restarting after a backoff')
      else log.warn({ err, msgType, restarts: crashes.length }, 'actor crashed; restarting with fresh state')
      return ctx.reset
    }
  }) as unknown as Ref<M>
}

const typeOf = (msg: unknown): unknown => typeof msg === 'object' && msg !== null && 'type' in msg ? (msg as { type: unknown }).type : typeof msg

/** A reply slot carried inside a request message. */
export interface Reply<T> {
  readonly id: string
  resolve (value: T): void
  reject (err: Error): void
}

export { AskTimeoutError } from './errors.ts'

/**
 * Sends `make(reply)` to `ref` and waits for the actor to call `reply.resolve`. The timeout runs on
 * the injected clock, so it is virtual in the simulator.
 */
/** Reply ids are unique within the process, which is all they need (a reply never leaves it). */
let replies = 0

export function ask<M, T> (ref: Ref<M>, clock: Clock, timeoutMs: number, make: (reply: Reply<T>) => M, what = 'actor'): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false
    const timer = clock.setTimer(timeoutMs, () => {
      if (done) return
      done = true
      reject(new AskTimeoutError(what, timeoutMs))
    })
    const reply: Reply<T> = {
      id: String(++replies),
      resolve: (v) => { if (!done) { done = true; timer.cancel(); resolve(v) } },
      reject: (e) => { if (!done) { done = true; timer.cancel(); reject(e) } }
    }
    nact.dispatch(ref, make(reply))
  })
}
