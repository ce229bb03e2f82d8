// The coordinator actor: one mailbox in front of the pure TransferState (state.ts). For every transfer
// created on this orchestrator it records the staged chunks, plans their delivery across orchestrators
// weighted by routing score, sends offer batches, checks every reported delivery against the
// destination, recovers stalled or failed work (the overseer), completes the destination object on
// finalize, and cancels.
//
// The handler applies one input to the state and queues the resulting rows; they are written with the
// rows of the messages handled meanwhile (a group commit, step-writer.ts), and each step's effects run
// once its rows are durable. Destination calls (begin, check, complete, abort) and staging cleanup run outside the
// mailbox (io.ts), in a bounded queue per destination kind, and report back by message: one slow destination
// never holds up the other transfers. On start every unfinished transfer is hydrated from the store and
// driven on (docs/transfers.md#recovery-on-start).
import type { Network, Store, BlobStore } from '../ports.ts'
import { spawnSupervised, tell, type Env, type Ref, type Reply } from '../runtime.ts'
import { randomOf } from '../random.ts'
import type { DestinationDriver, UploadState } from '../destination.ts'
import type { TaskAssigned, RelayedAccept, TaskOffer, TaskResult, TaskProgress, VerifyVerdict } from '../../protocol/index.ts'
import { TERMINAL, type TransferRow } from './model.ts'
import {
  TransferState, OVERSEER_TICK_MS, OFFER_TTL_MS,
  type CoordinatorConfig, type CoordinatorEvent, type Effect, type FaultPoint, type OrchestratorCandidate, type Outcome, type Step, type ReadPhase
} from './state.ts'
import { startIo, loadTransfer } from './io.ts'
import { prefixRange } from '../store.ts'
import type { WorkerStandingRow } from './worker-standing.ts'
import { TransferEventLog } from './events.ts'
import { StepWriter } from './step-writer.ts'
import type { Attachment, TransferEvent } from '../../protocol/index.ts'

export {
  WAVE_TIMEOUT_MS, RESULT_GAP_MS, OVERSEER_TICK_MS, DISPATCH_DEBOUNCE_MS, OFFER_TTL_MS, MAX_ATTEMPTS_PER_TASK, MAX_STALLS_PER_TASK,
  MAX_OFFERS_PER_BATCH, COMPLETE_RETRY_MS, VERIFY_TIMEOUT_MS, DEFAULT_COORDINATOR_CONFIG, TransferState
} from './state.ts'
export type { OrchestratorCandidate, CoordinatorConfig, CoordinatorEvent, Outcome, FaultPoint, ReadPhase } from './state.ts'
export { DEFAULT_IO_CONCURRENCY, freeStaging, loadTransfer } from './io.ts'

export interface CoordinatorDeps {
  env: Env
  self: string
  net: Network
  store: Store
  blobs: BlobStore
  /** The driver of a transfer's destination (holds its credentials). */
  driverFor (destinationId: string): Promise<DestinationDriver>
  /** Orchestrators that can take work now, this one included, with their routing scores. */
  candidates (): Promise<OrchestratorCandidate[]>
  /** Signs the data-endpoint path of one chunk for one attempt; returns { url, path }. */
  signSource (transferId: string, chunkIndex: number, attemptId: string, expiresAt: number): { url: string, path: string }
  config?: Partial<CoordinatorConfig>
  /** Validators connected now (hotkeys); deliveries are verified by one of them when any is. */
  validators?: () => string[]
  /**
   * Whether a delivery relayed by orchestrator `from` carries its worker's own signed result for this
   * coordinator (node/verify-evidence.ts checkWorkerClaim); a delivery without one is refused. Absent
   * (the simulator, which signs nothing): every delivery counts as claimed.
   */
  workerClaimed?: (from: string, result: TaskResult, relayedAt?: number) => boolean
  /**
   * Whether an accept relayed by orchestrator `from` carries its worker's own signed word for this
   * coordinator (node/verify-evidence.ts checkWorkerAccept); a stall strikes a worker only on one.
   * Absent (the simulator): every accept counts as said.
   */
  workerAccepted?: (from: string, accept: RelayedAccept) => boolean
  /** Signs an offer's terms with this node's key (protocol/offer-signature.ts); absent in the simulator. */
  signOffer?: (offer: TaskOffer) => string
  /** The attachment a worker without registration answers with, for verify requests naming it. */
  attachmentOf?: (worker: string) => Attachment | undefined
  /**
   * When the oldest frame the node received and has not read yet arrived (env.clock), or null when none
   * waits: the overseer counts no stall time past it (a worker's progress report may be among them).
   */
  unreadSince?: () => number | null
  /** Hook for evidence consumers (validators, telemetry): every settled attempt and transfer change. */
  onEvent?: (event: CoordinatorEvent) => void
  /**
   * Transfer events (status and chunk changes, numbered per transfer), once they are durable. Only a
   * coordinator with this consumer records them (the node does; the simulator does not need them).
   */
  onTransferEvents?: (events: TransferEvent[]) => void
  /** Destination calls of one kind at once (default 8). */
  ioConcurrency?: number
  /** Test-only crash points (docs/transfers.md#recovery-on-start): called where a crash test stops the process. */
  faultPoint?: (point: FaultPoint) => void
}

