// `bwnet transfer put|list|status|cancel`: send files (one, a directory, or stdin) through a bwnet API
// and follow them to completion (DESIGN §8). Credentials come from a profile (`bwnet login`), the
// environment or flags (profiles.ts). Machine output (--json, or stdout not a terminal): a single-file
// put prints the transfer id first and one JSON summary line last; progress and messages go to
// stderr. Usage, resume, exit codes and the state file: docs/cli.md.
import { Command, Option, InvalidArgumentError } from 'commander'
import { createHash } from 'node:crypto'
import { open, readdir, stat, type FileHandle } from 'node:fs/promises'
import { basename, join, relative, resolve } from 'node:path'
import { filenameProblem, normalizeFilename } from '../adapters/destinations/filename.ts'
import PQueue from 'p-queue'
import { DEFAULT_KEYSTORE, CliError, UsageError, Interrupted } from './common.ts'
import { TransferApiClient, ApiProblem, type RetryWait } from '../transfers/api-client.ts'
import { readState, stateMatches, statePathFor, StateWriter, STATE_VERSION, type UploadState } from '../transfers/upload-state.ts'
import { ProgressReporter, progressMode, newTotals, formatBytes, formatDuration, type Totals } from '../transfers/progress.ts'
import { deliverySourceFor, TERMINAL, type DeliverySource } from '../transfers/delivery-source.ts'
import { TokenBucket, parseRate } from '../transfers/bwlimit.ts'
import { addClientOptions, resolveCredentials, type ClientFlags, type Credentials } from './profiles.ts'
import type { TransferRecord } from '../../api/transfers.ts'
import { GaveUp, TransferEnded } from '../errors.ts'
export { GaveUp, TransferEnded }

export { POLL_START_MS, POLL_MAX_MS, nextPollDelay, type PollSample } from '../transfers/delivery-source.ts'
export const DEFAULT_PARALLEL = 4 // chunk uploads in flight, per file
export const MAX_PARALLEL = 64
export const DEFAULT_TRANSFERS = 2 // files in flight in a directory put
export const MAX_TRANSFERS = 16
export const DEFAULT_TIER = 'STANDARD'
export const DEFAULT_WAIT_TIMEOUT_S = 24 * 3600 // 1 day: how long `put` waits for completion
const MAX_FINALIZE_ROUNDS = 3 // finalize → 409 missing → upload them → finalize again
const MAX_DIRECTORY_FILES = 100_000
const LIST_PAGE = 100
const PREFIX_SCAN_MAX = 2_000 // transfers scanned to resolve a short id
/** Exit code when `--max-chunks` stopped the upload before every chunk was sent. */
export const EXIT_STOPPED_EARLY = 3
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

type Status = TransferRecord['status']

export interface PutSummary {
  event: 'transfer_put'
  transfer_id: string
  status: Status | 'stopped' | 'interrupted'
  resumed: boolean
  chunks_total: number
  chunks_uploaded: number
  chunks_created: number
  chunks_duplicate: number
  chunks_skipped: number
  bytes_uploaded: number
  retries: number
  rate_limited: number
  upload_ms: number
  elapsed_ms: number
  state_file: string | null
  error: { code: string, message: string } | null
}

interface PutOptions extends ClientFlags {
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
}

function positiveInt (max: number, min = 1) {
  return (value: string): number => {
    const n = Number(value)
    if (!/^[0-9]+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`an integer ${min}..${max}`)
    return n
  }
}

function rateArg (value: string): number {
  const rate = parseRate(value)
  if (rate === null) throw new InvalidArgumentError('a rate in bytes per second, e.g. 512K, 10M, 1.5G')
  return rate
}

/** --hotkey, else the keystore's address (BWN_KEYSTORE or .bwnet/hotkey.json), else a fresh one. */
async function senderHotkey (given: string | undefined): Promise<string> {
  if (given !== undefined) return given
  // Loaded on demand: the sr25519 libraries add noticeably to every command's start-up.
  const [{ cryptoReady, newHotkey }, { readKeystore }] = await Promise.all([import('../../protocol/index.ts'), import('../keystore.ts')])
  await cryptoReady()
  const path = process.env.BWN_KEYSTORE ?? DEFAULT_KEYSTORE
  const exists = await stat(path).then(() => true, () => false)
  // The hotkey only names the sender; nothing is signed with it here, so an unsaved one is enough.
  return exists ? (await readKeystore(path)).address : newHotkey().address
}

