// Stake-weighted consensus over validators' weight vectors, as Bittensor's Yuma consensus clips them:
// each vector is normalized, every UID's consensus weight is the stake-weighted κ-quantile of what the
// validators gave it (κ = 0.5: a weight at least half the stake agrees with), each validator's weight
// above that consensus is clipped off, and a UID's rank is the stake-weighted sum of its clipped
// weights. Exact bigint arithmetic, so every node computes the same split. See docs/formulas.md#yuma.

/** Fixed-point scale of normalized weights, stakes and ranks (10¹⁸ parts = 1). */
export const YUMA_SCALE = 10n ** 18n
/** κ: the share of stake that must support a weight for it to survive clipping (Bittensor default 0.5). */
export const YUMA_KAPPA_PARTS = YUMA_SCALE / 2n

/** Whether `stake` is at least κ of `totalStake` (exact). */
export function kappaHolds (stake: bigint, totalStake: bigint, kappaParts: bigint = YUMA_KAPPA_PARTS): boolean {
  return totalStake > 0n && stake * YUMA_SCALE >= totalStake * kappaParts
}

/**
 * The stake-weighted κ-quantile of a column: the largest value v such that the entries whose value is
 * ≥ v hold at least κ of `totalStake`. `totalStake` may exceed the entries' stake (validators that gave
 * nothing); undefined when the entries together do not reach κ of it.
 */
export function kappaQuantile<T> (entries: ReadonlyArray<{ value: T, stake: bigint }>, totalStake: bigint, compare: (a: T, b: T) => number, kappaParts: bigint = YUMA_KAPPA_PARTS): T | undefined {
  const desc = entries.filter(e => e.stake > 0n).sort((a, b) => compare(b.value, a.value))
  let acc = 0n
  for (const e of desc) {
    acc += e.stake
    if (kappaHolds(acc, totalStake, kappaParts)) return e.value
  }
  return undefined
}

const compareBigint = (a: bigint, b: bigint): number => (a === b ? 0 : a < b ? -1 : 1)

export interface StakedVector {
  /** The validator's stake (rao); 0 contributes nothing. */
  stake: bigint
  uids: readonly number[]
  /** uint16 (or any non-negative integer) weights, same order as `uids`. */
  weights: readonly number[]
}

export interface YumaRank {
  uid: number
  /** Consensus weight of the UID, in YUMA_SCALE parts of a validator's normalized vector. */
  consensus: bigint
  /** Stake-weighted sum of clipped weights, in YUMA_SCALE parts (ranks of all UIDs sum to ≤ YUMA_SCALE). */
  rank: bigint
}

/**
 * Yuma-style consensus. Vectors with zero stake or zero weight sum are ignored; when every vector has
 * zero stake (a chain without stake) each counts as one equal stake. Returns UIDs ascending.
 */
export function yumaConsensus (vectors: readonly StakedVector[], kappaParts: bigint = YUMA_KAPPA_PARTS): YumaRank[] {
  const live = vectors.filter(v => v.weights.reduce((a, w) => a + BigInt(w), 0n) > 0n)
  const equal = live.every(v => v.stake <= 0n)
  const rows = live
    .map(v => ({ stake: equal ? 1n : (v.stake > 0n ? v.stake : 0n), v }))
    .filter(r => r.stake > 0n)
  const totalStake = rows.reduce((a, r) => a + r.stake, 0n)
  if (totalStake === 0n) return []
  // Normalized rows: uid → parts of YUMA_SCALE.
  const norm = rows.map(r => {
    const sum = r.v.weights.reduce((a, w) => a + BigInt(w), 0n)
    const m = new Map<number, bigint>()
    r.v.uids.forEach((uid, i) => { const p = BigInt(r.v.weights[i]!) * YUMA_SCALE / sum; if (p > 0n) m.set(uid, p) })
    return { stake: r.stake, m }
  })
  const uids = [...new Set(norm.flatMap(r => [...r.m.keys()]))].sort((a, b) => a - b)
  const out: YumaRank[] = []
  for (const uid of uids) {
    // The largest weight w such that the validators giving this UID at least w hold ≥ κ of the stake.
    const consensus = kappaQuantile(norm.map(r => ({ value: r.m.get(uid) ?? 0n, stake: r.stake })), totalStake, compareBigint, kappaParts) ?? 0n
    let rank = 0n
    for (const r of norm) {
      const w = r.m.get(uid) ?? 0n
      rank += r.stake * (w < consensus ? w : consensus)
    }
    out.push({ uid, consensus, rank: rank / totalStake })
  }
  return out
}
