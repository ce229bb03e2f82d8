import t from 'tap'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { captureConsole } from '../helpers/console.ts'
import { spawnSync } from 'node:child_process'
import { simCommand } from '../../node/commands/sim.ts'
import { parseParam, withParam, grid, band, FIELD_RANGE, SUMMARY_FIELDS } from '../../sim/sweep.ts'
import { renderSweepReport } from '../../sim/sweep-report.ts'

t.test('parameters: dot paths, JSON values, a grid with the first parameter slowest', async t => {
  t.same(parseParam('adversaries.corruptingWorkers=0,0.05,0.1'), { path: 'adversaries.corruptingWorkers', values: [0, 0.05, 0.1] })
  t.same(parseParam('workers.bandwidthMbps={"kind":"constant","value":100},{"kind":"uniform","min":1,"max":2}').values,
    [{ kind: 'constant', value: 100 }, { kind: 'uniform', min: 1, max: 2 }], 'JSON objects with commas inside')
  t.same(parseParam('adversaries.placement=spread,concentrated').values, ['spread', 'concentrated'], 'bare words are strings')
  t.throws(() => parseParam('nothing'), /path=v1,v2/)
  t.throws(() => parseParam('a..b=1'), /dot-separated/)
  t.throws(() => withParam({}, '__proto__.polluted', 1), /not a scenario field/, 'no prototype pollution through a path')
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  const base = { a: { b: 1 }, c: 2 }
  t.same(withParam(base, 'a.b', 5), { a: { b: 5 }, c: 2 })
  t.same(withParam(base, 'x.y', 3), { a: { b: 1 }, c: 2, x: { y: 3 } }, 'intermediate objects created')
  t.same(base, { a: { b: 1 }, c: 2 }, 'the base is not changed')
  t.throws(() => withParam(base, 'c.d', 1), /not an object/)
  t.same(grid([{ path: 'p', values: [1, 2] }, { path: 'q', values: ['x', 'y'] }]), [{ p: 1, q: 'x' }, { p: 1, q: 'y' }, { p: 2, q: 'x' }, { p: 2, q: 'y' }])
})

t.test('confidence band: mean and the 95% Student t interval of the mean', async t => {
  const b = band([1, 2, 3])
  t.equal(b.mean, 2)
  t.equal(b.sd, 1)
  t.ok(Math.abs(b.high - (2 + 4.303 / Math.sqrt(3))) < 1e-9)
  t.same(band([5]), { mean: 5, sd: 0, low: 5, high: 5, n: 1 }, 'one seed: no band')
})

t.test('confidence bands are clipped to what the field can be', async t => {
  const counts = band([0, 0, 3], FIELD_RANGE.integrityMismatches)
  t.equal(counts.mean, 1)
  t.equal(counts.low, 0, 'a count: not below 0 (unclipped it would be ' + band([0, 0, 3]).low.toFixed(2) + ')')
  t.ok(band([0, 0, 3]).low < 0, 'the unclipped interval does go below 0')
  const share = band([1, 1, 0.9], FIELD_RANGE.honestWeightShare)
  t.equal(share.high, 1, 'a share: not above 1')
  t.ok(share.low > 0 && share.low < share.mean, 'its low end unchanged')
  t.ok(band([1, 1, 0.9]).high > 1, 'the unclipped interval does go above 1')
  for (const f of SUMMARY_FIELDS) t.ok(FIELD_RANGE[f][0] === 0, `${f}: never negative`)

  // The report draws the clipped band: its y axis has no negative tick, its table shows low–high.
  const runs = [0, 0, 3].map((m, i) => ({ point: 0, params: { p: 1 }, seed: i + 1, wallS: 1, summary: { tasks: 3, tasksVerified: 3, transfersFailed: 0, reassignments: 0, integrityMismatches: m, verifiedMbps: 10, honestWeightShare: 1, adversarialWeightShare: 0, weightPerHonestOrchestrator: 0.5, contributingOrchestrators: 2, invariantsOk: true } }))
  const stats = Object.fromEntries(SUMMARY_FIELDS.map(f => [f, band(runs.map(r => Number(r.summary[f])), FIELD_RANGE[f])]))
  const html = renderSweepReport({ scenario: 's', params: [{ path: 'p', values: [1] }], seeds: [1, 2, 3], runs, points: [{ point: 0, params: { p: 1 }, stats }] })
  const yTicks = [...html.matchAll(/text-anchor="end" fill="#555">([^<]*)</g)].map(m => m[1]!)
  t.ok(yTicks.length > 0 && yTicks.every(l => !/^[-−]/.test(l)), `no negative y tick: ${yTicks.join(' ')}`)
  t.match(html, /<td>1\.00 <small>0\.0000–/, 'the table shows the clipped low–high')
  t.match(html, /<div class="scroll"><table>/, 'the table scrolls within the page')
})

