// The engine: builds the world from a scenario, starts the real actors of every node on a virtual
// clock, runs the event loop (one instant at a time, waiting for the actors to go idle before time
// moves), closes epochs, feeds PRISM back as routing scores, and checks the invariants at the end.
import { HOUR_MS, type PenaltyKind } from '../actors/domain/index.ts'
import { tell } from '../actors/runtime.ts'
import type { WorkerMsg } from '../actors/transfer/worker.ts'
import type { RouterMsg } from '../actors/transfer/router.ts'
import type { CoordinatorEvent, OrchestratorCandidate } from '../actors/transfer/coordinator.ts'
import type { TransferRow } from '../actors/transfer/model.ts'
import { VirtualClock } from './clock.ts'
import { Rng } from './rng.ts'
import { installQuiescence, settle, drive } from './quiescence.ts'
import { DEFAULT_SEED, DEFAULT_START, sample, type Scenario } from './scenario.ts'
import { SimHub, compose, DELIVER_NOW, UNREACHABLE, type SimEnvelope } from './transport.ts'
import { latencyChannel, lossChannel, dropChannel, partitionChannel, cut, type PartitionWindow } from './transport/index.ts'
import { SimDestination, SimChunkMover, SimBlobStore, type WorkerModel } from './world.ts'
import { startOrchestratorNode, startWorkerNode, stopNode, type SimOrchestrator, type SimWorker } from './nodes.ts'
import { FormulaEpochs, type EpochEngine, type EpochClose, type EpochStep } from './epochs.ts'
import { ValidatorEpochs, SimRangeReader, DEFAULT_SAMPLE_RATE, DEFAULT_VALIDATOR_LATENCY_MS } from './validators.ts'
import { Workload } from './workload.ts'
import { FinishedTransfers } from './store.ts'
import { SimSellers } from './sell.ts'
import { CountingLogger } from './logger.ts'
import { isFailureReason } from '../protocol/failure-reasons.ts'
import { randomFrom } from '../actors/random.ts'

export const DEFAULT_DRAIN_HOURS = 1
export const DEFAULT_SLOTS = 2
export const DEFAULT_ORCHESTRATOR_LATENCY_MS = 10
export const WEIGHT_SUM_TOLERANCE = 1e-9
/** Steps between progress callbacks. */
export const PROGRESS_EVERY_STEPS = 2_000

export interface OrchestratorEpochRow {
  id: string
  role: 'honest' | 'corrupting-workers' | 'stalling-workers' | 'dropping' | 'sybil' | 'seller'
  routedChunks: number
  routingShare: number
  verifiedMib: number
  /** The weight set on chain: the served weight after sell pressure (docs/formulas.md#sell-pressure). */
  weight: number
  /** The served weight before sell pressure (equal to `weight` in a scenario without sellers). */
  servedWeight: number
  /** The sell-allowance multiplier of the epoch (1 without sales). */
  sellMultiplier: number
  /** Hours of this epoch the orchestrator spent in an outage (orchestrators.churn / .failures). */
  outageHours: number
  prismFinal: number
  routingScore: number
  throughputScore: number
  reliabilityScore: number
  readiness: number
  penaltyMultiplier: number
  activePenalties: Record<PenaltyKind, number>
}

export interface EpochMetrics {
  epoch: number
  /** `drain`: the epoch started after the workload ended (transfers in flight finishing); reported apart. */
  phase: 'workload' | 'drain'
  startHours: number
  endHours: number
  throughput: { verifiedBytes: number, verifiedMbps: number }
  tasks: { offered: number, verified: number, failed: number, integrityMismatch: number, reassignments: number }
  transfers: { created: number, completed: number, failed: number }
  verificationBacklog: number
  penaltiesIssued: number
  weights: { sum: number, allZero: boolean, servedSource: string, contributing: number }
  orchestrators: OrchestratorEpochRow[]
}

export interface Invariant { name: string, ok: boolean, detail: string }

export interface SimMetrics {
  scenario: string
  seed: number
  startIso: string
  durationHours: number
  simulatedHours: number
  nodes: { orchestrators: number, workers: number }
  totals: {
    transfers: number
    transfersCompleted: number
    transfersFailed: number
    tasks: number
    tasksVerified: number
    attempts: number
    reassignments: number
    integrityMismatches: number
    verifiedBytes: number
    /** Completed transfers' create → completed in virtual seconds (the orchestrator's two timestamps, as the lab's bench reads them); null without a completed transfer. */
    transferSeconds: { mean: number, p50: number, p95: number, max: number } | null
    events: number
    steps: number
  }
  transport: { sent: number, delivered: number, lost: number, unreachable: number, byType: Record<string, number> }
  logs: Record<string, number>
  /** Only with validators in the loop (scenario `validators`): what the verifier did. */
  validators?: ValidatorMetrics
  epochs: EpochMetrics[]
  invariants: Invariant[]
}

