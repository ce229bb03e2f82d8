// The ingest bench runs end to end with tiny sizes: both paths measured in every round, a ratio that
// matches the two medians, every chunk read back and verified, the same result written to --out.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO } from '../helpers/proc.ts'

const RUN_TIMEOUT_MS = 28_000 // the bench's own limit is set below this

t.test('ingest bench prints API and baseline throughput with their ratio', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-bench-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const out = join(dir, 'ingest.json')
  const child = spawn(process.execPath, [
    '--import', 'tsx', join(REPO, 'bench', 'ingest', 'run.ts'),
    '--chunk-mib', '1', '--chunks', '3', '--rounds', '2', '--timeout-s', '25', '--out', out
  ], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
  const killer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS)
  t.teardown(() => { clearTimeout(killer); if (child.exitCode === null) child.kill('SIGKILL') })
  let stdout = ''; let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d })
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  const [code] = await once(child, 'exit') as [number | null]
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)

  const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '')
  t.match(result, { bench: 'ingest', chunkBytes: 1024 * 1024, chunksPerRound: 3, rounds: 2, parallel: 4 })
  for (const path of ['bwnet', 'baseline']) {
    t.ok(result.mbPerSec[path] > 0, `${path} ${result.mbPerSec[path]} MB/s > 0`)
    t.equal(result.perRoundMbPerSec[path].length, 2, `${path} measured in both rounds`)
  }
  t.ok(Math.abs(result.ratio.bwnetOverBaseline - result.mbPerSec.bwnet / result.mbPerSec.baseline) <= 0.01 + 0.01 * result.ratio.bwnetOverBaseline, 'ratio of the medians')
  t.equal(result.chunksVerified, 2 * (1 + 2 * 3), 'every chunk (warm-up included) read back on both paths')
  t.match(stdout, /bwnet\/baseline = /, 'human table printed')
  t.same(JSON.parse(await readFile(out, 'utf8')), result, 'same result written to --out')
})
