// Tiered epoch weights from verified uploaded MiB × penalty, the served vector when an epoch has no
// verified work, and the formula-derived fields of an epoch summary (docs/formulas.md#epoch-weights).

export const EPOCH_WEIGHTS_FORMULA_VERSION = 'tiered_weight_verified_uploaded_mib_x_penalty_v3'
/** Candidates per rank tier (A..D); E takes the rest. */
export const TIER_SIZE = 30
export const TIER_NAMES = ['A', 'B', 'C', 'D', 'E'] as const
export type Tier = typeof TIER_NAMES[number]
/** Share of the epoch's weight per tier. */
export const TIER_BUCKETS: Readonly<Record<Tier, number>> = Object.freeze({ A: 0.50, B: 0.35, C: 0.10, D: 0.04, E: 0.01 })
export const UINT16_MAX = 65535
/** UID that receives the whole weight when no valid vector exists (burn). */
export const BURN_UID = 0

export interface WeightCandidate {
  uid: number | null
  hotkey: string
  /** Whole MiB of server-planned sizes of verified production chunks in the evidence window. */
  verifiedMib: number
  penaltyMultiplier: number
  /** Tie-break only: PRISM final score. */
  score: number
}

export interface WeightRow {
  uid: number | null
  hotkey: string
  rank: number
  tier: Tier
  verifiedMib: number
  penaltyMultiplier: number
  score: number
  rawWeight: number
  weight: number
  uint16Weight: number
}

export interface EpochWeights {
  formulaVersion: string
  allWeightsZero: boolean
  sumRawWeight: number
  /** Tier buckets after empty/zero tiers rolled into A. */
  effectiveBuckets: Record<Tier, number>
  /** Rows in rank order. */
  rows: WeightRow[]
}

const finiteNonNegative = (x: number): number => (Number.isFinite(x) && x > 0 ? x : 0)
const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** raw = max(0, MiB) × max(0, penalty); non-finite → 0. */
export function rawWeight (verifiedMib: number, penaltyMultiplier: number): number {
  return finiteNonNegative(verifiedMib) * finiteNonNegative(penaltyMultiplier)
}

export function tierOfRank (rank: number): Tier {
  return TIER_NAMES[Math.min(TIER_NAMES.length - 1, Math.floor((rank - 1) / TIER_SIZE))]
}

/** Rank order: raw desc, score desc, MiB desc, uid asc (nulls last), hotkey asc, input order. */
export function rankCandidates (candidates: readonly WeightCandidate[]): Array<{ candidate: WeightCandidate, raw: number, inputIndex: number }> {
  return candidates.map((candidate, inputIndex) => ({ candidate, raw: rawWeight(candidate.verifiedMib, candidate.penaltyMultiplier), inputIndex }))
    .sort((a, b) => {
      if (a.raw !== b.raw) return b.raw - a.raw
      const sa = finiteNonNegative(a.candidate.score)
      const sb = finiteNonNegative(b.candidate.score)
      if (sa !== sb) return sb - sa
      const ma = finiteNonNegative(a.candidate.verifiedMib)
      const mb = finiteNonNegative(b.candidate.verifiedMib)
      if (ma !== mb) return mb - ma
      const ua = a.candidate.uid
      const ub = b.candidate.uid
      if (ua !== ub) {
        if (ua === null) return 1
        if (ub === null) return -1
        return ua - ub
      }
      return compareText(a.candidate.hotkey, b.candidate.hotkey) || a.inputIndex - b.inputIndex
    })
}

/** The v3 tiered weights. Σ weight (summed in rank order) is exactly 1, or every weight is 0. */
export function computeEpochWeights (candidates: readonly WeightCandidate[]): EpochWeights {
  const ranked = rankCandidates(candidates)
  const tiers = ranked.map((_, i) => tierOfRank(i + 1))
  const tierRaw: Record<Tier, number> = { A: 0, B: 0, C: 0, D: 0, E: 0 }
  ranked.forEach((r, i) => { tierRaw[tiers[i]] += r.raw })
  const sumRaw = ranked.reduce((a, r) => a + r.raw, 0)
  const allZero = !(sumRaw > 0) || !(tierRaw.A > 0)
  const buckets: Record<Tier, number> = { ...TIER_BUCKETS }
  if (!allZero) {
    for (const t of TIER_NAMES) {
      if (t !== 'A' && !(tierRaw[t] > 0)) { buckets.A += buckets[t]; buckets[t] = 0 }
    }
  }
  const weights = ranked.map((r, i) => (allZero || r.raw === 0 ? 0 : buckets[tiers[i]] * r.raw / tierRaw[tiers[i]]))
  if (!allZero) {
    // Residual goes to the lowest-ranked positive weight: it becomes 1 − Σ(others) so the rank-order sum is 1.
    let last = -1
    for (let i = weights.length - 1; i >= 0; i--) if (weights[i] > 0) { last = i; break }
    let others = 0
    for (let i = 0; i < weights.length; i++) if (i !== last) others += weights[i]
    weights[last] = Math.max(0, 1 - others)
  }
  const rows = ranked.map((r, i): WeightRow => ({
    uid: r.candidate.uid,
    hotkey: r.candidate.hotkey,
    rank: i + 1,
    tier: tiers[i],
    verifiedMib: r.candidate.verifiedMib,
    penaltyMultiplier: r.candidate.penaltyMultiplier,
    score: r.candidate.score,
    rawWeight: r.raw,
    weight: weights[i],
    uint16Weight: toUint16(weights[i])
  }))
  return { formulaVersion: EPOCH_WEIGHTS_FORMULA_VERSION, allWeightsZero: allZero, sumRawWeight: sumRaw, effectiveBuckets: allZero ? { A: 0, B: 0, C: 0, D: 0, E: 0 } : buckets, rows }
}

