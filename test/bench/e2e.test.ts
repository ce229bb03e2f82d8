// The e2e bench runs end to end with a tiny file: a devnet delivery and a direct PUT, both verified
// against the source's sha256, timed in every round, the ratio of the medians, the result in --out.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { runBench, BENCH_OWN_TIMEOUT_S } from '../helpers/bench.ts'

t.test('e2e bench prints devnet delivery and direct PUT times with their ratio', async t => {
  const { code, stdout, stderr, result, out } = await runBench(t, 'e2e', ['--size-mib', '2', '--rounds', '1', '--timeout-s', BENCH_OWN_TIMEOUT_S])
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)

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
