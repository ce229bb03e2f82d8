// Runs a bench script the way `npm run bench:*` does, with tiny sizes, and returns what it printed:
// its exit code, stdout, stderr, the final JSON line and the --out file path.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO } from './proc.ts'
import { typescriptNodeArgs } from '../../node/ts-runtime.ts'

/** Generous: smoke runs share 2 cores with the rest of the suite. The bench's own --timeout-s is below it. */
export const BENCH_KILL_MS = 120_000
export const BENCH_OWN_TIMEOUT_S = '100'

export async function runBench (t: { teardown (fn: () => unknown): void }, bench: string, args: string[]): Promise<{ code: number | null, stdout: string, stderr: string, result: any, out: string }> {
  const dir = await mkdtemp(join(tmpdir(), `bwnet-bench-${bench}-`))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const out = join(dir, `${bench}.json`)
  const child = spawn(process.execPath, [...typescriptNodeArgs(), join(REPO, 'bench', bench, 'run.ts'), ...args, '--out', out], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
  const killer = setTimeout(() => child.kill('SIGKILL'), BENCH_KILL_MS)
  t.teardown(() => { clearTimeout(killer); if (child.exitCode === null) child.kill('SIGKILL') })
  let stdout = ''; let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d })
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  const [code] = await once(child, 'exit') as [number | null]
  clearTimeout(killer)
  let result: any = null
  try { result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') } catch {}
  return { code, stdout, stderr, result, out }
}
