// Hamilton (largest remainder) allocation of chunk indices over candidates weighted by routing score,
// and the deterministic orderings around it (docs/formulas.md#allocation).

/** Fractional parts closer than this count as equal, so float noise never decides a tie. */
export const FRACTION_TIE_EPSILON = 1e-9
export const ALLOCATION_RULE = 'hamilton_largest_remainder_score_desc_key_asc_v1'

export interface AllocationCandidate {
  id: string
  /** Routing score; negative or non-finite counts as 0. */
  score: number
  /** Final tie-break, ascending; defaults to `id`. */
  key?: string
}

export interface CandidateCount { id: string, count: number }
/** Inclusive chunk index range [chunkStart, chunkEnd]. */
export interface ChunkSlice { id: string, chunkStart: number, chunkEnd: number, count: number }

export interface Allocation {
  rule: string
  totalChunks: number
  /** One entry per candidate, in input order (zero counts included). */
  counts: CandidateCount[]
  /** Contiguous slices from chunk 0 in input order; candidates with 0 chunks are skipped. */
  slices: ChunkSlice[]
}

const cleanScore = (s: number): number => (Number.isFinite(s) && s > 0 ? s : 0)
const keyOf = (c: AllocationCandidate): string => c.key ?? c.id
const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

function checkCandidates (candidates: readonly AllocationCandidate[]): void {
  const seen = new Set<string>()
  for (const c of candidates) {
    if (seen.has(c.id)) throw new RangeError(`duplicate candidate id ${c.id}`)
    seen.add(c.id)
  }
}

/**
 * Chunk counts per candidate: quota_i = s_i/Σs·T, floors, leftovers one each to the largest
 * fractional parts (ties: score desc, then key asc). Σs = 0 gives an equal split with the
 * remainder going to the lowest keys.
 */
export function hamiltonCounts (totalChunks: number, candidates: readonly AllocationCandidate[]): CandidateCount[] {
  if (!Number.isSafeInteger(totalChunks) || totalChunks < 0) throw new RangeError(`bad chunk count ${totalChunks}`)
  checkCandidates(candidates)
  const n = candidates.length
  if (n === 0) {
    if (totalChunks > 0) throw new RangeError('no candidates to allocate chunks to')
    return []
  }
  const scores = candidates.map(c => cleanScore(c.score))
  const sum = scores.reduce((a, b) => a + b, 0)
  const quotas = sum > 0 ? scores.map(s => (s / sum) * totalChunks) : scores.map(() => totalChunks / n)
  const counts = quotas.map(q => Math.floor(q))
  let leftover = totalChunks - counts.reduce((a, b) => a + b, 0)
  const order = candidates.map((_, i) => i).sort((a, b) => {
    const fa = quotas[a] - counts[a]
    const fb = quotas[b] - counts[b]
    if (Math.abs(fa - fb) > FRACTION_TIE_EPSILON) return fb - fa
    if (scores[a] !== scores[b]) return scores[b] - scores[a]
    return compareText(keyOf(candidates[a]), keyOf(candidates[b]))
  })
  // Float quotas can floor one short of an exact integer; the loop still hands out every chunk.
  for (let k = 0; leftover > 0; k = (k + 1) % n, leftover--) counts[order[k]]++
  return candidates.map((c, i) => ({ id: c.id, count: counts[i] }))
}

/** Hamilton counts plus contiguous slices from chunk 0, in candidate order. */
export function allocateChunks (totalChunks: number, candidates: readonly AllocationCandidate[]): Allocation {
  const counts = hamiltonCounts(totalChunks, candidates)
  const slices: ChunkSlice[] = []
  let next = 0
  for (const { id, count } of counts) {
    if (count === 0) continue
    slices.push({ id, chunkStart: next, chunkEnd: next + count - 1, count })
    next += count
  }
  return { rule: ALLOCATION_RULE, totalChunks, counts, slices }
}

/** Candidates minus excluded ids (and, unless keepZeroScores, minus those scoring <= 0). */
export function eligibleCandidates<C extends AllocationCandidate> (
  candidates: readonly C[], excludeIds: Iterable<string>, opts: { keepZeroScores?: boolean } = {}
): C[] {
  const excluded = new Set(excludeIds)
  return candidates.filter(c => !excluded.has(c.id) && (opts.keepZeroScores === true || cleanScore(c.score) > 0))
}

export interface RecoveryAssignment { id: string, chunkIndices: number[] }

/**
 * Recovery: hand the given chunk indices (any order, duplicates dropped) to candidates not in
 * `excludeIds`, by Hamilton on score over the ascending index list. When every eligible score is 0 the
 * split is equal. Returns [] if no candidate is eligible (the caller retries later).
 */
export function allocateRecovery (
  chunkIndices: readonly number[], candidates: readonly AllocationCandidate[], excludeIds: Iterable<string>
): RecoveryAssignment[] {
  const indices = [...new Set(chunkIndices)].sort((a, b) => a - b)
  const pool = eligibleCandidates(candidates, excludeIds, { keepZeroScores: true })
  if (pool.length === 0 || indices.length === 0) return []
  const { slices } = allocateChunks(indices.length, pool)
  return slices.map(s => ({ id: s.id, chunkIndices: indices.slice(s.chunkStart, s.chunkEnd + 1) }))
}