/** The answer to a staged chunk: a repeat of a recorded one, or newly recorded (with the new count). */
export interface ChunkRecorded { duplicate: boolean, chunksReceived?: number }

export type CoordinatorMsg =
  | { type: 'start' }
  | { type: 'create', row: TransferRow, reply: Reply<Outcome<TransferRow>> }
  | { type: 'chunk', transferId: string, index: number, sha256: string, md5: string, length: number, reply: Reply<Outcome<ChunkRecorded>> }
  | { type: 'finalize', transferId: string, reply: Reply<Outcome<TransferRow>> }
  | { type: 'cancel', transferId: string, reply: Reply<Outcome<TransferRow>> }
  | { type: 'assigned', from: string, body: TaskAssigned }
  | { type: 'accepted', from: string, body: RelayedAccept }
  /** A response of an attempt's chunk from this node's data endpoint (HTTP or bulk) began, ended whole, or was cut. */
  | { type: 'read', transferId: string, attemptId: string, phase: ReadPhase }
  /** This node's own sink refused a PUT of an attempt's chunk for room (507). */
  | { type: 'sink_full', uploadId: string, index: number, attemptNo: number }
  /** `evidence`: the orchestrator's signed result frame, forwarded to the validator (peer trust, docs/security.md#peers). */
  | { type: 'result', from: string, body: TaskResult, evidence?: Uint8Array, /** The relaying frame's signed time. */ relayedAt?: number }
  | { type: 'progress', from: string, body: TaskProgress }
  | { type: 'verdict', from: string, body: VerifyVerdict }
  /** `readThrough`: when the oldest frame then unread arrived (unreadSince), read as the tick was sent. */
  | { type: 'overseer', readThrough?: number }
  // Reports from timers and from destination work outside the mailbox:
  | { type: 'dispatch', transferId: string }
  | { type: 'planned', transferId: string, candidates: OrchestratorCandidate[] }
  | { type: 'begun', transferId: string, destinationId: string, upload: UploadState | null, error: string | null, attributable?: boolean }
  /** `inconclusive`: the check itself failed (the destination errored): no verdict on the worker. */
  | { type: 'checked', transferId: string, attemptId: string, ok: boolean, reason: string | null, inconclusive?: boolean }
  | { type: 'completed-upload', transferId: string, ok: boolean, retry: boolean, redeliver: number[], error: string | null, storedName?: string | null }
  | { type: 'complete-retry', transferId: string }
  | { type: 'aborted', transferId: string }
  | { type: 'cleaned', transferId: string }

export interface Coordinator {
  ref: Ref<CoordinatorMsg>
  stop (): void
  /** Transfers held in memory now (terminal ones leave). */
  active (): number
  /** Destination calls queued or running. */
  ioPending (): number
}

interface State { core: TransferState, started: boolean }

const NO_EVENTS = { ops: [], events: [] }

