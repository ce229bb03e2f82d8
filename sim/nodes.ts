// The simulated nodes: each orchestrator runs the real router and coordinator actors, each worker the
// real worker actor, in its own nact system with its own store, wired to the simulated transport by the
// inbound table node/roles/index.ts wires to the messenger (actors/transfer/inbound.ts).
import { startSystem, stopActor, type Env, type SystemRef } from '../actors/runtime.ts'
import { startCoordinator, type Coordinator, type CoordinatorEvent, type OrchestratorCandidate } from '../actors/transfer/coordinator.ts'
import { startRouter, type Router } from '../actors/transfer/router.ts'
import { startWorker, type Worker } from '../actors/transfer/worker.ts'
import type { Network } from '../actors/ports.ts'
import { ORCHESTRATOR_INBOUND, WORKER_INBOUND, inboundByType, deliverInbound } from '../actors/transfer/inbound.ts'
import type { SimEnvelope, SimHub } from './transport.ts'
import { SimStore, type FinishedTransfers } from './store.ts'
import type { SimBlobStore, SimDestination, SimChunkMover, WorkerModel } from './world.ts'

export interface SimOrchestrator {
  index: number
  id: string
  system: SystemRef
  store: SimStore
  net: Network
  router: Router
  coordinator: Coordinator
}

export interface SimWorker { model: WorkerModel, system: SystemRef, worker: Worker }

export interface OrchestratorWiring {
  env: Env
  hub: SimHub
  blobs: SimBlobStore
  destination (id: string): SimDestination
  candidates (self: string): OrchestratorCandidate[]
  onEvent (coordinator: string, e: CoordinatorEvent): void
  isWorker (node: string): boolean
  /** Validators in the loop (sim/validators.ts): their verdicts come in as a validator's. */
  isValidator? (node: string): boolean
  /** The validators this coordinator can ask now (none: it checks every delivery itself). */
  validators? (self: string): string[]
  /** Transfers of this coordinator not yet completed or failed, as a counter the engine keeps current (gates the overseer tick, see below). */
  liveTransfers (coordinator: string): { n: number }
  /** Finished transfers' rows leave every store (sim/store.ts). */
  finished?: FinishedTransfers
}

/**
 * The coordinator's overseer tick does nothing while the coordinator has no transfer in progress
 * (it walks its active transfers, and there are none). At 100 coordinators over 24 simulated hours
 * those empty ticks are most of the simulation's messages, so the simulator skips them; every tick
 * of a coordinator with work runs as in the node.
 */
function gatedClock (clock: Env['clock'], live: () => boolean): Env['clock'] {
  return {
    now: () => clock.now(),
    setTimer: (ms, fn) => clock.setTimer(ms, fn),
    every: (ms, fn) => clock.every(ms, () => { if (live()) fn() })
  }
}

/** The gate reads a counter (it runs for every coordinator every second of the run). */
const gateOpen = (live: { n: number }) => (): boolean => live.n > 0

const ORCHESTRATOR_ROUTES = inboundByType(ORCHESTRATOR_INBOUND)
const WORKER_ROUTES = inboundByType(WORKER_INBOUND)

export function startOrchestratorNode (index: number, id: string, w: OrchestratorWiring): SimOrchestrator {
  const system = startSystem()
  const store = new SimStore(w.finished)
  let router: Router | null = null
  let coordinator: Coordinator | null = null
  // Every sim node is ours: a sender is a worker or an orchestrator, as the model says.
  const inbound = (m: SimEnvelope): void => {
    deliverInbound(ORCHESTRATOR_ROUTES, { router: router!.ref, coordinator: coordinator!.ref }, { type: m.type, from: m.from, body: m.body, role: w.isWorker(m.from) ? 'worker' : w.isValidator?.(m.from) === true ? 'validator' : 'orchestrator' })
  }
  const net = w.hub.register(id, inbound)
  router = startRouter(system, { env: w.env, self: id, net, store })
  coordinator = startCoordinator(system, {
    env: { ...w.env, clock: gatedClock(w.env.clock, gateOpen(w.liveTransfers(id))) }, self: id, net, store, blobs: w.blobs,
    driverFor: async (destinationId) => w.destination(destinationId),
    candidates: async () => w.candidates(id),
    signSource: (transferId, index, attemptId, expiresAt) => {
      const path = `/data/${transferId}/${index}?attempt=${attemptId}&exp=${expiresAt}`
      return { url: `sim://${id}${path}`, path }
    },
    onEvent: (e) => w.onEvent(id, e),
    // No data endpoint here: no read of a chunk is reported, so none can tell the overseer a move never
    // began; nor a sink that reports its refusals for room (a simulated destination refuses none).
    config: { readsReported: false, sinkRefusalsReported: false },
    ...(w.validators !== undefined ? { validators: () => w.validators!(id) } : {})
  })
  return { index, id, system, store, net, router, coordinator }
}

export function startWorkerNode (model: WorkerModel, env: Env, hub: SimHub, mover: SimChunkMover, slots: number): SimWorker {
  const system = startSystem()
  let worker: Worker | null = null
  const inbound = (m: SimEnvelope): void => {
    deliverInbound(WORKER_ROUTES, { worker: worker!.ref }, { type: m.type, from: m.from, body: m.body, role: 'orchestrator' })
  }
  const net = hub.register(model.id, inbound)
  worker = startWorker(system, { env, self: model.id, net, mover, slots, attachTo: model.orchestrator, faults: { corrupt: model.corrupting } })
  return { model, system, worker }
}

export function stopNode (n: { system: SystemRef }): void { stopActor(n.system) }