export interface ValidatorMetrics {
  count: number
  sampleRate: number
  /** verify_request messages the coordinators sent (every reported delivery, while a validator was reachable). */
  verifyRequests: number
  /** Ranges the verifier read back (the sampled share). */
  readBacks: number
  /** Deliveries the coordinators checked at the destination themselves (unsampled, unreadable, or no validator reachable). */
  coordinatorChecks: number
  verified: number
  mismatches: number
  /** integrity_chunk_mismatch penalties the verifier recorded, each on the worker that wrote the bytes. */
  workerPenalties: number
  workersPenalized: number
  /** Of those, workers that were not corrupting (0 unless the verifier is wrong). */
  honestWorkersPenalized: number
}

export interface Progress { simMs: number, totalMs: number, transfers: number, tasksVerified: number, steps: number }
export interface RunOptions {
  seed?: number
  onProgress?: (p: Progress) => void
  /** Swaps the epoch machinery; default: the scenario's (`validators`: the validator actors; else the formulas). */
  epochs?: (orchestrators: string[], startMs: number) => EpochEngine
}

const orchId = (i: number): string => `orch-${String(i).padStart(3, '0')}`
const workerId = (o: number, k: number): string => `w-${String(o).padStart(3, '0')}-${String(k).padStart(5, '0')}`

interface Counters { offered: number, verified: number, failed: number, integrity: number, reassignments: number, verifiedBytes: number, created: number, completed: number, failedTransfers: number, penalties: number }
const zero = (): Counters => ({ offered: 0, verified: 0, failed: 0, integrity: 0, reassignments: 0, verifiedBytes: 0, created: 0, completed: 0, failedTransfers: 0, penalties: 0 })

