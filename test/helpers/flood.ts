// Runs the rogue flood (test/helpers/rogue-flood.ts, a child process) against one node while sampling
// an HTTP endpoint's latency, sequentially, until the flood ends. Shared by the flood test and bench.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { REPO } from './proc.ts'
import { typescriptNodeArgs } from '../../node/ts-runtime.ts'

export interface FloodReport { sent: number, refusedSends: number, disconnectedAtMs: number | null, reconnected: boolean, ms: number, hotkey: string, publicKey: string }

/** Samples `url` back to back (one request in flight) until `until` resolves; returns latencies (ms). */
export async function sampleLatency (url: string, until: Promise<unknown>, gapMs = 10): Promise<{ latencies: number[], failures: number }> {
  let done = false
  void until.finally(() => { done = true })
  const latencies: number[] = []
  let failures = 0
  while (!done) {
    const t0 = performance.now()
    try {
      const res = await fetch(url)
      await res.arrayBuffer()
      if (res.ok) latencies.push(performance.now() - t0); else failures++
    } catch { failures++ }
    await new Promise(resolve => setTimeout(resolve, gapMs))
  }
  return { latencies, failures }
}

export function percentile (values: readonly number[], p: number): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(p / 100 * sorted.length) - 1)]!
}

/**
 * Starts the flood child; resolves `connected` once it is attached. It floods on `go()` (call it once the
 * target has bound the rogue's announce); `done` resolves with its report.
 */
export function startFlood (args: { bootstrap: string[], network: string, target: string, durationMs: number, maxFrames: number, seed?: string }): { connected: Promise<{ hotkey: string, publicKey: string }>, go (): void, done: Promise<FloodReport>, kill (): void } {
  const child = spawn(process.execPath, [...typescriptNodeArgs(), join(REPO, 'test', 'helpers', 'rogue-flood.ts'), JSON.stringify(args)], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''; let err = ''
  let onConnected!: (v: { hotkey: string, publicKey: string }) => void
  const connected = new Promise<{ hotkey: string, publicKey: string }>(resolve => { onConnected = resolve })
  let first: { hotkey: string, publicKey: string } | null = null
  child.stderr.setEncoding('utf8').on('data', (d: string) => { err += d })
  const done = new Promise<FloodReport>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d
      for (const line of out.split('\n').slice(0, -1)) {
        const l = JSON.parse(line)
        if (l.event === 'connected' && first === null) { first = l; onConnected(l) }
        if (l.event === 'done') resolve({ ...l, hotkey: first?.hotkey, publicKey: first?.publicKey })
      }
      out = out.slice(out.lastIndexOf('\n') + 1)
    })
    child.on('exit', (code) => reject(new Error(`flood process exited (${code}) without a report: ${err.slice(-2000)}`)))
  })
  return { connected, go: () => { child.stdin.end('go\n') }, done, kill: () => { if (child.exitCode === null) child.kill('SIGKILL') } }
}
