import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readdirSync } from 'node:fs'
import { parseScenario, loadScenario } from '../../sim/index.ts'

const ok = {
  name: 'x', durationHours: 1, epoch: { blocks: 10, blockTimeMs: 12000 },
  orchestrators: { count: 2, workersPerOrchestrator: 2 },
  workers: { bandwidthMbps: { kind: 'constant', value: 100 }, latencyMs: { kind: 'constant', value: 10 } },
  workload: { transfers: 1, sizeMiB: { kind: 'constant', value: 16 } }
}

t.test('the shipped scenarios are valid', async t => {
  const dir = join(import.meta.dirname, '../../sim/scenarios')
  const files = readdirSync(dir).filter(f => f.endsWith('.json'))
  t.ok(files.length >= 3)
  for (const f of files) t.ok((await loadScenario(join(dir, f))).name, f)
})

t.test('schema errors name the field', async t => {
  t.throws(() => parseScenario({ ...ok, durationHours: -1 }), /\/durationHours/)
  t.throws(() => parseScenario({ ...ok, extra: 1 }), /additional/)
  t.throws(() => parseScenario({ ...ok, workers: { ...ok.workers, bandwidthMbps: { kind: 'zipf' } } }), /\/workers\/bandwidthMbps/)
  t.throws(() => parseScenario({ ...ok, adversaries: { corruptingWorkers: 1.5 } }), /corruptingWorkers/)
  t.throws(() => parseScenario({ ...ok, network: { partitions: [{ startHours: 0, durationMinutes: 1, orchestrators: [5] }] } }), /orchestrator 5 does not exist/)
  t.throws(() => parseScenario({ ...ok, workload: { ...ok.workload, sizeMiB: { kind: 'uniform', min: 5, max: 1 } } }), /max must be >= min/)
  t.throws(() => parseScenario({ ...ok, adversaries: { droppingOrchestrators: 3 } }), /more orchestrators/)
  const { name: _n, ...noName } = ok
  t.throws(() => parseScenario(noName), /name/)
})

t.test('loadScenario reports unreadable and non-JSON files', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-sim-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  await writeFile(join(dir, 'bad.json'), '{ nope')
  await t.rejects(loadScenario(join(dir, 'bad.json')), /not JSON/)
  await t.rejects(loadScenario(join(dir, 'missing.json')), /ENOENT/)
})