export async function runSimulation (scenario: Scenario, opts: RunOptions = {}): Promise<SimMetrics> {
  installQuiescence()
  const seed = opts.seed ?? scenario.seed ?? DEFAULT_SEED
  const rng = new Rng(seed)
  const startMs = Date.parse(scenario.start ?? DEFAULT_START)
  const durationMs = Math.round(scenario.durationHours * HOUR_MS)
  const workloadEndMs = startMs + durationMs
  const endMs = workloadEndMs + Math.round((scenario.drainHours ?? DEFAULT_DRAIN_HOURS) * HOUR_MS)
  const epochMs = scenario.epoch.blocks * scenario.epoch.blockTimeMs
  const clock = new VirtualClock(startMs)
  const logger = new CountingLogger()
  // Ids (transfers, attempts, sessions) from a seeded stream: a run replays to the byte, ids included.
  const ids = rng.stream('ids')
  const env = { clock, logger, random: randomFrom(() => ids.next()) }

  // --- who is who -------------------------------------------------------------------------------
  const nOrch = scenario.orchestrators.count
  const perOrch = scenario.orchestrators.workersPerOrchestrator
  const adv = scenario.adversaries ?? {}
  const order = rng.stream('placement').shuffle(Array.from({ length: nOrch }, (_, i) => i))
  const role = new Array<OrchestratorEpochRow['role']>(nOrch).fill('honest')
  let cursor = 0
  const dropping = new Set<number>()
  for (let k = 0; k < (adv.droppingOrchestrators ?? 0); k++) { const i = order[cursor++]!; dropping.add(i); role[i] = 'dropping' }
  const sybilGroups: Array<{ members: number[], detectionPerEpoch: number, detected: boolean }> = []
  for (const g of adv.sybilGroups ?? []) {
    const members = order.slice(cursor, cursor + g.size); cursor += g.size
    for (const i of members) role[i] = 'sybil'
    sybilGroups.push({ members, detectionPerEpoch: g.detectionPerEpoch, detected: false })
  }
  const sellerIdx: number[] = []
  for (let k = 0; k < (scenario.orchestrators.sellers?.count ?? 0); k++) { const i = order[cursor++]!; sellerIdx.push(i); role[i] = 'seller' }
  const totalWorkers = nOrch * perOrch
  const corruptN = Math.round((adv.corruptingWorkers ?? 0) * totalWorkers)
  const stallN = Math.round((adv.stallingWorkers ?? 0) * totalWorkers)
  const corrupt = new Set<number>()
  const stall = new Set<number>()
  if ((adv.placement ?? 'concentrated') === 'concentrated') {
    // Bad workers fill whole orchestrators (one operator's fleet), taken from the honest ones left.
    const fill = (target: Set<number>, n: number, label: OrchestratorEpochRow['role']): void => {
      while (target.size < n && cursor < order.length) {
        const o = order[cursor++]!
        role[o] = label
        for (let k = 0; k < perOrch && target.size < n; k++) target.add(o * perOrch + k)
      }
    }
    fill(corrupt, corruptN, 'corrupting-workers')
    fill(stall, stallN, 'stalling-workers')
  } else {
    const all = rng.stream('spread').shuffle(Array.from({ length: totalWorkers }, (_, i) => i))
    all.slice(0, corruptN).forEach(i => corrupt.add(i))
    all.slice(corruptN, corruptN + stallN).forEach(i => stall.add(i))
  }

  // --- latencies, transport ------------------------------------------------------------------------
  const latency = new Map<string, number>()
  const site = new Map<string, number>()
  const orchRng = rng.stream('orchestrators')
  const orchIds = Array.from({ length: nOrch }, (_, i) => orchId(i))
  orchIds.forEach((id, i) => { latency.set(id, sample(scenario.orchestrators.latencyMs ?? { kind: 'constant', value: DEFAULT_ORCHESTRATOR_LATENCY_MS }, orchRng)); site.set(id, i) })
  const partitions: PartitionWindow[] = (scenario.network?.partitions ?? []).map(p => ({
    startMs: startMs + Math.round(p.startHours * HOUR_MS), endMs: startMs + Math.round(p.startHours * HOUR_MS + p.durationMinutes * 60_000), sites: new Set(p.orchestrators)
  }))
  const droppingIds = new Set([...dropping].map(orchId))
  const workerModels = new Map<string, WorkerModel>()
  const online = (node: string): boolean => workerModels.get(node)?.online ?? true
  // Orchestrators in an outage (orchestrators.churn / .failures): every message to or from them or their workers fails.
  const down = new Set<number>()
  const downSince = new Map<number, number>()
  const channel = compose(
    (m: SimEnvelope) => (online(m.from) && online(m.to) ? DELIVER_NOW : UNREACHABLE),
    (m: SimEnvelope) => (down.size > 0 && (down.has(site.get(m.from) ?? -1) || down.has(site.get(m.to) ?? -1)) ? UNREACHABLE : DELIVER_NOW),
    partitionChannel(partitions, n => site.get(n) ?? -1, () => clock.now()),
    // An orchestrator that drops results never relays its workers' task results (nor its failure notices).
    dropChannel(m => m.type === 'task_result' && droppingIds.has(m.from)),
    lossChannel(scenario.network?.lossRate ?? 0, rng.stream('loss')),
    latencyChannel(n => latency.get(n) ?? 0)
  )
  const hub = new SimHub(clock, channel)
  const finishedTransfers = new FinishedTransfers()

  // --- destinations, blobs -----------------------------------------------------------------------
  const destModels = scenario.destinations ?? [{ id: 'dest-0', bandwidthMbps: 10_000, latencyMs: 20, failureRate: 0, share: 1 }]
  const destinations = new Map<string, SimDestination>()
  for (const d of destModels) destinations.set(d.id, new SimDestination({ id: d.id, bandwidthMbps: d.bandwidthMbps, latencyMs: d.latencyMs, failureRate: d.failureRate ?? 0 }, clock, rng.stream(`dest/${d.id}`)))
  const destinationOfUrl = (url: string): SimDestination | undefined => destinations.get(url.slice('sim://'.length, url.indexOf('/', 'sim://'.length)))
  const blobs = new SimBlobStore()

  // --- epochs, evidence, metrics -----------------------------------------------------------------
  const corruptIds = new Set<string>()
  let epochCounters = zero()
  const totals = zero()
  const caughtAt = new Map<string, number>() // orchestrator → first integrity penalty (on it, or on one of its workers)
  let corruptVerified = 0
  const vm: ValidatorMetrics | undefined = scenario.validators === undefined || opts.epochs !== undefined
    ? undefined
    : { count: scenario.validators.count ?? 1, sampleRate: scenario.validators.sampleRate ?? DEFAULT_SAMPLE_RATE, verifyRequests: 0, readBacks: 0, coordinatorChecks: 0, verified: 0, mismatches: 0, workerPenalties: 0, workersPenalized: 0, honestWorkersPenalized: 0 }
  const penalizedWorkers = new Set<string>()
  const reader = new SimRangeReader(clock, destinationOfUrl)
  const epochs: EpochEngine = opts.epochs !== undefined
    ? opts.epochs(orchIds, startMs)
    : scenario.validators === undefined
      ? new FormulaEpochs(orchIds, startMs)
      : await ValidatorEpochs.start({
        env, clock, hub, orchestrators: orchIds, startMs, epochBlocks: scenario.epoch.blocks, blockTimeMs: scenario.epoch.blockTimeMs,
        sampleRate: scenario.validators.sampleRate ?? DEFAULT_SAMPLE_RATE,
        reader,
        onEvidence: (worker, _orchestrator, verdict) => {
          if (verdict === 'verified') { vm!.verified++; if (corruptIds.has(worker)) corruptVerified++ } else vm!.mismatches++
        },
        onPenalty: (worker, orchestrator, atMs) => {
          epochCounters.penalties++; totals.penalties++
          vm!.workerPenalties++; penalizedWorkers.add(worker)
          if (!caughtAt.has(orchestrator)) caughtAt.set(orchestrator, atMs)
        }
      })
  const validatorIds = new Set(epochs.validators?.() ?? [])
  for (const v of validatorIds) latency.set(v, scenario.validators?.latencyMs ?? DEFAULT_VALIDATOR_LATENCY_MS)
  const validatorList = [...validatorIds]
  const routingScore = new Map<string, number>(orchIds.map(id => [id, 1]))
  let attempts = 0
  const routed = new Map<string, number>()
  let backlog = 0

  hub.tap((m) => {
    if (m.type === 'task_offer_batch') {
      const n = (m.body as { offers: unknown[] }).offers.length
      routed.set(m.to, (routed.get(m.to) ?? 0) + n)
      epochCounters.offered += n; attempts += n
    } else if (m.type === 'task_result' && !m.from.startsWith('w-') && (m.body as { success: boolean }).success) backlog++
  })

  const live = new Map<string, { n: number }>(orchIds.map(id => [id, { n: 0 }]))
  // What the last invariant needs of every transfer that ended, taken when it ends (its rows then leave memory).
  const ended = new Set<string>()
  const completionMs: number[] = []
  const endedTally = { completed: 0, failed: 0, cancelled: 0, incomplete: 0, failedNoReason: 0, tasks: 0, cancelledTasks: 0 }
  const onEvent = (coordinator: string, e: CoordinatorEvent): void => {
    const now = clock.now()
    if (e.type === 'transfer') {
      const r = e.row
      if (r.status === 'pending') live.get(coordinator)!.n++
      else if ((r.status === 'completed' || r.status === 'failed' || r.status === 'cancelled') && !ended.has(r.id)) {
        live.get(coordinator)!.n--
        ended.add(r.id)
        endedTally.tasks += r.total_chunks
        if (r.status === 'completed') {
          endedTally.completed++
          if (r.chunks_delivered !== r.total_chunks) endedTally.incomplete++
          completionMs.push(now - Date.parse(r.created_at))
        }
        else if (r.status === 'failed') { endedTally.failed++; if (!isFailureReason(r.error_code)) endedTally.failedNoReason++ }
        else { endedTally.cancelled++; endedTally.cancelledTasks += r.total_chunks }
      }
    }
    for (const c of [epochCounters, totals]) {
      if (e.type === 'intervention') c.reassignments++
      else if (e.type === 'transfer') {
        if (e.row.status === 'pending') c.created++
        else if (e.row.status === 'completed') c.completed++
        else if (e.row.status === 'failed') c.failedTransfers++
      }
    }
    if (e.type === 'intervention') { epochs.outcome(e.row.orchestrator_id, now, 'intervention'); return }
    if (e.type !== 'result') return
    const r = e.row
    if (r.outcome === 'accepted' || (r.outcome === 'integrity_mismatch' && r.success)) backlog = Math.max(0, backlog - 1)
    if (r.outcome === 'accepted') {
      epochCounters.verified++; totals.verified++
      epochCounters.verifiedBytes += r.bytes; totals.verifiedBytes += r.bytes
      if (corruptIds.has(r.worker_id)) corruptVerified++
      epochs.evidence({ orchestratorHotkey: r.orchestrator_id, workerHotkey: r.worker_id, bytes: r.bytes, durationMs: r.duration_ms, verifiedAt: now, verdict: 'verified' })
    } else if (r.outcome === 'integrity_mismatch') {
      epochCounters.integrity++; totals.integrity++
      // With the validator in the loop its verifier records the penalty, on the worker (docs/validators.md).
      if (!epochs.verifies) {
        epochCounters.penalties++; totals.penalties++
        epochs.evidence({ orchestratorHotkey: r.orchestrator_id, workerHotkey: r.worker_id, bytes: r.bytes, durationMs: r.duration_ms, verifiedAt: now, verdict: 'mismatch' })
        // The formulas' rule: an orchestrator answers for its workers.
        epochs.penalty({ id: `integrity/${r.attempt_id}`, orchestratorHotkey: r.orchestrator_id, kind: 'integrity_chunk_mismatch', createdAtMs: now })
        if (!caughtAt.has(r.orchestrator_id)) caughtAt.set(r.orchestrator_id, now)
      }
    } else if (r.outcome === 'failed') {
      epochCounters.failed++; totals.failed++
      epochs.outcome(r.orchestrator_id, now, 'failed')
    }
  }

  // --- nodes ---------------------------------------------------------------------------------------
  const orchestrators: SimOrchestrator[] = []
  const candidates = (self: string): OrchestratorCandidate[] => {
    const now = clock.now()
    const mySite = site.get(self)!
    const out: OrchestratorCandidate[] = []
    if (down.has(mySite)) return out
    for (const o of orchestrators) {
      if (down.has(o.index) || cut(partitions, mySite, o.index, now)) continue
      out.push({ hotkey: o.id, workers: o.router.workers(), score: routingScore.get(o.id) ?? 0 })
    }
    return out
  }
  for (let i = 0; i < nOrch; i++) {
    orchestrators.push(startOrchestratorNode(i, orchIds[i]!, {
      env, hub, blobs, destination: (id) => destinations.get(id)!, candidates, onEvent, isWorker: n => n.startsWith('w-'), liveTransfers: id => live.get(id)!, finished: finishedTransfers,
      // Coordinators ask the validators connected to them (none during their outage or while a partition
      // cuts them off: the validator is outside every partition's sites), as in the node.
      ...(validatorIds.size > 0 ? { isValidator: (n: string) => validatorIds.has(n), validators: (self: string) => { const s = site.get(self)!; return down.has(s) || cut(partitions, s, -1, clock.now()) ? [] : validatorList } } : {})
    }))
  }
  const slots = scenario.workers.slots ?? DEFAULT_SLOTS
  const workerRng = rng.stream('workers')
  const moverRng = rng.stream('movers')
  const workers: SimWorker[] = []
  for (let o = 0; o < nOrch; o++) {
    for (let k = 0; k < perOrch; k++) {
      const idx = o * perOrch + k
      const id = workerId(o, k)
      const model: WorkerModel = {
        id, orchestrator: orchIds[o]!, site: o, bandwidthMbps: Math.max(0.1, sample(scenario.workers.bandwidthMbps, workerRng)),
        latencyMs: sample(scenario.workers.latencyMs, workerRng), failureRate: scenario.workers.failureRate ?? 0,
        corrupting: corrupt.has(idx), stalling: stall.has(idx), online: true, moved: 0, bytes: 0
      }
      if (model.corrupting) corruptIds.add(id)
      workerModels.set(id, model)
      latency.set(id, model.latencyMs)
      site.set(id, o)
      const mover = new SimChunkMover(model, clock, moverRng, destinationOfUrl, n => latency.get(n) ?? 0)
      workers.push(startWorkerNode(model, env, hub, mover, slots))
    }
  }
  // Discovery: every worker learns its orchestrator (the membership announce) and attaches.
  for (const w of workers) tellWorker(w, { type: 'orchestrator-up', hotkey: w.model.orchestrator })

  // Churn: Poisson departures per worker; the connection drops on both sides, then the worker returns.
  const churn = scenario.workers.churn
  if (churn !== undefined && churn.leavesPerHour > 0) {
    const churnRng = rng.stream('churn')
    const byId = new Map(workers.map(w => [w.model.id, w]))
    const orchById = new Map(orchestrators.map(o => [o.id, o]))
    const scheduleLeave = (w: SimWorker): void => {
      const at = clock.now() + Math.round(churnRng.exponential(HOUR_MS / churn.leavesPerHour))
      if (at >= workloadEndMs) return
      clock.setTimer(at - clock.now(), () => {
        w.model.online = false
        tellWorker(w, { type: 'orchestrator-down', hotkey: w.model.orchestrator })
        tellRouter(orchById.get(w.model.orchestrator)!, { type: 'detach', worker: w.model.id })
        clock.setTimer(Math.round(sample(churn.downtimeMinutes, churnRng) * 60_000), () => {
          w.model.online = true
          // During its orchestrator's outage the worker waits: the outage's end brings it back.
          if (!down.has(w.model.site)) tellWorker(w, { type: 'orchestrator-up', hotkey: w.model.orchestrator })
          scheduleLeave(w)
        })
      })
    }
    for (const id of [...byId.keys()]) scheduleLeave(byId.get(id)!)
  }

  // Partitions lower the readiness the validator sees for the cut-off orchestrators.
  for (const p of partitions) {
    clock.setTimer(p.startMs - startMs, () => { for (const i of p.sites) epochs.readiness(orchIds[i]!, clock.now(), false) })
    clock.setTimer(p.endMs - startMs, () => { for (const i of p.sites) epochs.readiness(orchIds[i]!, clock.now(), true) })
  }

  // Orchestrator outages: its swarm connections drop (peers and its own workers), the validator sees it
  // disconnected; when it is back its workers attach again. Its process and store live on.
  const workersOf = (o: number): SimWorker[] => workers.slice(o * perOrch, (o + 1) * perOrch)
  let outageMs = new Map<number, number>()
  const outage = (o: number, ms: number): void => {
    if (down.has(o)) return
    down.add(o)
    downSince.set(o, clock.now())
    epochs.readiness(orchIds[o]!, clock.now(), false)
    for (const w of workersOf(o)) {
      tellWorker(w, { type: 'orchestrator-down', hotkey: w.model.orchestrator })
      tellRouter(orchestrators[o]!, { type: 'detach', worker: w.model.id })
    }
    clock.setTimer(ms, () => {
      down.delete(o)
      outageMs.set(o, (outageMs.get(o) ?? 0) + clock.now() - downSince.get(o)!)
      downSince.delete(o)
      epochs.readiness(orchIds[o]!, clock.now(), true)
      for (const w of workersOf(o)) if (w.model.online) tellWorker(w, { type: 'orchestrator-up', hotkey: w.model.orchestrator })
    })
  }
  for (const f of scenario.orchestrators.failures ?? []) {
    clock.setTimer(Math.round(f.startHours * HOUR_MS), () => { for (const o of f.orchestrators) outage(o, Math.round(f.durationMinutes * 60_000)) })
  }
  const orchChurn = scenario.orchestrators.churn
  if (orchChurn !== undefined && orchChurn.leavesPerHour > 0) {
    const r = rng.stream('orchestrator-churn')
    const next = (o: number): void => {
      const at = clock.now() + Math.round(r.exponential(HOUR_MS / orchChurn.leavesPerHour))
      if (at >= workloadEndMs) return
      clock.setTimer(at - clock.now(), () => {
        const ms = Math.max(1, Math.round(sample(orchChurn.downtimeMinutes, r) * 60_000))
        outage(o, ms)
        clock.setTimer(ms, () => next(o))
      })
    }
    for (let o = 0; o < nOrch; o++) next(o)
  }

  // --- workload ----------------------------------------------------------------------------------
  const workload = new Workload({
    clock, rng: rng.stream('workload'), scenario, orchestrators, blobs, startMs, endMs: workloadEndMs,
    destinations: destModels.map(d => ({ id: d.id, share: d.share ?? 1 }))
  })
  workload.start()

  // --- epochs --------------------------------------------------------------------------------------
  const sellers = sellerIdx.length === 0
    ? null
    : new SimSellers(orchIds, new Map(sellerIdx.map(i => [orchIds[i]!, { fraction: scenario.orchestrators.sellers!.fraction, everyMs: Math.round(scenario.orchestrators.sellers!.everyHours * HOUR_MS) }])),
      { startMs, blockTimeMs: scenario.epoch.blockTimeMs, epochBlocks: scenario.epoch.blocks })
  const setWeights: Array<Map<string, number> | null> = []
  const epochRows: EpochMetrics[] = []
  const closes: EpochClose[] = []
  const sybilRng = rng.stream('sybil')
  let epochStart = startMs
  // An epoch's row is written at its close (counters, routing, PRISM); its weights once the engine has
  // them final: at once with the formulas, one close later with the validator (it publishes one epoch late).
  const publish = (close: EpochClose): void => {
    const row = epochRows[close.epoch]!
    closes.push(close)
    const sold = sellers?.apply(close.epoch, close.atMs, close.served) ?? null
    setWeights.push(sold?.weights ?? null)
    const weightOf = new Map(close.summary.orchestrators.map(r => [r.hotkey, r]))
    for (const o of row.orchestrators) {
      const w = weightOf.get(o.id)
      o.verifiedMib = w?.verifiedMib ?? 0
      o.weight = sold?.weights.get(o.id) ?? w?.weight ?? 0
      o.servedWeight = w?.weight ?? 0
      o.sellMultiplier = sold?.multipliers.get(o.id) ?? 1
    }
    row.weights = { sum: close.summary.sumFinalShare, allZero: close.summary.allWeightsZero, servedSource: close.served.source, contributing: close.summary.contributingOrchestratorCount }
  }
  let pendingClose: Promise<void> | null = null
  let closeError: unknown = null
  const closeEpoch = (): void => {
    const now = clock.now()
    if (now <= epochStart) return
    for (const g of sybilGroups) {
      if (!g.detected && sybilRng.chance(g.detectionPerEpoch)) {
        g.detected = true
        for (const i of g.members) { epochs.penalty({ id: `sybil/${i}/${now}`, orchestratorHotkey: orchIds[i]!, kind: 'sybil', createdAtMs: now }); epochCounters.penalties++; totals.penalties++ }
      }
    }
    const epoch = epochRows.length
    for (const [o, since] of downSince) { outageMs.set(o, (outageMs.get(o) ?? 0) + now - Math.max(since, epochStart)); downSince.set(o, now) }
    const counters = epochCounters
    const routedNow = new Map(routed)
    const outageNow = outageMs
    const backlogNow = backlog
    const start = epochStart
    const write = (step: EpochStep): void => {
      const routedTotal = [...routedNow.values()].reduce((a, b) => a + b, 0)
      const rows: OrchestratorEpochRow[] = step.prism.map((p, i) => ({
        id: p.id, role: role[i]!, routedChunks: routedNow.get(p.id) ?? 0, routingShare: routedTotal > 0 ? (routedNow.get(p.id) ?? 0) / routedTotal : 0,
        verifiedMib: 0, weight: 0, servedWeight: 0, sellMultiplier: 1,
        outageHours: (outageNow.get(i) ?? 0) / HOUR_MS,
        prismFinal: p.finalScore, routingScore: p.routingScore, throughputScore: p.throughputScore, reliabilityScore: p.reliabilityScore,
        readiness: p.readinessMultiplier, penaltyMultiplier: p.penaltyMultiplier, activePenalties: p.activePenalties
      }))
      const spanMs = now - start
      epochRows.push({
        epoch,
        phase: start >= workloadEndMs ? 'drain' : 'workload',
        startHours: (start - startMs) / HOUR_MS,
        endHours: (now - startMs) / HOUR_MS,
        throughput: { verifiedBytes: counters.verifiedBytes, verifiedMbps: (counters.verifiedBytes * 8) / (spanMs * 1000) },
        tasks: { offered: counters.offered, verified: counters.verified, failed: counters.failed, integrityMismatch: counters.integrity, reassignments: counters.reassignments },
        transfers: { created: counters.created, completed: counters.completed, failed: counters.failedTransfers },
        verificationBacklog: backlogNow,
        penaltiesIssued: counters.penalties,
        weights: { sum: 0, allZero: true, servedSource: 'unpublished', contributing: 0 },
        orchestrators: rows
      })
      for (const c of step.closes) publish(c)
      // Routing follows PRISM from the next wave on.
      for (const p of step.prism) routingScore.set(p.id, p.routingScore)
    }
    const step = epochs.close(epoch, now)
    if (step instanceof Promise) {
      // The validator's actors: settled before time moves (the loop checks), with nothing but actors and microtasks in between.
      pendingClose = step.then(write).catch((err) => { closeError = err }).finally(() => { pendingClose = null })
    } else write(step)
    epochCounters = zero()
    outageMs = new Map()
    routed.clear()
    epochStart = now
  }
  const epochTimer = clock.every(epochMs, closeEpoch)

  // --- the loop ------------------------------------------------------------------------------------
  let steps = 0
  const finished = (): boolean => clock.now() >= workloadEndMs && workload.transfers.length === scenario.workload.transfers &&
    totals.completed + totals.failedTransfers + workload.refused >= workload.transfers.length
  // One instant at a time: the events due, then (drive) every actor idle again before time moves.
  let stepped = false
  await drive(() => {
    if (stepped) {
      steps++
      if (opts.onProgress !== undefined && steps % PROGRESS_EVERY_STEPS === 0) {
        opts.onProgress({ simMs: clock.now() - startMs, totalMs: endMs - startMs, transfers: workload.transfers.length, tasksVerified: totals.verified, steps })
      }
      if (closeError !== null) throw closeError
      if (pendingClose !== null) throw new Error('an epoch close did not settle before time moved')
      if (finished()) return false
    }
    if (clock.step(endMs) === 0) return false
    stepped = true
    return true
  })
  epochTimer.cancel()
  closeEpoch()
  await pendingClose
  if (epochs.finish !== undefined) for (const c of await epochs.finish(epochRows.length - 1, clock.now())) publish(c)
  if (closeError !== null) throw closeError
  opts.onProgress?.({ simMs: clock.now() - startMs, totalMs: endMs - startMs, transfers: workload.transfers.length, tasksVerified: totals.verified, steps })

  // --- invariants ----------------------------------------------------------------------------------
  const invariants: Invariant[] = []
  let checked = 0
  let mismatched = 0
  for (const d of destinations.values()) { checked += d.checkedChunks; mismatched += d.mismatchedChunks }
  invariants.push({ name: 'every delivered chunk matches', ok: mismatched === 0, detail: `${checked} chunks of completed objects checked, ${mismatched} mismatched` })

  // The formulas penalize the orchestrator. The validator penalizes the worker and leaves its
  // orchestrator's multiplier alone (docs/validators.md): weight then comes only from verified work, so
  // an orchestrator whose every worker corrupts must hold none from its first catch on.
  const fleets = new Set(orchIds.filter((_, o) => perOrch > 0 && Array.from({ length: perOrch }, (_, k) => corrupt.has(o * perOrch + k)).every(Boolean)))
  const violations: string[] = []
  closes.forEach((c, k) => {
    for (const r of c.summary.orchestrators) {
      if (epochs.verifies && !fleets.has(r.hotkey)) continue
      const caught = caughtAt.get(r.hotkey)
      const set = setWeights[k]?.get(r.hotkey) ?? r.weight
      if (caught !== undefined && caught <= c.atMs && (r.weight > 0 || set > 0)) violations.push(`epoch ${c.epoch}: ${r.hotkey} weight ${Math.max(r.weight, set)}`)
    }
  })
  invariants.push({
    name: 'corrupting workers never hold weight',
    ok: violations.length === 0 && corruptVerified === 0,
    detail: `${caughtAt.size} orchestrators caught with corrupting workers${epochs.verifies ? ` (${vm?.workerPenalties ?? 0} worker penalties by the verifier)` : ''}; ${corruptVerified} corrupt deliveries credited; ${violations.length} epochs with weight after a catch${violations.length > 0 ? ': ' + violations.slice(0, 3).join('; ') : ''}`
  })

  // With sellers, the weights set are the served vector after sell pressure: they must sum to 1 as well.
  const setSum = (k: number): number => [...(setWeights[k]?.values() ?? [])].reduce((a, b) => a + b, 0)
  const badSums = closes.filter((c, k) => !(Math.abs(c.summary.sumFinalShare - 1) <= WEIGHT_SUM_TOLERANCE || (c.summary.allWeightsZero && c.served.source !== 'epoch_summary')) ||
    (setWeights[k] != null && c.served.source !== 'burn' && Math.abs(setSum(k) - 1) > WEIGHT_SUM_TOLERANCE))
  invariants.push({
    name: 'weights of an epoch sum to 1 (or the fallback)',
    ok: badSums.length === 0,
    detail: `${closes.length} epochs: ${closes.filter(c => !c.summary.allWeightsZero).length} sum to 1, ${closes.filter(c => c.summary.allWeightsZero).length} served by fallback (${[...new Set(closes.filter(c => c.summary.allWeightsZero).map(c => c.served.source))].join(', ') || 'none'})${badSums.length > 0 ? `; bad: ${badSums.map(c => c.epoch).join(', ')}` : ''}`
  })

  // Terminal transfers left the stores (sim/store.ts); what the check needs of them was taken at their end.
  const rows: TransferRow[] = []
  for (const o of orchestrators) for (const [, r] of o.store.rows<TransferRow>('transfers')) if (!ended.has(r.id)) rows.push(r)
  const unfinished = rows.filter(r => r.status !== 'completed' && r.status !== 'failed')
  const transfersSeen = ended.size + rows.length
  const tasks = endedTally.tasks + rows.reduce((a, r) => a + r.total_chunks, 0)
  const accounted = endedTally.tasks - endedTally.cancelledTasks
  invariants.push({
    name: 'no task lost',
    ok: unfinished.length === 0 && endedTally.incomplete === 0 && endedTally.failedNoReason === 0 && endedTally.cancelled === 0 && workload.refused === 0 && transfersSeen === workload.transfers.length,
    detail: `${transfersSeen} transfers (${tasks} tasks): ${endedTally.completed} completed, ${endedTally.failed} failed with a reason; ${accounted}/${tasks} tasks accounted for; ${unfinished.length} unfinished, ${workload.refused} refused${endedTally.incomplete + endedTally.failedNoReason > 0 ? `; ${endedTally.incomplete} completed with chunks missing, ${endedTally.failedNoReason} failed without a reason` : ''}`
  })

  for (const o of orchestrators) { o.coordinator.stop(); stopNode(o) }
  for (const w of workers) stopNode(w)
  await epochs.stop?.()
  await settle()

  const logs: Record<string, number> = {}
  for (const [k, v] of [...logger.events.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) logs[k] = v
  return {
    scenario: scenario.name,
    seed,
    startIso: new Date(startMs).toISOString(),
    durationHours: scenario.durationHours,
    simulatedHours: (clock.now() - startMs) / HOUR_MS,
    nodes: { orchestrators: nOrch, workers: totalWorkers },
    totals: {
      transfers: transfersSeen,
      transfersCompleted: totals.completed,
      transfersFailed: totals.failedTransfers,
      tasks,
      tasksVerified: totals.verified,
      attempts,
      reassignments: totals.reassignments,
      integrityMismatches: totals.integrity,
      verifiedBytes: totals.verifiedBytes,
      transferSeconds: secondsSummary(completionMs),
      events: clock.fired,
      steps
    },
    transport: { ...hub.stats, byType: Object.fromEntries(Object.entries(hub.stats.byType).sort((a, b) => (a[0] < b[0] ? -1 : 1))) },
    logs,
    ...(vm !== undefined ? { validators: { ...vm, verifyRequests: hub.stats.byType.verify_request ?? 0, readBacks: reader.reads, coordinatorChecks: [...destinations.values()].reduce((a, d) => a + d.partListings, 0), workersPenalized: penalizedWorkers.size, honestWorkersPenalized: [...penalizedWorkers].filter(w => !corruptIds.has(w)).length } } : {}),
    epochs: epochRows,
    invariants
  }
}

/** Mean, median, 95th percentile (nearest rank) and maximum of durations in ms, in seconds. */
export function secondsSummary (ms: number[]): { mean: number, p50: number, p95: number, max: number } | null {
  if (ms.length === 0) return null
  const sorted = Float64Array.from(ms).sort()
  const rank = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]! / 1000
  return { mean: sorted.reduce((a, b) => a + b, 0) / sorted.length / 1000, p50: rank(0.5), p95: rank(0.95), max: sorted[sorted.length - 1]! / 1000 }
}

function tellWorker (w: SimWorker, msg: WorkerMsg): void { tell(w.worker.ref, msg) }
function tellRouter (o: SimOrchestrator, msg: RouterMsg): void { tell(o.router.ref, msg) }
