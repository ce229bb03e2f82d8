// Helpers of the destination drivers; the one error type they throw is DestinationError (actors/errors.ts).
import type { DeliveredPart, DestinationKind, UploadState } from '../../../actors/destination.ts'
import { DestinationError } from '../../../actors/errors.ts'

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
