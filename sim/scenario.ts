// The scenario: a JSON data file that says what world the actors run in. One TypeBox schema is the
// TypeScript type, the validator and the reference in docs/sim.md.
import { readFile } from 'node:fs/promises'
import { Type, type Static } from '@sinclair/typebox'
import { assertValid } from '../protocol/index.ts'
import type { Rng } from './rng.ts'

const Positive = (o: object = {}) => Type.Number({ exclusiveMinimum: 0, ...o })
const NonNegative = (o: object = {}) => Type.Number({ minimum: 0, ...o })
const Fraction = Type.Number({ minimum: 0, maximum: 1 })
const Count = (max: number) => Type.Integer({ minimum: 0, maximum: max })

export const Distribution = Type.Union([
  Type.Object({ kind: Type.Literal('constant'), value: NonNegative() }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('uniform'), min: NonNegative(), max: NonNegative() }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('normal'), mean: NonNegative(), sd: NonNegative(), min: Type.Optional(NonNegative()) }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('lognormal'), median: Positive(), sigma: NonNegative(), min: Type.Optional(NonNegative()), max: Type.Optional(Positive()) }, { additionalProperties: false })
], { description: 'A value drawn per entity (worker, transfer, message) with the seeded RNG.' })
export type Distribution = Static<typeof Distribution>

export const Partition = Type.Object({
  startHours: NonNegative(),
  durationMinutes: Positive(),
  /** Orchestrator indices (0-based) cut off, with their workers, from the rest of the network. */
  orchestrators: Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1 })
}, { additionalProperties: false })

export const Scenario = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 })),
  /** Virtual start time (ISO 8601); default 2025-01-01T00:00:00Z. */
  start: Type.Optional(Type.String({ format: 'date-time' })),
  durationHours: Positive({ maximum: 24 * 30 }),
  /** After the workload stops, how long the network may run to finish transfers in flight. */
  drainHours: Type.Optional(NonNegative({ maximum: 24 })),
  epoch: Type.Object({
    blocks: Type.Integer({ minimum: 1, maximum: 100_000 }),
    blockTimeMs: Type.Integer({ minimum: 1, maximum: 600_000 })
  }, { additionalProperties: false }),
  orchestrators: Type.Object({
    count: Type.Integer({ minimum: 1, maximum: 1000 }),
    workersPerOrchestrator: Type.Integer({ minimum: 1, maximum: 10_000 }),
    /** One-way access latency of an orchestrator, ms. */
    latencyMs: Type.Optional(Distribution),
    /**
     * Outages: the orchestrator loses every swarm connection (its peers and its own workers) and gets
     * them back after the downtime; its process and store live on (its API still takes clients).
     * Poisson per orchestrator.
     */
    churn: Type.Optional(Type.Object({
      leavesPerHour: NonNegative(),
      downtimeMinutes: Distribution
    }, { additionalProperties: false })),
    /** Scheduled outages of named orchestrators (indices, 0-based). */
    failures: Type.Optional(Type.Array(Type.Object({
      startHours: NonNegative(),
      durationMinutes: Positive(),
      orchestrators: Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1 })
    }, { additionalProperties: false }), { maxItems: 1000 })),
    /**
     * Orchestrators that sell their alpha: every `everyHours` each sells `fraction` of its base emission
     * of the last seven days (the allowance is 0.8). The validator's sell allowance and sell pressure
     * (docs/formulas.md#sell-pressure) then cut their weights.
     */
    sellers: Type.Optional(Type.Object({
      count: Count(1000),
      fraction: Type.Number({ minimum: 0, maximum: 10 }),
      everyHours: Positive({ maximum: 24 * 30 })
    }, { additionalProperties: false }))
  }, { additionalProperties: false }),
  workers: Type.Object({
    /** Tasks a worker runs at once (its p-queue concurrency). */
    slots: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 })),
    bandwidthMbps: Distribution,
    latencyMs: Distribution,
    /** Probability that one chunk move fails (worker-side error). */
    failureRate: Type.Optional(Fraction),
    churn: Type.Optional(Type.Object({
      /** Mean departures per worker per hour (Poisson). */
      leavesPerHour: NonNegative(),
      /** How long a departed worker stays away, minutes. */
      downtimeMinutes: Distribution
    }, { additionalProperties: false }))
  }, { additionalProperties: false }),
  network: Type.Optional(Type.Object({
    /** Probability that one control message is lost. */
    lossRate: Type.Optional(Fraction),
    partitions: Type.Optional(Type.Array(Partition, { maxItems: 100 }))
  }, { additionalProperties: false })),
  adversaries: Type.Optional(Type.Object({
    /** Share of workers that write wrong bytes and report the staged hash. */
    corruptingWorkers: Type.Optional(Fraction),
    /** Share of workers that accept tasks and never answer. */
    stallingWorkers: Type.Optional(Fraction),
    /** `concentrated`: bad workers fill whole orchestrators (an operator's fleet); `spread`: anywhere. */
    placement: Type.Optional(Type.Union([Type.Literal('concentrated'), Type.Literal('spread')])),
    /** Orchestrators that take offers and never relay their workers' results. */
    droppingOrchestrators: Type.Optional(Count(1000)),
    /** Groups of orchestrators run by one operator; the validator detects a group with `detectionPerEpoch`. */
    sybilGroups: Type.Optional(Type.Array(Type.Object({
      size: Type.Integer({ minimum: 2, maximum: 100 }),
      detectionPerEpoch: Fraction
    }, { additionalProperties: false }), { maxItems: 50 }))
  }, { additionalProperties: false })),
  workload: Type.Object({
    /** Transfers created over the run. */
    transfers: Type.Integer({ minimum: 0, maximum: 10_000_000 }),
    sizeMiB: Distribution,
    arrival: Type.Optional(Type.Union([Type.Literal('poisson'), Type.Literal('uniform')])),
    /** Client upload bandwidth per transfer, shared by the chunks it uploads at once. */
    uploadMbps: Type.Optional(Distribution),
    /** Chunks a client uploads at once (the CLI's `--parallel`, default 4); each is staged as soon as its bytes are in. */
    uploadParallel: Type.Optional(Type.Integer({ minimum: 1, maximum: 64 }))
  }, { additionalProperties: false }),
  /**
   * The validator's own actors in the loop (verifier and epoch machinery, sim/validators.ts) instead of
   * the formulas called directly (the default). docs/sim.md#validators-in-the-loop.
   */
  validators: Type.Optional(Type.Object({
    /** Validators running (one for now: its PRISM and weights are the run's). */
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: 1 })),
    /** Share of deliveries the validator reads back (its `--verify-sample-rate`; 1 in the devnet); the rest the coordinator checks itself. */
    sampleRate: Type.Optional(Fraction),
    /** The validator's access latency (default 10 ms). */
    latencyMs: Type.Optional(NonNegative())
  }, { additionalProperties: false })),
  destinations: Type.Optional(Type.Array(Type.Object({
    id: Type.String({ minLength: 1, maxLength: 64 }),
    /** Per-stream bandwidth cap, Mbps. */
    bandwidthMbps: Positive(),
    latencyMs: NonNegative(),
    /** Probability that one part write fails. */
    failureRate: Type.Optional(Fraction),
    /** Share of transfers sent here (normalized over destinations). */
    share: Type.Optional(Positive())
  }, { additionalProperties: false }), { minItems: 1, maxItems: 100 }))
}, { additionalProperties: false })
export type Scenario = Static<typeof Scenario>

