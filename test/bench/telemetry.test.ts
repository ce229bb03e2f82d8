// The telemetry bench runs end to end in a short configuration: three positive rates, ratios, and
// the 304 path really answered 304 (the bench fails on any other status).
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO } from '../helpers/proc.ts'

const RUN_TIMEOUT_MS = 60_000

t.test('telemetry bench prints req/s and p99 of the network read, its 304 path and a bare route', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-bench-telemetry-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const out = join(dir, 'telemetry.json')
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'bench', 'telemetry', 'run.ts'), '--seconds', '0.3', '--rounds', '1', '--concurrency', '4', '--out', out], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
  const killer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS)
  t.teardown(() => { clearTimeout(killer); if (child.exitCode === null) child.kill('SIGKILL') })
  let stdout = ''; let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d })
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  const [code] = await once(child, 'exit') as [number | null]
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)
  const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}')
  for (const p of ['bare', 'telemetry', 'telemetry304']) {
    t.ok(result[p].rps > 0, `${p} req/s`)
    t.ok(result[p].p99Ms > 0, `${p} p99`)
  }
  t.ok(result.ratios.telemetryVsBareRps > 0)
  t.ok(result.ratios.telemetry304VsBareRps > 0)
  t.same(JSON.parse(await readFile(out, 'utf8')), result)
  t.match(stderr, /ratios/)
})
