// The telemetry bench runs end to end in a short configuration: three positive rates, ratios, and
// the 304 path really answered 304 (the bench fails on any other status).
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { runBench } from '../helpers/bench.ts'

t.test('telemetry bench prints req/s and p99 of the network read, its 304 path and a bare route', async t => {
  const { code, stderr, result, out } = await runBench(t, 'telemetry', ['--seconds', '0.3', '--rounds', '1', '--concurrency', '4'])
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)
  for (const p of ['bare', 'telemetry', 'telemetry304']) {
    t.ok(result[p].rps > 0, `${p} req/s`)
    t.ok(result[p].p99Ms > 0, `${p} p99`)
  }
  t.ok(result.ratios.telemetryVsBareRps > 0)
  t.ok(result.ratios.telemetry304VsBareRps > 0)
  t.same(JSON.parse(await readFile(out, 'utf8')), result)
  t.match(stderr, /ratios/)
})
