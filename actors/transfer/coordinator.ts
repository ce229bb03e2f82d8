// The coordinator actor: one mailbox in front of the pure TransferState (state.ts). For every transfer
// created on this orchestrator it records the staged chunks, plans their delivery across orchestrators
// weighted by routing score, sends offer batches, checks every reported delivery against the
// destination, recovers stalled or failed work (the overseer), completes the destination object on
// finalize, and cancels.
//
// The handler applies one input to the state, persists the resulting rows in one batch, then runs the
// effects. Destination calls (begin, check, complete, abort) and staging cleanup run outside the
// mailbox, in a bounded queue per destination kind, and report back by message: one slow destination
// never holds up the other transfers. On start every unfinished transfer is hydrated from the store and
// driven on (docs/transfers.md#recovery-on-start).
import { createHash } from 'node:crypto'
import PQueue from 'p-queue'
import type { Network, Store, BlobStore } from '../ports.ts'
import { spawnSupervised, tell, type Env, type Ref, type Reply } from '../runtime.ts'
import { collect, prefixRange } from '../store.ts'
import type { DestinationDriver, UploadState } from '../destination.ts'
import type { TaskAssigned, TaskResult, TaskOffer, VerifyVerdict } from '../../protocol/index.ts'
import { keys, TERMINAL, type TransferRow, type ChunkRow, type TaskRow, type AttemptRow, type ResultRow } from './model.ts'
import {
  TransferState, OVERSEER_TICK_MS, OFFER_TTL_MS,
  type CoordinatorConfig, type CoordinatorEvent, type Effect, type FaultPoint, type Hydration, type IoJob, type OrchestratorCandidate, type Outcome, type Step
} from './state.ts'

export {
  WAVE_TIMEOUT_MS, RESULT_GAP_MS, OVERSEER_TICK_MS, DISPATCH_DEBOUNCE_MS, OFFER_TTL_MS, MAX_ATTEMPTS_PER_TASK, MAX_STALLS_PER_TASK,
  MAX_OFFERS_PER_BATCH, COMPLETE_RETRY_MS, VERIFY_TIMEOUT_MS, DEFAULT_COORDINATOR_CONFIG, TransferState
} from './state.ts'
export type { OrchestratorCandidate, CoordinatorConfig, CoordinatorEvent, Outcome, FaultPoint } from './state.ts'

/** Destination calls of one kind (s3, http, node) running at once. */
export const DEFAULT_IO_CONCURRENCY = 8

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
  /** Hook for evidence consumers (validators, telemetry): every settled attempt and transfer change. */
  onEvent?: (event: CoordinatorEvent) => void
  /** Destination calls of one kind at once (default 8). */
  ioConcurrency?: number
  /** Test-only crash points (docs/transfers.md#recovery-on-start): called where a crash test stops the process. */
  faultPoint?: (point: FaultPoint) => void
}

export type CoordinatorMsg =
  | { type: 'start' }
  | { type: 'create', row: TransferRow, reply: Reply<Outcome<TransferRow>> }
  | { type: 'chunk', transferId: string, index: number, sha256: string, md5: string, length: number, reply: Reply<Outcome<{ duplicate: boolean }>> }
  | { type: 'finalize', transferId: string, reply: Reply<Outcome<TransferRow>> }
  | { type: 'cancel', transferId: string, reply: Reply<Outcome<TransferRow>> }
  | { type: 'assigned', from: string, body: TaskAssigned }
  | { type: 'result', from: string, body: TaskResult }
  | { type: 'verdict', from: string, body: VerifyVerdict }
  | { type: 'overseer' }
  // Reports from timers and from destination work outside the mailbox:
  | { type: 'dispatch', transferId: string }
  | { type: 'planned', transferId: string, candidates: OrchestratorCandidate[] }
  | { type: 'begun', transferId: string, destinationId: string, upload: UploadState | null, error: string | null }
  | { type: 'checked', transferId: string, attemptId: string, ok: boolean, reason: string | null }
  | { type: 'completed-upload', transferId: string, ok: boolean, retry: boolean, redeliver: number[], error: string | null }
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

