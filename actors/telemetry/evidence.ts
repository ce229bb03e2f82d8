// Finished task evidence (seed §2.3) and the network summary (seed §2.2) as pure functions of the
// coordinator's rows. Durations are the coordinator's own measurement (offer sent → result received),
// never the worker's claim; bytes are the coordinator's planned chunk sizes. docs/telemetry.md.
import type { AttemptRow, ResultRow } from '../transfer/model.ts'
import { isoFromMs } from '../domain/chain-time.ts'
import { NEUTRAL_FAILURES } from '../../protocol/failure-reasons.ts'

export const WORKLOAD = 'standard_transfers'
export const METRIC_DESCRIPTION = 'duration_weighted_mean_assignment_goodput'
export const HOUR_MS = 3_600_000
export const LOOKBACK_DAYS = 7 // network summary window
export const LOOKBACK_MS = LOOKBACK_DAYS * 24 * HOUR_MS

/**
 * verified: the delivered bytes passed the coordinator's destination check;
 * failed: the attempt failed or its bytes did not match;
 * cancelled: the transfer ended while the delivery was still being checked (neutral);
 * pending_verification: success reported, the destination check has not concluded (realtime only).
 */
export type EvidenceState = 'verified' | 'failed' | 'cancelled' | 'pending_verification'
export type Pool = 'qualifying' | 'qualified' | 'unscored'

/** Failures that are no participant's doing: excluded from success and failure counts (protocol/failure-reasons.ts). */
export const NEUTRAL_ERRORS: ReadonlySet<string> = NEUTRAL_FAILURES

/** Seed §2.3 data. */
export interface TaskEvidenceData {
  taskId: string
  attemptId: string
  batchId: string
  orchestratorId: string
  workerId: string
  workload: string
  pool: Pool
  state: EvidenceState
  recovery: boolean
  neutral: boolean
  finishedAt: string
  verifiedBytes: number
  trustedDurationMs: number
  verifiedBandwidthMbps: number
}

/** One attempt's evidence with what the projection needs besides the public data. */
export interface EvidenceRecord {
  transferId: string
  finishedAtMs: number
  /** Planned bytes of the chunk (counted as measured bytes once verified). */
  bytes: number
  data: TaskEvidenceData
}

const parseMs = (iso: string | null): number | null => {
  if (iso === null) return null
  const ms = Date.parse(iso)
  return Number.isFinite(ms) ? ms : null
}

/** Mbit/s of `bytes` over `ms`; 0 when either is not positive. */
export function mbps (bytes: number, ms: number): number {
  return bytes > 0 && ms > 0 ? (bytes * 8) / (ms * 1000) : 0
}

export function stateOf (row: ResultRow, attempt: AttemptRow): EvidenceState {
  if (row.outcome === 'accepted') {
    if (attempt.state === 'succeeded') return 'verified'
    if (attempt.state === 'checking') return 'pending_verification'
    return 'cancelled'
  }
  return 'failed'
}

/** The evidence of one settled (or checking) attempt. */
export function evidenceOf (row: ResultRow, attempt: AttemptRow, pool: Pool = 'unscored'): EvidenceRecord {
  const state = stateOf(row, attempt)
  const receivedMs = parseMs(row.received_at) ?? 0
  const offeredMs = parseMs(attempt.offered_at) ?? receivedMs
  const trustedDurationMs = Math.max(0, Math.round(receivedMs - offeredMs))
  const verifiedBytes = state === 'verified' ? row.bytes : 0
  return {
    transferId: row.transfer_id,
    finishedAtMs: receivedMs,
    bytes: row.bytes,
    data: {
      taskId: row.task_id,
      attemptId: row.attempt_id,
      batchId: attempt.batch_id,
      orchestratorId: attempt.orchestrator_id,
      workerId: row.worker_id,
      workload: WORKLOAD,
      pool,
      state,
      recovery: attempt.recovery,
      neutral: state === 'cancelled' || (state === 'failed' && NEUTRAL_ERRORS.has(row.error ?? '')),
      finishedAt: isoFromMs(receivedMs),
      verifiedBytes,
      trustedDurationMs,
      verifiedBandwidthMbps: mbps(verifiedBytes, trustedDurationMs)
    }
  }
}

/** The record as it stands when its transfer ended: a check still running is cancelled. */
export function settleAtTerminal (r: EvidenceRecord): EvidenceRecord {
  if (r.data.state !== 'pending_verification') return r
  return { ...r, data: { ...r.data, state: 'cancelled', neutral: true, verifiedBytes: 0, verifiedBandwidthMbps: 0 } }
}

/** Counters of one hour of evidence; additive, so a window is a sum of buckets. */
export interface Counters {
  measuredBytes: number
  measuredDurationMs: number
  originalTaskCount: number
  attemptCount: number
  recoveryAttemptCount: number
  successfulTasks: number
  failedTasks: number
  neutralExcludedTasks: number
  pendingVerificationTasks: number
  verifiedBytes: number
  recoveryVerifiedBytes: number
  completedTransfers: number
}

export const zeroCounters = (): Counters => ({
  measuredBytes: 0, measuredDurationMs: 0, originalTaskCount: 0, attemptCount: 0, recoveryAttemptCount: 0, successfulTasks: 0,
  failedTasks: 0, neutralExcludedTasks: 0, pendingVerificationTasks: 0, verifiedBytes: 0, recoveryVerifiedBytes: 0, completedTransfers: 0
})