t.test('bwnet sim sweep runs a tiny grid in child processes and writes CSV, JSON and an HTML report', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-sweep-'))
  const lines = captureConsole(t, [dir])
  const scenario = join(dir, 's.json')
  await writeFile(scenario, JSON.stringify({
    name: 'tiny-sweep', durationHours: 0.5, drainHours: 0.5, epoch: { blocks: 25, blockTimeMs: 12000 },
    orchestrators: { count: 2, workersPerOrchestrator: 3 },
    workers: { bandwidthMbps: { kind: 'constant', value: 200 }, latencyMs: { kind: 'constant', value: 10 } },
    workload: { transfers: 12, sizeMiB: { kind: 'constant', value: 64 } }
  }))
  const out = join(dir, 'out')
  // Through the whole command line (bwnet sim sweep … --out DIR), as a user runs it.
  const cli = spawnSync(process.execPath, [join(import.meta.dirname, '../../node/cli.ts'), 'sim', 'sweep', scenario,
    '--param', 'adversaries.corruptingWorkers=0,0.5', '--seeds', '2', '--jobs', '2', '--out', out], { encoding: 'utf8', timeout: 180_000 })
  t.equal(cli.status, 0, cli.stdout + cli.stderr)
  t.match(cli.stdout, /sweep: 4\/4 /)
  const csv = (await readFile(join(out, 'sweep.csv'), 'utf8')).trim().split('\n')
  t.equal(csv.length, 1 + 2 * 2, 'a header and one row per run')
  t.match(csv[0], /^adversaries\.corruptingWorkers,seed,tasks,/)
  const json = JSON.parse(await readFile(join(out, 'sweep.json'), 'utf8'))
  t.same(json.seeds, [1, 2])
  t.equal(json.points.length, 2)
  const [clean, dirty] = json.points
  t.equal(clean.stats.integrityMismatches.mean, 0, 'no corrupting workers: no mismatch')
  const dirtyRuns = json.runs.filter((r: { point: number }) => r.point === 1)
  t.equal(dirtyRuns.length, 2)
  t.ok(dirtyRuns.every((r: { summary: { integrityMismatches: number } }) => r.summary.integrityMismatches > 0), 'half the workers corrupting: mismatches in every seed')
  t.ok(dirty.stats.integrityMismatches.high > dirty.stats.integrityMismatches.mean && dirty.stats.integrityMismatches.low < dirty.stats.integrityMismatches.mean, 'a band around the mean')
  t.equal(clean.stats.adversarialWeightShare.mean, 0)
  t.ok(dirty.stats.contributingOrchestrators.mean < clean.stats.contributingOrchestrators.mean, 'the corrupting fleet loses its weight')
  t.ok(json.runs.every((r: { summary: { invariantsOk: boolean } }) => r.summary.invariantsOk), 'invariants hold in every run')
  const html = await readFile(join(out, 'report.html'), 'utf8')
  t.match(html, '<svg')
  t.match(html, 'adversaries.corruptingWorkers')
  t.notMatch(html, /<script|https?:\/\/(?!www\.w3\.org)/, 'self-contained: no scripts, no network')
  await t.resolves(readFile(join(out, 'runs', '1-2', 'metrics.json')), 'each run keeps its metrics.json')

  lines.length = 0
  await simCommand().parseAsync(['node', 'sim', 'sweep', scenario, '--param', 'adversaries.corruptingWorkers=2', '--seeds', '1', '--out', join(dir, 'bad')], { from: 'node' })
  t.equal(process.exitCode, 2, 'an invalid value is refused before any run')
  t.ok(lines.some(l => l.includes('corruptingWorkers')), lines.join('\n'))
})
