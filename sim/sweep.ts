// Experiments as sweeps: one scenario, a grid of parameter values × seeds, every run in its own child
// process (at most `jobs` at once, default the cores), one summary row per run, and per grid point the
// mean with a 95% confidence band over the seeds (sweep.csv, sweep.json, report.html).
import { spawn } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseScenario, DEFAULT_SEED, type Scenario } from './scenario.ts'
import type { SimMetrics, OrchestratorEpochRow } from './run.ts'
import { renderSweepReport } from './sweep-report.ts'

export interface SweepParam { path: string, values: unknown[] }

/** What one run contributes to the comparison (all from metrics.json; workload epochs only). */
export interface RunSummary {
  tasks: number
  tasksVerified: number
  transfersFailed: number
  reassignments: number
  integrityMismatches: number
  /** Verified throughput over the workload epochs, Mbps. */
  verifiedMbps: number
  /** Weight held by orchestrators of each role, averaged over the workload epochs. */
  honestWeightShare: number
  adversarialWeightShare: number
  /** Mean weight of one honest orchestrator (what an honest operator earns). */
  weightPerHonestOrchestrator: number
  /** Orchestrators with weight in the last workload epoch. */
  contributingOrchestrators: number
  invariantsOk: boolean
}
export const SUMMARY_FIELDS: ReadonlyArray<keyof RunSummary> = [
  'tasks', 'tasksVerified', 'transfersFailed', 'reassignments', 'integrityMismatches', 'verifiedMbps',
  'honestWeightShare', 'adversarialWeightShare', 'weightPerHonestOrchestrator', 'contributingOrchestrators', 'invariantsOk'
]

export interface SweepRun { point: number, params: Record<string, unknown>, seed: number, summary: RunSummary, wallS: number }
export interface Band { mean: number, sd: number, low: number, high: number, n: number }
export interface SweepPoint { point: number, params: Record<string, unknown>, stats: Record<string, Band> }
export interface SweepResult { scenario: string, params: SweepParam[], seeds: number[], runs: SweepRun[], points: SweepPoint[] }

/** `path=v1,v2,…`: values are JSON when they parse (numbers, booleans, objects), else strings. */
export function parseParam (spec: string): SweepParam {
  const eq = spec.indexOf('=')
  if (eq <= 0 || eq === spec.length - 1) throw new TypeError(`--param ${spec}: expected path=v1,v2,...`)
  const path = spec.slice(0, eq)
  if (!/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/.test(path)) throw new TypeError(`--param ${spec}: the path is dot-separated field names (e.g. adversaries.corruptingWorkers)`)
  const values = splitValues(spec.slice(eq + 1)).map(v => { try { return JSON.parse(v) as unknown } catch { return v } })
  return { path, values }
}

/** Splits on commas outside brackets and braces, so a value may be a JSON object or array. */
function splitValues (text: string): string[] {
  const out: string[] = []
  let depth = 0
  let cur = ''
  for (const ch of text) {
    if (ch === '{' || ch === '[') depth++
    else if (ch === '}' || ch === ']') depth--
    if (ch === ',' && depth === 0) { out.push(cur); cur = '' } else cur += ch
  }
  out.push(cur)
  return out.map(v => v.trim()).filter(v => v.length > 0)
}

/** A copy of `scenario` with `path` set to `value` (intermediate objects created). */
export function withParam (scenario: unknown, path: string, value: unknown): unknown {
  const copy = structuredClone(scenario) as Record<string, unknown>
  const keys = path.split('.')
  let node = copy
  for (const k of keys.slice(0, -1)) {
    if (k === '__proto__' || k === 'constructor' || k === 'prototype') throw new TypeError(`--param ${path}: not a scenario field`)
    const next = node[k]
    if (next === undefined) node[k] = {}
    else if (typeof next !== 'object' || next === null || Array.isArray(next)) throw new TypeError(`--param ${path}: ${k} is not an object in the scenario`)
    node = node[k] as Record<string, unknown>
  }
  node[keys[keys.length - 1]!] = value
  return copy
}

