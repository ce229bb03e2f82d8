// The http-client bench runs with a tiny body: both clients measured in every round, CPU per GiB the
// median of the rounds, the ratio of the two, and the same result written to --out.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { runBench, BENCH_OWN_TIMEOUT_S } from '../helpers/bench.ts'

t.test('http-client bench: CPU per GiB received by node:http and by undici, and their ratio', async t => {
  const { code, stdout, stderr, result, out } = await runBench(t, 'http-client', ['--size-mib', '8', '--rounds', '3', '--hash', '--timeout-s', BENCH_OWN_TIMEOUT_S])
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)
  t.match(result, { bench: 'http-client', sizeBytes: 8 * 1024 * 1024, rounds: 3, hash: true })
  for (const client of ['node:http', 'undici']) {
    t.equal(result.perRound[client].length, 3, `${client} measured in every round`)
    t.ok(result.cpuSecondsPerGiB[client] > 0, `${client}: CPU per GiB is positive`)
  }
  t.ok(Math.abs(result.ratio.undiciOverNodeHttp - result.cpuSecondsPerGiB.undici / result.cpuSecondsPerGiB['node:http']) <= 0.01 + 0.01 * result.ratio.undiciOverNodeHttp, 'ratio of the two')
  t.match(stdout, /undici\/node:http = /, 'human line printed')
  t.same(JSON.parse(await readFile(out, 'utf8')), result, 'same result written to --out')
})
