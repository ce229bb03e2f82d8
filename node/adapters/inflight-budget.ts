// The in-flight budget: how many bytes of chunk data one node may hold in memory at once (`--inflight-mib`).
// Every streamed transfer of chunk bytes reserves its window for as long as it runs (a worker's move, a
// sink write or read-back); a path that must hold a whole chunk (the swarm bulk fallback) reserves the
// chunk. Reservations wait, first come first served, until the bytes are free, so the node's memory for
// chunk data stays under the budget however large the files and however many tasks arrive.
// Reservations never nest within one node, so waiting cannot deadlock.

export class InflightBudget {
  readonly capacity: number
  #used = 0
  readonly #waiting: Array<{ bytes: number, grant: () => void }> = []

  constructor (bytes: number) {
    if (!Number.isSafeInteger(bytes) || bytes < 1) throw new RangeError(`an in-flight budget needs at least one byte, not ${bytes}`)
    this.capacity = bytes
  }

  /** Bytes reserved now. */
  get used (): number { return this.#used }
  /** Reservations waiting for bytes. */
  get waiting (): number { return this.#waiting.length }

  /**
   * Reserves `bytes` (a reservation larger than the whole budget takes all of it) and resolves with the
   * function that gives them back (idempotent). Rejects with the signal's reason when it aborts first.
   */
  acquire (bytes: number, signal?: AbortSignal): Promise<() => void> {
    const want = Math.min(Math.max(0, Math.ceil(bytes)), this.capacity)
    if (signal?.aborted === true) return Promise.reject(signal.reason)
    const release = (): (() => void) => {
      let done = false
      return () => {
        if (done) return
        done = true
        this.#used -= want
        this.#grant()
      }
    }
    if (this.#waiting.length === 0 && this.#used + want <= this.capacity) {
      this.#used += want
      return Promise.resolve(release())
    }
    return new Promise((resolve, reject) => {
      const entry = {
        bytes: want,
        grant: () => { signal?.removeEventListener('abort', onAbort); resolve(release()) }
      }
      const onAbort = (): void => {
        const i = this.#waiting.indexOf(entry)
        if (i >= 0) this.#waiting.splice(i, 1)
        this.#grant() // the next in line may fit now
        reject(signal!.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#waiting.push(entry)
    })
  }

  #grant (): void {
    while (this.#waiting.length > 0 && this.#used + this.#waiting[0]!.bytes <= this.capacity) {
      const next = this.#waiting.shift()!
      this.#used += next.bytes
      next.grant()
    }
  }
}
