// PRISM: the routing score of each orchestrator, from decayed verified throughput, reliability,
// readiness and penalties, normalized across its pool (docs/formulas.md#prism).

export const PRISM_FORMULA_VERSION = 'prism_performance_x_readiness_x_penalty_v1'
export const HOUR_MS = 3_600_000
export const DAY_MS = 24 * HOUR_MS

export type PrismPool = 'qualifying' | 'qualified'
export type PenaltyKind = 'fraud' | 'integrity_chunk_mismatch' | 'sybil'
export const PENALTY_KINDS: readonly PenaltyKind[] = ['fraud', 'integrity_chunk_mismatch', 'sybil']

export interface PrismConfig {
  /** Evidence older than this is ignored; also the readiness window. */
  evidenceLookbackMs: number
  /** Half-life of throughput and reliability evidence. */
  halfLifeHours: number
  throughputWeight: number
  reliabilityWeight: number
  /** Lowest score a positive fleet member gets after normalization. */
  fleetNormalizationFloor: number
  penaltyCoefficients: Record<PenaltyKind, number>
  /** Default active duration per kind when a row does not carry its own; null = permanent. */
  penaltyDurationsMs: Record<PenaltyKind, number | null>
  verifiedTaskTarget: number
  ageSaturationDays: number
  graduationConfidence: number
  /** Routing score factor (× readiness) for a newly graduated orchestrator with no qualified evidence yet. */
  poolTransitionScore: number
}

export const DEFAULT_EVIDENCE_LOOKBACK_MS = DAY_MS // 1 day
export const DEFAULT_HALF_LIFE_HOURS = 1 // 1 h
export const DEFAULT_THROUGHPUT_WEIGHT = 0.4
export const DEFAULT_RELIABILITY_WEIGHT = 0.6
export const DEFAULT_FLEET_NORMALIZATION_FLOOR = 0.2
export const DEFAULT_PENALTY_COEFFICIENTS: Readonly<Record<PenaltyKind, number>> = { fraud: 0.1, integrity_chunk_mismatch: 1.0, sybil: 0.5 }
export const DEFAULT_PENALTY_DURATIONS_MS: Readonly<Record<PenaltyKind, number | null>> = { fraud: 168 * HOUR_MS, integrity_chunk_mismatch: null, sybil: 168 * HOUR_MS }
export const DEFAULT_VERIFIED_TASK_TARGET = 120 // tasks
export const DEFAULT_AGE_SATURATION_DAYS = 1 // days
export const DEFAULT_GRADUATION_CONFIDENCE = 0.9
export const DEFAULT_POOL_TRANSITION_SCORE = 0.5
/** Keeps a lone or all-equal cohort from dividing by zero: such members land on the floor. */
export const FLEET_NORMALIZATION_MIN_SPAN = 1e-9

export const DEFAULT_PRISM_CONFIG: Readonly<PrismConfig> = Object.freeze({
  evidenceLookbackMs: DEFAULT_EVIDENCE_LOOKBACK_MS,
  halfLifeHours: DEFAULT_HALF_LIFE_HOURS,
  throughputWeight: DEFAULT_THROUGHPUT_WEIGHT,
  reliabilityWeight: DEFAULT_RELIABILITY_WEIGHT,
  fleetNormalizationFloor: DEFAULT_FLEET_NORMALIZATION_FLOOR,
  penaltyCoefficients: { ...DEFAULT_PENALTY_COEFFICIENTS },
  penaltyDurationsMs: { ...DEFAULT_PENALTY_DURATIONS_MS },
  verifiedTaskTarget: DEFAULT_VERIFIED_TASK_TARGET,
  ageSaturationDays: DEFAULT_AGE_SATURATION_DAYS,
  graduationConfidence: DEFAULT_GRADUATION_CONFIDENCE,
  poolTransitionScore: DEFAULT_POOL_TRANSITION_SCORE
})

/** One provider-verified bandwidth measurement (e.g. one transfer), weighted by its task count. */
export interface ThroughputSample { atMs: number, mbps: number, tasks?: number }
/** Task outcomes observed at one time (one result, or an hourly bucket). */
export interface OutcomeEvent { atMs: number, verified?: number, failed?: number, overseerInterventions?: number }
export interface ReadinessTransition { atMs: number, ready: boolean, connected: boolean }
export interface PenaltyRow { kind: PenaltyKind, createdAtMs: number, durationMs?: number | null, revokedAtMs?: number | null }

