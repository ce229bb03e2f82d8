// The telemetry bench runs end to end in a short configuration against a real devnet: the network
// summary it reads carries the evidence of a completed transfer, every path was measured (the 304
// path really answered 304: the bench fails on any other status), ratios and goals are reported.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { runBench } from '../helpers/bench.ts'

t.test('telemetry bench on a devnet: req/s, p99 and server CPU of the network read, its 304 path and a bare route', async t => {
  const { code, stderr, result, out } = await runBench(t, 'telemetry', ['--seconds', '0.3', '--rounds', '1', '--concurrency', '4'])
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)
  t.equal(result.target, 'devnet')
  t.ok(result.evidenceTasks >= 1, 'the devnet completed a transfer before the measurement')
  for (const p of ['bare', 'bare304', 'telemetry', 'telemetry304']) {
    t.ok(result[p].requests >= 4, `${p}: at least one request per connection`)
    t.ok(Number.isFinite(result[p].p99Ms) && result[p].p99Ms > 0, `${p} p99`)
    t.ok(Number.isFinite(result[p].serverCpuUsPerRequest), `${p} server CPU per request`)
  }
  for (const k of ['telemetryVsBareRps', 'telemetry304VsBareRps', 'telemetryVsBareCpu', 'telemetry304VsBareCpu', 'telemetry304VsBare304Rps', 'telemetry304VsBare304Cpu']) t.ok(Number.isFinite(result.ratios[k]), k)
  t.same(Object.keys(result.goals).sort(), ['p99', 'rps200', 'rps304'])
  t.same(JSON.parse(await readFile(out, 'utf8')), result)
  t.match(stderr, /ratios/)
})
