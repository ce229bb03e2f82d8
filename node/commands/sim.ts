// `bwnet sim SCENARIO.json [--out DIR] [--seed N]`: runs the simulator, writes metrics.json and
// report.html, prints the invariants; exits 1 when one fails. Progress: a bar on a TTY, plain lines
// otherwise (CI=true or piped).
import { Command } from 'commander'
import cliProgress from 'cli-progress'
import { loadScenario, runSimulation, writeOutputs, type Progress } from '../../sim/index.ts'

export const PLAIN_PROGRESS_EVERY_MS = 5_000 // wall time between plain progress lines

export function simCommand (): Command {
  return new Command('sim')
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