export interface PrismOrchestratorInput {
  id: string
  pool: PrismPool
  throughputSamples: readonly ThroughputSample[]
  outcomes: readonly OutcomeEvent[]
  ready: boolean
  connected: boolean
  transitions: readonly ReadinessTransition[]
  penalties: readonly PenaltyRow[]
  /** Lifetime verified task count (confidence). */
  lifetimeVerifiedTasks: number
  /** When the age clock starts (UID assignment, else registration). */
  ageStartMs: number
  /** Graduated but not yet included in a qualified plan. */
  transitionPending?: boolean
}

export interface PrismInput { nowMs: number, orchestrators: readonly PrismOrchestratorInput[] }

export interface PrismComponents {
  id: string
  /** Pool the orchestrator was scored in. */
  pool: PrismPool
  /** Pool after this run (qualifying members may graduate). */
  nextPool: PrismPool
  graduated: boolean
  decayedThroughputMbps: number
  rawReliability: number
  throughputScore: number
  reliabilityScore: number
  performanceScore: number
  readinessGate: 0 | 1
  activeTimeRatio: number
  readinessMultiplier: number
  activePenalties: Record<PenaltyKind, number>
  penaltyPressure: number
  penaltyMultiplier: number
  successRate: number
  verifiedTaskRatio: number
  ageDays: number
  confidence: number
  finalScore: number
  /** What allocation uses: finalScore, or poolTransitionScore × readiness while a transition is pending. */
  routingScore: number
  routingOverrideReason: string | null
}

const clamp01 = (x: number): number => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0)
const nonNegative = (x: number | undefined): number => (x !== undefined && Number.isFinite(x) && x > 0 ? x : 0)

/** Decay weight of evidence `ageMs` old: 0.5^(age_h / H); 0 for future or out-of-window evidence. */
export function decayWeight (ageMs: number, halfLifeHours: number, lookbackMs = Infinity): number {
  if (!(ageMs >= 0) || ageMs > lookbackMs) return 0
  if (!(halfLifeHours > 0)) return 1
  return Math.pow(0.5, ageMs / HOUR_MS / halfLifeHours)
}

/** Σ(w·mbps·tasks) / Σ(w·tasks) over the window; 0 with no samples. */
export function decayedThroughput (samples: readonly ThroughputSample[], nowMs: number, config: Pick<PrismConfig, 'halfLifeHours' | 'evidenceLookbackMs'> = DEFAULT_PRISM_CONFIG): number {
  let num = 0
  let den = 0
  for (const s of samples) {
    const tasks = s.tasks === undefined ? 1 : nonNegative(s.tasks)
    const w = decayWeight(nowMs - s.atMs, config.halfLifeHours, config.evidenceLookbackMs) * tasks
    if (w === 0 || !Number.isFinite(s.mbps)) continue
    num += w * Math.max(0, s.mbps)
    den += w
  }
  return den > 0 ? num / den : 0
}

/** verified_w / (verified_w + max(failed_w, interventions_w)); 0 with no evidence. */
export function rawReliability (outcomes: readonly OutcomeEvent[], nowMs: number, config: Pick<PrismConfig, 'halfLifeHours' | 'evidenceLookbackMs'> = DEFAULT_PRISM_CONFIG): number {
  let verified = 0
  let failed = 0
  let interventions = 0
  for (const o of outcomes) {
    const w = decayWeight(nowMs - o.atMs, config.halfLifeHours, config.evidenceLookbackMs)
    verified += w * nonNegative(o.verified)
    failed += w * nonNegative(o.failed)
    interventions += w * nonNegative(o.overseerInterventions)
  }
  const bad = Math.max(failed, interventions)
  return verified + bad > 0 ? verified / (verified + bad) : 0
}

/** Undecayed success rate over the evidence window (used by confidence). */
export function successRate (outcomes: readonly OutcomeEvent[], nowMs: number, lookbackMs = DEFAULT_EVIDENCE_LOOKBACK_MS): number {
  return rawReliability(outcomes, nowMs, { halfLifeHours: 0, evidenceLookbackMs: lookbackMs })
}

/**
 * Fleet normalization: value <= 0 → 0; else floor + (1 − floor)·(v − min⁺)/(max − min⁺), where min⁺ is
 * the smallest positive value. A lone or all-equal positive member gets the floor.
 */
