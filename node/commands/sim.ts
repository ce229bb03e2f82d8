// `bwnet sim SCENARIO.json [--out DIR] [--seed N]`: runs the simulator, writes metrics.json and
// report.html, prints the invariants; exits 1 when one fails. Progress: a bar on a TTY, plain lines
// otherwise (CI=true or piped).
import { Command } from 'commander'
import cliProgress from 'cli-progress'
import { readFile } from 'node:fs/promises'
import { loadScenario, runSimulation, writeOutputs, type Progress } from '../../sim/index.ts'
import { parseParam, runSweep, writeSweep, type SweepParam } from '../../sim/sweep.ts'

export const PLAIN_PROGRESS_EVERY_MS = 5_000 // wall time between plain progress lines

/** `bwnet sim sweep SCENARIO.json --param path=v1,v2 [--param …] --seeds N [--jobs K] [--out DIR]`. */
export function sweepCommand (): Command {
  return new Command('sweep')
    .description('run a scenario over a grid of parameter values and seeds, in parallel child processes (see docs/sim.md#sweeps)')
    .argument('<scenario>', 'scenario JSON file')
    .requiredOption('--param <path=v1,v2,...>', 'a scenario field (dot path) and its values; repeat for a grid', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--seeds <n>', 'seeds per grid point (the scenario\'s seed, then the next ones)', '3')
    .option('--jobs <n>', 'child processes at once (default: the cores)')
    .option('--out <dir>', 'output directory for sweep.csv, sweep.json, report.html and runs/', 'sim-sweep')
    .action(async (file: string, opts: { param: string[], seeds: string, jobs?: string, out: string }, cmd: Command) => {
      // Under the full CLI, `--out` after `sim sweep` reaches the parent `sim` command first: take it from there.
      const parent = cmd.parent
      if (parent?.getOptionValueSource('out') === 'cli' && cmd.getOptionValueSource('out') !== 'cli') opts = { ...opts, out: parent.opts<{ out: string }>().out }
      let params: SweepParam[]
      let base: unknown
      const seeds = Number(opts.seeds)
      const jobs = opts.jobs === undefined ? undefined : Number(opts.jobs)
      try {
        params = opts.param.map(parseParam)
        if (!Number.isInteger(seeds) || seeds < 1 || seeds > 1000) throw new TypeError('--seeds must be an integer in 1..1000')
        if (jobs !== undefined && (!Number.isInteger(jobs) || jobs < 1)) throw new TypeError('--jobs must be a positive integer')
        await loadScenario(file) // names a bad file or field before any run starts
        base = JSON.parse(await readFile(file, 'utf8'))
      } catch (err) {
        console.error((err as Error).message)
        process.exitCode = 2
        return
      }
      const started = performance.now()
      let result
      try {
        result = await runSweep(base, {
          params, seeds, jobs, out: opts.out,
          onRun: (r, done, total) => console.log(`sweep: ${done}/${total} ${Object.entries(r.params).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')} seed ${r.seed}: ${r.summary.tasksVerified}/${r.summary.tasks} tasks verified, invariants ${r.summary.invariantsOk ? 'ok' : 'FAILED'} (${r.wallS.toFixed(1)} s)`)
        })
      } catch (err) {
        console.error((err as Error).message)
        process.exitCode = 2
        return
      }
      const paths = await writeSweep(opts.out, result)
      console.log(`sweep: ${result.runs.length} runs in ${((performance.now() - started) / 1000).toFixed(1)} s; wrote ${paths.csv}, ${paths.json} and ${paths.report}`)
      if (result.runs.some(r => !r.summary.invariantsOk)) process.exitCode = 1
    })
}

export function simCommand (): Command {
  return new Command('sim')
    // `sim sweep … --out DIR`: options after the subcommand are the subcommand's.
    .enablePositionalOptions()
    .addCommand(sweepCommand())
    .description('run the network simulator on a scenario file (see docs/sim.md)')
    .argument('<scenario>', 'scenario JSON file')
    .option('--out <dir>', 'output directory for metrics.json and report.html', 'sim-out')
    .option('--seed <n>', 'seed (overrides the scenario\'s)', (v: string) => {
      const n = Number(v)
      if (!Number.isInteger(n) || n < 0 || n > 2 ** 31 - 1) throw new Error(`--seed must be an integer in 0..${2 ** 31 - 1}`)
      return n
    })
    .action(async (file: string, opts: { out: string, seed?: number }) => {
      let scenario
      try { scenario = await loadScenario(file) } catch (err) {
        console.error((err as Error).message)
        process.exitCode = 2
        return
      }
      const tty = process.stdout.isTTY === true && process.env.CI !== 'true'
      const bar = tty ? new cliProgress.SingleBar({ format: 'sim |{bar}| {percentage}% | {hours} h simulated | {verified} tasks verified | {transfers} transfers', hideCursor: true }, cliProgress.Presets.shades_classic) : null
      let lastLine = 0
      const started = performance.now()
      const onProgress = (p: Progress): void => {
        const hours = (p.simMs / 3_600_000).toFixed(2)
        if (bar !== null) {
          if (!bar.isActive) bar.start(p.totalMs, 0, { hours, verified: 0, transfers: 0 })
          bar.update(p.simMs, { hours, verified: p.tasksVerified, transfers: p.transfers })
        } else if (performance.now() - lastLine >= PLAIN_PROGRESS_EVERY_MS) {
          lastLine = performance.now()
          console.log(`sim: ${hours} h of ${(p.totalMs / 3_600_000).toFixed(2)} h simulated, ${p.tasksVerified} tasks verified, ${p.transfers} transfers`)
        }
      }
      const seed = opts.seed ?? scenario.seed
      console.log(`sim: scenario ${scenario.name}, seed ${seed ?? 1}`)
      const metrics = await runSimulation(scenario, { seed, onProgress })
      bar?.stop()
      const paths = await writeOutputs(opts.out, metrics)
      const t = metrics.totals
      console.log(`sim: ${metrics.simulatedHours.toFixed(2)} h simulated in ${((performance.now() - started) / 1000).toFixed(1)} s; ${t.transfers} transfers, ${t.tasksVerified}/${t.tasks} tasks verified, ${t.reassignments} reassignments`)
      for (const inv of metrics.invariants) console.log(`invariant ${inv.ok ? 'OK    ' : 'FAILED'} ${inv.name}: ${inv.detail}`)
      console.log(`wrote ${paths.metrics} and ${paths.report}`)
      if (metrics.invariants.some(i => !i.ok)) {
        console.log(`replay with: bwnet sim ${file} --seed ${metrics.seed}`)
        process.exitCode = 1
      }
    })
}