/** What a put reads chunks from: a file (any order) or stdin (in order, once). */
interface ChunkSource {
  readonly path: string | null // null: stdin
  readonly filename: string
  readonly size: number
  readonly mtimeMs: number
  read (offset: number, length: number): Promise<Buffer>
  /** A buffer `read` gave out is no longer used: the next read may fill it again. */
  release (buf: Buffer): void
  close (): Promise<void>
}

/** Chunk buffers kept for reuse: a put holds at most `--parallel` + 1 chunks (see upload), rarely more than this. */
const SPARE_CHUNK_BUFFERS = 16

/** The name a put sends: NFC, and refused here with the API's own rule before any request (docs/transfers.md#filenames). */
export function sendableName (name: string): string {
  const nfc = normalizeFilename(name)
  const problem = filenameProblem(nfc)
  if (problem !== null) throw new CliError(`cannot send as ${JSON.stringify(name)}: the filename ${problem}; pass another with --name`)
  return nfc
}

async function fileSource (path: string, filename: string): Promise<ChunkSource> {
  filename = sendableName(filename)
  const info = await stat(path).catch((err: NodeJS.ErrnoException) => { throw new CliError(`cannot read ${path}: ${err.code ?? err.message}`) })
  if (!info.isFile()) throw new CliError(`${path} is not a regular file`)
  if (info.size === 0) throw new CliError(`${path} is empty; there is nothing to send`)
  let fh: FileHandle | null = null
  // Chunks are mostly of one size: reusing their buffers spares a fresh 16 MiB allocation (page faults,
  // and the collections external memory sets off) per chunk.
  const spare: Buffer[] = []
  return {
    path, filename, size: info.size, mtimeMs: info.mtimeMs,
    async read (offset, length) {
      fh ??= await open(path, 'r')
      const i = spare.findIndex(b => b.length === length)
      const buf = i >= 0 ? spare.splice(i, 1)[0]! : Buffer.allocUnsafeSlow(length)
      let filled = 0
      while (filled < length) {
        const { bytesRead } = await fh.read(buf, filled, length - filled, offset + filled)
        if (bytesRead === 0) throw new CliError(`${path} is shorter than when the transfer started (read ended at ${offset + filled})`)
        filled += bytesRead
      }
      return buf
    },
    release (buf) { if (spare.length < SPARE_CHUNK_BUFFERS && !spare.includes(buf)) spare.push(buf) },
    async close () { await fh?.close(); fh = null; spare.length = 0 }
  }
}

function stdinSource (size: number, filename: string, input: NodeJS.ReadableStream = process.stdin): ChunkSource {
  filename = sendableName(filename)
  const iterator = (input as AsyncIterable<Buffer>)[Symbol.asyncIterator]()
  let pending: Buffer = Buffer.alloc(0)
  let position = 0
  return {
    path: null, filename, size, mtimeMs: 0,
    async read (offset, length) {
      if (offset !== position) throw new CliError('stdin can only be read once, in order (a stdin upload cannot resend a chunk)')
      const parts: Buffer[] = []
      let have = 0
      while (have < length) {
        if (pending.length === 0) {
          const next = await iterator.next()
          if (next.done === true) throw new CliError(`stdin ended after ${position + have} bytes; --size said ${size}`)
          pending = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value as string)
        }
        const take = Math.min(length - have, pending.length)
        parts.push(pending.subarray(0, take))
        pending = pending.subarray(take)
        have += take
      }
      position += length
      if (position === size) {
        // More input than --size promised is an error, not silently dropped.
        if (pending.length > 0 || (await iterator.next()).done !== true) throw new CliError(`stdin holds more than --size ${size} bytes`)
      }
      return Buffer.concat(parts, length)
    },
    release () {}, // its buffers are slices of what stdin gave
    async close () {}
  }
}

/** What every file of one put shares: the client, the progress, the limit, the Ctrl-C signal. */
interface Session {
  creds: Credentials
  client: TransferApiClient
  signal: AbortSignal
  totals: Totals
  reporter: ProgressReporter
  bucket: TokenBucket | null
  source: DeliverySource
}

