// The coordinator's work outside its mailbox: destination calls (begin, the per-chunk check, complete,
// abort), offer signing, validator requests and staging cleanup. Each destination kind (s3, http, node)
// has its own bounded queue; every job reports back to the coordinator by message, so one slow or hung
// destination call never holds up the coordinator or another kind's work.
import { releaseBlobRef } from './blob-refs.ts'
import { createHash } from 'node:crypto'
import PQueue from 'p-queue'
import type { Logger, Store, BlobStore } from '../ports.ts'
import { collect, prefixRange } from '../store.ts'
import type { DestinationDriver } from '../destination.ts'
import type { TaskOffer } from '../../protocol/index.ts'
import { keys, TERMINAL, type TransferRow, type ChunkRow, type TaskRow, type AttemptRow, type ResultRow } from './model.ts'
import type { Hydration, IoJob } from './state.ts'
import type { CoordinatorDeps, CoordinatorMsg } from './coordinator.ts'

/** Destination calls of one kind (s3, http, node) running at once. */
export const DEFAULT_IO_CONCURRENCY = 8

export interface IoOptions {
  deps: CoordinatorDeps
  log: Logger
  /** Delivers a report to the coordinator's mailbox. */
  tell (msg: CoordinatorMsg): void
  /** The transfer still takes offers (not terminal, not being cancelled). */
  isLive (transferId: string): boolean
  offerTtlMs (): number
}

export interface Io {
  run (job: IoJob): void
  /** Destination calls queued or running. */
  pending (): number
}