export const DEFAULT_START = '2025-01-01T00:00:00Z'
export const DEFAULT_SEED = 1

/** Validates a parsed scenario; throws a TypeError naming the first problem. */
export function parseScenario (value: unknown, what = 'scenario'): Scenario {
  const s = assertValid(Scenario, value, what)
  for (const p of s.network?.partitions ?? []) {
    for (const i of p.orchestrators) if (i >= s.orchestrators.count) throw new TypeError(`${what}: /network/partitions orchestrator ${i} does not exist`)
  }
  for (const f of s.orchestrators.failures ?? []) {
    for (const i of f.orchestrators) if (i >= s.orchestrators.count) throw new TypeError(`${what}: /orchestrators/failures orchestrator ${i} does not exist`)
  }
  const sybil = (s.adversaries?.sybilGroups ?? []).reduce((a, g) => a + g.size, 0) + (s.adversaries?.droppingOrchestrators ?? 0) + (s.orchestrators.sellers?.count ?? 0)
  if (sybil > s.orchestrators.count) throw new TypeError(`${what}: /adversaries and /orchestrators/sellers name more orchestrators (${sybil}) than exist`)
  const check = (d: Distribution, path: string): void => {
    if (d.kind === 'uniform' && d.max < d.min) throw new TypeError(`${what}: ${path} max must be >= min`)
  }
  check(s.workers.bandwidthMbps, '/workers/bandwidthMbps')
  check(s.workers.latencyMs, '/workers/latencyMs')
  check(s.workload.sizeMiB, '/workload/sizeMiB')
  return s
}

export async function loadScenario (path: string): Promise<Scenario> {
  let text: string
  try { text = await readFile(path, 'utf8') } catch (err) { throw new TypeError(`scenario ${path}: ${(err as Error).message}`) }
  let json: unknown
  try { json = JSON.parse(text) } catch (err) { throw new TypeError(`scenario ${path}: not JSON: ${(err as Error).message}`) }
  return parseScenario(json, `scenario ${path}`)
}

/** One draw from a distribution. */
export function sample (d: Distribution, rng: Rng): number {
  switch (d.kind) {
    case 'constant': return d.value
    case 'uniform': return d.min + (d.max - d.min) * rng.next()
    case 'normal': return Math.max(d.min ?? 0, d.mean + d.sd * rng.normal())
    case 'lognormal': {
      const v = d.median * Math.exp(d.sigma * rng.normal())
      return Math.min(d.max ?? Infinity, Math.max(d.min ?? 0, v))
    }
  }
}
