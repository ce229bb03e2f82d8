// One file (or stdin) as one transfer: create or resume it, upload the missing chunks in parallel,
// finalize, and (unless --no-wait) follow the delivery to its end. The summary it returns is the put's
// JSON line; after the transfer id is known an error is a GaveUp carrying the summary so far.
import { createHash, type Hash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import PQueue from 'p-queue'
import { DEFAULT_KEYSTORE, CliError, Interrupted } from '../common.ts'
import { InputShort } from '../../errors.ts'
import { TransferApiClient, ApiProblem, type RetryWait } from '../../transfers/api-client.ts'
import { readState, stateMatches, StateWriter, STATE_VERSION, type UploadState } from '../../transfers/upload-state.ts'
import { ProgressReporter, progressMode, newTotals, type Totals } from '../../transfers/progress.ts'
import { deliverySourceFor, TERMINAL, type DeliverySource } from '../../transfers/delivery-source.ts'
import { TokenBucket } from '../../transfers/bwlimit.ts'
import type { ClientFlags, Credentials } from '../profiles.ts'
import type { TransferRecord } from '../../../api/transfers.ts'
import type { PutSummary } from '../../transfers/put-summary.ts'
import { GaveUp } from '../../errors.ts'
import type { ChunkSource } from './source.ts'
import { invocation } from './invocation.ts'

const MAX_FINALIZE_ROUNDS = 3 // finalize → 409 missing → upload them → finalize again

export interface PutOptions extends ClientFlags {
  destination?: string
  dest?: string
  tier: string
  hotkey?: string
  parallel: number
  transfers: number
  recursive?: boolean
  size?: number
  name?: string
  bwlimit?: number
  wait: boolean
  progress: boolean
  json?: boolean
  state?: string
  waitTimeoutS: number
  maxChunks?: number
  dryRun?: boolean
  verbose?: boolean
  quiet?: boolean
  include?: string[]
  exclude?: string[]
  config?: string
}

/** --hotkey, else the keystore's address (BWN_KEYSTORE or .bwnet/hotkey.json), else a fresh one. */
async function senderHotkey (given: string | undefined): Promise<string> {
  if (given !== undefined) return given
  // Loaded on demand: the sr25519 libraries add noticeably to every command's start-up.
  const [{ cryptoReady, newHotkey }, { readKeystore }] = await Promise.all([import('../../../protocol/index.ts'), import('../../keystore.ts')])
  await cryptoReady()
  const path = process.env.BWN_KEYSTORE ?? DEFAULT_KEYSTORE
  const exists = await stat(path).then(() => true, () => false)
  // The hotkey only names the sender; nothing is signed with it here, so an unsaved one is enough.
  return exists ? (await readKeystore(path)).address : newHotkey().address
}

/** What every file of one put shares: the client, the progress, the limit, the Ctrl-C signal. */
export interface Session {
  creds: Credentials
  client: TransferApiClient
  signal: AbortSignal
  totals: Totals
  reporter: ProgressReporter
  bucket: TokenBucket | null
  source: DeliverySource
}

export function newSession (creds: Credentials, opts: PutOptions, signal: AbortSignal): Session {
  const totals = newTotals()
  const reporter = new ProgressReporter(totals, { mode: opts.quiet === true ? 'off' : progressMode(opts.progress) })
  const client = new TransferApiClient(creds.api, creds.key, { signal, onWait: (w: RetryWait) => reporter.waiting(w) })
  return { creds, client, signal, totals, reporter, bucket: opts.bwlimit !== undefined ? new TokenBucket(opts.bwlimit) : null, source: deliverySourceFor(client, creds.key) }
}

async function resumable (s: Session, state: UploadState): Promise<TransferRecord | null> {
  try {
    const record = await s.client.get(state.transfer_id)
    if (record.status === 'cancelled' || record.status === 'failed') {
      s.reporter.message(`previous transfer ${record.id} is ${record.status}; starting a new one`)
      return null
    }
    if (record.chunk_size !== state.chunk_size || record.total_chunks !== state.total_chunks) return null
    return record
  } catch (err) {
    if (err instanceof ApiProblem && err.status === 404) {
      s.reporter.message(`previous transfer ${state.transfer_id} is gone; starting a new one`)
      return null
    }
    throw err
  }
}

/** Sends one source as one transfer and (unless --no-wait) follows it until it ends. */
export async function putOne (src: ChunkSource, opts: PutOptions, s: Session, hooks: { statePath: string | null, onId?: (id: string, resumed: boolean) => void, onPlanned?: () => void }): Promise<PutSummary> {
  const started = Date.now()
  const client = s.client
  const destination = opts.destination ?? opts.dest
  const statePath = hooks.statePath
  const want = src.path !== null ? { file: src.path, size: src.size, mtimeMs: src.mtimeMs, api: s.creds.api, destinationId: destination ?? null, tier: opts.tier } : null

  let record: TransferRecord | null = null
  let previous = statePath !== null ? await readState(statePath) : null
  if (previous !== null && want !== null && stateMatches(previous, want)) record = await resumable(s, previous)
  else previous = null
  const resumed = record !== null
  if (record === null) {
    record = await client.create({
      sender_hotkey: await senderHotkey(opts.hotkey), total_size: src.size, filename: src.filename, tier: opts.tier,
      ...(destination !== undefined ? { destination_id: destination } : {})
    })
  }
  const writer = new StateWriter(statePath ?? '', {
    version: STATE_VERSION, file: src.path !== null ? resolve(src.path) : '-', size: src.size, mtime_ms: src.mtimeMs, api: s.creds.api, transfer_id: record.id,
    destination_id: destination ?? null, tier: opts.tier, sender_hotkey: record.sender_hotkey,
    chunk_size: record.chunk_size, total_chunks: record.total_chunks, acked: resumed ? previous!.acked : []
  })
  const flush = async (): Promise<void> => { if (statePath !== null) await writer.flush() }
  await flush()
  hooks.onId?.(record.id, resumed)
  if (record.total_size !== src.size) throw new CliError(`the API planned ${record.total_size} bytes for a ${src.size}-byte file`)

  const summary: PutSummary = {
    event: 'transfer_put', transfer_id: record.id, status: record.status, resumed, chunks_total: record.total_chunks,
    chunks_uploaded: 0, chunks_created: 0, chunks_duplicate: 0, chunks_skipped: 0, bytes_uploaded: 0,
    retries: 0, rate_limited: 0, upload_ms: 0, elapsed_ms: 0, state_file: statePath, sha256: null, filename: src.filename, error: null
  }
  // The whole file's sha256: hashed from the chunks as they are read in order on a fresh put; a
  // resumed or re-sent one reads the file once more at the end (wholeHash below).
  const whole: { hash: Hash, next: number } = { hash: createHash('sha256'), next: 0 }
  const feedWhole = (index: number, bytes: Buffer): void => { if (index === whole.next) { whole.hash.update(bytes); whole.next++ } }
  const wholeHash = async (): Promise<string | null> => {
    if (whole.next === record!.total_chunks) return whole.hash.digest('hex')
    if (src.path === null) return null
    const h = createHash('sha256')
    for await (const part of createReadStream(src.path)) h.update(part as Buffer)
    return h.digest('hex')
  }
  const finish = (status: PutSummary['status']): PutSummary => {
    summary.status = status
    summary.retries = client.stats.retries
    summary.rate_limited = client.stats.rateLimited
    summary.elapsed_ms = Date.now() - started
    return summary
  }
  const t = s.totals
  const chunkLength = (i: number): number => Math.min(record!.chunk_size, src.size - i * record!.chunk_size)
  t.upload.chunksTotal += record.total_chunks
  t.upload.bytesTotal += src.size
  let deliveredChunks = 0
  let deliveredBytes = 0
  let verified = 0
  const deliveryTotalsAdded = { done: false }
  hooks.onPlanned?.()
  const trackDelivery = (r: TransferRecord): void => {
    if (!deliveryTotalsAdded.done) {
      t.deliver.chunksTotal += r.total_chunks; t.deliver.bytesTotal += r.total_size; deliveryTotalsAdded.done = true
      // Delivered before this run (a resume): done, but not part of this run's rate.
      if (resumed) t.deliver.bytesSkipped += r.bytes.delivered
    }
    t.deliver.chunksDone += r.chunks.delivered - deliveredChunks; deliveredChunks = r.chunks.delivered
    t.deliver.bytesDone += r.bytes.delivered - deliveredBytes; deliveredBytes = r.bytes.delivered
    t.deliver.verified += r.chunks.verified - verified; verified = r.chunks.verified
  }
  // From here on the transfer id is known: giving up still ends with the summary (see GaveUp).
  try {
    if (record.status === 'completed') {
      summary.chunks_skipped = record.total_chunks
      t.upload.chunksDone += record.total_chunks; t.upload.bytesDone += src.size; t.upload.bytesSkipped += src.size
      trackDelivery(record)
      summary.sha256 = await wholeHash()
      return finish('completed')
    }
    const id = record.id
    const upload = async (indices: number[]): Promise<void> => {
      const queue = new PQueue({ concurrency: opts.parallel })
      let failure: unknown = null
      const t0 = Date.now()
      const send = async (index: number, bytes: Buffer): Promise<void> => {
        const length = bytes.length
        const sha256 = createHash('sha256').update(bytes).digest('hex')
        let sent = 0
        const { ack, created } = await client.putChunk(id, index, {
          bytes,
          onBytes: (n) => { sent += n; t.upload.bytesDone += n },
          ...(s.bucket !== null ? { pace: (n: number, signal: AbortSignal) => s.bucket!.take(n, signal) } : {})
        }, sha256, () => { t.upload.bytesDone -= sent; sent = 0 })
        if (ack.sha256 !== sha256) throw new CliError(`chunk ${index}: the API stored sha256 ${ack.sha256}, not ${sha256}`)
        // Acknowledged: the server has read every byte, so the buffer is free. (After a failure it is
        // left to the collector: an aborted request's socket may still hold pieces of it.)
        src.release(bytes)
        await (statePath !== null ? writer.ack(index) : Promise.resolve(writer.acked.add(index)))
        summary.chunks_uploaded++
        summary.bytes_uploaded += length
        if (created) summary.chunks_created++
        else summary.chunks_duplicate++
        t.upload.chunksDone++
      }
      try {
        for (const index of indices) {
          // Read a chunk only when a slot is about to free: at most parallel + 1 chunks in memory.
          await queue.onEmpty()
          if (failure !== null || s.signal.aborted) break
          const bytes = await src.read(index * record!.chunk_size, chunkLength(index))
          feedWhole(index, bytes)
          void queue.add(() => send(index, bytes)).catch((err: unknown) => { failure ??= err; queue.clear() })
        }
      } catch (err) {
        failure ??= err
        queue.clear()
      }
      await queue.onIdle()
      summary.upload_ms += Date.now() - t0
      if (s.signal.aborted) throw s.signal.reason
      if (failure !== null) throw failure
    }

    if (!record.finalize_requested) {
      let missing = [...Array(record.total_chunks).keys()].filter(i => !writer.acked.has(i))
      summary.chunks_skipped = record.total_chunks - missing.length
      for (let i = 0; i < record.total_chunks; i++) if (writer.acked.has(i)) { t.upload.chunksDone++; t.upload.bytesDone += chunkLength(i); t.upload.bytesSkipped += chunkLength(i) }
      if (opts.maxChunks !== undefined && missing.length > opts.maxChunks) {
        // Test and debugging aid: send only the first N missing chunks, then stop as an interrupt would.
        await upload(missing.slice(0, opts.maxChunks))
        return finish('stopped')
      }
      for (let round = 1; ; round++) {
        await upload(missing)
        try {
          record = await client.finalize(id)
          break
        } catch (err) {
          // The state file can claim more than the API holds (e.g. a state copied from elsewhere).
          if (!(err instanceof ApiProblem && err.code === 'BWN_ERR_CHUNKS_MISSING') || round >= MAX_FINALIZE_ROUNDS || src.path === null) throw err
          missing = (err.body.missing_chunks as number[] | undefined) ?? []
          for (const i of missing) if (writer.acked.delete(i)) { t.upload.chunksDone--; t.upload.bytesDone -= chunkLength(i); t.upload.bytesSkipped = Math.max(0, t.upload.bytesSkipped - chunkLength(i)) }
          await flush()
        }
      }
    } else {
      summary.chunks_skipped = record.total_chunks
      t.upload.chunksDone += record.total_chunks; t.upload.bytesDone += src.size; t.upload.bytesSkipped += src.size
    }
    summary.sha256 = await wholeHash()
    await src.close()
    if (!opts.wait) return finish(record.status)

    trackDelivery(record)
    if (t.files === null) s.reporter.phase('deliver')
    const deadline = Date.now() + opts.waitTimeoutS * 1000
    record = await s.source.follow(record, trackDelivery, { signal: s.signal, deadline })
    if (!TERMINAL.has(record.status)) throw new CliError(`transfer ${id} is still ${record.status} after ${opts.waitTimeoutS} s; run \`${invocation()} transfer status ${id}\` later`)
    if (record.error !== null) summary.error = record.error
    else if (record.status !== 'completed') summary.error = { code: 'BWN_ERR_TRANSFER_CLOSED', message: `the transfer was ${record.status}` }
    return finish(record.status)
  } catch (err) {
    if (err instanceof Interrupted) throw new GaveUp(err, finish('interrupted'))
    if (err instanceof InputShort) {
      // A stdin upload cannot be resumed: cancel it now rather than leave it pending, holding a slot.
      const cancelled = await client.cancel(record.id).catch(() => null)
      if (cancelled !== null) { err.message += `; transfer ${record.id} cancelled`; return Promise.reject(new GaveUp(err, finish(cancelled.status))) }
    }
    throw new GaveUp(err, finish(summary.status))
  } finally {
    await src.close()
  }
}