function newSession (creds: Credentials, opts: PutOptions, signal: AbortSignal): Session {
  const totals = newTotals()
  const reporter = new ProgressReporter(totals, { mode: progressMode(opts.progress) })
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
async function putOne (src: ChunkSource, opts: PutOptions, s: Session, hooks: { statePath: string | null, onId?: (id: string, resumed: boolean) => void, onPlanned?: () => void }): Promise<PutSummary> {
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
    retries: 0, rate_limited: 0, upload_ms: 0, elapsed_ms: 0, state_file: statePath, error: null
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
    if (!deliveryTotalsAdded.done) { t.deliver.chunksTotal += r.total_chunks; t.deliver.bytesTotal += r.total_size; deliveryTotalsAdded.done = true }
    t.deliver.chunksDone += r.chunks.delivered - deliveredChunks; deliveredChunks = r.chunks.delivered
    t.deliver.bytesDone += r.bytes.delivered - deliveredBytes; deliveredBytes = r.bytes.delivered
    t.deliver.verified += r.chunks.verified - verified; verified = r.chunks.verified
  }
  // From here on the transfer id is known: giving up still ends with the summary (see GaveUp).
  try {
    if (record.status === 'completed') {
      summary.chunks_skipped = record.total_chunks
      t.upload.chunksDone += record.total_chunks; t.upload.bytesDone += src.size
      trackDelivery(record)
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
      for (let i = 0; i < record.total_chunks; i++) if (writer.acked.has(i)) { t.upload.chunksDone++; t.upload.bytesDone += chunkLength(i) }
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
          for (const i of missing) if (writer.acked.delete(i)) { t.upload.chunksDone--; t.upload.bytesDone -= chunkLength(i) }
          await flush()
        }
      }
    } else {
      summary.chunks_skipped = record.total_chunks
      t.upload.chunksDone += record.total_chunks; t.upload.bytesDone += src.size
    }
    await src.close()
    if (!opts.wait) return finish(record.status)

    trackDelivery(record)
    if (t.files === null) s.reporter.phase('deliver')
    const deadline = Date.now() + opts.waitTimeoutS * 1000
    record = await s.source.follow(record, trackDelivery, { signal: s.signal, deadline })
    if (!TERMINAL.has(record.status)) throw new CliError(`transfer ${id} is still ${record.status} after ${opts.waitTimeoutS} s; run \`bwnet transfer status ${id}\` later`)
    if (record.error !== null) summary.error = record.error
    else if (record.status !== 'completed') summary.error = { code: 'BWN_ERR_TRANSFER_CLOSED', message: `the transfer was ${record.status}` }
    return finish(record.status)
  } catch (err) {
    if (err instanceof Interrupted) throw new GaveUp(err, finish('interrupted'))
    throw new GaveUp(err, finish(summary.status))
  } finally {
    await src.close()
  }
}

/** The command that resumes this one: the same arguments, without a key given on the command line. */
export function resumeCommand (argv: string[] = process.argv.slice(2)): string {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--key') { i++; continue }
    if (a.startsWith('--key=')) continue
    out.push(a)
  }
  const quote = (a: string): string => /^[A-Za-z0-9_./:=@%+,-]+$/.test(a) ? a : `'${a.replace(/'/g, '\'\\\'\'')}'`
  return ['bwnet', ...out.map(quote)].join(' ')
}

/** Ctrl-C: the first aborts the put (it then prints how to resume and exits 130); a second exits at once. */
function interruptOnSigint (): { signal: AbortSignal, release: () => void } {
  const controller = new AbortController()
  const onSigint = (): void => {
    if (controller.signal.aborted) process.exit(130)
    controller.abort(new Interrupted('interrupted'))
  }
  process.on('SIGINT', onSigint)
  return { signal: controller.signal, release: () => { process.off('SIGINT', onSigint) } }
}

/**
 * Every regular, non-empty file under `dir` (following no symlinks), sorted, with paths relative to
 * it. Hidden entries (a leading dot) are skipped: destinations refuse such names.
 */
