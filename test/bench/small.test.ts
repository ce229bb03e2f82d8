// The small-transfer bench runs end to end in a short configuration against a real devnet: every
// transfer completes with identical bytes in the sink (the bench fails otherwise), the baseline's
// durable PUTs ran, and the rates, ratio and goal are reported.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { runBench, BENCH_OWN_TIMEOUT_S } from '../helpers/bench.ts'

t.test('small-transfer bench on a devnet: transfers/s against direct durable PUTs of the same files', async t => {
  const { code, stderr, result, out } = await runBench(t, 'small', ['--transfers', '6', '--concurrency', '3', '--size-kib', '256', '--timeout-s', BENCH_OWN_TIMEOUT_S])
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)
  t.equal(result.transfers, 6)
  t.equal(result.sizeBytes, 256 * 1024)
  t.equal(result.verified, 6, 'every delivered file was read back and compared with what was sent')
  t.equal(result.identical, true)
  t.ok(result.bwnet.perSecond > 0 && result.baseline.perSecond > 0, 'both rates measured')
  t.ok(result.bwnet.uploadMs[0] > 0 && result.bwnet.uploadMs[0] <= result.bwnet.polledMs[0], 'uploads end before the last completion is seen')
  t.ok(Math.abs(result.ratio - result.bwnet.perSecond / result.baseline.perSecond) < 1e-9, 'the ratio of the two rates')
  t.same(Object.keys(result.goal).sort(), ['met', 'perSecond'])
  const st = result.stages[0]
  t.same(Object.keys(st).sort(), ['accepted', 'begun', 'completed', 'created', 'finalized', 'offered', 'result', 'verified'], 'every stage was read back')
  // Orders that hold for every transfer hold for the medians (an offer may precede its finalize).
  t.ok(st.created <= st.begun && st.created <= st.finalized && st.finalized <= st.completed, `created, then begun and finalized, then completed: ${JSON.stringify(st)}`)
  // (A worker's result can overtake the router's word that it accepted: no order between those two.)
  t.ok(st.created <= st.offered && st.offered <= st.accepted && st.offered <= st.result && st.result <= st.verified && st.verified <= st.completed, 'offered, then accepted and a result, then verified, completed')
  t.match(stderr, /stages, round 0/)
  t.same(JSON.parse(await readFile(out, 'utf8')), result)
  t.match(stderr, /transfers\/s/)
})