/** clamp(floor(w × 65535), 0, 65535); non-finite → 0. */
export function toUint16 (weight: number): number {
  if (!Number.isFinite(weight)) return 0
  return Math.min(UINT16_MAX, Math.max(0, Math.floor(weight * UINT16_MAX)))
}

/** A weight vector as set on chain: rows with a UID, ascending by UID. */
export interface WeightVector { epoch: number, uids: number[], weights: number[], uint16Weights: number[], formulaVersion: string }

export function weightVector (epoch: number, result: EpochWeights): WeightVector {
  const rows = result.rows.filter(r => r.uid !== null).sort((a, b) => (a.uid as number) - (b.uid as number))
  return { epoch, uids: rows.map(r => r.uid as number), weights: rows.map(r => r.weight), uint16Weights: rows.map(r => r.uint16Weight), formulaVersion: result.formulaVersion }
}

export type ServedSource = 'epoch_summary' | 'last_valid_nonzero' | 'burn'
export interface ServedVector extends WeightVector { currentEpoch: number, source: ServedSource, allWeightsZero: boolean }

const isValidNonZero = (v: WeightVector): boolean =>
  v.uids.length > 0 && v.uids.length === v.weights.length && v.weights.some(w => Number.isFinite(w) && w > 0)

/**
 * The vector validators are served for `current`: itself when it has a positive weight; else the most
 * recent (highest epoch < current) valid non-zero vector in `history`; else all weight burned to UID 0.
 */
export function servedWeights (current: WeightVector, history: readonly WeightVector[]): ServedVector {
  if (isValidNonZero(current)) return { ...current, currentEpoch: current.epoch, source: 'epoch_summary', allWeightsZero: false }
  const previous = history.filter(v => v.epoch < current.epoch && isValidNonZero(v)).sort((a, b) => b.epoch - a.epoch)[0]
  if (previous !== undefined) return { ...previous, currentEpoch: current.epoch, source: 'last_valid_nonzero', allWeightsZero: false }
  return { epoch: current.epoch, currentEpoch: current.epoch, uids: [BURN_UID], weights: [1], uint16Weights: [UINT16_MAX], formulaVersion: current.formulaVersion, source: 'burn', allWeightsZero: true }
}

export interface EpochSummaryRow extends WeightRow { finalShare: number }
export interface EpochSummary {
  epoch: number
  formulaVersion: string
  /** Qualified orchestrators eligible for weight this epoch (every candidate). */
  expectedOrchestratorCount: number
  /** Candidates with a positive final share. */
  contributingOrchestratorCount: number
  /** Σ final share in rank order: exactly 1, or 0 when all weights are zero. */
  sumFinalShare: number
  allWeightsZero: boolean
  sumRawWeight: number
  sumVerifiedMib: number
  orchestrators: EpochSummaryRow[]
}

/** The formula-derived part of an epoch summary (seed §2.4). */
export function epochSummary (epoch: number, candidates: readonly WeightCandidate[]): EpochSummary {
  const result = computeEpochWeights(candidates)
  const rows = result.rows.map(r => ({ ...r, finalShare: r.weight }))
  return {
    epoch,
    formulaVersion: result.formulaVersion,
    expectedOrchestratorCount: rows.length,
    contributingOrchestratorCount: rows.filter(r => r.weight > 0).length,
    sumFinalShare: rows.reduce((a, r) => a + r.weight, 0),
    allWeightsZero: result.allWeightsZero,
    sumRawWeight: result.sumRawWeight,
    sumVerifiedMib: rows.reduce((a, r) => a + finiteNonNegative(r.verifiedMib), 0),
    orchestrators: rows
  }
}
