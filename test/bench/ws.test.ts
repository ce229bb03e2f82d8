// The ws bench runs end to end in a short configuration against a real devnet: every subscriber got
// every event of a real transfer in both phases, latencies and the ratio are reported.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { runBench, BENCH_OWN_TIMEOUT_S } from '../helpers/bench.ts'

t.test('ws bench on a devnet: fan-out of one transfer\'s events to several subscribers', async t => {
  const { code, stderr, result, out } = await runBench(t, 'ws', ['--subscribers', '4', '--size-mib', '20', '--timeout-s', BENCH_OWN_TIMEOUT_S])
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)
  for (const phase of ['baseline', 'fanout']) {
    t.equal(result[phase].status, 'completed')
    t.equal(result[phase].everySubscriberGotEveryEvent, true, `${phase}: every subscriber got every event`)
    t.equal(result[phase].allClosedNormally, true)
    t.ok(result[phase].events >= 2 * 3 + 3, `${phase}: status and chunk events of a 2-chunk transfer (${result[phase].events})`)
    t.ok(result[phase].liveSamples >= result[phase].subscribers, `${phase}: live latency samples`)
    t.ok(Number.isFinite(result[phase].medianMs) && result[phase].medianMs >= 0, `${phase} median`)
  }
  t.equal(result.fanout.subscribers, 4)
  t.ok(Number.isFinite(result.ratio.medianVsBaseline), 'ratio against the same-run baseline')
  t.same(JSON.parse(await readFile(out, 'utf8')), result)
  t.match(stderr, /ratios/)
})
