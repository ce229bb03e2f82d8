// Writes a streamed body's pieces to a file as they arrive, with one write in flight: whatever
// arrived while that write ran goes out in the next writev, started as soon as it ends. A piece is
// held only while the write before it runs, so socket buffers die young. Gathering a fixed 1 MiB
// before each write held them long enough to survive a young-generation collection; promoted, they
// were then paid for in full mark-compacts (docs/benchmarks.md#e2e). The reader waits only when `maxPendingBytes` have piled up
// behind the write in flight, so at most about twice that is held per stream.
import type { FileHandle } from 'node:fs/promises'

export class PieceWriter {
  readonly fh: FileHandle
  readonly maxPendingBytes: number
  #pending: Uint8Array[] = []
  #pendingBytes = 0
  #writing: Promise<void> | null = null
  #error: unknown = null
  #position: number | null

  /** `position`: where the first piece goes; null appends at the file's current position. */
  constructor (fh: FileHandle, position: number | null, maxPendingBytes: number) {
    this.fh = fh
    this.maxPendingBytes = maxPendingBytes
    this.#position = position
  }

  /**
   * Queues `piece` (which must not be changed afterwards) and starts a write if none is running.
   * Waits only when `maxPendingBytes` are queued behind the write in flight; rejects with the first
   * write error.
   */
  async write (piece: Uint8Array): Promise<void> {
    this.#throwIfFailed()
    this.#pending.push(piece)
    this.#pendingBytes += piece.byteLength
    if (this.#writing !== null && this.#pendingBytes >= this.maxPendingBytes) await this.#writing
    this.#throwIfFailed()
    if (this.#writing === null) this.#start()
  }

  /** Writes everything queued and waits for it; rejects with the first write error, also one already past. */
  async flush (): Promise<void> {
    while (this.#writing !== null || this.#pending.length > 0) {
      if (this.#writing !== null) await this.#writing
      this.#throwIfFailed()
      if (this.#writing === null && this.#pending.length > 0) this.#start()
    }
    this.#throwIfFailed()
  }

  /** Waits until no write is in flight, whatever the outcome (before closing the file on an error path). */
  async settle (): Promise<void> {
    while (this.#writing !== null) await this.#writing
  }

  #throwIfFailed (): void {
    if (this.#error !== null) throw this.#error
  }

  #start (): void {
    const pieces = this.#pending
    const size = this.#pendingBytes
    const at = this.#position
    this.#pending = []
    this.#pendingBytes = 0
    if (at !== null) this.#position = at + size
    // Never rejects: the error is kept for the next write or flush, and settle() can always await it.
    // What queued meanwhile goes out at once (after a failure nothing more is written).
    this.#writing = writeFully(this.fh, pieces, size, at)
      .catch((err: unknown) => { this.#error ??= err })
      .finally(() => {
        this.#writing = null
        if (this.#error === null && this.#pending.length > 0) this.#start()
      })
  }
}

/** One writev of `pieces` at `position` (null: the current position), finishing a short write piecewise. */
async function writeFully (fh: FileHandle, pieces: Uint8Array[], size: number, position: number | null): Promise<void> {
  const { bytesWritten } = await fh.writev(pieces, position ?? undefined)
  if (bytesWritten === size) return
  const rest = Buffer.concat(pieces).subarray(bytesWritten) // a short writev: rare on regular files
  for (let done = 0; done < rest.length;) {
    const { bytesWritten: n } = await fh.write(rest, done, rest.length - done, position === null ? null : position + bytesWritten + done)
    if (n === 0) throw new Error(`short write: no progress after ${bytesWritten + done} of ${size} bytes`)
    done += n
  }
}
