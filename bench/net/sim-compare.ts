// The netns lab's run as a simulator scenario: one orchestrator, N workers whose links carry what the
// lab's same-run baseline measured, one client uploading as the CLI does, one destination and one
// validator reading back every delivery, all on the lab's epoch settings. `bench/net/run.ts
// --compare-sim` runs it beside every lab row and prints both (docs/sim.md#the-simulator-against-the-lab).
import { runSimulation, type Scenario } from '../../sim/index.ts'
import { DEFAULT_PARALLEL } from '../../node/commands/transfer/shared.ts'

/** What the lab row was: the parameters the simulator is given, all measured or configured, none fitted. */
export interface LabShape {
  workers: number
  /** What one worker's link carries (the lab's plain HTTP baseline over a capped worker link), Mbit/s. */
  workerLinkMbit: number
  /** What the client's and the destination's links carry (the baseline over the client's link), Mbit/s. */
  edgeLinkMbit: number
  sizeMib: number
  /** The workers' `--slots` (the lab's default 4). */
  slots?: number
  /** The CLI's `--parallel` (default 4). */
  uploadParallel?: number
  /** One-way latency of every hop. The lab's veth links add none; the simulator's clock counts whole ms. */
  latencyMs?: number
}

export const LAB_SLOTS = 4 // test/net/harness/network.ts starts workers with --slots 4
export const LAB_LATENCY_MS = 1
// The lab's orchestrator: --block-time-ms 1000 --blocks-per-epoch 10 (test/net/harness/network.ts).
const LAB_EPOCH = { blocks: 10, blockTimeMs: 1000 }

export function labScenario (shape: LabShape): Scenario {
  const lat = { kind: 'constant' as const, value: shape.latencyMs ?? LAB_LATENCY_MS }
  // Time enough for the transfer at a tenth of the links' rate, so a slow prediction still finishes.
  const idealS = shape.sizeMib * 8 * 1.048576 / Math.min(shape.workers * shape.workerLinkMbit, shape.edgeLinkMbit)
  return {
    name: `lab-${shape.workers}x${shape.workerLinkMbit.toFixed(1)}`,
    description: `The netns lab's run: ${shape.sizeMib} MiB through ${shape.workers} workers on ${shape.workerLinkMbit.toFixed(1)} Mbit/s links, client and destination ${shape.edgeLinkMbit.toFixed(0)} Mbit/s.`,
    seed: 1,
    durationHours: 1 / 3600, // the one transfer arrives at the start
    drainHours: Math.min(24, Math.max(60, 10 * idealS) / 3600),
    epoch: LAB_EPOCH,
    orchestrators: { count: 1, workersPerOrchestrator: shape.workers, latencyMs: lat },
    workers: { slots: shape.slots ?? LAB_SLOTS, bandwidthMbps: { kind: 'constant', value: shape.workerLinkMbit }, latencyMs: lat, failureRate: 0 },
    network: { lossRate: 0 },
    validators: { count: 1, sampleRate: 1, latencyMs: lat.value },
    workload: { transfers: 1, sizeMiB: { kind: 'constant', value: shape.sizeMib }, arrival: 'uniform', uploadMbps: { kind: 'constant', value: shape.edgeLinkMbit }, uploadParallel: shape.uploadParallel ?? DEFAULT_PARALLEL },
    destinations: [{ id: 'lab-destination', bandwidthMbps: shape.edgeLinkMbit, latencyMs: lat.value, failureRate: 0, share: 1 }]
  }
}

export interface SimRow { seconds: number, goodputMbit: number, reassignments: number }

/** The simulator's create → completed for the lab's transfer, and the goodput over it (file bytes ÷ that time, as the lab's bench counts). */
export async function simulateLab (shape: LabShape): Promise<SimRow> {
  const m = await runSimulation(labScenario(shape))
  const t = m.totals.transferSeconds
  if (m.totals.transfersCompleted !== 1 || t === null) throw new Error(`the simulated lab transfer did not complete: ${m.invariants.filter(i => !i.ok).map(i => `${i.name}: ${i.detail}`).join('; ')}`)
  return { seconds: t.max, goodputMbit: shape.sizeMib * 1024 * 1024 * 8 / 1e6 / t.max, reassignments: m.totals.reassignments }
}
