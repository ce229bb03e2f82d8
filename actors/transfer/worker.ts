// The worker: attaches to one orchestrator, queues its offers (`slots` moves at once, shared between
// the coordinators whose chunks they are: nextToRun), moves each chunk through the ChunkMover port
// (pull from the coordinator, write to the destination, hash) and reports the result. Moving bytes is
// I/O, so it runs outside the handler and reports back. While it
// moves, it tells its orchestrator how far each chunk got (task_progress, at most every
// PROGRESS_INTERVAL_MS, only for chunks that moved): the coordinator judges a worker by progress, so a
// slow but steady link keeps its work (docs/transfers.md#overseer).
import type { Network } from '../ports.ts'
import { spawnSupervised, tell, type Env, type Ref } from '../runtime.ts'
import { randomOf } from '../random.ts'
import type { TaskOffer, TaskOfferMsg, TaskResultAck, TaskCancel, TaskProgress } from '../../protocol/index.ts'

export const PROGRESS_INTERVAL_MS = 250 // a worker reports progress at most 4 times a second
const MAX_PROGRESS_ITEMS = 1024 // per report (the message's limit)

/**
 * How many of a worker's moves one coordinator other than its own orchestrator may run at once while no
 * slot would stay free: half its slots, rounded up. Past its share it may take a slot only while another
 * stays free after it, so a coordinator alone at a worker runs all slots but one, and never takes the last
 * free one: the next coordinator to come, or the worker's own orchestrator, starts at once, and the slots
 * that free then go to others first. A coordinator whose source sends slowly (1 MiB a minute holds a slot
 * for as many minutes as its chunk has MiB) so cannot keep others' work queued behind it
 * (docs/security.md#peers). The worker's own orchestrator, which it chose, may use every slot.
 */
export function foreignShare (slots: number): number {
  return Math.ceil(slots / 2)
}

/**
 * Which waiting offer takes the next free slot, by its index in `waiting` (arrival order), or -1 when
 * none may start now. The coordinator with the fewest moves running goes first (the earliest offer
 * among equals, so one coordinator's offers run in the order they came); a coordinator other than the
 * worker's own orchestrator (`foreign`) past its `foreignShare` starts only if a slot stays free after it.
 */
export function nextToRun (waiting: ReadonlyArray<{ coordinator: string, foreign: boolean }>, running: ReadonlyMap<string, number>, slots: number): number {
  const share = foreignShare(slots)
  let busy = 0
  for (const n of running.values()) busy += n
  const spare = busy + 1 < slots
  let best = -1
  let bestRunning = Infinity
  for (let i = 0; i < waiting.length; i++) {
    const w = waiting[i]!
    const n = running.get(w.coordinator) ?? 0
    if (n >= bestRunning || (w.foreign && n >= share && !spare)) continue
    best = i; bestRunning = n
    if (n === 0) break
  }
  return best
}

export interface MoveOptions {
  signal: AbortSignal
  corrupt: boolean
  /**
   * The offer is the worker's own orchestrator's (its coordinator is the node the worker chose): that
   * node's data endpoint and sink may be on this very host (node/adapters/chunk-mover.ts).
   */
  fromOwnOrchestrator?: boolean
  /** Called once the move has begun, with a reading of the bytes that went on towards the destination so far. */
  progress?: (bytesSoFar: () => number) => void
}

/** The I/O of one delivery: real HTTP and swarm in the node, modelled bytes in the simulator. */
export interface ChunkMover {
  move (offer: TaskOffer, opts: MoveOptions): Promise<{ sha256: string, etag: string | null, bytes: number, via: 'http' | 'bulk' }>
}

export interface WorkerFaults {
  /** Test-only: flip a byte of every chunk before writing it and report the staged hash anyway. */
  corrupt?: boolean
  /** Test-only: accept every offer and never move it (no progress, no result), as a griefing worker would. */
  stall?: boolean
}

export type WorkerMsg =
  | { type: 'orchestrator-up', hotkey: string }
  | { type: 'orchestrator-down', hotkey: string }
  | { type: 'attached', from: string, session: string }
  | { type: 'displaced', from: string, session: string }
  | { type: 'offer', from: string, body: TaskOfferMsg }
  | { type: 'moved', run: number, attemptId: string, ok: boolean, sha256: string | null, etag: string | null, bytes: number, via: 'http' | 'bulk' | null, error: string | null, startedAt: number }
  | { type: 'ack', from: string, body: TaskResultAck }
  | { type: 'cancel', from: string, body: TaskCancel }
  | { type: 'report-progress' }

