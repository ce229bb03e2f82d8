// Progress of `bwnet transfer put` on stderr: bytes, rate, ETA and chunk counts for upload and for
// delivery, and a visible notice while a retry waits ("rate limited, resuming in 23 s"). The put
// updates counters (Totals); the reporter reads them on its own clock: on a TTY one line redrawn
// every 250 ms, otherwise a plain line every refresh interval (2 s; BWN_PROGRESS_INTERVAL_MS), so
// the output never goes silent for longer than that while anything is pending.
import type { RetryWait } from './api-client.ts'

export const TTY_REFRESH_MS = 250
export const PLAIN_REFRESH_MS = 2_000
const RATE_WINDOW_MS = 10_000 // rate = bytes over the last 10 s
const BAR_WIDTH = 20

/**
 * `bytesDone` counts what is there (shown as done); `bytesSkipped` the part of it that was there before
 * this run (a resume's chunks already held, a delivery already made): the rate leaves it out.
 */
export interface PhaseCounters { chunksDone: number, chunksTotal: number, bytesDone: number, bytesTotal: number, bytesSkipped: number }

/** What a put has done so far; the put mutates it, the reporter reads it. */
export interface Totals {
  phase: 'upload' | 'deliver'
  upload: PhaseCounters
  deliver: PhaseCounters & { verified: number }
  /** Set for a put of several files. */
  files: { done: number, failed: number, total: number } | null
}

