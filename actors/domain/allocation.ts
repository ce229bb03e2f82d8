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

/**
 * A number in [0, 1) from a seed: hashSeed mixed by MurmurHash3's 32-bit finalizer, so it does not follow
 * `hashSeed(seed) mod n` (the rotation) and neighbouring seeds land far apart.
 */
export function seedUnit (seed: string): number {
  let h = (hashSeed(seed) ^ 0x9e3779b9) >>> 0
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  h = (h ^ (h >>> 16)) >>> 0
  return h / 2 ** 32
}

/** The rule the coordinator's splits follow (allocateRotated), named in every stored plan. */
export const ROUTED_ALLOCATION_RULE = 'quota_floor_sampled_remainder_by_routing_score_v2'

/**
 * The coordinator's split of T chunks over orchestrators by routing score (docs/formulas.md#allocation):
 * each candidate gets the floor of its quota s_i/Σs·T (Σs = 0: T/n each), and the L chunks left over go
 * by systematic sampling over the fractional parts in the rotated order, seeded by `seed`: a candidate
 * gets one with probability equal to its fractional part. So every count is within one of its quota, as
 * Hamilton's are, and the expected share of every candidate is its quota whatever T is: a transfer of
 * one chunk goes to an orchestrator with probability equal to its share of the routing score, where
 * largest remainders would give every such transfer to the top score. Slices are contiguous from chunk 0
 * in the rotated order (rotatedOrder: candidates by id, rotated by hashSeed(seed) mod n); zero counts
 * are left out. Deterministic: the same seed gives the same slices.
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
  const fractions = new Float64Array(n)
  const counts = new Array<number>(n)
  let leftover = totalChunks
  for (let r = 0; r < n; r++) {
    const quota = sum > 0 ? (scores[r]! / sum) * totalChunks : totalChunks / n
    // A quota within FRACTION_TIE_EPSILON under an integer is that integer (float noise, not a fraction):
    // so every fractional part is shorter than 1 − ε and holds at most one point below.
    counts[r] = Math.floor(quota + FRACTION_TIE_EPSILON)
    fractions[r] = Math.max(0, quota - counts[r]!)
    leftover -= counts[r]!
  }
  // Systematic sampling of the leftovers: the fractional parts laid end to end in rotated order (they sum
  // to the leftover count L), and the points u, u + 1, …, u + L − 1 with u = seedUnit(seed). A part is
  // shorter than 1, so it holds at most one point: it gets its leftover with probability equal to its
  // fraction, and each count stays within one of its quota. The last part longer than 0 reaches to the
  // end, so float sums a hair short of L lose no point.
  let last = n - 1
  while (last > 0 && fractions[last] === 0) last--
  let point = seedUnit(seed)
  let edge = 0
  for (let r = 0; r < n && leftover > 0; r++) {
    edge = r === last ? Infinity : edge + fractions[r]!
    if (point < edge) { counts[r] = counts[r]! + 1; point += 1; leftover-- }
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
