import t from 'tap'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadScenario, parseScenario, runSimulation, writeOutputs, type SimMetrics } from '../../sim/index.ts'
import { assertInvariants } from '../helpers/sim.ts'

const SCENARIO = join(import.meta.dirname, '../../sim/scenarios/validators.json')

t.test('with validators in the loop, two runs of one seed give byte-identical metrics.json and report.html', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-sim-val-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  // Small, with everything that moves: sampling, corrupting workers, churn, an orchestrator outage.
  const scenario = parseScenario({
    name: 'validators-tiny', durationHours: 1, drainHours: 0.5, epoch: { blocks: 50, blockTimeMs: 12000 },
    orchestrators: { count: 4, workersPerOrchestrator: 4, failures: [{ startHours: 0.3, durationMinutes: 10, orchestrators: [1] }] },
    workers: { bandwidthMbps: { kind: 'lognormal', median: 100, sigma: 0.8 }, latencyMs: { kind: 'uniform', min: 5, max: 50 }, churn: { leavesPerHour: 1, downtimeMinutes: { kind: 'constant', value: 3 } } },
    adversaries: { corruptingWorkers: 0.25 },
    validators: { sampleRate: 0.5 },
    workload: { transfers: 40, sizeMiB: { kind: 'uniform', min: 16, max: 200 } }
  })
  const a = await writeOutputs(join(dir, 'a'), await runSimulation(scenario))
  const b = await writeOutputs(join(dir, 'b'), await runSimulation(scenario))
  const [ma, mb] = await Promise.all([readFile(a.metrics), readFile(b.metrics)])
  t.ok(ma.equals(mb), 'metrics.json identical')
  const report = await readFile(a.report)
  t.ok(report.equals(await readFile(b.report)), 'report.html identical')
  t.match(report.toString(), "PRISM and weights from the validator's own verifier and epoch actors", 'the report says which code path scored the run')
  const m = JSON.parse(ma.toString()) as SimMetrics
  assertInvariants(t, m)
  const v = m.validators!
  t.ok(v.verifyRequests > 0 && v.readBacks > 0 && v.readBacks < v.verifyRequests, `the validator read back a sample: ${v.readBacks} of ${v.verifyRequests}`)
  t.ok(v.mismatches > 0, 'and caught corrupt deliveries')
  t.ok(m.logs['info:epoch_published']! >= m.epochs.length, 'the epoch machine published every epoch')
  for (const e of m.epochs) t.not(e.weights.servedSource, 'unpublished', `epoch ${e.epoch} weights published`)
  const other = JSON.stringify(await runSimulation(scenario, { seed: 2 }))
  t.not(other, ma.toString().trim(), 'another seed gives other numbers')
})

function corruptingRows (m: SimMetrics): string[] {
  return m.epochs[0]!.orchestrators.filter(o => o.role === 'corrupting-workers').map(o => o.id)
}

t.test('the verifier in the loop penalizes corrupting workers and their orchestrators earn no weight', async t => {
  const scenario = await loadScenario(SCENARIO)
  scenario.validators = { sampleRate: 1 }
  const m = await runSimulation(scenario)
  assertInvariants(t, m)
  const v = m.validators!
  t.equal(v.readBacks, v.verifyRequests, 'sample rate 1: every delivery read back')
  // The coordinators act on the verdicts: they check a destination themselves for deliveries no
  // validator answered (its orchestrator in an outage) and for those a validator called mismatched
  // (one validator's word fails nothing), never for one it verified.
  t.ok(v.coordinatorChecks <= v.mismatches + 0.1 * v.verifyRequests, `the coordinators checked ${v.coordinatorChecks} deliveries themselves (${v.mismatches} mismatched), against ${v.verifyRequests} verified`)
  t.ok(v.coordinatorChecks >= v.mismatches, 'every mismatch checked by its coordinator too')
  t.ok(v.mismatches > 0, `${v.mismatches} corrupt deliveries read back as other bytes`)
  // Every corrupt delivery the verifier found, the coordinator's own check confirmed, and each became a
  // penalty on the worker that wrote it, never on an honest worker.
  t.equal(m.totals.integrityMismatches, v.mismatches, 'the verifier caught every corrupt delivery')
  t.equal(v.workerPenalties, v.mismatches, 'one integrity penalty per mismatch')
  t.ok(v.workersPenalized > 0 && v.workersPenalized <= 20, `${v.workersPenalized} corrupting workers penalized`)
  t.equal(v.honestWorkersPenalized, 0, 'no honest worker penalized')
  t.equal(m.epochs.reduce((a, e) => a + e.penaltiesIssued, 0), v.workerPenalties, 'penalties per epoch are the verifier\'s')
  const corrupt = corruptingRows(m)
  t.equal(corrupt.length, 2, 'two corrupting fleets')
  for (const id of corrupt) {
    for (const e of m.epochs) {
      const row = e.orchestrators.find(o => o.id === id)!
      t.equal(row.weight, 0, `${id} weight 0 in epoch ${e.epoch}`)
      t.equal(row.verifiedMib, 0, `${id} no verified work in epoch ${e.epoch}`)
      // The penalty is the worker's: the orchestrator's multiplier stays (docs/validators.md).
      t.equal(row.penaltyMultiplier, 1, `${id} keeps its own penalty multiplier`)
    }
    t.equal(m.epochs[0]!.orchestrators.find(o => o.id === id)!.routingScore, 0, `${id}: PRISM routes nothing more to it`)
    for (const e of m.epochs.slice(1)) t.equal(e.orchestrators.find(o => o.id === id)!.routingShare, 0, `${id} no routing share in epoch ${e.epoch}`)
  }
  const last = m.epochs.filter(e => e.phase === 'workload').at(-1)!
  const honest = last.orchestrators.filter(o => o.role === 'honest')
  t.ok(Math.abs(honest.reduce((a, o) => a + o.weight, 0) - 1) < 1e-9, 'honest orchestrators hold all the weight')
  t.ok(honest.every(o => o.verifiedMib > 0), 'every honest orchestrator has verified work')
})

