import t from 'tap'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { captureConsole } from '../helpers/console.ts'
import { simCommand } from '../../node/commands/sim.ts'

t.test('bwnet sim writes metrics.json and report.html and prints the invariants', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-sim-'))
  const lines = captureConsole(t, [dir])
  const scenario = join(dir, 's.json')
  await writeFile(scenario, JSON.stringify({
    name: 'cli', durationHours: 0.25, drainHours: 0.25, epoch: { blocks: 25, blockTimeMs: 12000 },
    orchestrators: { count: 2, workersPerOrchestrator: 3 },
    workers: { bandwidthMbps: { kind: 'constant', value: 100 }, latencyMs: { kind: 'constant', value: 10 } },
    workload: { transfers: 5, sizeMiB: { kind: 'constant', value: 48 } }
  }))
  await simCommand().parseAsync(['node', 'sim', scenario, '--out', join(dir, 'out'), '--seed', '9'], { from: 'node' })
  const metrics = JSON.parse(await readFile(join(dir, 'out', 'metrics.json'), 'utf8'))
  t.equal(metrics.seed, 9)
  t.match(await readFile(join(dir, 'out', 'report.html'), 'utf8'), '<svg')
  t.ok(lines.some(l => l.startsWith('invariant OK') && l.includes('no task lost')))
  t.not(process.exitCode, 1)

  lines.length = 0
  await writeFile(scenario, '{"name": "broken"}')
  await simCommand().parseAsync(['node', 'sim', scenario, '--out', join(dir, 'out2')], { from: 'node' })
  t.equal(process.exitCode, 2)
  t.ok(lines.some(l => l.includes('durationHours') || l.includes('required')), lines.join('\n'))
})
