// Deterministic chunk plan for one object: chunk size and boundaries follow from the total size only,
// so every node that knows the size derives the same plan. Sized so a destination multipart upload
// never runs out of part numbers (docs/formulas.md#chunk-plan).

export const MIB = 1024 * 1024 // bytes
export const GIB = 1024 * MIB // bytes
export const TIB = 1024 * GIB // bytes
/** Smallest chunk we cut (16 MiB). */
export const MIN_CHUNK_SIZE = 16 * MIB // bytes
/** Largest chunk: the S3 maximum part size (5 GiB). */
export const MAX_CHUNK_SIZE = 5 * GIB // bytes
/** Largest object: the S3 maximum object size (5 TiB). */
export const MAX_TOTAL_SIZE = 5 * TIB // bytes
/** S3 multipart part numbers run 1..10,000. */
export const MULTIPART_MAX_PARTS = 10_000
/** Part numbers reserved per chunk, so a retried upload never reuses a part number. */
export const MULTIPART_ATTEMPT_SLOTS = 3
/** Most chunks one object may have: floor(10,000 / 3) = 3,333. */
export const MAX_CHUNKS = Math.floor(MULTIPART_MAX_PARTS / MULTIPART_ATTEMPT_SLOTS)
export const CHUNK_PLAN_VERSION = 'chunk_plan_pow2_mib_min16_max3333_v1'

export interface ChunkRange { index: number, offset: number, length: number }

export interface ChunkPlan {
  totalSize: number
  chunkSize: number
  totalChunks: number
  version: string
  /** Byte range of chunk `index`; throws RangeError outside 0..totalChunks-1. */
  chunk (index: number): ChunkRange
}

export type TotalSizeProblem = 'not_an_integer' | 'too_small' | 'too_large'

/** Why `totalSize` cannot be planned, or null when it can (1 byte .. 5 TiB, an integer). */
export function checkTotalSize (totalSize: number): TotalSizeProblem | null {
  if (!Number.isSafeInteger(totalSize)) return 'not_an_integer'
  // An empty object has nothing to move and object stores refuse 0-byte parts: rejected.
  if (totalSize < 1) return 'too_small'
  if (totalSize > MAX_TOTAL_SIZE) return 'too_large'
  return null
}

/** Chunk size for an object: the smallest 2^k MiB >= max(16 MiB, ceil(size / 3333)), at most 5 GiB. */
export function chunkSizeFor (totalSize: number): number {
  const problem = checkTotalSize(totalSize)
  if (problem !== null) throw new RangeError(`cannot plan ${totalSize} bytes: ${problem}`)
  const needed = Math.max(MIN_CHUNK_SIZE, Math.ceil(totalSize / MAX_CHUNKS))
  let size = MIB
  while (size < needed) size *= 2
  // Unreachable for sizes <= 5 TiB (the largest needs 2 GiB), kept as a guard on the constants.
  return Math.min(size, MAX_CHUNK_SIZE)
}

/** The plan for an object of `totalSize` bytes; the last chunk holds the remainder. */
export function planChunks (totalSize: number): ChunkPlan {
  const chunkSize = chunkSizeFor(totalSize)
  const totalChunks = Math.ceil(totalSize / chunkSize)
  return {
    totalSize,
    chunkSize,
    totalChunks,
    version: CHUNK_PLAN_VERSION,
    chunk (index: number): ChunkRange {
      if (!Number.isInteger(index) || index < 0 || index >= totalChunks) {
        throw new RangeError(`chunk index ${index} outside 0..${totalChunks - 1}`)
      }
      const offset = index * chunkSize
      return { index, offset, length: Math.min(chunkSize, totalSize - offset) }
    }
  }
}

/** Multipart part number for an upload attempt of a chunk: chunkIndex*3 + slot + 1 (1..9,999). */
export function partNumber (chunkIndex: number, attemptSlot: number): number {
  if (!Number.isInteger(chunkIndex) || chunkIndex < 0 || chunkIndex >= MAX_CHUNKS) {
    throw new RangeError(`chunk index ${chunkIndex} outside 0..${MAX_CHUNKS - 1}`)
  }
  if (!Number.isInteger(attemptSlot) || attemptSlot < 0 || attemptSlot >= MULTIPART_ATTEMPT_SLOTS) {
    throw new RangeError(`attempt slot ${attemptSlot} outside 0..${MULTIPART_ATTEMPT_SLOTS - 1}`)
  }
  return chunkIndex * MULTIPART_ATTEMPT_SLOTS + attemptSlot + 1
}

/** Inverse of partNumber. */
export function chunkOfPart (part: number): { chunkIndex: number, attemptSlot: number } {
  if (!Number.isInteger(part) || part < 1 || part > MAX_CHUNKS * MULTIPART_ATTEMPT_SLOTS) {
    throw new RangeError(`part number ${part} outside 1..${MAX_CHUNKS * MULTIPART_ATTEMPT_SLOTS}`)
  }
  return { chunkIndex: Math.floor((part - 1) / MULTIPART_ATTEMPT_SLOTS), attemptSlot: (part - 1) % MULTIPART_ATTEMPT_SLOTS }
}
