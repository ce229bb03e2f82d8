// The epoch machinery as the simulator sees it: evidence and penalties in, one close per epoch out
// (PRISM per orchestrator, tiered weights, the served vector). `FormulaEpochs` calls the pure formulas
// of actors/domain directly (cheap: the default); `ValidatorEpochs` (sim/validators.ts) runs the
// validator's own verifier and epoch actors instead (scenario field `validators`).
import {
  computePrism, epochSummary, servedWeights, weightVector, HOUR_MS, DAY_MS,
  type PrismComponents, type PrismOrchestratorInput, type PenaltyKind, type PenaltyRow, type EpochSummary,
  type ServedVector, type WeightVector, type ThroughputSample, type OutcomeEvent, type ReadinessTransition
} from '../actors/domain/index.ts'

const MIB = 1_048_576

/** One settled attempt as the modelled validator judged it (mirrors the validator's TaskEvidence). */
export interface SimTaskEvidence {
  orchestratorHotkey: string
  workerHotkey: string
  bytes: number
  durationMs: number
  verifiedAt: number
  verdict: 'verified' | 'mismatch'
}

export interface SimPenalty { id: string, orchestratorHotkey: string, kind: PenaltyKind, createdAtMs: number }

export interface EpochClose {
  epoch: number
  atMs: number
  prism: PrismComponents[]
  summary: EpochSummary
  served: ServedVector
}

/** What one close yields: this epoch's PRISM (routing from now on), and the epochs whose weights it made final. */
export interface EpochStep {
  prism: PrismComponents[]
  /** FormulaEpochs: this epoch. The validator's machine publishes one epoch late: the one before. */
  closes: EpochClose[]
}

export interface EpochEngine {
  /** True when the engine verifies deliveries itself (the validator actors): the coordinators' outcomes are not its evidence. */
  readonly verifies: boolean
  evidence (e: SimTaskEvidence): void
  /** A failed attempt or an overseer intervention charged to an orchestrator (reliability). */
  outcome (orchestrator: string, atMs: number, kind: 'failed' | 'intervention'): void
  penalty (p: SimPenalty): void
  readiness (orchestrator: string, atMs: number, connected: boolean): void
  close (epoch: number, atMs: number): EpochStep | Promise<EpochStep>
  /** After the last close (`lastEpoch`): the closes still unpublished. */
  finish? (lastEpoch: number, atMs: number): Promise<EpochClose[]>
  /** The node ids coordinators ask to verify deliveries (none: the coordinators check for themselves). */
  validators? (): string[]
  stop? (): Promise<void>
}

interface Bucket { atMs: number, mbpsTasks: number, tasks: number, verified: number, failed: number, interventions: number }
interface Book {
  id: string
  uid: number
  buckets: Map<number, Bucket>
  penalties: PenaltyRow[]
  transitions: ReadinessTransition[]
  connected: boolean
  lifetimeVerified: number
  epochBytes: number
}

/** Evidence is kept in hourly buckets: PRISM decays per hour, so the bucket time loses little. */
const bucketOf = (atMs: number): number => Math.floor(atMs / HOUR_MS)

export class FormulaEpochs implements EpochEngine {
  readonly verifies = false
  readonly #books = new Map<string, Book>()
  readonly #history: WeightVector[] = []
  readonly #ageStartMs: number