async function walk (dir: string, recursive: boolean): Promise<{ files: Array<{ path: string, rel: string, size: number }>, skipped: number }> {
  const out: Array<{ path: string, rel: string, size: number }> = []
  let skipped = 0
  const visit = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true })
    entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    for (const e of entries) {
      if (e.name.startsWith('.')) { skipped++; continue }
      const p = join(d, e.name)
      if (e.isDirectory()) { if (recursive) await visit(p); continue }
      if (!e.isFile()) continue
      const size = (await stat(p)).size
      if (size === 0) { skipped++; continue }
      out.push({ path: p, rel: relative(dir, p), size })
      if (out.length > MAX_DIRECTORY_FILES) throw new UsageError(`${dir} holds more than ${MAX_DIRECTORY_FILES} files`)
    }
  }
  await visit(dir)
  return { files: out, skipped }
}

const machineOutput = (opts: { json?: boolean }): boolean => opts.json === true || process.stdout.isTTY !== true

function humanResult (s: PutSummary, label: string): string {
  const secs = s.elapsed_ms / 1000
  const rate = s.upload_ms > 0 ? `, upload ${formatBytes(s.bytes_uploaded / (s.upload_ms / 1000))}/s` : ''
  return `${s.status} ${s.transfer_id} ${label}: ${s.chunks_total} chunks (${s.chunks_uploaded} sent, ${s.chunks_skipped} already there) in ${formatDuration(secs * 1000)}${rate}${s.rate_limited > 0 ? `, rate limited ${s.rate_limited}×` : ''}`
}

function table (rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map(r => r[c]!.length)))
  return rows.map(r => r.map((cell, c) => c === r.length - 1 ? cell : cell.padEnd(widths[c]!)).join('  ')).join('\n') + '\n'
}

async function putAction (source: string, opts: PutOptions): Promise<void> {
  const creds = await resolveCredentials(opts)
  const isStdin = source === '-'
  let info: Awaited<ReturnType<typeof stat>> | null = null
  if (!isStdin) info = await stat(source).catch((err: NodeJS.ErrnoException) => { throw new CliError(`cannot read ${source}: ${err.code ?? err.message}`) })
  const isDir = info?.isDirectory() === true
  if (isStdin && opts.size === undefined) throw new UsageError('a put from stdin (-) needs --size <bytes>')
  if (!isStdin && opts.size !== undefined) throw new UsageError('--size is for a put from stdin (-)')
  if (isDir && opts.recursive !== true) throw new UsageError(`${source} is a directory: pass --recursive (-r) to send every file in it`)
  if (isDir && opts.state !== undefined) throw new UsageError('--state names one file\'s state; a directory put keeps one per file')
  if (opts.destination !== undefined && opts.dest !== undefined && opts.destination !== opts.dest) throw new UsageError('--destination and --dest disagree')

  const { signal, release } = interruptOnSigint()
  const session = newSession(creds, opts, signal)
  const machine = machineOutput(opts)
  try {
    if (isDir) await putDirectory(source, opts, session, machine)
    else await putSingle(source, isStdin, opts, session, machine)
  } finally {
    session.reporter.stop()
    release()
  }
}

async function putSingle (source: string, isStdin: boolean, opts: PutOptions, s: Session, machine: boolean): Promise<void> {
  const src = isStdin ? stdinSource(opts.size!, opts.name ?? 'stdin') : await fileSource(source, opts.name ?? basename(source))
  const statePath = isStdin ? null : (opts.state ?? statePathFor(source))
  let summary: PutSummary
  s.reporter.start()
  try {
    summary = await putOne(src, opts, s, {
      statePath,
      onId: (id, resumed) => {
        // First line of stdout: scripts read the id from here while the upload runs.
        if (machine) process.stdout.write(`${id}\n`)
        s.reporter.message(`${resumed ? 'resuming' : 'sending'} ${isStdin ? 'stdin' : source} as transfer ${id} (${formatBytes(src.size)})`)
      },
      onPlanned: () => s.reporter.tick()
    })
  } catch (err) {
    s.reporter.stop()
    if (!(err instanceof GaveUp)) throw err
    err.summary.error = { code: err.code, message: err.detail }
    if (machine) process.stdout.write(JSON.stringify(err.summary) + '\n')
    if (err.cause instanceof Interrupted) {
      const sent = `${err.summary.chunks_skipped + err.summary.chunks_uploaded}/${err.summary.chunks_total} chunks uploaded`
      const how = isStdin
        ? `a stdin upload cannot resume; free its slot with: bwnet transfer cancel ${err.summary.transfer_id}`
        : `resume with: ${resumeCommand()}`
      process.stderr.write(`interrupted: transfer ${err.summary.transfer_id}, ${sent}; ${how}\n`)
      throw new Interrupted('')
    }
    throw err
  }
  s.reporter.stop()
  if (machine) process.stdout.write(JSON.stringify(summary) + '\n')
  else process.stdout.write(humanResult(summary, isStdin ? 'stdin' : source) + '\n')
  if (summary.status === 'stopped') { process.exitCode = EXIT_STOPPED_EARLY; return }
  if (summary.error !== null) throw new TransferEnded(summary.error.code, `transfer ${summary.transfer_id} ${summary.status}: ${summary.error.message}`)
}

