// PRISM consensus: what an orchestrator routes by when several validators score it. Each permitted
// validator's latest score vector counts by its stake, as Yuma consensus counts weights (yuma.ts): an
// orchestrator's consensus value is the largest value that validators holding at least κ (½) of all the
// permitted stake gave it or more; a reporting validator without a score for it gives 0, and a validator
// that has not reported backs no value. There is no consensus at all until the reporting validators hold
// at least κ of every permitted validator's stake known from the chain, so a minority that reports first
// cannot decide alone, and no coalition under κ of the stake can raise a score. See
// docs/formulas.md#prism-consensus.
import type { PrismScores } from '../../protocol/index.ts'
import { YUMA_KAPPA_PARTS, kappaHolds, kappaQuantile } from './yuma.ts'

export type PrismScore = PrismScores['scores'][number]

/** One validator's latest PRISM scores. */
export interface ValidatorVector {
  validator: string
  epoch: number
  computedAt: number
  scores: readonly PrismScore[]
}

export interface PrismConsensus {
  /**
   * The validator that decides alone: it holds at least κ of the stake and the others together do not,
   * so the consensus is its vector exactly. null when several validators' vectors combine (or none count).
   */
  validator: string | null
  /** The latest epoch (and computation time) that validators holding ≥ κ of the stake have reported. */
  epoch: number | null
  computedAt: number | null
  /** Orchestrators that validators holding ≥ κ of all the permitted stake scored, hotkey ascending. */
  scores: PrismScore[]
  /** Stake (rao) of every permitted validator (1 each on a chain without stake): the quorum's base and the denominator of every κ-quantile. */
  totalStake: bigint
  /** Stake of the validators whose vectors count. */
  reportingStake: bigint
}

const NUMERIC = ['routingScore', 'finalScore', 'penaltyMultiplier', 'readinessMultiplier', 'activeTimeRatio'] as const
const compareNumber = (a: number, b: number): number => a - b

/**
 * Combines validators' vectors. `stakes` holds every permitted validator and its stake (rao); vectors of
 * hotkeys not in it do not count. When no permitted validator holds stake, each counts as one equal
 * stake (as yumaConsensus does). No consensus (empty scores, nulls) until validators holding ≥ κ of the
 * total have reported; then every κ-quantile is taken over the total stake, the silent validators' stake
 * supporting no value (as Yuma counts a validator that set no weights): a score stands only if validators
 * holding κ of all the permitted stake gave it or more. While part of the stake is silent, the reporters
 * can hold a score down to what the ones needed for κ gave, never raise it above what κ of all backs.
 */
export function prismConsensus (vectors: readonly ValidatorVector[], stakes: ReadonlyMap<string, bigint>, kappaParts: bigint = YUMA_KAPPA_PARTS): PrismConsensus {
  const equal = [...stakes.values()].every(s => s <= 0n)
  const weightOf = (h: string): bigint => {
    const s = stakes.get(h)
    return s === undefined ? 0n : equal ? 1n : (s > 0n ? s : 0n)
  }
  let totalStake = 0n
  for (const h of stakes.keys()) totalStake += weightOf(h)
  const seen = new Set<string>()
  const rows = vectors
    .filter(v => { const ok = !seen.has(v.validator) && weightOf(v.validator) > 0n; seen.add(v.validator); return ok })
    .map(v => ({ v, stake: weightOf(v.validator), byHotkey: new Map(v.scores.map(s => [s.hotkey, s])) }))
  const reportingStake = rows.reduce((a, r) => a + r.stake, 0n)
  // Quorum: validators holding κ of all the permitted stake must have reported.
  if (!kappaHolds(reportingStake, totalStake, kappaParts)) return { validator: null, epoch: null, computedAt: null, scores: [], totalStake, reportingStake: 0n }

  const quantile = (pick: (r: typeof rows[number]) => number | undefined): number => {
    const col: Array<{ value: number, stake: bigint }> = []
    for (const r of rows) { const value = pick(r); if (value !== undefined) col.push({ value, stake: r.stake }) }
    // Entries that are missing count as 0: when the present ones do not reach κ, neither does any value > 0.
    return kappaQuantile(col, totalStake, compareNumber, kappaParts) ?? 0
  }
  const hotkeys = [...new Set(rows.flatMap(r => [...r.byHotkey.keys()]))].sort()
  const scores: PrismScore[] = []
  for (const hotkey of hotkeys) {
    const present = rows.filter(r => r.byHotkey.has(hotkey)).reduce((a, r) => a + r.stake, 0n)
    if (!kappaHolds(present, totalStake, kappaParts)) continue
    const qualified = rows.filter(r => r.byHotkey.get(hotkey)?.pool === 'qualified').reduce((a, r) => a + r.stake, 0n)
    const entry = { hotkey, pool: kappaHolds(qualified, totalStake, kappaParts) ? 'qualified' : 'qualifying' } as PrismScore
    for (const field of NUMERIC) entry[field] = quantile(r => r.byHotkey.get(hotkey)?.[field])
    scores.push(entry)
  }
  const alone = rows.find(r => kappaHolds(r.stake, totalStake, kappaParts) && !kappaHolds(reportingStake - r.stake, totalStake, kappaParts))
  return {
    validator: alone?.v.validator ?? null,
    epoch: quantile(r => r.v.epoch),
    computedAt: quantile(r => r.v.computedAt),
    scores,
    totalStake,
    reportingStake
  }
}