/** Every combination of the parameters' values, the first parameter varying slowest. */
export function grid (params: SweepParam[]): Array<Record<string, unknown>> {
  let out: Array<Record<string, unknown>> = [{}]
  for (const p of params) out = out.flatMap(o => p.values.map(v => ({ ...o, [p.path]: v })))
  return out
}

/** Summarizes one run's metrics for the comparison (workload epochs; the drain is left out). */
export function summarize (m: SimMetrics): RunSummary {
  const work = m.epochs.filter(e => e.phase !== 'drain')
  const epochs = work.length > 0 ? work : m.epochs
  const spanH = epochs.reduce((a, e) => a + (e.endHours - e.startHours), 0)
  const bytes = epochs.reduce((a, e) => a + e.throughput.verifiedBytes, 0)
  const share = (pick: (r: OrchestratorEpochRow) => boolean): number =>
    epochs.length === 0 ? 0 : epochs.reduce((a, e) => a + e.orchestrators.filter(pick).reduce((s, o) => s + o.weight, 0), 0) / epochs.length
  const honest = share(o => o.role === 'honest')
  const honestCount = epochs[0]?.orchestrators.filter(o => o.role === 'honest').length ?? 0
  const last = epochs[epochs.length - 1]
  return {
    tasks: m.totals.tasks,
    tasksVerified: m.totals.tasksVerified,
    transfersFailed: m.totals.transfersFailed,
    reassignments: m.totals.reassignments,
    integrityMismatches: m.totals.integrityMismatches,
    verifiedMbps: spanH > 0 ? (bytes * 8) / (spanH * 3600 * 1e6) : 0,
    honestWeightShare: honest,
    adversarialWeightShare: share(o => o.role !== 'honest'),
    weightPerHonestOrchestrator: honestCount > 0 ? honest / honestCount : 0,
    contributingOrchestrators: last?.orchestrators.filter(o => o.weight > 0).length ?? 0,
    invariantsOk: m.invariants.every(i => i.ok)
  }
}

/** Two-sided 95% Student t quantiles for 1..30 degrees of freedom; 1.96 beyond. */
const T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042]

/**
 * The values each summary field can take: every one is a count, a rate or a share, never negative;
 * shares (and a flag, as 0/1) never above 1. A confidence band is clipped to them.
 */
export const FIELD_RANGE: Readonly<Record<keyof RunSummary, readonly [number, number]>> = {
  tasks: [0, Infinity],
  tasksVerified: [0, Infinity],
  transfersFailed: [0, Infinity],
  reassignments: [0, Infinity],
  integrityMismatches: [0, Infinity],
  verifiedMbps: [0, Infinity],
  honestWeightShare: [0, 1],
  adversarialWeightShare: [0, 1],
  weightPerHonestOrchestrator: [0, 1],
  contributingOrchestrators: [0, Infinity],
  invariantsOk: [0, 1]
}

/**
 * Mean, sample standard deviation and the 95% confidence interval of the mean (t distribution),
 * clipped to `range` (what the quantity can be: a count's band does not go below 0).
 */
export function band (xs: number[], range: readonly [number, number] = [-Infinity, Infinity]): Band {
  const n = xs.length
  const mean = n === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / n
  const sd = n < 2 ? 0 : Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1))
  const half = n < 2 ? 0 : (T95[n - 2] ?? 1.96) * sd / Math.sqrt(n)
  return { mean, sd, low: Math.max(range[0], mean - half), high: Math.min(range[1], mean + half), n }
}

export interface SweepOptions {
  params: SweepParam[]
  seeds: number
  /** Child processes at once (default: the cores). */
  jobs?: number
  /** Each run's metrics.json goes to `DIR/runs/<point>-<seed>/` when set. */
  out?: string
  onRun?: (run: SweepRun, done: number, total: number) => void
}

interface Job { point: number, params: Record<string, unknown>, seed: number, scenario: Scenario }

const CHILD = fileURLToPath(new URL(`./sweep-child${extname(fileURLToPath(import.meta.url))}`, import.meta.url))

