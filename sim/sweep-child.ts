// One run of a sweep (sim/sweep.ts), in its own process: reads { scenario, seed, metricsOut? } as JSON
// on stdin, runs the simulation, optionally writes metrics.json and report.html, and prints
// { summary, wallS } as one JSON line.
import { runSimulation } from './run.ts'
import { writeOutputs } from './report.ts'
import { parseScenario } from './scenario.ts'
import { summarize } from './sweep.ts'

let input = ''
for await (const chunk of process.stdin) input += String(chunk)
const job = JSON.parse(input) as { scenario: unknown, seed: number, metricsOut?: string }
const started = performance.now()
const metrics = await runSimulation(parseScenario(job.scenario), { seed: job.seed })
const wallS = (performance.now() - started) / 1000
if (job.metricsOut !== undefined) await writeOutputs(job.metricsOut, metrics)
process.stdout.write(JSON.stringify({ summary: summarize(metrics), wallS }) + '\n')