interface FileResult { file: string, size: number, summary: PutSummary | null, error: { code: string, message: string } | null }

async function putDirectory (dir: string, opts: PutOptions, s: Session, machine: boolean): Promise<void> {
  const { files, skipped } = await walk(dir, true)
  if (files.length === 0) throw new CliError(`${dir} holds no non-empty files`)
  s.totals.files = { done: 0, failed: 0, total: files.length }
  s.reporter.message(`sending ${files.length} files (${formatBytes(files.reduce((a, f) => a + f.size, 0))}) from ${dir}, ${opts.transfers} at a time${skipped > 0 ? `; skipping ${skipped} empty or hidden` : ''}`)
  s.reporter.start()
  const results: FileResult[] = files.map(f => ({ file: f.rel, size: f.size, summary: null, error: null }))
  const queue = new PQueue({ concurrency: opts.transfers })
  for (const [i, f] of files.entries()) {
    void queue.add(async () => {
      if (s.signal.aborted) return
      try {
        // Destinations hold flat names: a file is sent under its base name (a taken name gets -1, -2…).
        const src = await fileSource(f.path, basename(f.path))
        const summary = await putOne(src, opts, s, { statePath: statePathFor(f.path) })
        results[i]!.summary = summary
        results[i]!.error = summary.error
        if (summary.error !== null) s.totals.files!.failed++
        else s.totals.files!.done++
      } catch (err) {
        const gave = err instanceof GaveUp ? err : null
        results[i]!.summary = gave?.summary ?? null
        if (gave?.cause instanceof Interrupted) return
        results[i]!.error = gave !== null ? { code: gave.code, message: gave.detail } : { code: (err as { code?: string }).code ?? 'BWN_ERR_CLI', message: (err as Error).message }
        s.totals.files!.failed++
        s.reporter.message(`${f.rel}: ${results[i]!.error!.code}: ${results[i]!.error!.message}`)
      }
    })
  }
  await queue.onIdle()
  s.reporter.stop()
  const interrupted = s.signal.aborted
  const failed = results.filter(r => r.error !== null).length
  const completed = results.filter(r => r.error === null && r.summary !== null && r.summary.status !== 'interrupted').length
  const rows = [['FILE', 'SIZE', 'TRANSFER', 'STATUS', 'TIME'], ...results.map(r => [
    r.file, formatBytes(r.size), r.summary?.transfer_id ?? '-',
    r.error !== null ? `${r.summary?.status ?? 'failed'} (${r.error.code})` : r.summary?.status ?? 'not started',
    r.summary !== null ? formatDuration(r.summary.elapsed_ms) : '-'
  ])]
  const text = table(rows) + `${completed} of ${files.length} files ${opts.wait ? 'completed' : 'finalized'}${failed > 0 ? `, ${failed} failed` : ''}${interrupted ? ', interrupted' : ''}\n`
  if (machine) {
    process.stderr.write(text)
    process.stdout.write(JSON.stringify({
      event: 'transfer_put_batch', source: dir, files_total: files.length, files_done: completed, files_failed: failed, interrupted,
      files: results.map(r => ({ file: r.file, size: r.size, transfer_id: r.summary?.transfer_id ?? null, status: r.summary?.status ?? null, error: r.error, summary: r.summary }))
    }) + '\n')
  } else {
    process.stdout.write(text)
  }
  if (interrupted) {
    process.stderr.write(`interrupted: ${completed}/${files.length} files done; resume with: ${resumeCommand()}\n`)
    throw new Interrupted('')
  }
  if (failed > 0) throw new TransferEnded('BWN_ERR_CLI', `${failed} of ${files.length} files failed (see the table)`)
}

