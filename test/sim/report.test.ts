import t from 'tap'
import { parseScenario, runSimulation, renderReport } from '../../sim/index.ts'
import { niceTicks, tickLabel } from '../../sim/chart.ts'

t.test('axis ticks: 1-2-5 steps, the decimals the step needs, whole numbers on count axes', async t => {
  const labels = (min: number, max: number, integer = false): string[] => { const a = niceTicks(min, max, 4, { integer }); return a.ticks.map(v => tickLabel(v, a.step)) }
  t.same(labels(0, 0, true), ['0', '1', '2', '3', '4'], 'an all-zero count axis reads 0..4, not 0.000 five times')
  t.same(labels(0, 1), ['0.00', '0.25', '0.50', '0.75', '1.00'])
  t.same(labels(0, 1911), ['0', '500', '1,000', '1,500', '2,000'])
  t.same(labels(0, 3, true), ['0', '1', '2', '3'])
  t.same(labels(0, 0.013), ['0.000', '0.005', '0.010', '0.015'])
  t.equal(new Set(labels(0, 1e-9)).size, 5, 'tiny ranges still give distinct labels')
})

t.test('the report charts the workload epochs and sums the drain apart', async t => {
  const m = await runSimulation(parseScenario({
    // 400 × 64 MiB in 6 min over four 100 Mbit/s workers: about 9 min of work, so a drain follows.
    name: 'drain', durationHours: 0.1, drainHours: 1, epoch: { blocks: 30, blockTimeMs: 12000 },
    orchestrators: { count: 2, workersPerOrchestrator: 2 },
    workers: { bandwidthMbps: { kind: 'constant', value: 100 }, latencyMs: { kind: 'constant', value: 10 } },
    workload: { transfers: 400, sizeMiB: { kind: 'constant', value: 64 } }
  }))
  const drain = m.epochs.filter(e => e.phase === 'drain')
  t.ok(drain.length > 0, 'slow workers: transfers still in flight when the workload ends')
  const workload = m.epochs.filter(e => e.phase === 'workload')
  t.ok(workload.length > 0, 'workload epochs charted')
  t.ok(workload.every(e => e.startHours < 0.1))
  const html = renderReport(m)
  t.match(html, /ran [\d.]+ h more to finish transfers in flight/)
  const lastWorkloadHour = Math.max(...m.epochs.filter(e => e.phase === 'workload').map(e => e.endHours))
  t.ok(lastWorkloadHour <= 0.1 + 1e-9, 'the charts end with the workload')
  t.ok(m.invariants.length > 0, 'invariants were checked')
  t.ok(m.invariants.every(i => i.ok))
  const from = html.indexOf('Penalties per epoch')
  const penalties = html.slice(from, html.indexOf('</figure>', from))
  t.match(penalties, />1</, 'whole-number ticks')
  t.notMatch(penalties, /(>0\.000<[\s\S]*){2}/, 'the penalty axis does not repeat 0.000')
})