export function startCoordinator (parent: Ref<any>, deps: CoordinatorDeps): Coordinator {
  const { env, store, net } = deps
  const log = env.logger.child({ component: 'coordinator' })
  const lanes = new Map<string, PQueue>()
  let self: Ref<CoordinatorMsg>
  let current: TransferState | null = null
  let processStart = true

  const lane = (kind: string): PQueue => {
    let q = lanes.get(kind)
    if (q === undefined) { q = new PQueue({ concurrency: deps.ioConcurrency ?? DEFAULT_IO_CONCURRENCY }); lanes.set(kind, q) }
    return q
  }
  /** Runs `fn` with the destination's driver in its kind's lane; errors go to `onError`. */
  const inLane = (destinationId: string, fn: (driver: DestinationDriver) => Promise<void>, onError: (err: Error & { code?: string }) => void): void => {
    deps.driverFor(destinationId).then(driver => lane(driver.kind).add(async () => await fn(driver))).catch(onError)
  }

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
      case 'io': runJob(e.job); break
      case 'reply': e.reply.resolve(e.value); break
      case 'fault': deps.faultPoint?.(e.point); break
    }
  }

  function runJob (job: IoJob): void {
    switch (job.type) {
      case 'begin':
        inLane(job.destinationId, async driver => {
          const upload = await driver.begin(job.spec)
          tell(self, { type: 'begun', transferId: job.transferId, destinationId: job.destinationId, upload, error: null })
        }, err => tell(self, { type: 'begun', transferId: job.transferId, destinationId: job.destinationId, upload: null, error: err.code ?? err.message }))
        return
      case 'offers':
        // Signing only (no destination round trip): not queued behind slow destination calls.
        void sendOffers(job).catch((err: Error) => log.warn({ transferId: job.transferId, err: err.message }, 'offers not sent; the overseer reassigns them'))
        return
      case 'verify':
        void (async () => {
          const driver = await deps.driverFor(job.check.destinationId)
          if (driver.readableBeforeComplete && driver.readTarget !== undefined) {
            const c = job.check.chunk
            const read = await driver.readTarget(job.check.upload, c.offset, c.length, env.clock.now() + (current?.config.offerTtlMs ?? OFFER_TTL_MS))
            net.send(job.validator, 'verify_request', { ...job.request, read })
          } else runJob(job.check)
        })().catch((err: Error) => { log.warn({ err: err.message }, 'verify request failed; checking directly'); runJob(job.check) })
        return
      case 'check':
        inLane(job.destinationId, async driver => {
          const problem = await checkDelivery(driver, job)
          tell(self, { type: 'checked', transferId: job.transferId, attemptId: job.attemptId, ok: problem === null, reason: problem })
        }, err => tell(self, { type: 'checked', transferId: job.transferId, attemptId: job.attemptId, ok: false, reason: `check failed: ${err.message}` }))
        return
      case 'complete':
        inLane(job.destinationId, async driver => {
          deps.faultPoint?.('before_complete')
          await driver.complete(job.upload, job.parts)
          deps.faultPoint?.('after_complete')
          tell(self, { type: 'completed-upload', transferId: job.transferId, ok: true, retry: false, redeliver: [], error: null })
        }, (err: Error & { code?: string, chunks?: number[], retryable?: boolean }) => tell(self, {
          type: 'completed-upload', transferId: job.transferId, ok: false, retry: err.retryable === true,
          redeliver: err.code === 'BWN_ERR_DESTINATION_INCOMPLETE' ? (err.chunks ?? []) : [], error: err.code ?? err.message
        }))
        return
      case 'abort': {
        const done = (): void => { if (job.then === 'cancel') tell(self, { type: 'aborted', transferId: job.transferId }) }
        if (job.upload === null) { done(); return }
        const upload = job.upload
        inLane(job.destinationId, async driver => { await driver.abort(upload); done() }, err => {
          log.warn({ transferId: job.transferId, err: err.message }, 'destination abort failed')
          done()
        })
        return
      }
      case 'cleanup': {
        const abort = job.abort
        inLane(job.destinationId, async driver => {
          if (abort !== null) {
            try { await driver.abort(abort) } catch (err) { log.warn({ transferId: job.transferId, err: (err as Error).message }, 'destination abort failed') }
          }
          await freeStaging(store, deps.blobs, job.transferId, job.chunks)
          tell(self, { type: 'cleaned', transferId: job.transferId })
        }, err => log.warn({ transferId: job.transferId, err: err.message }, 'cleanup failed; retried on the next start'))
      }
    }
  }

  async function sendOffers (job: Extract<IoJob, { type: 'offers' }>): Promise<void> {
    const driver = await deps.driverFor(job.destinationId)
    for (const b of job.batches) {
      const offers: TaskOffer[] = []
      for (const d of b.offers) {
        const target = await driver.target(job.upload, { index: d.chunkIndex, offset: d.offset, length: d.length, attemptSlot: d.attemptSlot }, job.expiresAt)
        const source = deps.signSource(d.transferId, d.chunkIndex, d.attemptId, job.expiresAt)
        offers.push({
          taskId: d.taskId, attemptId: d.attemptId, transferId: d.transferId, chunkIndex: d.chunkIndex, length: d.length, sha256: d.sha256,
          source: { url: source.url, path: source.path, coordinator: deps.self }, target, expiresAt: job.expiresAt, excludeWorkers: d.excludeWorkers
        })
      }
      if (current?.isLive(job.transferId) !== true) return // cancelled or failed meanwhile
      const sent = net.send(b.to, 'task_offer_batch', { batchId: b.batchId, transferId: job.transferId, waveKind: job.waveKind, offers })
      if (!sent) log.warn({ transferId: job.transferId, orchestrator: b.to, batchId: b.batchId }, 'offer batch not sent: no connection')
    }
  }

  /** Persists the step's rows, then runs its effects (crash points first), then answers. */
  async function run (step: Step, reply?: Reply<Outcome<any>>): Promise<void> {
    if (step.ops.length > 0) {
      try { await store.batch(step.ops) } catch (err) { reply?.reject(err as Error); throw err }
    }
    for (const e of step.effects) if (e.kind === 'fault') perform(e)
    for (const e of step.effects) if (e.kind !== 'fault') perform(e)
    if (reply !== undefined && step.reply !== undefined) reply.resolve(step.reply)
  }

  /** Loads every transfer of this coordinator that is unfinished or not cleaned up. */
  async function hydrateAll (state: State): Promise<void> {
    state.started = true
    const atProcessStart = processStart
    processStart = false
    for await (const [id, row] of store.table<TransferRow>('transfers').entries()) {
      if (row.coordinator_id !== deps.self || (TERMINAL.has(row.status) && row.cleanup_pending !== true)) continue
      const h = await loadTransfer(store, id, row)
      await run(state.core.hydrate(h, env.clock.now(), { processStart: atProcessStart }))
    }
  }

  const stored = async (core: TransferState, id: string): Promise<TransferRow | undefined> =>
    core.get(id) === undefined ? await store.table<TransferRow>('transfers').get(id) : undefined

  const handler = async (state: State, msg: CoordinatorMsg): Promise<State> => {
    // After a restart (or a crash reset) the state starts empty: hydrate before anything else.
    if (!state.started) await hydrateAll(state)
    const core = state.core
    const now = env.clock.now()
    switch (msg.type) {
      case 'start': return state
      case 'create': await run(core.create(msg.row, now), msg.reply); return state
      case 'chunk': await run(core.chunk(msg, now, await stored(core, msg.transferId)), msg.reply); return state
      case 'finalize': await run(core.finalize(msg.transferId, now, await stored(core, msg.transferId)), msg.reply); return state
      case 'cancel': await run(core.cancel(msg.transferId, msg.reply, now, await stored(core, msg.transferId)), msg.reply); return state
      case 'assigned': await run(core.assigned(msg.from, msg.body, now)); return state
      case 'result': await run(core.result(msg.from, msg.body, now, deps.validators?.() ?? [])); return state
      case 'verdict': await run(core.verdict(msg.from, msg.body, now)); return state
      case 'overseer': await run(core.tick(now)); return state
      case 'dispatch': await run(core.dispatch(msg.transferId)); return state
      case 'planned': await run(core.planned(msg.transferId, msg.candidates, now)); return state
      case 'begun': await run(core.begun(msg.transferId, msg.destinationId, msg.upload, msg.error, now)); return state
      case 'checked': await run(core.checked(msg.transferId, msg.attemptId, msg.ok, msg.reason, now)); return state
      case 'completed-upload': await run(core.completedUpload(msg, now)); return state
      case 'complete-retry': await run(core.completeRetry(msg.transferId)); return state
      case 'aborted': await run(core.aborted(msg.transferId, now)); return state
      case 'cleaned': {
        const row = await store.table<TransferRow>('transfers').get(msg.transferId)
        if (row !== undefined && row.cleanup_pending === true && TERMINAL.has(row.status)) await store.batch([{ type: 'put', table: 'transfers', key: row.id, value: { ...row, cleanup_pending: false } }])
        return state
      }
    }
  }

  const init = (): State => {
    current = new TransferState({ self: deps.self, config: deps.config })
    return { core: current, started: false }
  }
  self = spawnSupervised<State, CoordinatorMsg>(parent, 'coordinator', env, init, handler)
  tell(self, { type: 'start' })
  const ticker = env.clock.every(OVERSEER_TICK_MS, () => tell(self, { type: 'overseer' }))
  return {
    ref: self,
    stop: () => ticker.cancel(),
    active: () => current?.size ?? 0,
    ioPending: () => [...lanes.values()].reduce((n, q) => n + q.size + q.pending, 0)
  }
}

