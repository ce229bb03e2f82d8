// A thin facade over nact: the rest of the code never imports nact, so the engine can be swapped.
//
// - Supervision is explicit (nact's default stops a crashed actor and drops its later messages):
//   every actor restarts with fresh state, OTP style, unless it crashed more than `maxRestarts`
//   times within `withinMs` (counted on the injected clock), when it stops for good.
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

export interface Env {
  clock: Clock
  logger: Logger
  /** Ids and randomness; the system's source when absent (the simulator always seeds one). */
  random?: Random
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

/** Spawns a stateful actor under `parent` with restart supervision. */
export function spawnSupervised<S, M> (
  parent: Ref<any>, name: string, env: Env, init: () => S, handler: Handler<S, M>, opts: SuperviseOptions = {}
): Ref<M> {
  const maxRestarts = opts.maxRestarts ?? DEFAULT_MAX_RESTARTS
  const withinMs = opts.withinMs ?? DEFAULT_RESTART_WINDOW_MS
  const crashes: number[] = []
  const log = env.logger.child({ actor: name })
  return nact.spawn(parent, handler as never, name, {
    initialStateFunc: (() => init()) as never,
    onCrash: (msg: unknown, err: Error | undefined, ctx: any) => {
      const now = env.clock.now()
      crashes.push(now)
      while (crashes.length > 0 && crashes[0]! <= now - withinMs) crashes.shift()
      const msgType = typeof msg === 'object' && msg !== null && 'type' in msg ? (msg as { type: unknown }).type : typeof msg
      if (crashes.length > maxRestarts) {
        log.error({ err, msgType, restarts: crashes.length }, 'actor crashed too often; stopping it')
        return ctx.stop
      }
      log.warn({ err, msgType, restarts: crashes.length }, 'actor crashed; restarting with fresh state')
      return ctx.reset
    }
  }) as unknown as Ref<M>
}

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