/** 31-multiplier string hash to uint32 (h = h*31 + code unit), a stable seed from e.g. a transfer id. */
export function hashSeed (text: string): number {
  let h = 0
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) >>> 0
  return h
}

/** Candidates sorted by key asc, then rotated left by hashSeed(seed) mod n: a fair, replayable order. */
export function rotatedOrder<C extends AllocationCandidate> (candidates: readonly C[], seed: string): C[] {
  const sorted = [...candidates].sort((a, b) => compareText(keyOf(a), keyOf(b)) || compareText(a.id, b.id))
  if (sorted.length === 0) return sorted
  const start = hashSeed(seed) % sorted.length
  return [...sorted.slice(start), ...sorted.slice(0, start)]
}

/** Candidates by score desc, then key asc: the order slices are laid out in for routed transfers. */
export function scoreOrder<C extends AllocationCandidate> (candidates: readonly C[]): C[] {
  return [...candidates].sort((a, b) => cleanScore(b.score) - cleanScore(a.score) || compareText(keyOf(a), keyOf(b)) || compareText(a.id, b.id))
}

/** Leftovers up to this many are picked by selection; more, by sorting (the two agree). */
const SELECT_LEFTOVERS_MAX = 16

/**
 * The coordinator's wave split in one pass: the same slices as
 * `allocateChunks(T, rotatedOrder(candidates, seed).map((c, i) => ({ ...c, key: position i })))`
 * (Hamilton over the rotated order, ties by score desc, then position), without the intermediate
 * copies, keys and full sort: a wave of a few chunks over 100 candidates hands out a few leftovers,
 * which selection finds in O(leftover · n). Keys are the ids (candidates carry no `key`).
 */
export function allocateRotated (totalChunks: number, candidates: readonly AllocationCandidate[], seed: string): ChunkSlice[] {
  if (!Number.isSafeInteger(totalChunks) || totalChunks < 0) throw new RangeError(`bad chunk count ${totalChunks}`)
  const n = candidates.length
  if (n === 0) {
    if (totalChunks > 0) throw new RangeError('no candidates to allocate chunks to')
    return []
  }
  // Key (= id) order; callers usually pass candidates already in it, which skips the sort.
  let sorted: readonly AllocationCandidate[] = candidates
  for (let i = 1; i < n; i++) {
    if (compareText(candidates[i - 1]!.id, candidates[i]!.id) >= 0) { sorted = [...candidates].sort((a, b) => compareText(a.id, b.id)); break }
  }
  for (let i = 1; i < n; i++) if (sorted[i - 1]!.id === sorted[i]!.id) throw new RangeError(`duplicate candidate id ${sorted[i]!.id}`)
  const start = hashSeed(seed) % n
  const at = (r: number): AllocationCandidate => sorted[(start + r) % n]!
  const scores = new Float64Array(n)
  let sum = 0
  for (let r = 0; r < n; r++) { scores[r] = cleanScore(at(r).score); sum += scores[r]! }
  const quotas = new Float64Array(n)
  const counts = new Array<number>(n)
  let given = 0
  for (let r = 0; r < n; r++) {
    quotas[r] = sum > 0 ? (scores[r]! / sum) * totalChunks : totalChunks / n
    counts[r] = Math.floor(quotas[r]!)
    given += counts[r]!
  }
  let leftover = totalChunks - given
  // hamiltonCounts' order: larger fraction (within epsilon: equal), then higher score, then position.
  const before = (a: number, b: number): boolean => {
    const fa = quotas[a]! - counts[a]!
    const fb = quotas[b]! - counts[b]!
    if (Math.abs(fa - fb) > FRACTION_TIE_EPSILON) return fa > fb
    if (scores[a] !== scores[b]) return scores[a]! > scores[b]!
    return a < b
  }
  if (leftover > 0 && leftover <= SELECT_LEFTOVERS_MAX && leftover <= n) {
    const taken = new Uint8Array(n)
    const extra = new Array<number>(leftover)
    for (let k = 0; k < leftover; k++) {
      let best = -1
      for (let r = 0; r < n; r++) if (taken[r] === 0 && (best < 0 || before(r, best))) best = r
      taken[best] = 1
      extra[k] = best
    }
    for (const r of extra) counts[r] = counts[r]! + 1
  } else if (leftover > 0) {
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0))
    for (let k = 0; leftover > 0; k = (k + 1) % n, leftover--) counts[order[k]!] = counts[order[k]!]! + 1
  }
  const slices: ChunkSlice[] = []
  let next = 0
  for (let r = 0; r < n; r++) {
    const count = counts[r]!
    if (count === 0) continue
    slices.push({ id: at(r).id, chunkStart: next, chunkEnd: next + count - 1, count })
    next += count
  }
  return slices
}
