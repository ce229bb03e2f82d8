// The ingest bench runs end to end with tiny sizes: both paths measured in every round, a ratio that
// matches the two medians, every chunk read back and verified, the same result written to --out.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { runBench, BENCH_OWN_TIMEOUT_S } from '../helpers/bench.ts'

t.test('ingest bench prints API and baseline throughput with their ratio', async t => {
  const { code, stdout, stderr, result, out } = await runBench(t, 'ingest', ['--chunk-mib', '1', '--chunks', '3', '--rounds', '2', '--timeout-s', BENCH_OWN_TIMEOUT_S])
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)

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
