// The orchestrator's side of delivery: it keeps its workers' sessions, gives every offer of a batch
// to one of them (least loaded, round-robin on ties, avoiding workers that already failed the task),
// relays progress reports and results to the coordinator and acknowledgements back. Workers the
// coordinator excluded for a cool-down (the batch's `excludedWorkers`) get none of its offers. A worker that disconnects, or whose
// hotkey opens a newer session, has its in-flight attempts reported as failed so the coordinator
// reassigns them at once.
import type { Network, Store } from '../ports.ts'
import { spawnSupervised, tell, type Env, type Ref } from '../runtime.ts'
import { isoFromMs } from '../domain/chain-time.ts'
import { MAX_WORKER_CLAIM_CHARS, MAX_WORKER_ACCEPT_CHARS, MAX_ACCEPTS_PER_BATCH, type RelayedAccept, type TaskOfferBatch, type TaskAccepted, type TaskResult, type TaskProgress, type TaskResultAck, type TaskCancel, type WorkerAttach } from '../../protocol/index.ts'
import { keys, type OfferBatchRow } from './model.ts'
import { addStrike, isExcluded, type WorkerStandingRow } from './worker-standing.ts'

export interface WorkerRow {
  worker_id: string
  hotkey: string
  orchestrator_id: string
  session: string
  status: 'active' | 'displaced' | 'offline'
  slots: number
  attached_at: string
  detached_at: string | null
}

export type RouterMsg =
  | { type: 'attach', from: string, body: WorkerAttach }
  | { type: 'detach', worker: string }
  | { type: 'batch', from: string, body: TaskOfferBatch }
  /** `claim`: the worker's signed frame of this result, relayed with it (absent in the simulator, which signs nothing). */
  | { type: 'result', from: string, body: TaskResult, claim?: Uint8Array }
  /** `word`: the worker's signed frame of this accept, relayed with it (absent in the simulator). */
  | { type: 'accepted', from: string, body: TaskAccepted, word?: Uint8Array }
  | { type: 'progress', from: string, body: TaskProgress }
  | { type: 'ack', from: string, body: TaskResultAck }
  | { type: 'cancel', from: string, body: TaskCancel }
  /** Timers: offers whose accept is due (again shortly while older frames wait unread), and accepts gathered for relay. */
  | { type: 'accepts-due' }
  | { type: 'flush-accepts' }

/**
 * How long a worker has to accept an offer (its `task_accepted`) before this orchestrator takes the offer
 * back and holds it against the worker: an honest worker answers on receipt, within a round trip. Longer
 * than a dead connection takes to be noticed, so a worker whose link died is detached, not struck.
 */
export const ACCEPT_TIMEOUT_MS = 30_000
/** How long accepts wait to be relayed together, one frame per coordinator. */
export const ACCEPT_RELAY_MS = 20

interface Session { session: string, slots: number, inflight: Set<string> }
/** `accepted`: its worker answered the offer (an accept, progress on it, or a result). */
interface Route { coordinator: string, transferId: string, taskId: string, worker: string, accepted?: true }
/**
 * `list`: the sessions as an array, kept until the next attach or detach (a batch walks it per offer).
 * `awaiting`: routed offers in the order their accepts fall due; `outbox`: accepts to relay, by
 * coordinator; `standing`: what this orchestrator holds against its own workers (offers not taken in
 * time), in memory: past the strike limit a worker gets none of its offers for a cool-down.
 */
interface State {
  sessions: Map<string, Session>
  routes: Map<string, Route>
  rr: number
  list?: Array<[string, Session]>
  awaiting: Array<{ attemptId: string, worker: string, due: number }>
  /** Offers cancelled (or taken back by their coordinator) before their worker accepted them: still due. */
  unanswered: Map<string, { worker: string, transferId: string }>
  outbox: Map<string, RelayedAccept[]>
  standing: Map<string, WorkerStandingRow>
}

export interface RouterDeps {
  env: Env
  self: string
  net: Network
  store: Store
  /**
   * Called when the number of workers that can take offers changes (heartbeats advertise it): those
   * attached, less those this orchestrator excluded itself for a cool-down.
   */
  onWorkersChanged?: (count: number) => void
  /** When the oldest frame received and not yet read arrived (node/messenger.ts): accepts are judged only up to it. */
  unreadSince?: () => number | null
}

/** `workers()`: the workers that can take offers now (attached, not in this orchestrator's own cool-down). */
export interface Router { ref: Ref<RouterMsg>, workers (): number }

