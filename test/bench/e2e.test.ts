// The e2e bench runs end to end with a tiny file: a devnet delivery and a direct PUT, both verified
// against the source's sha256, timed in every round, the ratio of the medians, the result in --out.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO } from '../helpers/proc.ts'

const RUN_TIMEOUT_MS = 28_000 // the bench's own limit is set below this

t.test('e2e bench prints devnet delivery and direct PUT times with their ratio', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-bench-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const out = join(dir, 'e2e.json')
  const child = spawn(process.execPath, [
    '--import', 'tsx', join(REPO, 'bench', 'e2e', 'run.ts'),
    '--size-mib', '2', '--rounds', '1', '--timeout-s', '25', '--out', out
  ], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
  const killer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS)
  t.teardown(() => { clearTimeout(killer); if (child.exitCode === null) child.kill('SIGKILL') })
  let stdout = ''; let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d })
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  const [code] = await once(child, 'exit') as [number | null]
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)

  const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '')
  t.match(result, { bench: 'e2e', sizeBytes: 2 * 1024 * 1024, rounds: 1, workers: 2, verified: true, sha256: /^[0-9a-f]{64}$/ })
  for (const path of ['bwnet', 'baseline']) {
    t.ok(result.seconds[path] > 0, `${path} took ${result.seconds[path]} s`)
    t.equal(result.perRoundSeconds[path].length, 1)
  }
  t.ok(Math.abs(result.ratio.bwnetOverBaseline - result.seconds.bwnet / result.seconds.baseline) <= 0.02 * result.ratio.bwnetOverBaseline + 0.05, 'ratio of the medians')
  t.ok(result.bwnetCliSeconds[0] >= result.seconds.bwnet * 0.5, 'the CLI saw the whole delivery')
  t.match(stdout, /bwnet\/baseline = /, 'human table printed')
  t.same(JSON.parse(await readFile(out, 'utf8')), result, 'same result written to --out')
})