  /** `orchestrators` in UID order (UID = position + 1; UID 0 is the burn UID). */
  constructor (orchestrators: readonly string[], startMs: number) {
    // The simulated network is established: every orchestrator is qualified and a day old at start. The
    // validator starts watching at the start, when it sees every orchestrator connected and ready: with no
    // transition before the window, the window starts there, in that state (docs/formulas.md#prism).
    this.#ageStartMs = startMs - DAY_MS
    orchestrators.forEach((id, i) => this.#books.set(id, {
      id, uid: i + 1, buckets: new Map(), penalties: [], transitions: [{ atMs: startMs, ready: true, connected: true }], connected: true, lifetimeVerified: 0, epochBytes: 0
    }))
  }

  #bucket (orchestrator: string, atMs: number): Bucket | undefined {
    const b = this.#books.get(orchestrator)
    if (b === undefined) return undefined
    const k = bucketOf(atMs)
    let bucket = b.buckets.get(k)
    if (bucket === undefined) { bucket = { atMs: k * HOUR_MS, mbpsTasks: 0, tasks: 0, verified: 0, failed: 0, interventions: 0 }; b.buckets.set(k, bucket) }
    return bucket
  }

  evidence (e: SimTaskEvidence): void {
    const bucket = this.#bucket(e.orchestratorHotkey, e.verifiedAt)
    const book = this.#books.get(e.orchestratorHotkey)
    if (bucket === undefined || book === undefined) return
    if (e.verdict === 'mismatch') { bucket.failed++; return }
    bucket.verified++
    book.lifetimeVerified++
    book.epochBytes += e.bytes
    if (e.durationMs > 0) { bucket.mbpsTasks += (e.bytes * 8) / (e.durationMs * 1000); bucket.tasks++ }
  }

  outcome (orchestrator: string, atMs: number, kind: 'failed' | 'intervention'): void {
    const bucket = this.#bucket(orchestrator, atMs)
    if (bucket === undefined) return
    if (kind === 'failed') bucket.failed++
    else bucket.interventions++
  }

  penalty (p: SimPenalty): void {
    this.#books.get(p.orchestratorHotkey)?.penalties.push({ kind: p.kind, createdAtMs: p.createdAtMs })
  }

  readiness (orchestrator: string, atMs: number, connected: boolean): void {
    const b = this.#books.get(orchestrator)
    if (b === undefined || b.connected === connected) return
    b.connected = connected
    b.transitions.push({ atMs, ready: true, connected })
  }

  close (epoch: number, atMs: number): EpochStep {
    const c = this.#closeNow(epoch, atMs)
    return { prism: c.prism, closes: [c] }
  }

  #closeNow (epoch: number, atMs: number): EpochClose {
    const horizon = bucketOf(atMs - DAY_MS)
    const inputs: PrismOrchestratorInput[] = []
    for (const b of this.#books.values()) {
      const samples: ThroughputSample[] = []
      const outcomes: OutcomeEvent[] = []
      for (const [k, bucket] of b.buckets) {
        if (k < horizon) { b.buckets.delete(k); continue }
        if (bucket.tasks > 0) samples.push({ atMs: bucket.atMs, mbps: bucket.mbpsTasks / bucket.tasks, tasks: bucket.tasks })
        outcomes.push({ atMs: bucket.atMs, verified: bucket.verified, failed: bucket.failed, overseerInterventions: bucket.interventions })
      }
      inputs.push({
        id: b.id, pool: 'qualified', throughputSamples: samples, outcomes, ready: true, connected: b.connected, transitions: b.transitions,
        penalties: b.penalties, lifetimeVerifiedTasks: b.lifetimeVerified, ageStartMs: this.#ageStartMs
      })
    }
    const prism = computePrism({ nowMs: atMs, orchestrators: inputs })
    const books = [...this.#books.values()]
    const summary = epochSummary(epoch, books.map((b, i) => ({
      uid: b.uid, hotkey: b.id, verifiedMib: Math.floor(b.epochBytes / MIB), penaltyMultiplier: prism[i]!.penaltyMultiplier, score: prism[i]!.finalScore
    })))
    for (const b of books) b.epochBytes = 0
    const vector = weightVector(epoch, { formulaVersion: summary.formulaVersion, allWeightsZero: summary.allWeightsZero, sumRawWeight: summary.sumRawWeight, effectiveBuckets: { A: 0, B: 0, C: 0, D: 0, E: 0 }, rows: summary.orchestrators })
    const served = servedWeights(vector, this.#history)
    this.#history.push(vector)
    return { epoch, atMs, prism, summary, served }
  }
}