export function startRouter (parent: Ref<any>, deps: RouterDeps): Router {
  const { env, net, store } = deps
  const log = env.logger.child({ component: 'router' })
  const iso = (): string => isoFromMs(env.clock.now())
  // The state the handler last saw (the same maps, changed in place), for workers() between messages.
  let current: State | null = null
  // The record of each routed batch is written behind the routing, in order, so a busy router routes
  // the next batch while the last one's row is written; the row is this node's account of what it
  // routed (the audit routes read it), nothing waits for it.
  let recording: Promise<void> = Promise.resolve()
  const recordBatch = (from: string, body: TaskOfferBatch, routed: OfferBatchRow['routed']): void => {
    recording = recording.then(async () => {
      const table = store.table<OfferBatchRow>('task_offer_batches')
      const key = keys.row(body.transferId, body.batchId)
      const existing = await table.get(key)
      await table.put(key, existing !== undefined
        ? { ...existing, routed }
        : { id: body.batchId, transfer_id: body.transferId, orchestrator_id: deps.self, coordinator_id: from, wave_kind: body.waveKind, task_ids: body.offers.map(o => o.taskId), attempt_ids: body.offers.map(o => o.attemptId), offered_at: iso(), routed })
    }).catch((err: unknown) => {
      if (env.stopping?.() !== true) log.warn({ err, transferId: body.transferId, batchId: body.batchId }, 'could not record a routed offer batch')
    })
  }

  const lost = (state: State, worker: string, reason: 'worker_lost' | 'session_displaced'): void => {
    const s = state.sessions.get(worker)
    if (s === undefined) return
    for (const attemptId of s.inflight) {
      const r = state.routes.get(attemptId)
      if (r === undefined) continue
      state.routes.delete(attemptId)
      net.send(r.coordinator, 'task_result', { taskId: r.taskId, attemptId, transferId: r.transferId, worker, success: false, bytes: 0, durationMs: 0, sha256: null, etag: null, error: reason, via: null })
    }
    s.inflight.clear()
    for (const [id, u] of state.unanswered) if (u.worker === worker) state.unanswered.delete(id) // its link went: nothing to hold
  }

  // One timer each for the accepts falling due and for the relay of gathered accepts.
  let dueTimer: { cancel (): void } | null = null
  let relayTimer: { cancel (): void } | null = null
  const watchAccepts = (state: State, retryMs?: number): void => {
    if (dueTimer !== null || state.awaiting.length === 0) return
    dueTimer = env.clock.setTimer(retryMs ?? Math.max(0, state.awaiting[0]!.due - env.clock.now()), () => { dueTimer = null; tell(ref, { type: 'accepts-due' }) })
  }
  const flushAccepts = (state: State, coordinator?: string): void => {
    for (const [to, accepts] of state.outbox) {
      if (coordinator !== undefined && to !== coordinator) continue
      for (let i = 0; i < accepts.length; i += MAX_ACCEPTS_PER_BATCH) net.send(to, 'task_accepts', { accepts: accepts.slice(i, i + MAX_ACCEPTS_PER_BATCH) })
      state.outbox.delete(to)
    }
  }
  const excluded = (state: State, worker: string): boolean => isExcluded(state.standing.get(worker), env.clock.now())

  /** Attached workers not in this orchestrator's own cool-down: what it can route to, as far as it knows. */
  const usable = (state: State): number => {
    let n = 0
    for (const w of state.sessions.keys()) if (!excluded(state, w)) n++
    return n
  }
  const changed = (state: State): void => { deps.onWorkersChanged?.(usable(state)) }

  const handler = async (state: State, msg: RouterMsg): Promise<State> => {
    current = state
    switch (msg.type) {
      case 'attach': {
        const prev = state.sessions.get(msg.from)
        if (prev !== undefined && prev.session !== msg.body.session) {
          log.info({ worker: msg.from, event: 'session_displaced' }, 'a newer session of the worker replaces the old one')
          lost(state, msg.from, 'session_displaced')
        }
        state.sessions.set(msg.from, { session: msg.body.session, slots: msg.body.slots, inflight: prev?.session === msg.body.session ? prev.inflight : new Set() })
        state.list = undefined
        const row: WorkerRow = { worker_id: msg.from, hotkey: msg.from, orchestrator_id: deps.self, session: msg.body.session, status: 'active', slots: msg.body.slots, attached_at: iso(), detached_at: null }
        await store.table<WorkerRow>('workers').put(`session/${msg.from}`, row)
        net.send(msg.from, 'worker_attached', { session: msg.body.session })
        log.info({ worker: msg.from, slots: msg.body.slots, event: 'worker_attached' }, 'worker attached')
        changed(state)
        return state
      }
      case 'detach': {
        if (!state.sessions.has(msg.worker)) return state
        lost(state, msg.worker, 'worker_lost')
        state.sessions.delete(msg.worker)
        state.list = undefined
        const row = await store.table<WorkerRow>('workers').get(`session/${msg.worker}`)
        if (row !== undefined) await store.table<WorkerRow>('workers').put(`session/${msg.worker}`, { ...row, status: 'offline', detached_at: iso() })
        log.info({ worker: msg.worker, event: 'worker_detached' }, 'worker detached')
        changed(state)
        return state
      }
      case 'batch': {
        const { body } = msg
        const assignments: Array<{ attemptId: string, worker: string | null }> = []
        const attached = state.list ??= [...state.sessions.entries()]
        // Workers the coordinator excluded, and workers this orchestrator excluded itself, get none.
        const theirs = body.excludedWorkers !== undefined && body.excludedWorkers.length > 0 ? new Set(body.excludedWorkers) : null
        const workers = attached.filter(([w]) => (theirs === null || !theirs.has(w)) && !excluded(state, w))
        for (const offer of body.offers) {
          // Only an offer of this batch's transfer, from its own coordinator, for an attempt not routed
          // yet: a worker could not answer for another (its accept would name other terms).
          if (offer.transferId !== body.transferId || offer.source.coordinator !== msg.from || state.routes.has(offer.attemptId) || state.unanswered.has(offer.attemptId)) {
            assignments.push({ attemptId: offer.attemptId, worker: null })
            continue
          }
          // Workers that failed the task are avoided while another can take it, not banned outright.
          let eligible = workers
          if (offer.excludeWorkers.length > 0) {
            const exclude = new Set(offer.excludeWorkers)
            eligible = workers.filter(([w]) => !exclude.has(w))
            if (eligible.length === 0) eligible = workers
          }
          let best: [string, Session] | undefined
          let bestLoad = Infinity
          for (let k = 0; k < eligible.length; k++) {
            const cand = eligible[(state.rr + k) % eligible.length]!
            const load = cand[1].inflight.size / cand[1].slots
            if (load < bestLoad) { best = cand; bestLoad = load; if (load === 0) break } // nothing is below an idle worker
          }
          state.rr++
          if (best === undefined) { assignments.push({ attemptId: offer.attemptId, worker: null }); continue }
          const [worker, session] = best
          // An offer this node could not send (the worker's frame lane full, its link gone) went to no
          // worker: the coordinator hears so at once, and the worker answers for nothing.
          if (!net.send(worker, 'task_offer', { batchId: body.batchId, offer })) { assignments.push({ attemptId: offer.attemptId, worker: null }); continue }
          session.inflight.add(offer.attemptId)
          state.routes.set(offer.attemptId, { coordinator: msg.from, transferId: body.transferId, taskId: offer.taskId, worker })
          state.awaiting.push({ attemptId: offer.attemptId, worker, due: env.clock.now() + ACCEPT_TIMEOUT_MS })
          assignments.push({ attemptId: offer.attemptId, worker })
        }
        net.send(msg.from, 'task_assigned', { transferId: body.transferId, batchId: body.batchId, assignments })
        watchAccepts(state)
        // The receiving orchestrator's record of the batch (merged into the coordinator's when both are this node).
        recordBatch(msg.from, body, assignments.map(a => ({ attempt_id: a.attemptId, worker_id: a.worker })))
        return state
      }
      case 'result': {
        const r = state.routes.get(msg.body.attemptId)
        const reject = (reason: string): State => {
          net.send(msg.from, 'task_result_ack', { taskId: msg.body.taskId, attemptId: msg.body.attemptId, worker: msg.from, received: false, status: 'rejected', reason })
          return state
        }
        if (r === undefined || r.worker !== msg.from || msg.body.worker !== msg.from) { if (state.unanswered.get(msg.body.attemptId)?.worker === msg.from) state.unanswered.delete(msg.body.attemptId); return reject('unknown_attempt') }
        r.accepted = true // it acted on the offer, whatever became of its accept
        // A worker's own frame carries no claim, and a delivery's frame goes on whole as its claim: one
        // too large to relay would make the coordinator refuse this orchestrator's frame, and blame it.
        const claim = msg.body.success && msg.claim !== undefined ? Buffer.from(msg.claim).toString('base64') : undefined
        if (msg.body.workerClaim !== undefined || (claim !== undefined && claim.length > MAX_WORKER_CLAIM_CHARS)) return reject('malformed_result')
        state.sessions.get(msg.from)?.inflight.delete(msg.body.attemptId)
        net.send(r.coordinator, 'task_result', claim !== undefined ? { ...msg.body, workerClaim: claim } : msg.body)
        return state
      }
      case 'accepted': {
        // Relayed only from the worker the attempt was routed to, for the coordinator that offered it,
        // once, with the worker's own frame whole (one too large to relay goes nowhere: the coordinator
        // would refuse the batch and blame this orchestrator). Gathered for ACCEPT_RELAY_MS, so a wave of
        // offers costs the coordinator's link a frame per 64 accepts, not one each.
        const r = state.routes.get(msg.body.attemptId)
        if (r === undefined && state.unanswered.get(msg.body.attemptId)?.worker === msg.from) { state.unanswered.delete(msg.body.attemptId); return state } // taken back meanwhile: nothing to relay
        if (r === undefined || r.accepted === true || r.worker !== msg.from) return state
        r.accepted = true // its worker answered the offer, whatever its accept says
        if (msg.body.worker !== msg.from || r.transferId !== msg.body.transferId || r.taskId !== msg.body.taskId || r.coordinator !== msg.body.coordinator) return state
        const word = msg.word !== undefined ? Buffer.from(msg.word).toString('base64') : undefined
        if (word !== undefined && word.length > MAX_WORKER_ACCEPT_CHARS) return state // padded: not relayed (its coordinator holds no stall against it then)
        const relayed: RelayedAccept = { transferId: msg.body.transferId, attemptId: msg.body.attemptId, taskId: msg.body.taskId, worker: msg.body.worker, coordinator: msg.body.coordinator, ...(word !== undefined ? { workerAccept: word } : {}) }
        const box = state.outbox.get(r.coordinator)
        if (box === undefined) state.outbox.set(r.coordinator, [relayed]); else box.push(relayed)
        if ((box?.length ?? 1) >= MAX_ACCEPTS_PER_BATCH) flushAccepts(state, r.coordinator)
        else if (relayTimer === null) relayTimer = env.clock.setTimer(ACCEPT_RELAY_MS, () => { relayTimer = null; tell(ref, { type: 'flush-accepts' }) })
        return state
      }
      case 'flush-accepts': {
        flushAccepts(state)
        return state
      }
      case 'accepts-due': {
        // Offers a worker did not answer in time: one still routed goes back to its coordinator now (as a
        // lost worker's would), and lapses are one strike on the worker here per ACCEPT_TIMEOUT_MS, however
        // many offers lapsed; past the limit this orchestrator routes it nothing for a cool-down.
        // This orchestrator's own evidence about its own worker: it costs the worker nothing elsewhere.
        // Judged only up to the oldest frame not yet read (its accept may be waiting there).
        const now = env.clock.now()
        const readThrough = Math.min(now, deps.unreadSince?.() ?? now)
        const late = new Map<string, { worker: string, transferId: string, attemptIds: string[] }>() // still routed, by worker and transfer
        const struck = new Map<string, { transferId: string, attemptId: string }>()
        let taken = 0
        while (taken < state.awaiting.length && state.awaiting[taken]!.due <= readThrough) {
          const { attemptId, worker } = state.awaiting[taken++]!
          const r = state.routes.get(attemptId)
          const u = state.unanswered.get(attemptId)
          state.unanswered.delete(attemptId)
          if (r !== undefined && r.worker === worker && r.accepted !== true) {
            state.routes.delete(attemptId)
            state.sessions.get(worker)?.inflight.delete(attemptId)
            net.send(r.coordinator, 'task_result', { taskId: r.taskId, attemptId, transferId: r.transferId, worker, success: false, bytes: 0, durationMs: 0, sha256: null, etag: null, error: 'worker_lost', via: null })
            const key = `${worker}/${r.transferId}`
            const l = late.get(key)
            if (l === undefined) late.set(key, { worker, transferId: r.transferId, attemptIds: [attemptId] }); else l.attemptIds.push(attemptId)
            if (!struck.has(worker)) struck.set(worker, { transferId: r.transferId, attemptId })
          } else if (r === undefined && u?.worker === worker && !struck.has(worker)) struck.set(worker, { transferId: u.transferId, attemptId })
        }
        state.awaiting.splice(0, taken) // once per check, not per entry
        for (const { worker, transferId, attemptIds } of late.values()) {
          log.info({ worker, transferId, attempts: attemptIds.length, event: 'offers_not_accepted' }, 'offers not taken in time; sent back to their coordinator')
          net.send(worker, 'task_cancel', { transferId, attemptIds, reason: 'not_accepted' })
        }
        for (const [worker, { transferId, attemptId }] of struck) {
          // At most one strike per worker per ACCEPT_TIMEOUT_MS: offers lapsing a second apart are one lapse.
          const lastAt = state.standing.get(worker)?.strikes.at(-1)?.at
          if (lastAt !== undefined && now - Date.parse(lastAt) < ACCEPT_TIMEOUT_MS) continue
          const { row, excluded: nowExcluded } = addStrike(state.standing.get(worker), { hotkey: worker, coordinator: deps.self, reason: 'no_accept', transferId, attemptId }, now)
          state.standing.set(worker, row)
          if (nowExcluded) changed(state) // one fewer to route to (its cool-down's end shows at the next heartbeat)
          log[nowExcluded ? 'warn' : 'info']({ worker, strikes: row.strikes.length, excludedUntil: row.excluded_until, event: nowExcluded ? 'worker_excluded' : 'worker_strike', reason: 'no_accept' }, nowExcluded ? 'worker takes no offers in time: it gets none from this orchestrator for a cool-down' : 'an offer not taken in time')
        }
        // Due entries held back by unread frames are looked at again shortly.
        watchAccepts(state, state.awaiting.length > 0 && state.awaiting[0]!.due <= now ? 100 : undefined)
        return state
      }
      case 'progress': {
        // Only the worker holding an attempt speaks for it. Every coordinator whose chunks the worker
        // holds hears its total (its queued work waits behind the others'), with its own chunks only.
        if (msg.body.worker !== msg.from) return state
        const session = state.sessions.get(msg.from)
        if (session === undefined) return state
        const byCoordinator = new Map<string, TaskProgress['attempts']>()
        for (const id of session.inflight) {
          const r = state.routes.get(id)
          if (r !== undefined && !byCoordinator.has(r.coordinator)) byCoordinator.set(r.coordinator, [])
        }
        for (const p of msg.body.attempts) {
          const r = state.routes.get(p.attemptId)
          if (r === undefined || r.worker !== msg.from || r.transferId !== p.transferId) continue
          r.accepted = true // moving it: taken, whatever became of its accept
          byCoordinator.get(r.coordinator)?.push(p)
        }
        for (const [coordinator, attempts] of byCoordinator) net.send(coordinator, 'task_progress', { worker: msg.from, moved: msg.body.moved, attempts })
        return state
      }
      case 'ack': {
        const r = state.routes.get(msg.body.attemptId)
        if (r === undefined || r.coordinator !== msg.from) return state
        state.routes.delete(msg.body.attemptId)
        net.send(r.worker, 'task_result_ack', msg.body)
        return state
      }
      case 'cancel': {
        const byWorker = new Map<string, string[]>()
        for (const id of msg.body.attemptIds) {
          const r = state.routes.get(id)
          if (r === undefined || r.coordinator !== msg.from) continue
          state.routes.delete(id)
          state.sessions.get(r.worker)?.inflight.delete(id)
          // Taken back before the worker took it (its coordinator's stall window can be shorter than the
          // accept's): the accept is still due here.
          if (r.accepted !== true) state.unanswered.set(id, { worker: r.worker, transferId: r.transferId })
          byWorker.set(r.worker, [...(byWorker.get(r.worker) ?? []), id])
        }
        for (const [w, ids] of byWorker) net.send(w, 'task_cancel', { transferId: msg.body.transferId, attemptIds: ids, reason: msg.body.reason })
        return state
      }
    }
  }

  // A restart after a crash starts empty (its workers attach again): workers() counts from the new state at once.
  const ref = spawnSupervised<State, RouterMsg>(parent, 'router', env, () => (current = { sessions: new Map(), routes: new Map(), rr: 0, awaiting: [], unanswered: new Map(), outbox: new Map(), standing: new Map() }), handler)
  return { ref, workers: () => current === null ? 0 : usable(current) }
}