/** Everything hydration needs about one transfer, read from the store. */
export async function loadTransfer (store: Store, id: string, row: TransferRow): Promise<Hydration> {
  const p = prefixRange(keys.prefix(id))
  const chunks = (await collect(store.table<ChunkRow>('chunks'), p)).map(([, c]) => c)
  if (TERMINAL.has(row.status)) return { row, chunks, tasks: [], attempts: [], results: [], waves: 0, interventions: 0 }
  const attempts = (await collect(store.table<AttemptRow>('task_attempts'), p)).map(([, a]) => a)
  const checking = new Set(attempts.filter(a => a.state === 'checking').map(a => a.id))
  return {
    row,
    chunks,
    tasks: (await collect(store.table<TaskRow>('tasks'), p)).map(([, t]) => t),
    attempts,
    results: checking.size === 0 ? [] : (await collect(store.table<ResultRow>('task_results'), p)).map(([, r]) => r).filter(r => checking.has(r.attempt_id)),
    waves: (await collect(store.table('transfer_assignment_plans'), p)).length,
    interventions: (await collect(store.table('overseer_interventions'), p)).length
  }
}

/** Drops a terminal transfer's references to its staged chunks; a blob no other chunk references is deleted. */
export async function freeStaging (store: Store, blobs: BlobStore, transferId: string, chunks: Array<{ index: number, sha256: string }>): Promise<void> {
  for (const c of chunks) {
    const ref = `blob/${c.sha256}/${transferId}/${c.index}`
    await store.table('index').del(ref)
    const others = await collect(store.table('index'), { ...prefixRange(`blob/${c.sha256}/`), limit: 1 })
    if (others.length === 0) await blobs.delete(c.sha256)
  }
}

/** Null when the destination holds the chunk's bytes for this attempt, else why not. */
async function checkDelivery (driver: DestinationDriver, job: Extract<IoJob, { type: 'check' }>): Promise<string | null> {
  const c = job.chunk
  if (driver.readableBeforeComplete) {
    const bytes = await driver.readRange(job.upload, c.offset, c.length)
    const sha = createHash('sha256').update(bytes).digest('hex')
    return sha === c.sha256 ? null : 'destination bytes do not match the staged chunk'
  }
  const parts = await driver.listParts!(job.upload)
  const part = parts.filter(p => p.index === c.index && p.attemptSlot === job.attemptSlot).pop() ?? parts.filter(p => p.index === c.index).pop()
  if (part === undefined) return 'the destination holds no part for the chunk'
  if (part.size !== c.length) return 'the stored part has the wrong size'
  if (part.etag.replaceAll('"', '') !== c.md5) return 'the stored part does not match the staged chunk'
  if (job.etag !== null && job.etag.replaceAll('"', '') !== c.md5) return 'the reported etag does not match the staged chunk'
  return null
}
