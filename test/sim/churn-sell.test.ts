import t from 'tap'
import { join } from 'node:path'
import { loadScenario, parseScenario, runSimulation } from '../../sim/index.ts'

t.test('orchestrator outages and sellers: readiness drops in an outage, sell pressure cuts the sellers\' weights', async t => {
  const scenario = await loadScenario(join(import.meta.dirname, '../../sim/scenarios/churn-sell.json'))
  const m = await runSimulation(scenario)
  for (const inv of m.invariants) t.ok(inv.ok, `${inv.name}: ${inv.detail}`)
  // The scheduled outage of orch-000 (2 h to 3 h, epochs of 30 min): its readiness drops while it is cut off.
  const during = m.epochs.filter(e => e.startHours >= 2 && e.endHours <= 3)
  t.equal(during.length, 2)
  for (const e of during) {
    const o = e.orchestrators.find(x => x.id === 'orch-000')!
    t.ok(o.outageHours > 0.4, `epoch ${e.epoch}: outage hours ${o.outageHours}`)
    t.ok(o.readiness < 1, `epoch ${e.epoch}: readiness ${o.readiness}`)
  }
  t.ok(m.epochs.some(e => e.orchestrators.some(o => o.id !== 'orch-000' && o.outageHours > 0)), 'Poisson outages happen too')
  // Sellers: multiplier 1 before the first sale, then at most 0.60 (debt), lower with every sale in 7 days.
  const sellers = m.epochs.map(e => e.orchestrators.filter(o => o.role === 'seller'))
  t.equal(sellers[0]!.length, 6, `sellers: ${JSON.stringify(m.epochs[0]!.orchestrators.map(o => o.role))}`)
  t.ok(sellers[0]!.every(o => o.sellMultiplier === 1))
  const last = sellers[sellers.length - 1]!
  t.ok(last.every(o => o.sellMultiplier <= 0.15), `after four sales: ${last.map(o => o.sellMultiplier).join(', ')}`)
  const cut = m.epochs.filter((e, k) => sellers[k]!.reduce((a, o) => a + o.servedWeight, 0) > 0 && sellers[k]!.some(o => o.sellMultiplier < 1))
  t.ok(cut.length > 0, 'sellers held served weight after selling in some epoch')
  for (const e of cut) {
    const s = e.orchestrators.filter(o => o.role === 'seller')
    const served = s.reduce((a, o) => a + o.servedWeight, 0)
    const set = s.reduce((a, o) => a + o.weight, 0)
    t.ok(set < served - 1e-9, `epoch ${e.epoch}: sellers' weight set ${set} < served ${served}`)
    t.ok(Math.abs(e.orchestrators.reduce((a, o) => a + o.weight, 0) - 1) < 1e-9, 'the cut goes to the holders: weights still sum to 1')
  }
})

t.test('the scenario schema checks outages and sellers', async t => {
  const base = {
    name: 'x', durationHours: 1, epoch: { blocks: 10, blockTimeMs: 12000 },
    orchestrators: { count: 2, workersPerOrchestrator: 1 },
    workers: { bandwidthMbps: { kind: 'constant', value: 100 }, latencyMs: { kind: 'constant', value: 10 } },
    workload: { transfers: 1, sizeMiB: { kind: 'constant', value: 16 } }
  }
  t.throws(() => parseScenario({ ...base, orchestrators: { ...base.orchestrators, failures: [{ startHours: 0, durationMinutes: 1, orchestrators: [2] }] } }), /failures orchestrator 2 does not exist/)
  t.throws(() => parseScenario({ ...base, orchestrators: { ...base.orchestrators, sellers: { count: 3, fraction: 1, everyHours: 1 } } }), /more orchestrators/)
  t.throws(() => parseScenario({ ...base, orchestrators: { ...base.orchestrators, churn: { leavesPerHour: -1, downtimeMinutes: { kind: 'constant', value: 1 } } } }), /leavesPerHour/)
})
