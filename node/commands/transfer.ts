// `bwnet transfer put FILE` and `bwnet transfer status ID`: send a file through a bwnet API and follow
// it to completion (DESIGN §8). stdout carries the transfer id on its first line and one JSON summary
// line last; progress and messages go to stderr. Usage, resume and the state file: docs/cli.md.
import { Command, Option, InvalidArgumentError } from 'commander'
import { createHash } from 'node:crypto'
import { open, stat, type FileHandle } from 'node:fs/promises'
import { basename, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import PQueue from 'p-queue'
import cliProgress from 'cli-progress'
import { cryptoReady, newHotkey } from '../../protocol/index.ts'
import { readKeystore } from '../keystore.ts'
import { DEFAULT_KEYSTORE, CliError } from './keys.ts'
import { DEFAULT_API } from './admin.ts'
import { TransferApiClient, ApiProblem } from '../transfers/api-client.ts'
import { readState, stateMatches, statePathFor, StateWriter, STATE_VERSION, type UploadState } from '../transfers/upload-state.ts'
import type { TransferRecord } from '../../api/transfers.ts'
import { GaveUp, TransferEnded } from '../errors.ts'
export { GaveUp, TransferEnded }

export const DEFAULT_PARALLEL = 4 // chunk uploads in flight
export const MAX_PARALLEL = 64
export const DEFAULT_TIER = 'STANDARD'
export const POLL_START_MS = 250 // first status poll after finalize
export const POLL_MAX_MS = 5_000 // status poll interval cap
const POLL_FACTOR = 1.5

/** What one status poll saw: chunks delivered so far, and when (ms). */
export interface PollSample { delivered: number, atMs: number }

/**
 * The wait before the next status poll while `put` waits for completion. It backs off (× 1.5, up to
 * POLL_MAX_MS) as long as the transfer is far from done, but never waits past the moment the last two
 * polls' delivery rate predicts the last chunk delivered; once every chunk is delivered (verification
 * and the destination's completion follow within moments) it starts again from POLL_START_MS. So the
 * command returns close to the transfer's completion instead of up to POLL_MAX_MS after it, at the
 * cost of a few extra polls near the end.
 */
export function nextPollDelay (delay: number, prev: PollSample | null, cur: PollSample, total: number): number {
  const backoff = Math.min(POLL_MAX_MS, delay * POLL_FACTOR)
  if (cur.delivered >= total) return prev !== null && prev.delivered < total ? POLL_START_MS : backoff
  if (prev === null || cur.delivered <= prev.delivered || cur.atMs <= prev.atMs) return backoff
  const perMs = (cur.delivered - prev.delivered) / (cur.atMs - prev.atMs)
  const untilDelivered = (total - cur.delivered) / perMs
  return Math.max(POLL_START_MS, Math.min(backoff, Math.round(untilDelivered)))
}
export const DEFAULT_WAIT_TIMEOUT_S = 24 * 3600 // 1 day: how long `put` waits for completion
const PROGRESS_LINE_INTERVAL_MS = 2_000 // plain progress lines when stderr is not a TTY
const MAX_FINALIZE_ROUNDS = 3 // finalize → 409 missing → upload them → finalize again
/** Exit code when `--max-chunks` stopped the upload before every chunk was sent. */
export const EXIT_STOPPED_EARLY = 3
const MIB = 1024 * 1024

type Status = TransferRecord['status']

export interface PutSummary {
  event: 'transfer_put'
  transfer_id: string
  status: Status | 'stopped'
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
  state_file: string
  error: { code: string, message: string } | null
}

interface PutOptions {
  api: string
  key?: string
  dest?: string
  tier: string
  hotkey?: string
  parallel: number
  wait: boolean
  progress: boolean
  state?: string
  waitTimeoutS: number
  maxChunks?: number
}

function positiveInt (max: number) {
  return (value: string): number => {
    const n = Number(value)
    if (!Number.isInteger(n) || n < 1 || n > max) throw new InvalidArgumentError(`an integer 1..${max}`)
    return n
  }
}

function normaliseApi (api: string): string {
  let url: URL
  try { url = new URL(api) } catch { throw new CliError(`--api ${api} is not a URL`) }
  return url.toString().replace(/\/+$/, '')
}

/** --hotkey, else the keystore's address (BWN_KEYSTORE or .bwnet/hotkey.json), else a fresh one. */
async function senderHotkey (given: string | undefined): Promise<string> {
  if (given !== undefined) return given
  await cryptoReady()
  const path = process.env.BWN_KEYSTORE ?? DEFAULT_KEYSTORE
  const exists = await stat(path).then(() => true, () => false)
  // The hotkey only names the sender; nothing is signed with it here, so an unsaved one is enough.
  return exists ? (await readKeystore(path)).address : newHotkey().address
}

async function readChunk (fh: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length)
  let filled = 0
  while (filled < length) {
    const { bytesRead } = await fh.read(buf, filled, length - filled, offset + filled)
    if (bytesRead === 0) throw new CliError(`the file is shorter than when the transfer started (read ended at ${offset + filled})`)
    filled += bytesRead
  }
  return buf
}