export function newTotals (): Totals {
  return {
    phase: 'upload',
    upload: { chunksDone: 0, chunksTotal: 0, bytesDone: 0, bytesTotal: 0, bytesSkipped: 0 },
    deliver: { chunksDone: 0, chunksTotal: 0, bytesDone: 0, bytesTotal: 0, bytesSkipped: 0, verified: 0 },
    files: null
  }
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
export function formatBytes (n: number): string {
  let v = n
  let u = 0
  while (v >= 1024 && u < UNITS.length - 1) { v /= 1024; u++ }
  return u === 0 ? `${Math.round(v)} B` : `${v.toFixed(v >= 100 ? 0 : 1)} ${UNITS[u]}`
}

export function formatDuration (ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`
}

/** Bytes per second over a sliding window of samples. */
class Rate {
  #samples: Array<[number, number]> = []
  sample (now: number, bytes: number): void {
    const last = this.#samples.at(-1)
    if (last !== undefined && bytes < last[1]) this.#samples = [] // a new phase or a restarted chunk
    this.#samples.push([now, bytes])
    while (this.#samples.length > 2 && now - this.#samples[0]![0] > RATE_WINDOW_MS) this.#samples.shift()
  }

  perSecond (): number | null {
    if (this.#samples.length < 2) return null
    const [t0, b0] = this.#samples[0]!
    const [t1, b1] = this.#samples.at(-1)!
    return t1 - t0 < 500 ? null : (b1 - b0) / ((t1 - t0) / 1000)
  }
}

export type ProgressMode = 'tty' | 'plain' | 'off'

export function progressMode (enabled: boolean, stream: NodeJS.WriteStream = process.stderr, env: NodeJS.ProcessEnv = process.env): ProgressMode {
  if (!enabled) return 'off'
  return stream.isTTY === true && env.CI !== 'true' && env.TERM !== 'dumb' ? 'tty' : 'plain'
}

export class ProgressReporter {
  readonly totals: Totals
  readonly #mode: ProgressMode
  readonly #stream: NodeJS.WriteStream
  readonly #interval: number
  readonly #now: () => number
  #timer: NodeJS.Timeout | null = null
  #wait: { until: number, text: string } | null = null
  #drawn = false
  #rates = { upload: new Rate(), deliver: new Rate() }
  #lastPlainPhase: Totals['phase'] | null = null

  constructor (totals: Totals, opts: { mode: ProgressMode, stream?: NodeJS.WriteStream, intervalMs?: number, now?: () => number }) {
    this.totals = totals
    this.#mode = opts.mode
    this.#stream = opts.stream ?? process.stderr
    const env = Number(process.env.BWN_PROGRESS_INTERVAL_MS)
    this.#interval = opts.intervalMs ?? (opts.mode === 'tty' ? TTY_REFRESH_MS : Number.isInteger(env) && env >= 100 ? env : PLAIN_REFRESH_MS)
    this.#now = opts.now ?? Date.now
  }

  get intervalMs (): number { return this.#interval }

  /** Starts the refresh timer (before the transfer is even created: a wait for the API shows too). */
  start (): void {
    if (this.#mode === 'off' || this.#timer !== null) return
    this.#timer = setInterval(() => this.tick(), this.#interval)
    this.#timer.unref()
    this.tick()
  }

  /** Whether there is anything to show: a planned transfer, a batch, or a wait. */
  #planned (): boolean {
    return this.totals.files !== null || this.totals.upload.chunksTotal > 0
  }

  /** Renders now (the timer calls it; a phase change or a notice calls it at once). */
  tick (): void {
    if (this.#mode === 'off') return
    const now = this.#now()
    // Moved in this run only: bytes already there (a resume) are done, not sent at some rate.
    this.#rates.upload.sample(now, this.totals.upload.bytesDone - this.totals.upload.bytesSkipped)
    this.#rates.deliver.sample(now, this.totals.deliver.bytesDone - this.totals.deliver.bytesSkipped)
    if (this.#wait !== null && now >= this.#wait.until) this.#wait = null
    if (!this.#planned() && this.#wait === null) return
    const line = this.line(now)
    if (this.#mode === 'tty') {
      // A pseudo-terminal without a size reports 0 columns: then COLUMNS, else 100.
      const width = Math.max(20, (this.#stream.columns > 0 ? this.#stream.columns : Number(process.env.COLUMNS) > 0 ? Number(process.env.COLUMNS) : 100) - 1)
      this.#stream.write(`\r\x1b[2K${line.length > width ? line.slice(0, width - 1) + '…' : line}`)
      this.#drawn = true
    } else {
      this.#lastPlainPhase = this.totals.phase
      this.#stream.write(line + '\n')
    }
  }

  /** The phase changed (upload → deliver): a plain line for the new phase at once. */
  phase (phase: Totals['phase']): void {
    if (this.totals.phase === phase) return
    if (this.#mode === 'plain' && this.#lastPlainPhase !== null) this.tick() // the last word on the old phase
    this.totals.phase = phase
    if (this.#timer !== null) this.tick()
  }

  /** A retry wait started: shown at once and counted down until it ends. */
  waiting (wait: RetryWait): void {
    const until = this.#now() + wait.ms
    const text = wait.reason === 'rate_limited'
      ? `rate limited${wait.code !== null && wait.code !== 'BWN_ERR_RATE_LIMITED' ? ` (${wait.code})` : ''}`
      : `API unavailable${wait.status !== null ? ` (${wait.status})` : ''}`
    // Parallel requests wait too: keep the latest end.
    if (this.#wait === null || until > this.#wait.until || this.#wait.text !== text) this.#wait = { until, text }
    if (this.#mode === 'off') {
      if (wait.ms >= 1000) this.#stream.write(`${text}, resuming in ${Math.ceil(wait.ms / 1000)} s\n`)
      return
    }
    if (this.#mode === 'plain') this.#stream.write(`${text}, resuming in ${Math.ceil(wait.ms / 1000)} s\n`)
    else this.tick()
  }

  /** A line of its own (above the bar on a TTY). */
  message (text: string): void {
    if (this.#mode === 'tty' && this.#drawn) { this.#stream.write('\r\x1b[2K' + text + '\n'); this.tick(); return }
    this.#stream.write(text + '\n')
  }

  stop (): void {
    if (this.#timer !== null) {
      clearInterval(this.#timer)
      this.#timer = null
      if (this.#mode === 'plain') this.tick()
    }
    if (this.#mode === 'tty' && this.#drawn) {
      this.tick()
      this.#stream.write('\n')
      this.#drawn = false
    }
  }

  line (now = this.#now()): string {
    const t = this.totals
    const parts: string[] = []
    const phaseText = (name: 'upload' | 'deliver'): string => {
      const c = t[name]
      if (c.chunksTotal === 0) return 'creating transfers'
      const rate = this.#rates[name].perSecond()
      const bits = [`${c.chunksDone}/${c.chunksTotal} chunks${name === 'deliver' ? ` (verified ${t.deliver.verified})` : ''}`]
      if (c.bytesTotal > 0) bits.push(`${formatBytes(c.bytesDone)}/${formatBytes(c.bytesTotal)}`)
      if (rate !== null) bits.push(`${formatBytes(rate)}/s`)
      if (rate !== null && rate > 0 && c.bytesDone < c.bytesTotal) bits.push(`ETA ${formatDuration((c.bytesTotal - c.bytesDone) / rate * 1000)}`)
      return bits.join(', ')
    }
    const bar = (c: PhaseCounters): string => {
      const frac = c.bytesTotal > 0 ? c.bytesDone / c.bytesTotal : c.chunksTotal > 0 ? c.chunksDone / c.chunksTotal : 0
      const full = Math.min(BAR_WIDTH, Math.floor(frac * BAR_WIDTH))
      return `[${'#'.repeat(full)}${'-'.repeat(BAR_WIDTH - full)}] ${String(Math.floor(frac * 100)).padStart(3)}% `
    }
    if (!this.#planned()) {
      parts.push(`${t.phase}: creating the transfer`)
    } else if (t.files !== null) {
      parts.push(`files: ${t.files.done}/${t.files.total} done${t.files.failed > 0 ? `, ${t.files.failed} failed` : ''}`)
      parts.push(`upload: ${phaseText('upload')}`)
      if (t.deliver.chunksTotal > 0) parts.push(`deliver: ${phaseText('deliver')}`)
    } else {
      parts.push(`${t.phase}: ${this.#mode === 'tty' ? bar(t[t.phase]) : ''}${phaseText(t.phase)}`)
    }
    let line = parts.join(' | ')
    if (this.#wait !== null) line += `; ${this.#wait.text}, resuming in ${Math.max(1, Math.ceil((this.#wait.until - now) / 1000))} s`
    return line
  }
}
