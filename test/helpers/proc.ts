// Runs the real `bwnet` CLI as a child process and reads its JSON log lines.
import { spawn, type ChildProcess } from 'node:child_process'
import { delimiter, dirname, join } from 'node:path'
import { once } from 'node:events'
import { typescriptNodeArgs } from '../../node/ts-runtime.ts'
import { invocation } from '../../node/commands/transfer/invocation.ts'

export const REPO = join(import.meta.dirname, '..', '..')

/**
 * How a CLI these helpers start names itself in the commands it prints (docs/cli.md#printed-commands):
 * this Node (by its path when it lies in the checkout: make's .toolchain/), from source.
 */
export const CLI_INVOCATION = invocation({}, join(REPO, 'node', 'cli.ts'), typescriptNodeArgs(), REPO, process.execPath)

export interface CliProcess {
  child: ChildProcess
  lines: Array<Record<string, any>>
  stderr (): string
  /** Resolves with the first log line matching `pred` (past or future); rejects after `timeoutMs`. */
  waitFor (pred: (line: Record<string, any>) => boolean, timeoutMs?: number, what?: string): Promise<Record<string, any>>
  /** Sends `signal` and resolves with the exit code and how long the exit took. */
  stop (signal?: NodeJS.Signals): Promise<{ code: number | null, ms: number }>
}

/**
 * `opts.prefix` runs the CLI through a wrapper command (e.g. `ip netns exec NAME`); `opts.nodeArgs` are
 * flags for node itself (e.g. `--cpu-prof`, which NODE_OPTIONS does not take).
 */
export function runCli (args: string[], env: Record<string, string> = {}, opts: { prefix?: string[], cwd?: string, nodeArgs?: string[] } = {}): CliProcess {
  const argv = [process.execPath, ...(opts.nodeArgs ?? []), ...typescriptNodeArgs(), join(REPO, 'node', 'cli.ts'), ...args]
  const [cmd, ...rest] = [...(opts.prefix ?? []), ...argv]
  const child = spawn(cmd!, rest, {
    cwd: opts.cwd ?? REPO, env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe']
  })
  const lines: Array<Record<string, any>> = []
  const waiters: Array<{ pred: (l: Record<string, any>) => boolean, resolve: (l: Record<string, any>) => void }> = []
  let buf = ''
  let err = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    buf += d
    let i
    while ((i = buf.indexOf('\n')) >= 0) {
      const raw = buf.slice(0, i); buf = buf.slice(i + 1)
      if (!raw.trim()) continue
      let line: Record<string, any>
      try { line = JSON.parse(raw) } catch { line = { msg: raw, unparsed: true } }
      lines.push(line)
      for (const w of [...waiters]) if (w.pred(line)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(line) }
    }
  })
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d })
  const exited = once(child, 'exit') as Promise<[number | null, string | null]>
  // What a timed-out wait shows of the process, so that a failure on a loaded machine can be read.
  const lastLines = (): string => lines.slice(-30).map(l => JSON.stringify(l).slice(0, 400)).join('\n')
  return {
    child,
    lines,
    stderr: () => err,
    waitFor (pred, timeoutMs = 20_000, what = 'log line') {
      const found = lines.find(pred)
      if (found) return Promise.resolve(found)
      return new Promise((resolve, reject) => {
        const w = { pred, resolve: (l: Record<string, any>) => { clearTimeout(timer); resolve(l) } }
        const timer = setTimeout(() => { waiters.splice(waiters.indexOf(w), 1); reject(new Error(`timed out waiting for ${what}; stderr: ${err.slice(-2000)}; last log lines:\n${lastLines()}`)) }, timeoutMs)
        waiters.push(w)
        void exited.then(([code]) => { if (waiters.includes(w)) { clearTimeout(timer); waiters.splice(waiters.indexOf(w), 1); reject(new Error(`process exited (${code}) before ${what}; stderr: ${err.slice(-2000)}`)) } })
      })
    },
    async stop (signal = 'SIGTERM') {
      if (child.exitCode !== null) return { code: child.exitCode, ms: 0 }
      const t0 = Date.now()
      child.kill(signal)
      const [code] = await exited
      return { code, ms: Date.now() - t0 }
    }
  }
}

/** Runs the CLI to completion; `opts.input` is written to its stdin (otherwise stdin is closed). */
export async function runCliOnce (args: string[], env: Record<string, string> = {}, opts: { input?: string | Buffer } = {}): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const child = spawn(process.execPath, [...typescriptNodeArgs(), join(REPO, 'node', 'cli.ts'), ...args], {
    cwd: REPO, env: { ...process.env, ...env }, stdio: [opts.input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe']
  })
  if (opts.input !== undefined) child.stdin!.end(opts.input)
  let stdout = ''; let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { stdout += d })
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  const [code] = await once(child, 'exit') as [number | null]
  return { code, stdout, stderr }
}

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes. */
export async function eventually<T> (fn: () => Promise<T | undefined | false>, timeoutMs: number, what: string, intervalMs = 100): Promise<T> {
  const end = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const v = await fn()
      if (v) return v
    } catch (err) { last = err }
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`)
    await new Promise(resolve => setTimeout(resolve, intervalMs))
  }
}

/** Runs a command line as a user would paste it (`sh -c`, in the checkout, `node` on PATH); stdout and stderr. */
export async function runShell (command: string, env: Record<string, string> = {}): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const path = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`
  const child = spawn('sh', ['-c', command], { cwd: REPO, env: { ...process.env, ...env, PATH: path }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''; let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { stdout += d })
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  const [code] = await once(child, 'exit') as [number | null]
  return { code, stdout, stderr }
}