/** A bar on a TTY (unless CI=true), plain periodic lines otherwise; both on stderr. */
class Progress {
  #bar: cliProgress.SingleBar | null = null
  #timer: NodeJS.Timeout | null = null
  #label = ''
  #value = 0
  #total = 0
  #unit = ''
  readonly #tty: boolean

  constructor (readonly enabled: boolean) {
    this.#tty = process.stderr.isTTY === true && process.env.CI !== 'true'
  }

  start (label: string, total: number, value: number, unit: string): void {
    this.stop()
    if (!this.enabled) return
    this.#label = label; this.#total = total; this.#value = value; this.#unit = unit
    if (this.#tty) {
      this.#bar = new cliProgress.SingleBar({
        stream: process.stderr, format: `${label.padEnd(8)} |{bar}| {percentage}% | {value}/{total} ${unit} | {detail}`, hideCursor: true
      }, cliProgress.Presets.shades_classic)
      this.#bar.start(total, value, { detail: '' })
    } else {
      this.#line('')
      this.#timer = setInterval(() => this.#line(''), PROGRESS_LINE_INTERVAL_MS)
      this.#timer.unref()
    }
  }

  update (value: number, detail = ''): void {
    this.#value = value
    this.#bar?.update(value, { detail })
  }

  #line (detail: string): void {
    process.stderr.write(`${this.#label}: ${this.#value}/${this.#total} ${this.#unit}${detail}\n`)
  }

  stop (): void {
    if (this.#bar !== null) { this.#bar.stop(); this.#bar = null }
    if (this.#timer !== null) { clearInterval(this.#timer); this.#timer = null; this.#line(' (done)') }
  }
}

async function resumable (client: TransferApiClient, state: UploadState): Promise<TransferRecord | null> {
  try {
    const record = await client.get(state.transfer_id)
    if (record.status === 'cancelled' || record.status === 'failed') {
      process.stderr.write(`previous transfer ${record.id} is ${record.status}; starting a new one\n`)
      return null
    }
    if (record.chunk_size !== state.chunk_size || record.total_chunks !== state.total_chunks) return null
    return record
  } catch (err) {
    if (err instanceof ApiProblem && err.status === 404) {
      process.stderr.write(`previous transfer ${state.transfer_id} is gone; starting a new one\n`)
      return null
    }
    throw err
  }
}

export async function putFile (file: string, opts: PutOptions): Promise<PutSummary> {
  const started = Date.now()
  if (opts.key === undefined || opts.key === '') throw new CliError('an API key is needed (--key or BWN_KEY)')
  const api = normaliseApi(opts.api)
  const info = await stat(file).catch((err: NodeJS.ErrnoException) => { throw new CliError(`cannot read ${file}: ${err.code ?? err.message}`) })
  if (!info.isFile()) throw new CliError(`${file} is not a regular file`)
  if (info.size === 0) throw new CliError(`${file} is empty; there is nothing to send`)
  const client = new TransferApiClient(api, opts.key)
  const statePath = opts.state ?? statePathFor(file)
  const want = { file, size: info.size, mtimeMs: info.mtimeMs, api, destinationId: opts.dest ?? null, tier: opts.tier }

  let record: TransferRecord | null = null
  let previous = await readState(statePath)
  if (previous !== null && stateMatches(previous, want)) record = await resumable(client, previous)
  else previous = null
  const resumed = record !== null
  if (record === null) {
    record = await client.create({
      sender_hotkey: await senderHotkey(opts.hotkey), total_size: info.size, filename: basename(file), tier: opts.tier,
      ...(opts.dest !== undefined ? { destination_id: opts.dest } : {})
    })
  }
  const writer = new StateWriter(statePath, {
    version: STATE_VERSION, file: resolve(file), size: info.size, mtime_ms: info.mtimeMs, api, transfer_id: record.id,
    destination_id: opts.dest ?? null, tier: opts.tier, sender_hotkey: record.sender_hotkey,
    chunk_size: record.chunk_size, total_chunks: record.total_chunks, acked: resumed ? previous!.acked : []
  })
  await writer.flush()
  // First line of stdout: scripts read the id from here.
  process.stdout.write(`${record.id}\n`)
  if (record.total_size !== info.size) throw new CliError(`the API planned ${record.total_size} bytes for a ${info.size}-byte file`)

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
  // From here on the transfer id is known: giving up still ends stdout with the JSON summary, its
  // `error` naming the code (the action prints it; see GaveUp).
  try {
    if (record.status === 'completed') { summary.chunks_skipped = record.total_chunks; return finish('completed') }

    const progress = new Progress(opts.progress)
    const id = record.id
    const chunkSize = record.chunk_size
    const fh = await open(file, 'r')
    try {
      const upload = async (indices: number[]): Promise<void> => {
        const queue = new PQueue({ concurrency: opts.parallel })
        let failure: unknown = null
        let done = 0
        const t0 = Date.now()
        progress.start('upload', indices.length, 0, 'chunks')
        for (const index of indices) {
          void queue.add(async () => {
            if (failure !== null) return
            const offset = index * chunkSize
            const length = Math.min(chunkSize, info.size - offset)
            const bytes = await readChunk(fh, offset, length)
            const sha256 = createHash('sha256').update(bytes).digest('hex')
            const { ack, created } = await client.putChunk(id, index, bytes, sha256)
            if (ack.sha256 !== sha256) throw new CliError(`chunk ${index}: the API stored sha256 ${ack.sha256}, not ${sha256}`)
            await writer.ack(index)
            summary.chunks_uploaded++
            summary.bytes_uploaded += length
            if (created) summary.chunks_created++
            else summary.chunks_duplicate++
            done++
            const secs = (Date.now() - t0) / 1000
            progress.update(done, `${(summary.bytes_uploaded / MIB / Math.max(secs, 1e-3)).toFixed(1)} MiB/s`)
          }).catch((err: unknown) => { failure ??= err; queue.clear() })
        }
        await queue.onIdle()
        summary.upload_ms += Date.now() - t0
        progress.stop()
        if (failure !== null) throw failure
      }

      if (!record.finalize_requested) {
        let missing = [...Array(record.total_chunks).keys()].filter(i => !writer.acked.has(i))
        summary.chunks_skipped = record.total_chunks - missing.length
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
            if (!(err instanceof ApiProblem && err.code === 'BWN_ERR_CHUNKS_MISSING') || round >= MAX_FINALIZE_ROUNDS) throw err
            missing = (err.body.missing_chunks as number[] | undefined) ?? []
            for (const i of missing) writer.acked.delete(i)
            await writer.flush()
          }
        }
      }
    } finally {
      await fh.close()
    }
    if (!opts.wait) return finish(record.status)

    const deadline = Date.now() + opts.waitTimeoutS * 1000
    let delay = POLL_START_MS
    let sample: PollSample = { delivered: record.chunks.delivered, atMs: Date.now() }
    progress.start('deliver', record.total_chunks, record.chunks.delivered, 'chunks')
    try {
      while (record.status !== 'completed' && record.status !== 'failed' && record.status !== 'cancelled') {
        if (Date.now() > deadline) throw new CliError(`transfer ${id} is still ${record.status} after ${opts.waitTimeoutS} s; run \`bwnet transfer status ${id}\` later`)
        await sleep(delay)
        record = await client.get(id)
        const next: PollSample = { delivered: record.chunks.delivered, atMs: Date.now() }
        delay = nextPollDelay(delay, sample, next, record.total_chunks)
        sample = next
        progress.update(record.chunks.delivered, `verified ${record.chunks.verified}`)
      }
    } finally {
      progress.stop()
    }
    if (record.error !== null) summary.error = record.error
    else if (record.status !== 'completed') summary.error = { code: 'BWN_ERR_TRANSFER_CLOSED', message: `the transfer was ${record.status}` }
    return finish(record.status)
  } catch (err) {
    throw new GaveUp(err, finish(summary.status))
  }
}

