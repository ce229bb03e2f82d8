// What a coordinator holds against a worker: its own evidence (a delivery that failed its check, held
// work that made no progress), as strikes in a sliding window. Past the limit the worker is excluded
// from this coordinator's offers for a cool-down that doubles with each repeat. The evidence lands on
// the worker, never on the orchestrator it is attached to (PRISM's inputs are the validators' verdicts
// on deliveries). Pure: rows in, rows out; the coordinator's state persists them in the `workers`
// table (key `standing/<hotkey>`), where the worker audit route shows them. docs/transfers.md#worker-standing.

import { isoFromMs as iso } from '../domain/chain-time.ts'

export const STRIKE_WINDOW_MS = 10 * 60_000 // strikes older than 10 min no longer count
export const STRIKE_LIMIT = 3 // strikes within the window that exclude a worker
export const EXCLUSION_MS = 10 * 60_000 // the first cool-down: 10 min, doubled with each exclusion
export const MAX_EXCLUSION_MS = 24 * 60 * 60_000 // at most a day
const KEPT_STRIKES = 16 // the row keeps the latest strikes only

/**
 * `failed_check`, `no_progress`: a coordinator's evidence; `no_accept`: an orchestrator's own evidence
 * against its own worker (an offer it routed and the worker did not take in time, actors/transfer/router.ts).
 */
export type StrikeReason = 'failed_check' | 'no_progress' | 'no_accept'

export interface Strike { at: string, reason: StrikeReason, transfer_id: string, attempt_id: string }

export interface WorkerStandingRow {
  worker_id: string
  hotkey: string
  /** The coordinator that holds the evidence (this node). */
  coordinator_id: string
  status: 'good' | 'excluded'
  strikes: Strike[]
  /** Times this worker was excluded (each cool-down doubles). */
  exclusions: number
  excluded_at: string | null
  excluded_until: string | null
  exclusion_reason: StrikeReason | null
  updated_at: string
}

export interface StandingConfig { strikeWindowMs: number, strikeLimit: number, exclusionMs: number, maxExclusionMs: number }
export const DEFAULT_STANDING_CONFIG: StandingConfig = { strikeWindowMs: STRIKE_WINDOW_MS, strikeLimit: STRIKE_LIMIT, exclusionMs: EXCLUSION_MS, maxExclusionMs: MAX_EXCLUSION_MS }

export const standingKey = (hotkey: string): string => `standing/${hotkey}`


const ms = (at: string | null): number => at === null ? 0 : Date.parse(at)

/** Whether the worker is in its cool-down at `now`. */
export function isExcluded (row: WorkerStandingRow | undefined, now: number): boolean {
  return row !== undefined && row.status === 'excluded' && ms(row.excluded_until) > now
}

/**
 * Records one strike. Returns the new row and whether this strike began an exclusion. Strikes while
 * excluded are kept (the audit shows them) but do not extend the cool-down; a cool-down that ended
 * starts the worker again with the strikes of the window.
 */
export function addStrike (row: WorkerStandingRow | undefined, strike: { hotkey: string, coordinator: string, reason: StrikeReason, transferId: string, attemptId: string }, now: number, cfg: StandingConfig = DEFAULT_STANDING_CONFIG): { row: WorkerStandingRow, excluded: boolean } {
  const base: WorkerStandingRow = row ?? {
    worker_id: strike.hotkey, hotkey: strike.hotkey, coordinator_id: strike.coordinator, status: 'good', strikes: [], exclusions: 0,
    excluded_at: null, excluded_until: null, exclusion_reason: null, updated_at: iso(now)
  }
  const excludedBefore = isExcluded(base, now)
  // Strikes up to an exclusion that has ended are spent.
  const since = Math.max(now - cfg.strikeWindowMs, excludedBefore ? -Infinity : ms(base.excluded_at))
  const strikes = [...base.strikes.filter(s => ms(s.at) > since), { at: iso(now), reason: strike.reason, transfer_id: strike.transferId, attempt_id: strike.attemptId }].slice(-KEPT_STRIKES)
  const next: WorkerStandingRow = { ...base, strikes, status: excludedBefore ? 'excluded' : 'good', updated_at: iso(now) }
  if (excludedBefore || strikes.length < cfg.strikeLimit) return { row: next, excluded: false }
  const coolDown = Math.min(cfg.maxExclusionMs, cfg.exclusionMs * 2 ** base.exclusions)
  return {
    row: { ...next, status: 'excluded', exclusions: base.exclusions + 1, excluded_at: iso(now), excluded_until: iso(now + coolDown), exclusion_reason: strike.reason },
    excluded: true
  }
}