export function fleetNormalize (values: readonly number[], floor = DEFAULT_FLEET_NORMALIZATION_FLOOR): number[] {
  const positive = values.filter(v => Number.isFinite(v) && v > 0)
  if (positive.length === 0) return values.map(() => 0)
  const min = Math.min(...positive)
  const max = Math.max(Math.max(...positive), min + FLEET_NORMALIZATION_MIN_SPAN)
  return values.map(v => (Number.isFinite(v) && v > 0 ? clamp01(floor + (1 - floor) * (v - min) / (max - min)) : 0))
}

export function performanceScore (throughputScore: number, reliabilityScore: number, config: Pick<PrismConfig, 'throughputWeight' | 'reliabilityWeight'> = DEFAULT_PRISM_CONFIG): number {
  return clamp01(config.throughputWeight * throughputScore + config.reliabilityWeight * reliabilityScore)
}

/**
 * Share of the window [max(now − lookback, windowStart), now] during which ready ∧ connected held.
 * The state at the window start is that of the last transition at or before it. Without a transition
 * there, the window starts at the first transition inside it, in that transition's state; without any
 * transition, the current state decides (1 or 0). Transitions at the same instant apply in input order.
 */
export function activeTimeRatio (
  transitions: readonly ReadinessTransition[], current: { ready: boolean, connected: boolean },
  nowMs: number, lookbackMs: number, windowStartMs = -Infinity
): number {
  const currentActive = current.ready && current.connected ? 1 : 0
  const events = transitions.filter(e => e.atMs <= nowMs).map((e, i) => ({ e, i }))
    .sort((a, b) => a.e.atMs - b.e.atMs || a.i - b.i).map(x => x.e)
  if (events.length === 0) return currentActive
  let start = Math.max(nowMs - lookbackMs, windowStartMs)
  if (events[0].atMs > start) start = events[0].atMs
  if (nowMs <= start) return currentActive
  let active = false
  let activeMs = 0
  let cursor = start
  for (const e of events) {
    if (e.atMs > start && active) activeMs += e.atMs - cursor
    if (e.atMs > start) cursor = e.atMs
    active = e.ready && e.connected
  }
  if (active) activeMs += nowMs - cursor
  return clamp01(activeMs / (nowMs - start))
}

/** Active rows per kind: createdAt <= now < createdAt + duration, and not revoked by now. */
export function activePenaltyCounts (rows: readonly PenaltyRow[], nowMs: number, config: Pick<PrismConfig, 'penaltyDurationsMs'> = DEFAULT_PRISM_CONFIG): Record<PenaltyKind, number> {
  const counts: Record<PenaltyKind, number> = { fraud: 0, integrity_chunk_mismatch: 0, sybil: 0 }
  for (const r of rows) {
    if (!(r.kind in counts) || r.createdAtMs > nowMs) continue
    if (r.revokedAtMs != null && r.revokedAtMs <= nowMs) continue
    const duration = r.durationMs === undefined ? config.penaltyDurationsMs[r.kind] : r.durationMs
    if (duration !== null && nowMs >= r.createdAtMs + duration) continue
    counts[r.kind]++
  }
  return counts
}

/** pressure = Σ coeff[kind] × active rows[kind]; multiplier = clamp(1 − pressure, 0, 1). */
export function penaltyMultiplier (activeCounts: Record<PenaltyKind, number>, config: Pick<PrismConfig, 'penaltyCoefficients'> = DEFAULT_PRISM_CONFIG): { pressure: number, multiplier: number } {
  // count × coeff per kind (not a running sum of coeffs) keeps 10 × 0.1 exactly 1.
  let pressure = 0
  for (const kind of PENALTY_KINDS) pressure += activeCounts[kind] * config.penaltyCoefficients[kind]
  return { pressure, multiplier: clamp01(1 - pressure) }
}

/** min(1, tasks/target) × successRate × (0.8 + 0.2·min(1, ageDays/A)). */
export function confidenceScore (
  lifetimeVerifiedTasks: number, rate: number, ageDays: number,
  config: Pick<PrismConfig, 'verifiedTaskTarget' | 'ageSaturationDays'> = DEFAULT_PRISM_CONFIG
): number {
  const taskRatio = Math.min(1, nonNegative(lifetimeVerifiedTasks) / config.verifiedTaskTarget)
  const ageRatio = config.ageSaturationDays > 0 ? Math.min(1, nonNegative(ageDays) / config.ageSaturationDays) : 1
  return clamp01(taskRatio * clamp01(rate) * (0.8 + 0.2 * ageRatio))
}

/** Qualified is sticky; qualifying graduates at confidence >= graduationConfidence. */
export function nextPool (pool: PrismPool, confidence: number, config: Pick<PrismConfig, 'graduationConfidence'> = DEFAULT_PRISM_CONFIG): PrismPool {
  return pool === 'qualified' || confidence >= config.graduationConfidence ? 'qualified' : 'qualifying'
}

