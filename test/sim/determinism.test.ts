import t from 'tap'
import crypto from 'node:crypto'
import { syncBuiltinESMExports } from 'node:module'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadScenario, parseScenario, runSimulation, writeOutputs } from '../../sim/index.ts'

t.test('two runs of the same scenario and seed give byte-identical metrics.json and report.html', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-sim-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const scenario = await loadScenario(join(import.meta.dirname, '../../sim/scenarios/baseline.json'))
  const a = await writeOutputs(join(dir, 'a'), await runSimulation(scenario))
  const b = await writeOutputs(join(dir, 'b'), await runSimulation(scenario))
  const [ma, mb] = await Promise.all([readFile(a.metrics), readFile(b.metrics)])
  t.ok(ma.length > 1000, 'metrics.json has content')
  t.ok(ma.equals(mb), 'metrics.json identical')
  t.ok((await readFile(a.report)).equals(await readFile(b.report)), 'report.html identical')
  const m = JSON.parse(ma.toString())
  t.ok(m.totals.tasksVerified > 0, 'tasks were verified')
  t.ok(m.epochs.length >= 6, 'epochs closed')
})

t.test('another seed gives other numbers', async t => {
  const scenario = parseScenario({
    name: 'tiny', durationHours: 0.5, drainHours: 0.25, epoch: { blocks: 50, blockTimeMs: 12000 },
    orchestrators: { count: 3, workersPerOrchestrator: 4 },
    workers: { bandwidthMbps: { kind: 'lognormal', median: 100, sigma: 0.8 }, latencyMs: { kind: 'uniform', min: 5, max: 50 } },
    workload: { transfers: 40, sizeMiB: { kind: 'uniform', min: 16, max: 200 } }
  })
  const one = JSON.stringify(await runSimulation(scenario, { seed: 1 }))
  const again = JSON.stringify(await runSimulation(scenario, { seed: 1 }))
  const two = JSON.stringify(await runSimulation(scenario, { seed: 2 }))
  t.equal(one, again)
  t.not(one, two)
})

t.test('a run draws every id and random number from its seed, none from the system', async t => {
  // Ids never decide an order today, but a run must replay to the byte whatever a later change does with them.
  const real = { uuid: crypto.randomUUID, bytes: crypto.randomBytes, math: Math.random }
  const drawn = { uuid: 0, bytes: 0, math: 0 }
  crypto.randomUUID = ((...a: Parameters<typeof real.uuid>) => { drawn.uuid++; return real.uuid(...a) }) as typeof real.uuid
  // nact names each actor system from randomBytes: a registry key that must be unique in the process
  // and never reaches an actor's state; every other caller counts.
  crypto.randomBytes = ((...a: [number]) => { if (!/node_modules[/\\]nact[/\\]/.test(new Error().stack ?? '')) drawn.bytes++; return real.bytes(...a) }) as typeof real.bytes
  Math.random = () => { drawn.math++; return real.math() }
  syncBuiltinESMExports()
  t.teardown(() => { crypto.randomUUID = real.uuid; crypto.randomBytes = real.bytes; Math.random = real.math; syncBuiltinESMExports() })
  // The spies see what the actors would call (checked once here, so the zero below cannot be vacuous).
  const { randomUUID } = await import('node:crypto')
  randomUUID()
  t.equal(drawn.uuid, 1, 'the spy sees a randomUUID call')
  drawn.uuid = 0
  const scenario = parseScenario({
    name: 'ids', durationHours: 0.25, drainHours: 0.25, epoch: { blocks: 50, blockTimeMs: 12000 },
    orchestrators: { count: 2, workersPerOrchestrator: 3 },
    workers: { bandwidthMbps: { kind: 'lognormal', median: 100, sigma: 0.8 }, latencyMs: { kind: 'uniform', min: 5, max: 50 } },
    workload: { transfers: 10, sizeMiB: { kind: 'uniform', min: 16, max: 64 } }
  })
  const m = await runSimulation(scenario, { seed: 7 })
  t.ok(m.totals.tasks > 0, `${m.totals.tasks} tasks ran`)
  t.same(drawn, { uuid: 0, bytes: 0, math: 0 }, 'no system randomness drawn')
})

t.test('with outages and sellers (sell pressure) the metrics are byte-identical too', async t => {
  const scenario = await loadScenario(join(import.meta.dirname, '../../sim/scenarios/churn-sell.json'))
  const short = { ...scenario, durationHours: 3, workload: { ...scenario.workload, transfers: 120 } }
  const a = JSON.stringify(await runSimulation(short))
  const b = JSON.stringify(await runSimulation(short))
  t.ok(a.includes('"sellMultiplier":0.6'), 'a sale happened')
  t.ok(/"outageHours":0\.[1-9]/.test(a), 'an outage happened')
  t.equal(a, b)
})