export function startCoordinator (parent: Ref<any>, deps: CoordinatorDeps): Coordinator {
  const { env, store, net } = deps
  const log = env.logger.child({ component: 'coordinator' })
  let self: Ref<CoordinatorMsg>
  let current: TransferState | null = null
  // One writer for the coordinator's life: after a crash the new state waits for the old one's writes.
  const writer = new StepWriter(store,
    () => { tell(self, { type: 'start' }) }, // the next message finds the writer failed and restarts the actor
    (err) => { log.warn({ err }, 'a step\'s effects failed') })
  const newEventLog = (): TransferEventLog | null => deps.onTransferEvents === undefined ? null : new TransferEventLog(store, async () => { await writer.idle() })
  let events = newEventLog()
  let processStart = true
  const io = startIo({ deps, log, tell: (msg) => tell(self, msg), isLive: (id) => current?.isLive(id) === true, offerTtlMs: () => current?.config.offerTtlMs ?? OFFER_TTL_MS })

  function perform (e: Effect): void {
    switch (e.kind) {
      case 'send': net.send(e.to, e.type, e.body as never); break
      case 'emit': try { deps.onEvent?.(e.event) } catch (err) { log.warn({ err }, 'event consumer failed') } break
      case 'log': log[e.level](e.obj, e.msg); break
      case 'timer': env.clock.setTimer(e.ms, () => tell(self, e.msg)); break
      case 'candidates':
        deps.candidates().then(
          candidates => tell(self, { type: 'planned', transferId: e.transferId, candidates }),
          (err: Error) => { log.warn({ err: err.message }, 'candidates unavailable'); tell(self, { type: 'planned', transferId: e.transferId, candidates: [] }) })
        break
      case 'io': io.run(e.job); break
      case 'reply': e.reply.resolve(e.value); break
      case 'fault': deps.faultPoint?.(e.point); break
    }
  }

  /**
   * Queues the step's rows with the transfer events they amount to (one write); once they are durable,
   * publishes the events, runs its effects (crash points first), then answers. A failed write answers
   * with its error and runs nothing.
   */
  async function run (step: Step, reply?: Reply<Outcome<any>>, sync = false): Promise<void> {
    let ops = step.ops
    let recorded: Awaited<ReturnType<TransferEventLog['record']>> = NO_EVENTS
    if (ops.length > 0 && events !== null) {
      try { recorded = await events.record(ops, env.clock.now()) } catch (err) { reply?.reject(err as Error); throw err }
      if (recorded.ops.length > 0) ops = [...ops, ...recorded.ops]
    }
    writer.write(ops, (err) => {
      if (err !== null) { reply?.reject(err); return }
      if (recorded.events.length > 0) {
        try { deps.onTransferEvents?.(recorded.events) } catch (err) { log.warn({ err }, 'transfer event consumer failed') }
      }
      for (const e of step.effects) if (e.kind === 'fault') perform(e)
      for (const e of step.effects) if (e.kind !== 'fault') perform(e)
      if (reply !== undefined && step.reply !== undefined) reply.resolve(step.reply)
    }, sync)
  }

  /** Loads every transfer of this coordinator that is unfinished or not cleaned up. */
  async function hydrateAll (state: State): Promise<void> {
    state.started = true
    // The state this replaces may still have rows on their way (or a failed write): read after them.
    await writer.idle()
    writer.reset()
    const atProcessStart = processStart
    processStart = false
    // What this coordinator holds against workers (their strikes and cool-downs) outlives restarts.
    const standings: WorkerStandingRow[] = []
    for await (const [, row] of store.table<WorkerStandingRow>('workers').entries(prefixRange('standing/'))) standings.push(row)
    state.core.loadStanding(standings)
    for await (const [id, row] of store.table<TransferRow>('transfers').entries()) {
      if (row.coordinator_id !== deps.self || (TERMINAL.has(row.status) && row.cleanup_pending !== true)) continue
      const h = await loadTransfer(store, id, row)
      await run(state.core.hydrate(h, env.clock.now(), { processStart: atProcessStart }))
    }
  }

  /** The stored row of a transfer not in memory, read once every queued step is written. */
  const stored = async (core: TransferState, id: string): Promise<TransferRow | undefined> => {
    if (core.get(id) !== undefined) return undefined
    await writer.idle()
    return await store.table<TransferRow>('transfers').get(id)
  }

  const handler = async (state: State, msg: CoordinatorMsg): Promise<State> => {
    // After a restart (or a crash reset) the state starts empty: hydrate before anything else.
    if (!state.started) await hydrateAll(state)
    // A write failed: the state in memory is ahead of the store. Restart from the store.
    if (writer.failed !== null) {
      if ('reply' in msg) msg.reply.reject(writer.failed)
      throw writer.failed
    }
    const core = state.core
    const now = env.clock.now()
    switch (msg.type) {
      case 'start': return state
      // What a client is told is stored (its transfer, a chunk, the finalize, a cancel) survives a machine crash.
      case 'create': events?.fresh(msg.row); await run(core.create(msg.row, now), msg.reply, true); return state
      case 'chunk': await run(core.chunk(msg, now, await stored(core, msg.transferId)), msg.reply, true); return state
      case 'finalize': await run(core.finalize(msg.transferId, now, await stored(core, msg.transferId)), msg.reply, true); return state
      case 'cancel': await run(core.cancel(msg.transferId, msg.reply, now, await stored(core, msg.transferId)), msg.reply, true); return state
      case 'assigned': await run(core.assigned(msg.from, msg.body, now)); return state
      case 'read': core.read(msg.transferId, msg.attemptId, msg.phase); return state // nothing to write or send
      case 'sink_full': core.sinkFull(msg.uploadId, msg.index, msg.attemptNo); return state // nor here
      case 'accepted': {
        const proved = deps.workerAccepted
        await run(core.accepted(msg.from, msg.body, proved === undefined ? undefined : () => proved(msg.from, msg.body)))
        return state
      }
      case 'result': {
        const claimed = deps.workerClaimed
        await run(core.result(msg.from, msg.body, now, deps.validators?.() ?? [], msg.evidence, claimed === undefined ? undefined : () => claimed(msg.from, msg.body, msg.relayedAt)))
        return state
      }
      case 'progress': await run(core.progress(msg.from, msg.body, now)); return state
      case 'verdict': await run(core.verdict(msg.from, msg.body, now)); return state
      case 'overseer': await run(core.tick(now, msg.readThrough)); return state
      case 'dispatch': await run(core.dispatch(msg.transferId)); return state
      case 'planned': await run(core.planned(msg.transferId, msg.candidates, now)); return state
      case 'begun': await run(core.begun(msg.transferId, msg.destinationId, msg.upload, msg.error, now, msg.attributable === true)); return state
      case 'checked': await run(core.checked(msg.transferId, msg.attemptId, msg.ok, msg.reason, now, msg.inconclusive === true)); return state
      case 'completed-upload': await run(core.completedUpload(msg, now)); return state
      case 'complete-retry': await run(core.completeRetry(msg.transferId)); return state
      case 'aborted': await run(core.aborted(msg.transferId, now)); return state
      case 'cleaned': {
        await writer.idle()
        const row = await store.table<TransferRow>('transfers').get(msg.transferId)
        if (row !== undefined && row.cleanup_pending === true && TERMINAL.has(row.status)) await store.batch([{ type: 'put', table: 'transfers', key: row.id, value: { ...row, cleanup_pending: false } }])
        return state
      }
    }
  }

  const random = randomOf(env)
  const init = (): State => {
    current = new TransferState({ self: deps.self, config: deps.config, newId: random.uuid })
    events = newEventLog()
    return { core: current, started: false }
  }
  self = spawnSupervised<State, CoordinatorMsg>(parent, 'coordinator', env, init, handler)
  tell(self, { type: 'start' })
  // Judged through the tick's sending, or the oldest frame then unread: a report read after it may still
  // wait behind it in this mailbox.
  const ticker = env.clock.every(OVERSEER_TICK_MS, () => {
    const sent = env.clock.now()
    const unread = deps.unreadSince?.() ?? null
    tell(self, { type: 'overseer', readThrough: unread === null ? sent : Math.min(sent, unread) })
  })
  return {
    ref: self,
    stop: () => ticker.cancel(),
    active: () => current?.size ?? 0,
    ioPending: () => io.pending()
  }
}
