// Group commit for the coordinator's steps. The coordinator applies a message to its in-memory state at
// once and hands the step's rows here; nothing the step does is seen outside (no reply, no frame sent,
// no event, no timer) until those rows are durable. One batch is in flight at a time; the steps that
// arrive meanwhile are written together in the next one, so a busy coordinator pays one store round
// trip for many messages instead of one each (docs/transfers.md#group-commit).
//
// Order is what makes this safe: batches are written one after another, and a step's effects run only
// once its batch and every batch before it are written. A step with no rows still waits for the
// batches before it (its reply may rest on them: "this chunk is a duplicate" is only true once the
// first copy is durable). A write that fails fails its batch and every step queued behind it, and the
// writer refuses further steps until `reset()`: the coordinator then reloads its state from the store,
// which holds exactly the steps whose effects ran.
import type { Store, StoreOp } from '../ports.ts'

/** Called once a step's rows are durable (null), or with the write's error (the step never happened). */
export type StepDone = (err: Error | null) => void

interface Pending { ops: readonly StoreOp[], done: StepDone, sync: boolean }

export class StepWriter {
  readonly #store: Store
  #queue: Pending[] = []
  #inFlight: Pending[] | null = null
  #failed: Error | null = null
  #idle: Array<() => void> = []
  readonly #onFailed: (err: Error) => void
  readonly #onThrown: (err: unknown) => void

  /**
   * `onFailed`: told once when a write fails (the coordinator restarts from the store); `onThrown`: a
   * step's `done` threw (the steps after it still run).
   */
  constructor (store: Store, onFailed: (err: Error) => void, onThrown: (err: unknown) => void) {
    this.#store = store
    this.#onFailed = onFailed
    this.#onThrown = onThrown
  }

  /** The error that stopped the writer, or null. */
  get failed (): Error | null { return this.#failed }

  /** Steps written or waiting now. */
  get pending (): number { return this.#queue.length + (this.#inFlight?.length ?? 0) }

  /**
   * Queues a step's rows (none for a step that only waits for the ones before it). `done` runs once
   * they and everything queued before them are durable, or with the error that refused them. `sync`:
   * durable against a machine crash too (the batch that carries them is flushed to disk): for steps
   * whose answer tells a client its data is stored.
   */
  write (ops: readonly StoreOp[], done: StepDone, sync = false): void {
    if (this.#failed !== null) { this.#call(done, this.#failed); return }
    if (ops.length === 0 && this.#inFlight === null && this.#queue.length === 0) { this.#call(done, null); return }
    this.#queue.push({ ops, done, sync })
    if (this.#inFlight === null) this.#next()
  }

  /** Resolves once nothing is waiting or in flight (before a read that must see every step). */
  async idle (): Promise<void> {
    if (this.#inFlight === null && this.#queue.length === 0) return
    await new Promise<void>(resolve => { this.#idle.push(resolve) })
  }

  /** Takes steps again after a failure (once the state that depended on the failed ones is gone). */
  reset (): void { this.#failed = null }

  #next (): void {
    if (this.#queue.length === 0) {
      this.#inFlight = null
      const waiters = this.#idle
      this.#idle = []
      for (const resolve of waiters) resolve()
      return
    }
    const group = this.#queue
    this.#queue = []
    this.#inFlight = group
    const ops: StoreOp[] = []
    for (const p of group) for (const op of p.ops) ops.push(op)
    const written = ops.length === 0 ? Promise.resolve() : this.#store.batch(ops, { sync: group.some(p => p.sync) })
    written.then(() => {
      for (const p of group) this.#call(p.done, null)
      this.#next()
    }, (err: Error) => {
      this.#failed = err
      const refused = [...group, ...this.#queue]
      this.#queue = []
      for (const p of refused) this.#call(p.done, err)
      this.#next()
      this.#onFailed(err)
    })
  }

  /** One step's effects throwing must not keep the next steps' from running. */
  #call (done: StepDone, err: Error | null): void {
    try { done(err) } catch (e) { this.#onThrown(e) }
  }
}