t.test('a sampled share is read back; the coordinators check the rest themselves', async t => {
  const scenario = await loadScenario(SCENARIO)
  const m = await runSimulation(scenario)
  assertInvariants(t, m)
  const v = m.validators!
  t.equal(v.sampleRate, 0.5)
  const share = v.readBacks / v.verifyRequests
  t.ok(share > 0.4 && share < 0.6, `about half read back (${share.toFixed(3)})`)
  t.equal(v.verified + v.mismatches, v.readBacks, 'every read back gave a verdict')
  // Every unsampled delivery is checked by its coordinator at the destination, and of the sampled ones
  // only those a validator called mismatched.
  t.ok(v.coordinatorChecks >= v.verifyRequests - v.readBacks + v.mismatches && v.coordinatorChecks < v.verifyRequests - v.readBacks + v.mismatches + 0.1 * v.verifyRequests,
    `the coordinators checked the unsampled deliveries themselves (${v.coordinatorChecks}, ${v.verifyRequests - v.readBacks} unsampled)`)
  t.ok(m.totals.integrityMismatches > v.mismatches, `the coordinators caught the unsampled corrupt deliveries (${m.totals.integrityMismatches} in all, ${v.mismatches} by the verifier)`)
  t.equal(v.honestWorkersPenalized, 0, 'no honest worker penalized')
  // Weights come from the verified sample only: about half of the verified bytes.
  const verifiedMib = m.epochs.reduce((a, e) => a + e.orchestrators.reduce((b, o) => b + o.verifiedMib, 0), 0)
  const deliveredMib = m.totals.verifiedBytes / 1_048_576
  t.ok(verifiedMib > 0.35 * deliveredMib && verifiedMib < 0.65 * deliveredMib, `weights from the sample: ${verifiedMib} of ${deliveredMib} MiB`)
  for (const id of corruptingRows(m)) for (const e of m.epochs) t.equal(e.orchestrators.find(o => o.id === id)!.weight, 0, `${id} weight 0 in epoch ${e.epoch}`)
})

t.test('a coordinator cut off by a partition does not ask the validator; every request it sends arrives', async t => {
  const scenario = parseScenario({
    name: 'validators-partition', durationHours: 1, drainHours: 0.5, epoch: { blocks: 50, blockTimeMs: 12000 },
    orchestrators: { count: 4, workersPerOrchestrator: 4 },
    workers: { bandwidthMbps: { kind: 'constant', value: 200 }, latencyMs: { kind: 'constant', value: 10 } },
    network: { partitions: [{ startHours: 0, durationMinutes: 60, orchestrators: [0, 1] }] },
    validators: { sampleRate: 1 },
    workload: { transfers: 40, sizeMiB: { kind: 'uniform', min: 16, max: 200 } }
  })
  const m = await runSimulation(scenario)
  const v = m.validators!
  t.ok(v.verifyRequests > 0, `${v.verifyRequests} deliveries asked about`)
  // A request into the cut would be sent, never read back, and its delivery would wait out the verify timeout.
  t.equal(v.readBacks, v.verifyRequests, 'every request sent reached the validator and was read back')
  t.ok(v.coordinatorChecks > 0, `the cut-off coordinators checked their deliveries themselves (${v.coordinatorChecks})`)
})