function runChild (job: Job, metricsOut: string | undefined): Promise<{ summary: RunSummary, wallS: number }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...process.execArgv, CHILD], { stdio: ['pipe', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    p.stdout.on('data', (d: Buffer) => { out += d.toString() })
    p.stderr.on('data', (d: Buffer) => { err += d.toString() })
    p.on('error', reject)
    p.on('close', (code) => {
      if (code !== 0) { reject(new Error(`sweep run ${JSON.stringify(job.params)} seed ${job.seed} exited ${code}: ${err.trim().split('\n').slice(-3).join(' ')}`)); return }
      try { resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as { summary: RunSummary, wallS: number }) } catch (e) { reject(e) }
    })
    p.stdin.end(JSON.stringify({ scenario: job.scenario, seed: job.seed, metricsOut }))
  })
}

/** Runs the grid × seeds in child processes; runs come back in grid order whatever order they finish in. */
export async function runSweep (base: unknown, opts: SweepOptions): Promise<SweepResult> {
  if (!Number.isInteger(opts.seeds) || opts.seeds < 1) throw new TypeError('--seeds must be a positive integer')
  const baseScenario = parseScenario(base)
  const firstSeed = baseScenario.seed ?? DEFAULT_SEED
  const seeds = Array.from({ length: opts.seeds }, (_, k) => firstSeed + k)
  const points = grid(opts.params)
  const jobs: Job[] = []
  points.forEach((params, point) => {
    let s: unknown = base
    for (const [path, v] of Object.entries(params)) s = withParam(s, path, v)
    const scenario = parseScenario(s, `scenario with ${Object.entries(params).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')}`)
    for (const seed of seeds) jobs.push({ point, params, seed, scenario })
  })
  const limit = Math.max(1, Math.min(opts.jobs ?? availableParallelism(), jobs.length))
  const results = new Array<SweepRun | undefined>(jobs.length)
  let next = 0
  let done = 0
  const lane = async (): Promise<void> => {
    while (next < jobs.length) {
      const k = next++
      const job = jobs[k]!
      const dir = opts.out === undefined ? undefined : join(opts.out, 'runs', `${job.point}-${job.seed}`)
      const r = await runChild(job, dir)
      results[k] = { point: job.point, params: job.params, seed: job.seed, summary: r.summary, wallS: r.wallS }
      opts.onRun?.(results[k]!, ++done, jobs.length)
    }
  }
  await Promise.all(Array.from({ length: limit }, lane))
  const runs = results as SweepRun[]
  return {
    scenario: baseScenario.name,
    params: opts.params,
    seeds,
    runs,
    points: points.map((params, point) => {
      const mine = runs.filter(r => r.point === point)
      const stats: Record<string, Band> = {}
      for (const f of SUMMARY_FIELDS) stats[f] = band(mine.map(r => Number(r.summary[f])), FIELD_RANGE[f])
      return { point, params, stats }
    })
  }
}

const csvCell = (v: unknown): string => {
  const s = typeof v === 'string' ? v : JSON.stringify(v)
  return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s
}

/** One row per run: the parameters, the seed, the summary fields. */
export function sweepCsv (r: SweepResult): string {
  const head = [...r.params.map(p => p.path), 'seed', ...SUMMARY_FIELDS]
  const rows = r.runs.map(run => [...r.params.map(p => run.params[p.path]), run.seed, ...SUMMARY_FIELDS.map(f => run.summary[f])].map(csvCell).join(','))
  return [head.map(csvCell).join(','), ...rows].join('\n') + '\n'
}

/** Writes sweep.csv, sweep.json and report.html into `dir`; returns their paths. */
export async function writeSweep (dir: string, r: SweepResult): Promise<{ csv: string, json: string, report: string }> {
  await mkdir(dir, { recursive: true })
  const paths = { csv: join(dir, 'sweep.csv'), json: join(dir, 'sweep.json'), report: join(dir, 'report.html') }
  // Wall times vary from run to run; the files hold only what the scenario and seeds decide.
  const stable = { ...r, runs: r.runs.map(({ wallS: _, ...rest }) => rest) }
  await writeFile(paths.csv, sweepCsv(r))
  await writeFile(paths.json, JSON.stringify(stable, null, 2) + '\n')
  await writeFile(paths.report, renderSweepReport(r))
  return paths
}
