// Simulator bench: the 100 orchestrators x 10,000 workers x 24 simulated hours x 1,000,000 tasks
// scenario, plus the same world with half of the tasks (the baseline of the growth ratio), each in its
// own process (so peak RSS is its own). Prints wall and CPU time, peak RSS and growth ratios, a JSON
// line, and writes bench/out/sim.json.
//
// The simulator runs compiled, as the `bwnet` binary and the package's `bwnet/sim` export run it: the
// bench first compiles the tree with tsc (tsconfig.build.json) into bench/out/sim-dist/, outside the
// timed part. `--source` runs it from the TypeScript sources instead (Node strips their types as it
// loads them).
//   npm run bench:sim [-- --scenario FILE --fractions 0.5,1 --out bench/out/sim.json --source]
import { spawn, execFileSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { availableParallelism } from 'node:os'
import { createRequire } from 'node:module'

const DEFAULT_SCENARIO = join(import.meta.dirname, '../../sim/scenarios/bench-1m.json')
const BUDGET_WALL_S = 120 // acceptance: within 2 minutes
const BUDGET_RSS_BYTES = 4 * 1024 ** 3 // and 4 GiB
const BUDGET_GROWTH = 2.1 // x2 tasks -> at most x2.1 wall time
const CHILD_TIMEOUT_MS = 15 * 60_000 // a run that hangs is ended

const ROOT = join(import.meta.dirname, '../..')
const BUILD_DIR = join(ROOT, 'bench/out/sim-dist')

/** Compiles the tree into BUILD_DIR with the package's own build settings; returns the simulator's entry. */
function build (): string {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', BUILD_DIR], { stdio: 'inherit', cwd: ROOT })
  return join(BUILD_DIR, 'sim/index.js')
}

type SimModule = typeof import('../../sim/index.ts')

interface One { fraction: number, transfers: number, tasks: number, tasksVerified: number, wallS: number, cpuS: number, maxRssBytes: number, simulatedHours: number, events: number, steps: number, invariantsOk: boolean }

async function one (scenarioPath: string, fraction: number, simModule: string): Promise<void> {
  const { loadScenario, runSimulation } = await import(simModule) as SimModule
  const scenario = await loadScenario(scenarioPath)
  scenario.workload.transfers = Math.round(scenario.workload.transfers * fraction)
  const started = performance.now()
  const cpu = process.cpuUsage()
  const m = await runSimulation(scenario)
  const wallS = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  const cpuS = (used.user + used.system) / 1e6
  const r: One = {
    fraction, transfers: m.totals.transfers, tasks: m.totals.tasks, tasksVerified: m.totals.tasksVerified, wallS, cpuS,
    maxRssBytes: process.resourceUsage().maxRSS * 1024, simulatedHours: m.simulatedHours, events: m.totals.events, steps: m.totals.steps,
    invariantsOk: m.invariants.every(i => i.ok)
  }
  process.stdout.write(JSON.stringify(r) + '\n')
}

function child (scenario: string, fraction: number, simModule: string): Promise<One> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...process.execArgv, import.meta.filename, '--child', String(fraction), '--scenario', scenario, '--sim-module', simModule], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    const timer = setTimeout(() => p.kill('SIGKILL'), CHILD_TIMEOUT_MS)
    p.stdout.on('data', (d: Buffer) => { out += d.toString() })
    p.on('close', (code) => {
      clearTimeout(timer)
      const line = out.trim().split('\n').pop() ?? ''
      if (code !== 0) { reject(new Error(`run at ${fraction} exited ${code}`)); return }
      resolve(JSON.parse(line) as One)
    })
  })
}

const { values } = parseArgs({ options: {
  child: { type: 'string' }, scenario: { type: 'string', default: DEFAULT_SCENARIO },
  fractions: { type: 'string', default: '0.5,1' }, out: { type: 'string', default: 'bench/out/sim.json' },
  source: { type: 'boolean', default: false }, 'sim-module': { type: 'string' }
} })

if (values.child !== undefined) {
  await one(values.scenario, Number(values.child), values['sim-module'] ?? pathToFileURL(join(ROOT, 'sim/index.ts')).href)
} else {
  const fractions = values.fractions.split(',').map(Number)
  const runs: One[] = []
  const simModule = values.source ? pathToFileURL(join(ROOT, 'sim/index.ts')).href : pathToFileURL(build()).href
  console.log(`simulator: ${values.source ? 'TypeScript sources (types stripped by Node)' : 'compiled with tsc (tsconfig.build.json) into bench/out/sim-dist'}`)
  for (const f of fractions) {
    const r = await child(values.scenario, f, simModule)
    runs.push(r)
    console.log(`tasks ${String(r.tasks).padStart(7)} (x${f})  wall ${r.wallS.toFixed(1).padStart(6)} s  cpu ${r.cpuS.toFixed(1).padStart(6)} s  peak RSS ${(r.maxRssBytes / 2 ** 20).toFixed(0).padStart(5)} MiB  ${(r.tasks / r.wallS).toFixed(0)} tasks/s  ${r.simulatedHours.toFixed(1)} h simulated  invariants ${r.invariantsOk ? 'ok' : 'FAILED'}`)
  }
  const base = runs[0]!
  const growth = runs.map(r => ({ fraction: r.fraction, tasksRatio: r.tasks / base.tasks, wallRatio: r.wallS / base.wallS, cpuRatio: r.cpuS / base.cpuS, rssRatio: r.maxRssBytes / base.maxRssBytes }))
  for (const g of growth.slice(1)) console.log(`x${g.tasksRatio.toFixed(2)} tasks -> x${g.wallRatio.toFixed(2)} wall time (budget x${BUDGET_GROWTH} for x2), x${g.cpuRatio.toFixed(2)} CPU time, x${g.rssRatio.toFixed(2)} peak RSS`)
  const full = runs.find(r => r.fraction === 1)
  const result = {
    bench: 'sim', scenario: values.scenario, simulator: values.source ? 'source (type stripping)' : 'compiled (tsc)', cores: availableParallelism(), node: process.version, runs, growth,
    budget: { wallS: BUDGET_WALL_S, rssBytes: BUDGET_RSS_BYTES, growth: BUDGET_GROWTH },
    withinBudget: full === undefined ? null : full.wallS <= BUDGET_WALL_S && full.maxRssBytes <= BUDGET_RSS_BYTES && full.invariantsOk,
    growthWithinBudget: growth.filter(g => Math.abs(g.tasksRatio - 2) < 0.01).every(g => g.wallRatio <= BUDGET_GROWTH)
  }
  process.stdout.write(JSON.stringify(result) + '\n')
  await mkdir(dirname(values.out), { recursive: true })
  await writeFile(values.out, JSON.stringify(result, null, 2) + '\n')
  if (result.withinBudget === false) process.exitCode = 1
}