interface InFlight {
  offer: TaskOffer
  controller: AbortController
  orchestrator: string
  /** The mover's reading of the bytes moved so far, once the move began; and what was last reported. */
  moved: (() => number) | null
  reported: number
  /** The offer's coordinator, and whether it is another than the worker's own orchestrator. */
  coordinator: string
  foreign: boolean
}
interface State {
  orchestrator: string | null
  session: string | null
  attached: boolean
  displaced: boolean
  known: string[]
  inflight: Map<string, InFlight>
  /** Accepted work not yet moving, in arrival order (nextToRun picks from it). */
  waiting: InFlight[]
  /** Bytes moved in this session, all chunks together (reported with every progress report). */
  movedTotal: number
}

export interface WorkerDeps {
  env: Env
  self: string
  net: Network
  mover: ChunkMover
  slots: number
  /** Orchestrator to attach to; null: the first one met. */
  attachTo: string | null
  faults?: WorkerFaults
}

export interface Worker { ref: Ref<WorkerMsg>, load (): number, orchestrator (): string | null }

export function startWorker (parent: Ref<any>, deps: WorkerDeps): Worker {
  const { env, net } = deps
  const log = env.logger.child({ component: 'worker' })
  const random = randomOf(env)
  // The moves under way, by run: kept across a restart of the actor, since they go on until they settle.
  // A restart aborts them (their results would find no work to report to), and they free their slots as they settle.
  const running = new Map<number, { coordinator: string, controller: AbortController }>()
  const byCoordinator = new Map<string, number>()
  let runs = 0
  let self: Ref<WorkerMsg>
  let load = 0
  let current: string | null = null
  // Progress reports run only while something is in flight.
  let ticker: { cancel (): void } | null = null
  const watchProgress = (state: State): void => {
    if (state.inflight.size > 0 && ticker === null) ticker = env.clock.every(PROGRESS_INTERVAL_MS, () => tell(self, { type: 'report-progress' }))
    else if (state.inflight.size === 0 && ticker !== null) { ticker.cancel(); ticker = null }
  }

  const attach = (state: State): void => {
    if (state.attached || state.displaced || state.orchestrator !== null) return
    const target = deps.attachTo ?? state.known[0]
    if (target === undefined || !state.known.includes(target)) return
    state.orchestrator = target
    state.session = random.uuid()
    if (!net.send(target, 'worker_attach', { session: state.session, slots: deps.slots })) state.orchestrator = null
  }

  const abortAll = (state: State): void => {
    for (const f of state.inflight.values()) f.controller.abort()
    state.inflight.clear()
    state.waiting = []
    load = 0
    watchProgress(state)
  }

  /** Starts waiting moves while slots are free (nextToRun's order and limits); each reports `moved` when it settles. */
  const startMoves = (state: State): void => {
    while (running.size < deps.slots && state.waiting.length > 0) {
      const i = nextToRun(state.waiting, byCoordinator, deps.slots)
      if (i === -1) return
      const flight = state.waiting.splice(i, 1)[0]!
      const { offer, controller } = flight
      const run = ++runs
      running.set(run, { coordinator: flight.coordinator, controller })
      byCoordinator.set(flight.coordinator, (byCoordinator.get(flight.coordinator) ?? 0) + 1)
      const corrupt = deps.faults?.corrupt === true
      const startedAt = env.clock.now()
      void (async () => {
        try {
          const r = await deps.mover.move(offer, { signal: controller.signal, corrupt, fromOwnOrchestrator: !flight.foreign, progress: (read) => { flight.moved = read } })
          // A corrupting worker lies: it reports the hash it was asked for, not what it wrote.
          tell(self, { type: 'moved', run, attemptId: offer.attemptId, ok: true, sha256: corrupt ? offer.sha256 : r.sha256, etag: r.etag, bytes: r.bytes, via: r.via, error: null, startedAt })
        } catch (err) {
          const e = err as Error & { code?: unknown }
          // Only a string code is a reason (a DOMException's is a number): otherwise the message says what happened.
          const reason = typeof e.code === 'string' ? e.code : String(e.message)
          tell(self, { type: 'moved', run, attemptId: offer.attemptId, ok: false, sha256: null, etag: null, bytes: 0, via: null, error: controller.signal.aborted ? 'cancelled' : reason.slice(0, 200), startedAt })
        }
      })()
    }
  }

  const handler = async (state: State, msg: WorkerMsg): Promise<State> => {
    switch (msg.type) {
      case 'orchestrator-up': {
        if (!state.known.includes(msg.hotkey)) state.known.push(msg.hotkey)
        attach(state)
        return state
      }
      case 'orchestrator-down': {
        state.known = state.known.filter(h => h !== msg.hotkey)
        if (state.orchestrator === msg.hotkey) {
          log.info({ orchestrator: msg.hotkey }, 'orchestrator lost; its offers are dropped')
          abortAll(state)
          state.orchestrator = null; state.session = null; state.attached = false; current = null
          attach(state)
        }
        return state
      }
      case 'attached': {
        if (msg.from !== state.orchestrator || msg.session !== state.session) return state
        state.attached = true
        current = msg.from
        log.info({ orchestrator: msg.from, slots: deps.slots, event: 'attached' }, 'attached to orchestrator')
        return state
      }
      case 'displaced': {
        if (msg.from !== state.orchestrator || msg.session !== state.session) return state
        log.warn({ orchestrator: msg.from, event: 'session_displaced' }, 'another session of this hotkey took over; stopping')
        abortAll(state)
        state.displaced = true; state.attached = false; current = null
        return state
      }
      case 'offer': {
        const offer = msg.body.offer
        if (msg.from !== state.orchestrator || !state.attached || state.inflight.has(offer.attemptId)) return state
        const controller = new AbortController()
        const flight: InFlight = { offer, controller, orchestrator: msg.from, moved: null, reported: 0, coordinator: offer.source.coordinator, foreign: offer.source.coordinator !== msg.from }
        state.inflight.set(offer.attemptId, flight)
        load = state.inflight.size
        watchProgress(state)
        // Its own word that it holds the work, for the coordinator: a stall is held against it only on this.
        net.send(msg.from, 'task_accepted', { transferId: offer.transferId, attemptId: offer.attemptId, taskId: offer.taskId, worker: deps.self, coordinator: offer.source.coordinator })
        if (deps.faults?.stall === true) return state // holds the offer, never moves it
        state.waiting.push(flight)
        startMoves(state)
        return state
      }
      case 'moved': {
        const slot = running.get(msg.run)
        if (slot !== undefined) {
          running.delete(msg.run)
          const n = (byCoordinator.get(slot.coordinator) ?? 1) - 1
          if (n > 0) byCoordinator.set(slot.coordinator, n)
          else byCoordinator.delete(slot.coordinator)
        }
        startMoves(state)
        const f = state.inflight.get(msg.attemptId)
        if (f === undefined) return state // cancelled meanwhile
        state.inflight.delete(msg.attemptId)
        load = state.inflight.size
        watchProgress(state)
        if (msg.error === 'cancelled') return state
        net.send(f.orchestrator, 'task_result', {
          taskId: f.offer.taskId, attemptId: f.offer.attemptId, transferId: f.offer.transferId, worker: deps.self, success: msg.ok,
          bytes: msg.bytes, durationMs: Math.max(0, env.clock.now() - msg.startedAt), sha256: msg.sha256, etag: msg.etag, error: msg.error, via: msg.via,
          coordinator: f.offer.source.coordinator
        })
        if (!msg.ok) log.warn({ transferId: f.offer.transferId, chunk: f.offer.chunkIndex, error: msg.error }, 'delivery failed')
        return state
      }
      case 'ack': {
        if (msg.body.status === 'failed' || msg.body.status === 'rejected') log.info({ attemptId: msg.body.attemptId, status: msg.body.status, reason: msg.body.reason }, 'result not accepted')
        return state
      }
      case 'cancel': {
        if (msg.from !== state.orchestrator) return state
        for (const id of msg.body.attemptIds) {
          const f = state.inflight.get(id)
          if (f === undefined) continue
          f.controller.abort()
          state.inflight.delete(id)
        }
        state.waiting = state.waiting.filter(f => state.inflight.has(f.offer.attemptId))
        load = state.inflight.size
        watchProgress(state)
        return state
      }
      case 'report-progress': {
        // Every orchestrator held work through hears the session's total; each gets its own chunks' bytes.
        const byOrchestrator = new Map<string, TaskProgress['attempts']>()
        let grew = false
        for (const f of state.inflight.values()) {
          if (!byOrchestrator.has(f.orchestrator)) byOrchestrator.set(f.orchestrator, [])
          if (f.moved === null) continue
          const bytes = Math.min(f.offer.length, Math.max(0, Math.floor(f.moved())))
          if (bytes <= f.reported) continue
          state.movedTotal += bytes - f.reported
          f.reported = bytes
          grew = true
          const list = byOrchestrator.get(f.orchestrator)!
          if (list.length < MAX_PROGRESS_ITEMS) list.push({ transferId: f.offer.transferId, attemptId: f.offer.attemptId, bytes })
        }
        if (!grew) return state
        for (const [orchestrator, attempts] of byOrchestrator) net.send(orchestrator, 'task_progress', { worker: deps.self, moved: state.movedTotal, attempts })
        return state
      }
    }
  }

  self = spawnSupervised<State, WorkerMsg>(parent, 'worker', env, () => {
    current = null
    ticker?.cancel(); ticker = null
    for (const r of running.values()) r.controller.abort()
    return { orchestrator: null, session: null, attached: false, displaced: false, known: [], inflight: new Map(), waiting: [], movedTotal: 0 }
  }, handler)
  return { ref: self, load: () => load, orchestrator: () => current }
}