/** Why a graduated orchestrator routes on the pool-transition score instead of its final score. */
export const TRANSITION_PENDING_REASON = 'transition_pending_empty_qualified_task_evidence'

/**
 * Positive evidence inside the lookback: a verified task, or a throughput sample above 0 Mbps with at
 * least one task, dated within [now − lookback, now]. Failures, interventions, zero samples and anything
 * older than the lookback (or later than now) are not.
 */
export function hasPositiveEvidence (
  o: Pick<PrismOrchestratorInput, 'throughputSamples' | 'outcomes'>, nowMs: number, lookbackMs = DEFAULT_EVIDENCE_LOOKBACK_MS
): boolean {
  const inside = (atMs: number): boolean => nowMs - atMs >= 0 && nowMs - atMs <= lookbackMs
  return o.outcomes.some(x => inside(x.atMs) && nonNegative(x.verified) > 0) ||
    o.throughputSamples.some(s => inside(s.atMs) && nonNegative(s.mbps) > 0 && (s.tasks === undefined || nonNegative(s.tasks) > 0))
}

/** PRISM over a fleet. Each pool is normalized as its own cohort; output keeps input order. */
export function computePrism (input: PrismInput, config: PrismConfig = DEFAULT_PRISM_CONFIG): PrismComponents[] {
  const { nowMs, orchestrators } = input
  const throughput = orchestrators.map(o => decayedThroughput(o.throughputSamples, nowMs, config))
  const reliability = orchestrators.map(o => rawReliability(o.outcomes, nowMs, config))
  const throughputScores = new Array<number>(orchestrators.length).fill(0)
  const reliabilityScores = new Array<number>(orchestrators.length).fill(0)
  for (const pool of ['qualifying', 'qualified'] as const) {
    const idx = orchestrators.map((o, i) => (o.pool === pool ? i : -1)).filter(i => i >= 0)
    const t = fleetNormalize(idx.map(i => throughput[i]), config.fleetNormalizationFloor)
    const r = fleetNormalize(idx.map(i => reliability[i]), config.fleetNormalizationFloor)
    idx.forEach((i, k) => { throughputScores[i] = t[k]; reliabilityScores[i] = r[k] })
  }
  return orchestrators.map((o, i) => {
    const performance = performanceScore(throughputScores[i], reliabilityScores[i], config)
    const gate: 0 | 1 = o.ready && o.connected ? 1 : 0
    const ratio = activeTimeRatio(o.transitions, o, nowMs, config.evidenceLookbackMs, o.ageStartMs)
    const readiness = gate * ratio
    const activePenalties = activePenaltyCounts(o.penalties, nowMs, config)
    const { pressure, multiplier } = penaltyMultiplier(activePenalties, config)
    const rate = successRate(o.outcomes, nowMs, config.evidenceLookbackMs)
    const ageDays = Math.max(0, nowMs - o.ageStartMs) / DAY_MS
    const confidence = confidenceScore(o.lifetimeVerifiedTasks, rate, ageDays, config)
    const pool = nextPool(o.pool, confidence, config)
    const finalScore = clamp01(performance * readiness * multiplier)
    const pending = pool === 'qualified' && (o.pool === 'qualifying' || o.transitionPending === true) &&
      !(o.pool === 'qualified' && hasPositiveEvidence(o, nowMs, config.evidenceLookbackMs))
    const routingScore = pending ? clamp01(config.poolTransitionScore * readiness * multiplier) : finalScore
    return {
      id: o.id,
      pool: o.pool,
      nextPool: pool,
      graduated: o.pool === 'qualifying' && pool === 'qualified',
      decayedThroughputMbps: throughput[i],
      rawReliability: reliability[i],
      throughputScore: throughputScores[i],
      reliabilityScore: reliabilityScores[i],
      performanceScore: performance,
      readinessGate: gate,
      activeTimeRatio: ratio,
      readinessMultiplier: readiness,
      activePenalties,
      penaltyPressure: pressure,
      penaltyMultiplier: multiplier,
      successRate: rate,
      verifiedTaskRatio: Math.min(1, nonNegative(o.lifetimeVerifiedTasks) / config.verifiedTaskTarget),
      ageDays,
      confidence,
      finalScore,
      routingScore,
      routingOverrideReason: pending ? TRANSITION_PENDING_REASON : null
    }
  })
}