/**
 * A transfer id as the user typed it: a full UUID as is; a hex prefix of 4+ characters is looked up
 * among the key's transfers (like a short git hash). Anything else, or no match, is not found.
 */
async function resolveId (client: TransferApiClient, given: string): Promise<string> {
  const id = given.trim().toLowerCase()
  if (UUID.test(id)) return id
  const notFound = (): never => { throw new ApiProblem(404, 'BWN_ERR_TRANSFER_NOT_FOUND', `no transfer ${given} (ids are UUIDs; a prefix of 4 or more hex digits of one of your transfers works too)`) }
  if (!/^[0-9a-f][0-9a-f-]{3,35}$/.test(id)) return notFound()
  const matches: string[] = []
  for (let offset = 0; offset < PREFIX_SCAN_MAX; offset += LIST_PAGE) {
    const page = await client.list({ limit: LIST_PAGE, offset })
    for (const r of page.items) if (r.id.startsWith(id)) matches.push(r.id)
    if (page.items.length < LIST_PAGE || offset + LIST_PAGE >= page.total) break
  }
  if (matches.length === 1) return matches[0]!
  if (matches.length > 1) throw new UsageError(`${given} is ambiguous: ${matches.slice(0, 5).join(', ')}${matches.length > 5 ? ', …' : ''}`)
  return notFound()
}

/** An API 400 about the id itself (e.g. not a UUID) reads as what it is to the user: not found. */
function asNotFound (err: unknown, given: string): unknown {
  if (err instanceof ApiProblem && err.status === 400 && /\bid\b/.test(JSON.stringify(err.body))) return new ApiProblem(404, 'BWN_ERR_TRANSFER_NOT_FOUND', `no transfer ${given}`)
  return err
}

function humanRecord (r: TransferRecord): string {
  const lines = [
    `transfer ${r.id}: ${r.status}${r.error !== null ? ` (${r.error.code}: ${r.error.message})` : ''}`,
    `  name        ${r.transfer_name ?? r.metadata.name ?? '-'}`,
    // The destination gave it another name (the organization held that one already).
    // (An API from before the field has none.)
    ...(typeof r.stored_filename === 'string' && r.stored_filename !== (r.transfer_name ?? r.metadata.name) ? [`  stored as   ${r.stored_filename}`] : []),
    `  size        ${formatBytes(r.total_size)} in ${r.total_chunks} chunks of ${formatBytes(r.chunk_size)}`,
    `  chunks      received ${r.chunks.received}/${r.total_chunks}, delivered ${r.chunks.delivered}/${r.total_chunks}, verified ${r.chunks.verified}`,
    `  destination ${r.destination_id}`,
    `  created     ${r.created_at}${r.completed_at !== null ? `, completed ${r.completed_at}` : ''}`
  ]
  return lines.join('\n') + '\n'
}