/** Adds (sign 1) or removes (sign −1) one record's contribution. */
export function addRecord (c: Counters, d: TaskEvidenceData, sign: 1 | -1): void {
  c.attemptCount += sign
  if (d.recovery) c.recoveryAttemptCount += sign
  else c.originalTaskCount += sign
  if (d.state === 'pending_verification') { c.pendingVerificationTasks += sign; return }
  if (d.neutral) { c.neutralExcludedTasks += sign; return }
  if (d.state === 'verified') {
    c.successfulTasks += sign
    c.verifiedBytes += sign * d.verifiedBytes
    if (d.recovery) c.recoveryVerifiedBytes += sign * d.verifiedBytes
    c.measuredBytes += sign * d.verifiedBytes
    c.measuredDurationMs += sign * d.trustedDurationMs
  } else {
    c.failedTasks += sign
  }
}

export function sumCounters (into: Counters, c: Counters): void {
  for (const k of Object.keys(into) as Array<keyof Counters>) into[k] += c[k]
}

/** Hourly buckets of counters, keyed by the hour's start (ms). */
export class HourlyCounters {
  readonly buckets = new Map<number, Counters>()
  bucket (atMs: number): Counters {
    const hour = Math.floor(atMs / HOUR_MS) * HOUR_MS
    let c = this.buckets.get(hour)
    if (c === undefined) { c = zeroCounters(); this.buckets.set(hour, c) }
    return c
  }

  /** Sum over the hours that overlap (startMs, endMs]. */
  window (startMs: number, endMs: number): Counters {
    const out = zeroCounters()
    for (const [hour, c] of this.buckets) if (hour + HOUR_MS > startMs && hour <= endMs) sumCounters(out, c)
    return out
  }

  prune (beforeMs: number): void {
    for (const hour of this.buckets.keys()) if (hour + HOUR_MS <= beforeMs) this.buckets.delete(hour)
  }
}

export interface ParticipantCounts {
  workerCount: number
  orchestratorCount: number
  validatorCount: number
  /** Σ bandwidth the workers announce: a claim, shown as "reported". */
  reportedCapacityMbps: number
  /** Workers by the provider they report; workers that report none count under "unknown". */
  providers: Array<{ provider: string, workerCount: number }>
}

export const NO_PARTICIPANTS: ParticipantCounts = { workerCount: 0, orchestratorCount: 0, validatorCount: 0, reportedCapacityMbps: 0, providers: [] }

export interface WorkloadEntry {
  measurementWindowStart: string
  measurementWindowEnd: string
  reportedCapacityMbps: number
  verifiedBandwidthMbps: number
  metricDescription: string
  measuredBytes: number
  measuredDurationMs: number
  originalTaskCount: number
  attemptCount: number
  recoveryAttemptCount: number
  successfulTasks: number
  failedTasks: number
  neutralExcludedTasks: number
  pendingVerificationTasks: number
  workload: string
  orchestratorCount: number
  verifiedBytes: number
  recoveryVerifiedBytes: number
}

/** Seed §2.2 data. */
export interface NetworkSummaryData {
  workerCount: number
  orchestratorCount: number
  validatorCount: number
  completedTransfers: number
  transferredBytes: number
  lookbackDays: number
  observationHour: string
  measurementWindowStart: string
  measurementWindowEnd: string
  reportedCapacityMbps: number
  workloads: WorkloadEntry[]
  providers: Array<{ provider: string, workerCount: number }>
  weights: Record<string, unknown>
}

/**
 * The summary over (nowMs − lookback, nowMs]. verifiedBandwidthMbps is the duration-weighted mean of
 * the assignments' goodput, Σ(goodput·duration)/Σduration = Σ verified bits / Σ trusted duration.
 */
export function networkSummary (args: {
  nowMs: number
  counters: HourlyCounters
  participants: ParticipantCounts
  /** Orchestrators with evidence in the window. */
  evidenceOrchestrators: number
  weights: Record<string, unknown>
}): NetworkSummaryData {
  const { nowMs, participants } = args
  const startMs = nowMs - LOOKBACK_MS
  const c = args.counters.window(startMs, nowMs)
  const windowStart = isoFromMs(startMs)
  const windowEnd = isoFromMs(nowMs)
  return {
    workerCount: participants.workerCount,
    orchestratorCount: participants.orchestratorCount,
    validatorCount: participants.validatorCount,
    completedTransfers: c.completedTransfers,
    transferredBytes: c.verifiedBytes,
    lookbackDays: LOOKBACK_DAYS,
    observationHour: isoFromMs(Math.floor(nowMs / HOUR_MS) * HOUR_MS),
    measurementWindowStart: windowStart,
    measurementWindowEnd: windowEnd,
    reportedCapacityMbps: participants.reportedCapacityMbps,
    workloads: [{
      measurementWindowStart: windowStart,
      measurementWindowEnd: windowEnd,
      reportedCapacityMbps: participants.reportedCapacityMbps,
      verifiedBandwidthMbps: mbps(c.measuredBytes, c.measuredDurationMs),
      metricDescription: METRIC_DESCRIPTION,
      measuredBytes: c.measuredBytes,
      measuredDurationMs: c.measuredDurationMs,
      originalTaskCount: c.originalTaskCount,
      attemptCount: c.attemptCount,
      recoveryAttemptCount: c.recoveryAttemptCount,
      successfulTasks: c.successfulTasks,
      failedTasks: c.failedTasks,
      neutralExcludedTasks: c.neutralExcludedTasks,
      pendingVerificationTasks: c.pendingVerificationTasks,
      workload: WORKLOAD,
      orchestratorCount: args.evidenceOrchestrators,
      verifiedBytes: c.verifiedBytes,
      recoveryVerifiedBytes: c.recoveryVerifiedBytes
    }],
    providers: participants.providers,
    weights: args.weights
  }
}