export function startIo (opts: IoOptions): Io {
  const { deps, log, tell } = opts
  const lanes = new Map<string, PQueue>()
  const lane = (kind: string): PQueue => {
    let q = lanes.get(kind)
    if (q === undefined) { q = new PQueue({ concurrency: deps.ioConcurrency ?? DEFAULT_IO_CONCURRENCY }); lanes.set(kind, q) }
    return q
  }
  /** Runs `fn` with the destination's driver in its kind's lane; errors go to `onError`. */
  const inLane = (destinationId: string, fn: (driver: DestinationDriver) => Promise<void>, onError: (err: Error & { code?: string }) => void): void => {
    deps.driverFor(destinationId).then(driver => lane(driver.kind).add(async () => await fn(driver))).catch(onError)
  }

  function run (job: IoJob): void {
    switch (job.type) {
      case 'begin':
        inLane(job.destinationId, async driver => {
          const upload = await driver.begin(job.spec)
          tell({ type: 'begun', transferId: job.transferId, destinationId: job.destinationId, upload, error: null, attributable: driver.attributable === true })
        }, err => tell({ type: 'begun', transferId: job.transferId, destinationId: job.destinationId, upload: null, error: err.code ?? err.message }))
        return
      case 'offers':
        // Signing only (no destination round trip): not queued behind slow destination calls.
        void sendOffers(job).catch((err: Error) => log.warn({ transferId: job.transferId, err: err.message }, 'offers not sent; the overseer reassigns them'))
        return
      case 'verify':
        void (async () => {
          const driver = await deps.driverFor(job.check.destinationId)
          // A read target is what lets a validator read a chunk back before completion (absent for s3).
          if (driver.readTarget !== undefined) {
            const c = job.check.chunk
            const read = await driver.readTarget(job.check.upload, c.offset, c.length, deps.env.clock.now() + opts.offerTtlMs())
            const attachment = deps.attachmentOf?.(job.request.worker)
            deps.net.send(job.validator, 'verify_request', { ...job.request, read, ...(attachment !== undefined ? { attachment } : {}) })
          } else run(job.check)
        })().catch((err: Error) => { log.warn({ err: err.message }, 'verify request failed; checking directly'); run(job.check) })
        return
      case 'check':
        inLane(job.destinationId, async driver => {
          const problem = await checkDelivery(driver, job)
          tell({ type: 'checked', transferId: job.transferId, attemptId: job.attemptId, ok: problem === null, reason: problem })
        }, err => tell({ type: 'checked', transferId: job.transferId, attemptId: job.attemptId, ok: false, reason: `check failed: ${err.message}`, inconclusive: true }))
        return
      case 'complete':
        inLane(job.destinationId, async driver => {
          deps.faultPoint?.('before_complete')
          const done = await driver.complete(job.upload, job.parts)
          deps.faultPoint?.('after_complete')
          tell({ type: 'completed-upload', transferId: job.transferId, ok: true, retry: false, redeliver: [], error: null, storedName: done?.storedName ?? null })
        }, (err: Error & { code?: string, chunks?: number[], retryable?: boolean }) => tell({
          type: 'completed-upload', transferId: job.transferId, ok: false, retry: err.retryable === true,
          redeliver: err.code === 'BWN_ERR_DESTINATION_INCOMPLETE' ? (err.chunks ?? []) : [], error: err.code ?? err.message
        }))
        return
      case 'abort': {
        const done = (): void => { if (job.then === 'cancel') tell({ type: 'aborted', transferId: job.transferId }) }
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
          await freeStaging(deps.store, deps.blobs, job.transferId, job.chunks)
          tell({ type: 'cleaned', transferId: job.transferId })
        }, err => log.warn({ transferId: job.transferId, err: err.message }, 'cleanup failed; retried on the next start'))
      }
    }
  }

  async function sendOffers (job: Extract<IoJob, { type: 'offers' }>): Promise<void> {
    const driver = await deps.driverFor(job.destinationId)
    for (const b of job.batches) {
      const offers: TaskOffer[] = []
      for (const d of b.offers) {
        // The attempt's number too, for a driver that orders a chunk's attempts (the node sink).
        const chunk = { index: d.chunkIndex, offset: d.offset, length: d.length, attemptSlot: d.attemptSlot, attemptNo: d.attemptNo }
        const target = await driver.target(job.upload, chunk, job.expiresAt)
        const source = deps.signSource(d.transferId, d.chunkIndex, d.attemptId, job.expiresAt)
        const offer: TaskOffer = {
          taskId: d.taskId, attemptId: d.attemptId, transferId: d.transferId, chunkIndex: d.chunkIndex, length: d.length, sha256: d.sha256,
          source: { url: source.url, path: source.path, coordinator: deps.self }, target, expiresAt: job.expiresAt, excludeWorkers: d.excludeWorkers
        }
        // Signed end to end: the orchestrator relaying it cannot change its terms (protocol/offer-signature.ts).
        if (deps.signOffer !== undefined) offer.signature = deps.signOffer(offer)
        offers.push(offer)
      }
      if (!opts.isLive(job.transferId)) return // cancelled or failed meanwhile
      const sent = deps.net.send(b.to, 'task_offer_batch', { batchId: b.batchId, transferId: job.transferId, waveKind: job.waveKind, offers, ...(job.excludedWorkers.length > 0 ? { excludedWorkers: job.excludedWorkers } : {}) })
      if (!sent) log.warn({ transferId: job.transferId, orchestrator: b.to, batchId: b.batchId }, 'offer batch not sent: no connection')
    }
  }

  return { run, pending: () => [...lanes.values()].reduce((n, q) => n + q.size + q.pending, 0) }
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

/** Drops a terminal transfer's references to its staged chunks; a blob goes with its last reference (blob-refs.ts). */
export async function freeStaging (store: Store, blobs: BlobStore, transferId: string, chunks: Array<{ index: number, sha256: string }>): Promise<void> {
  for (const c of chunks) await releaseBlobRef(store, blobs, c.sha256, transferId, c.index)
}

const normaliseEtag = (etag: string): string => etag.replace(/^W\//, '').replaceAll('"', '').toLowerCase()

/** Null when the destination holds the chunk's bytes for this attempt, else why not. */
async function checkDelivery (driver: DestinationDriver, job: Extract<IoJob, { type: 'check' }>): Promise<string | null> {
  const c = job.chunk
  if (driver.chunkSha256 !== undefined) {
    // A node sink's ETag is the sha256 it wrote: a report of another is a lie about the delivery.
    if (driver.kind === 'node' && job.etag !== null && normaliseEtag(job.etag) !== c.sha256) return 'the reported etag does not match the staged chunk'
    // With the attempt's number: the node sink closes the chunk to that attempt's URL once checked.
    const checked = { index: c.index, length: c.length, attemptNo: job.attemptNo }
    const sha = await driver.chunkSha256(job.upload, checked)
    return sha === c.sha256 ? null : 'destination bytes do not match the staged chunk'
  }
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
