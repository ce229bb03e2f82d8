// Helpers of the destination drivers; the one error type they throw is DestinationError (actors/errors.ts).
import type { DeliveredPart, DestinationKind, UploadState } from '../../../actors/destination.ts'
import { DestinationError } from '../../../actors/errors.ts'
import { sha256OfPieces } from '../hash-pool.ts'

export { DestinationError }

/** Maps an HTTP status from a destination to the refused (4xx) or unavailable (5xx) code. */
export function httpFailure (what: string, status: number, body = ''): DestinationError {
  const code = status >= 500 || status === 429 || status === 408 ? 'BWN_ERR_DESTINATION_UNAVAILABLE' : 'BWN_ERR_DESTINATION_REFUSED'
  return new DestinationError(code, `${what}: HTTP ${status}${body ? ` ${body.slice(0, 300)}` : ''}`, { status })
}

export function networkFailure (what: string, cause: unknown): DestinationError {
  return new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `${what}: ${(cause as Error)?.message ?? String(cause)}`, { cause })
}

export function expectKind (state: UploadState, kind: DestinationKind): void {
  if (state?.kind !== kind) throw new DestinationError('BWN_ERR_DESTINATION_STATE', `upload state of kind ${String(state?.kind)} given to the ${kind} driver`)
}

export function stateString (state: UploadState, field: string): string {
  const value = state[field]
  if (typeof value !== 'string' || value.length === 0) throw new DestinationError('BWN_ERR_DESTINATION_STATE', `upload state field ${field} missing`)
  return value
}

export function stateInteger (state: UploadState, field: string): number {
  const value = state[field]
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new DestinationError('BWN_ERR_DESTINATION_STATE', `upload state field ${field} missing`)
  return value
}

/** Checks that `parts` names every chunk 0..totalChunks-1 exactly once and returns them in index order. */
export function partsInOrder (parts: DeliveredPart[], totalChunks: number): DeliveredPart[] {
  const byIndex = new Map<number, DeliveredPart>()
  for (const part of parts) {
    if (!Number.isInteger(part.index) || part.index < 0 || part.index >= totalChunks) {
      throw new DestinationError('BWN_ERR_DESTINATION_INCOMPLETE', `part for chunk ${part.index} outside 0..${totalChunks - 1}`)
    }
    if (byIndex.has(part.index)) throw new DestinationError('BWN_ERR_DESTINATION_INCOMPLETE', `chunk ${part.index} listed twice`)
    byIndex.set(part.index, part)
  }
  if (byIndex.size !== totalChunks) throw new DestinationError('BWN_ERR_DESTINATION_INCOMPLETE', `${byIndex.size} of ${totalChunks} chunks listed`)
  return [...byIndex.values()].sort((a, b) => a.index - b.index)
}

/** Validates a byte range against the object size. */
export function checkRange (offset: number, length: number, totalSize: number): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length <= 0 || offset + length > totalSize) {
    throw new RangeError(`range ${offset}+${length} outside an object of ${totalSize} bytes`)
  }
}

/** How much of an error answer's body goes into the message. */
const ERROR_TEXT_BYTES = 4096

// A destination's answers come from servers a client named: a driver reads no more of a body than it
// asked for, so no answer can fill the coordinator's memory.

/** A response body of at most `max` bytes; a longer one is refused at its first excess byte, the rest never read. */
export async function boundedBody (res: Response, max: number, what: string): Promise<Buffer> {
  const declared = res.headers.get('content-length')
  if (declared !== null && Number(declared) > max) {
    await discard(res)
    throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `${what}: answered ${declared} bytes, at most ${max} expected`)
  }
  const pieces: Uint8Array[] = []
  let bytes = 0
  for await (const piece of res.body ?? []) {
    bytes += piece.byteLength
    // Leaving the loop cancels the stream: nothing more is read.
    if (bytes > max) throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `${what}: answered more than the ${max} bytes expected`)
    pieces.push(piece)
  }
  return Buffer.concat(pieces, bytes)
}

/** The sha256 of a response body that must be exactly `length` bytes, hashed as it streams (never whole in memory). */
export async function bodySha256 (res: Response, length: number, what: string): Promise<string> {
  const { sha256, bytes } = res.body === null ? { sha256: '', bytes: 0 } : await sha256OfPieces(res.body, length)
  if (bytes > length) throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `${what}: answered more than the ${length} bytes asked for`)
  if (bytes !== length) throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `${what}: answered ${bytes} bytes, asked for ${length}`)
  return sha256
}

/** The start of an error answer's body, for the message; the rest is not read. */
export async function errorText (res: Response): Promise<string> {
  try {
    const pieces: Uint8Array[] = []
    let bytes = 0
    for await (const piece of res.body ?? []) {
      pieces.push(piece)
      bytes += piece.byteLength
      if (bytes >= ERROR_TEXT_BYTES) break
    }
    return Buffer.concat(pieces, bytes).subarray(0, ERROR_TEXT_BYTES).toString('utf8')
  } catch { return '' }
}

/** Drops an answer whose body is not needed: its connection is not held open for it. */
export async function discard (res: Response): Promise<void> {
  await res.body?.cancel().catch(() => {})
}
