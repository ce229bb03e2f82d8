// The transport bench runs end to end with tiny sizes: each path's figure the median of its rounds, consistent ratios,
// every path's first transfer hashing to the served payload, and the same result written to --out.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { runBench, BENCH_OWN_TIMEOUT_S } from '../helpers/bench.ts'

t.test('transport bench prints swarm, HTTP and TCP throughput with their ratios', async t => {
  const { code, stdout, stderr, result, out } = await runBench(t, 'transport', ['--chunk-mib', '1', '--total-mib', '4', '--rounds', '2', '--timeout-s', BENCH_OWN_TIMEOUT_S])
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)

  t.equal(result.bench, 'transport')
  for (const path of ['swarm', 'http', 'tcp']) {
    const rounds: number[] = result.perRoundMiBPerSec[path]
    t.equal(rounds.length, 2, `${path} measured in both rounds`)
    t.ok(rounds.every(x => Number.isFinite(x)), `${path}: a finite throughput in every round`)
    t.ok(Math.abs(result.mibPerSec[path] - (rounds[0]! + rounds[1]!) / 2) <= 0.02, `${path}: the reported ${result.mibPerSec[path]} MiB/s is the median of its rounds`)
    t.equal(result.firstTransferSha256[path], result.sha256, `${path} first transfer carries the payload`)
  }
  const close = (a: number, b: number): boolean => Math.abs(a - b) <= 0.01 * Math.max(1, b)
  t.ok(close(result.ratio.swarmOverHttp, result.mibPerSec.swarm / result.mibPerSec.http), 'swarm/http ratio')
  t.ok(close(result.ratio.swarmOverTcp, result.mibPerSec.swarm / result.mibPerSec.tcp), 'swarm/tcp ratio')
  t.ok(close(result.ratio.httpOverTcp, result.mibPerSec.http / result.mibPerSec.tcp), 'http/tcp ratio')
  t.equal(result.transfersPerPath, 4)
  t.match(stdout, /swarm\/http/, 'human table printed')
  t.same(JSON.parse(await readFile(out, 'utf8')), result, 'same result written to --out')
})
