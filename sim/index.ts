/**
 * The bwnet network simulator: the real actors (coordinator with its overseer, router, worker; with
 * `validators`, the validator's verifier and epoch machinery) on a virtual clock and a simulated transport, driven by a scenario file, with epochs (PRISM, weights),
 * metrics.json, report.html and end-of-run invariants. See docs/sim.md.
 */
export { runSimulation, type SimMetrics, type EpochMetrics, type OrchestratorEpochRow, type Invariant, type Progress, type RunOptions, type ValidatorMetrics } from './run.ts'
export { Scenario, Distribution, parseScenario, loadScenario, sample, DEFAULT_SEED, DEFAULT_START } from './scenario.ts'
export { renderReport, writeOutputs, svgChart } from './report.ts'
export { VirtualClock } from './clock.ts'
export { Rng } from './rng.ts'
export { SimStore } from './store.ts'
export { SimHub, SimNetwork, compose, type Channel, type Verdict, type SimEnvelope } from './transport.ts'
export { latencyChannel, lossChannel, dropChannel, partitionChannel } from './transport/index.ts'
export { FormulaEpochs, type EpochEngine, type EpochClose, type EpochStep, type SimTaskEvidence, type SimPenalty } from './epochs.ts'
export { ValidatorEpochs, SimRangeReader, SimHotkeys, type ValidatorLoopOptions } from './validators.ts'
export { installQuiescence, settle, drive, busyActorCount } from './quiescence.ts'
export { runSweep, writeSweep, parseParam, summarize, band, type SweepParam, type SweepResult, type RunSummary } from './sweep.ts'
export { SimSellers } from './sell.ts'