export function transferCommand (): Command {
  const transfer = new Command('transfer').description('send files through a bwnet API and follow them')

  addClientOptions(transfer.command('put <source>'))
    .description('upload a file, a directory (-r) or stdin (-) in parallel chunks and wait until delivered; re-run to resume')
    .option('-r, --recursive', 'SOURCE is a directory: send every file under it, one transfer per file')
    .option('--destination <id>', 'destination id (default: the node\'s default destination)')
    .addOption(new Option('--dest <id>', 'same as --destination').hideHelp())
    .option('--tier <name>', 'transfer tier', DEFAULT_TIER)
    .option('--hotkey <ss58>', 'sender hotkey (default: the keystore\'s, BWN_KEYSTORE or .bwnet/hotkey.json, else a new one)')
    .option('--parallel <n>', `chunk uploads in flight per file (1..${MAX_PARALLEL})`, positiveInt(MAX_PARALLEL), DEFAULT_PARALLEL)
    .option('--transfers <n>', `files in flight for a directory (1..${MAX_TRANSFERS})`, positiveInt(MAX_TRANSFERS), DEFAULT_TRANSFERS)
    .option('--bwlimit <rate>', 'upload bandwidth limit in bytes/s, over all files: 512K, 10M, 1.5G', rateArg)
    .option('--size <bytes>', 'size of the data on stdin (SOURCE is -)', positiveInt(Number.MAX_SAFE_INTEGER))
    .option('--name <filename>', 'file name to send (default: the base name; "stdin" for -)')
    .option('--no-wait', 'return once finalized instead of waiting for delivery')
    .option('--no-progress', 'no progress bar or progress lines')
    .option('--json', 'machine output: the id first, one JSON summary line last (the default when stdout is not a terminal)')
    .option('--state <file>', 'resume state file (default: $BWN_STATE_DIR or ~/.bwnet/transfers, named by the file\'s path)')
    .option('--wait-timeout-s <s>', 'give up waiting after this many seconds', positiveInt(365 * 24 * 3600), DEFAULT_WAIT_TIMEOUT_S)
    .addOption(new Option('--max-chunks <n>', 'send at most N chunks, then stop (exit 3) as if interrupted').argParser(positiveInt(1_000_000)).hideHelp())
    .action(putAction)

  addClientOptions(transfer.command('list'))
    .description('your transfers, newest first')
    .addOption(new Option('--status <status>', 'only transfers in this status').choices(['pending', 'in_progress', 'completed', 'failed', 'cancelled']))
    .option('--limit <n>', 'at most this many (1..1000)', positiveInt(1000), 50)
    .option('--json', 'one JSON line: {items, total}')
    .action(async (opts: ClientFlags & { status?: Status, limit: number, json?: boolean }) => {
      const creds = await resolveCredentials(opts)
      const client = new TransferApiClient(creds.api, creds.key, { onWait: w => { if (w.reason === 'rate_limited') process.stderr.write(`rate limited, resuming in ${Math.ceil(w.ms / 1000)} s\n`) } })
      const items: TransferRecord[] = []
      let total = 0
      while (items.length < opts.limit) {
        const page = await client.list({ limit: Math.min(LIST_PAGE, opts.limit - items.length), offset: items.length, ...(opts.status !== undefined ? { status: opts.status } : {}) })
        items.push(...page.items)
        total = page.total
        if (page.items.length === 0 || items.length >= total) break
      }
      if (opts.json === true) { process.stdout.write(JSON.stringify({ items, total }) + '\n'); return }
      if (items.length === 0) { process.stderr.write(`no transfers${opts.status !== undefined ? ` in status ${opts.status}` : ''}\n`); return }
      process.stdout.write(table([['ID', 'STATUS', 'SIZE', 'DELIVERED', 'CREATED'], ...items.map(r => [
        r.id, r.status, formatBytes(r.total_size), `${r.chunks.delivered}/${r.total_chunks}`, r.created_at
      ])]))
      if (total > items.length) process.stderr.write(`${items.length} of ${total} shown (--limit)\n`)
    })

  addClientOptions(transfer.command('status <id>'))
    .description('a transfer\'s record (an id or a unique prefix of 4+ hex digits); JSON when stdout is not a terminal')
    .option('--json', 'one JSON line (the default when stdout is not a terminal)')
    .action(async (given: string, opts: ClientFlags & { json?: boolean }) => {
      const creds = await resolveCredentials(opts)
      const client = new TransferApiClient(creds.api, creds.key)
      let record: TransferRecord
      try { record = await client.get(await resolveId(client, given)) } catch (err) { throw asNotFound(err, given) }
      process.stdout.write(machineOutput(opts) ? JSON.stringify(record) + '\n' : humanRecord(record))
    })

  addClientOptions(transfer.command('cancel <id...>'))
    .description('cancel transfers (ids or unique prefixes): nothing more is delivered; frees a slot of your plan')
    .option('--json', 'one JSON line per transfer')
    .action(async (ids: string[], opts: ClientFlags & { json?: boolean }) => {
      const creds = await resolveCredentials(opts)
      const client = new TransferApiClient(creds.api, creds.key)
      let failures = 0
      let lastError: unknown = null
      for (const given of ids) {
        try {
          const record = await client.cancel(await resolveId(client, given))
          process.stdout.write(opts.json === true ? JSON.stringify(record) + '\n' : `${record.id} ${record.status}\n`)
        } catch (err) {
          const e = asNotFound(err, given)
          if (!(e instanceof ApiProblem) || ids.length === 1) throw e
          failures++
          lastError = e
          process.stderr.write(`bwnet: ${given}: ${e.message}\n`)
        }
      }
      if (failures > 0) throw new CliError(`${failures} of ${ids.length} cancels failed (last: ${(lastError as Error).message})`)
    })
  return transfer
}