export function transferCommand (): Command {
  const transfer = new Command('transfer').description('send files through a bwnet API and follow them')
  const apiOption = (): Option => new Option('--api <url>', 'API base URL').env('BWN_API').default(DEFAULT_API)
  const keyOption = (): Option => new Option('--key <key>', 'client API key').env('BWN_KEY')

  transfer.command('put <file>')
    .description('upload FILE in parallel chunks, finalize, and wait until it is delivered; re-run to resume')
    .addOption(apiOption())
    .addOption(keyOption())
    .option('--dest <id>', 'destination id (default: the node\'s default destination)')
    .option('--tier <name>', 'transfer tier', DEFAULT_TIER)
    .option('--hotkey <ss58>', 'sender hotkey (default: the keystore\'s, BWN_KEYSTORE or .bwnet/hotkey.json, else a new one)')
    .option('--parallel <n>', 'chunk uploads in flight', positiveInt(MAX_PARALLEL), DEFAULT_PARALLEL)
    .option('--no-wait', 'return once finalized instead of waiting for completion')
    .option('--no-progress', 'no progress bar or progress lines')
    .option('--state <file>', 'resume state file (default: $BWN_STATE_DIR or ~/.bwnet/transfers, named by the file\'s path)')
    .option('--wait-timeout-s <s>', 'give up waiting after this many seconds', positiveInt(365 * 24 * 3600), DEFAULT_WAIT_TIMEOUT_S)
    .addOption(new Option('--max-chunks <n>', 'send at most N chunks, then stop (exit 3) as if interrupted').argParser(positiveInt(1_000_000)).hideHelp())
    .action(async (file: string, opts: PutOptions) => {
      let summary: PutSummary
      try {
        summary = await putFile(file, opts)
      } catch (err) {
        if (!(err instanceof GaveUp)) throw err
        // Giving up prints what docs/cli.md promises: the summary with the error's code, then the code on stderr.
        err.summary.error = { code: err.code, message: err.detail }
        process.stdout.write(JSON.stringify(err.summary) + '\n')
        throw err
      }
      process.stdout.write(JSON.stringify(summary) + '\n')
      if (summary.status === 'stopped') { process.exitCode = EXIT_STOPPED_EARLY; return }
      if (summary.error !== null) throw new TransferEnded(summary.error.code, `transfer ${summary.transfer_id} ${summary.status}: ${summary.error.message}`)
    })

  transfer.command('status <id>')
    .description('print a transfer\'s record as one JSON line')
    .addOption(apiOption())
    .addOption(keyOption())
    .action(async (id: string, opts: { api: string, key?: string }) => {
      if (opts.key === undefined || opts.key === '') throw new CliError('an API key is needed (--key or BWN_KEY)')
      const record = await new TransferApiClient(normaliseApi(opts.api), opts.key).get(id)
      process.stdout.write(JSON.stringify(record) + '\n')
    })
  return transfer
}
