import t from 'tap'
import { parseScenario, runSimulation } from '../../sim/index.ts'
import { assertInvariants } from '../helpers/sim.ts'

const base = {
  name: 'inv', durationHours: 0.5, drainHours: 0.5, epoch: { blocks: 50, blockTimeMs: 12000 },
  orchestrators: { count: 4, workersPerOrchestrator: 5 },
  workers: { bandwidthMbps: { kind: 'constant', value: 200 }, latencyMs: { kind: 'constant', value: 20 } },
  workload: { transfers: 30, sizeMiB: { kind: 'constant', value: 128 } }
}

t.test('churn, loss, a partition, stalling workers and destination failures: no task is lost', async t => {
  const m = await runSimulation(parseScenario({
    ...base,
    workers: { ...base.workers, failureRate: 0.05, churn: { leavesPerHour: 2, downtimeMinutes: { kind: 'constant', value: 2 } } },
    network: { lossRate: 0.01, partitions: [{ startHours: 0.1, durationMinutes: 5, orchestrators: [1] }] },
    adversaries: { stallingWorkers: 0.1, placement: 'spread' },
    destinations: [{ id: 'd', bandwidthMbps: 500, latencyMs: 40, failureRate: 0.02 }]
  }), { seed: 5 })
  assertInvariants(t, m)
  t.ok(m.transport.lost > 0, 'messages were lost')
  const cutOff = m.epochs.map(e => e.orchestrators.find(o => o.id === 'orch-001')!.readiness)
  t.ok(Math.min(...cutOff) < 1, `the partitioned orchestrator's readiness dropped (${cutOff.join(', ')})`)
  t.ok(m.totals.reassignments > 0, 'the overseer reassigned work')
  t.equal(m.totals.transfersCompleted + m.totals.transfersFailed, 30)
})

t.test('when every worker stalls, transfers fail with a reason after their attempts run out; cut short, the run reports them lost', async t => {
  const stalled = { ...base, workload: { transfers: 3, sizeMiB: { kind: 'constant', value: 32 } }, adversaries: { stallingWorkers: 1 } }
  const drained = await runSimulation(parseScenario({ ...stalled, drainHours: 0.5 }))
  t.equal(drained.totals.tasksVerified, 0)
  t.equal(drained.totals.transfersFailed, 3)
  t.ok(drained.invariants.find(i => i.name === 'no task lost')!.ok, 'failed with a reason is accounted for')
  const cut = await runSimulation(parseScenario({ ...stalled, durationHours: 0.02, drainHours: 0, workload: { ...stalled.workload, arrival: 'uniform' } }))
  const lost = cut.invariants.find(i => i.name === 'no task lost')!
  t.equal(lost.ok, false, lost.detail)
  t.match(lost.detail, /[1-9]\d* unfinished/)
})

t.test('a sybil group is detected and penalized; weights still sum to 1', async t => {
  const m = await runSimulation(parseScenario({ ...base, orchestrators: { count: 6, workersPerOrchestrator: 3 }, workload: { transfers: 30, sizeMiB: { kind: 'constant', value: 256 } }, adversaries: { sybilGroups: [{ size: 2, detectionPerEpoch: 1 }] } }))
  const sybil = m.epochs[m.epochs.length - 1]!.orchestrators.filter(o => o.role === 'sybil')
  t.equal(sybil.length, 2)
  for (const o of sybil) t.equal(o.activePenalties.sybil, 1, `${o.id} carries a sybil penalty`)
  t.ok(m.invariants.find(i => i.name.startsWith('weights'))!.ok)
})
