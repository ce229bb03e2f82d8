// WebSocket fan-out bench: N concurrent subscribers of GET /transfers/{id}/events on one real transfer
// of a devnet. Every subscriber must get every event of the transfer, in order, ending with the
// terminal status (the run fails otherwise); the latency of each event is its arrival at the socket
// minus its `at` (the coordinator's clock when it recorded the change, before the store write), so it
// covers the durable write, the publish and the socket. A baseline phase with one subscriber runs in
// the same process first; the ratio of the medians says what the fan-out costs.
// The devnet runs in a child process (server.ts); this process holds the sockets.
// Goal (docs/benchmarks.md): median < 50 ms with 200 subscribers.
// Usage: npm run bench:ws -- [--subscribers 200] [--size-mib 160] [--out file] [--timeout-s 600]
import { spawn } from 'node:child_process'
import { parseArgs } from 'node:util'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { cpus, loadavg } from 'node:os'
import { createInterface } from 'node:readline'
import WebSocket from 'ws'
import type { TransferEvent } from '../../protocol/index.ts'

const REPO = join(import.meta.dirname, '..', '..')
const DEFAULT_OUT = join(REPO, 'bench', 'out', 'ws.json')
const GOAL_MEDIAN_MS = 50

const { values: args } = parseArgs({ options: { subscribers: { type: 'string' }, 'size-mib': { type: 'string' }, out: { type: 'string' }, 'timeout-s': { type: 'string' } } })
const subscribers = Number(args.subscribers ?? 200)
const sizeMib = Number(args['size-mib'] ?? 160)
const timeoutS = Number(args['timeout-s'] ?? 600)
for (const [n, v] of [['subscribers', subscribers], ['size-mib', sizeMib], ['timeout-s', timeoutS]] as const) if (!(v > 0)) throw new Error(`--${n} must be positive`)

const child = spawn(process.execPath, [join(import.meta.dirname, 'server.ts')], { cwd: REPO, stdio: ['pipe', 'pipe', 'inherit'] })
const killer = setTimeout(() => { process.stderr.write('bench timed out\n'); child.kill('SIGKILL'); process.exit(2) }, timeoutS * 1000)
killer.unref()
const waiting: Array<{ event: string, resolve: (m: any) => void }> = []
createInterface({ input: child.stdout! }).on('line', (line) => {
  let m: any
  try { m = JSON.parse(line) } catch { return }
  if (m.event === 'error') { process.stderr.write(`server: ${m.message}\n`); child.kill('SIGKILL'); process.exit(1) }
  const i = waiting.findIndex(w => w.event === m.event)
  if (i >= 0) waiting.splice(i, 1)[0]!.resolve(m)
})
const exited = new Promise(resolve => child.once('exit', resolve))
child.once('exit', (code) => { if (code !== 0 && code !== null) { process.stderr.write(`server exited ${code}\n`); process.exit(1) } })
const next = (event: string): Promise<any> => new Promise(resolve => waiting.push({ event, resolve }))
const send = (m: Record<string, unknown>): void => { child.stdin!.write(JSON.stringify(m) + '\n') }

const ready = await next('ready') as { baseUrl: string, key: string }

interface Sub { events: TransferEvent[], recvMs: number[], close: Promise<number> }

function subscribe (id: string): Promise<Sub> {
  const url = `${ready.baseUrl.replace(/^http/, 'ws')}/transfers/${id}/events?after=0`
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${ready.key}` }, perMessageDeflate: false })
    const sub: Sub = { events: [], recvMs: [], close: new Promise(res => ws.on('close', (code) => res(code))) }
    ws.on('message', (d) => { sub.recvMs.push(Date.now()); sub.events.push(JSON.parse(String(d))) })
    ws.on('open', () => resolve(sub))
    ws.on('error', reject)
  })
}

const quantile = (sorted: number[], q: number): number => sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

async function phase (n: number): Promise<Record<string, unknown>> {
  send({ cmd: 'create', sizeMib })
  const { id, chunks } = await next('created') as { id: string, chunks: number }
  const subs: Sub[] = []
  for (let i = 0; i < n; i += 50) subs.push(...await Promise.all(Array.from({ length: Math.min(50, n - i) }, () => subscribe(id))))
  const goAt = Date.now()
  send({ cmd: 'run', id })
  const done = await next('done') as { status: string, loopDelayMs: Record<string, number> }
  const codes = await Promise.all(subs.map(s => s.close))
  // Correctness: everybody got the same full sequence 1..N, ending with the terminal status, and a 1000.
  const reference = subs[0]!.events.map(e => e.seq)
  const full = reference.length > 0 && reference.every((s, i) => s === i + 1) && subs[0]!.events.at(-1)!.status === done.status
  const identical = subs.every(s => s.events.length === reference.length && s.events.every((e, i) => e.seq === reference[i]))
  const latencies: number[] = []
  for (const s of subs) s.events.forEach((e, i) => { const at = Date.parse(e.at); if (at >= goAt) latencies.push(s.recvMs[i]! - at) })
  latencies.sort((a, b) => a - b)
  return {
    subscribers: n, chunks, status: done.status, events: reference.length, liveSamples: latencies.length,
    everySubscriberGotEveryEvent: full && identical, allClosedNormally: codes.every(c => c === 1000),
    serverLoopDelayMs: done.loopDelayMs,
    medianMs: quantile(latencies, 0.5), p90Ms: quantile(latencies, 0.9), p99Ms: quantile(latencies, 0.99), maxMs: latencies.at(-1) ?? NaN
  }
}

const baseline = await phase(1)
const fanout = await phase(subscribers)
send({ cmd: 'stop' })
const result = {
  bench: 'ws', sizeMib,
  machine: { cpus: cpus().length, loadavg1: Number(loadavg()[0]!.toFixed(2)) },
  baseline, fanout,
  ratio: { medianVsBaseline: Number(((fanout.medianMs as number) / Math.max(1, baseline.medianMs as number)).toFixed(2)) },
  goal: { medianMs: GOAL_MEDIAN_MS, met: (fanout.medianMs as number) < GOAL_MEDIAN_MS && fanout.everySubscriberGotEveryEvent === true }
}
const out = args.out ?? DEFAULT_OUT
await mkdir(dirname(out), { recursive: true })
await writeFile(out, JSON.stringify(result, null, 2) + '\n')
process.stderr.write(`baseline (1 subscriber): median ${baseline.medianMs} ms, p99 ${baseline.p99Ms} ms over ${baseline.events} events\n`)
process.stderr.write(`fan-out (${subscribers} subscribers): median ${fanout.medianMs} ms, p99 ${fanout.p99Ms} ms, ${fanout.liveSamples} samples; every subscriber got every event: ${fanout.everySubscriberGotEveryEvent}\n`)
process.stderr.write(`server event-loop delay during the transfers: baseline ${JSON.stringify(baseline.serverLoopDelayMs)}, fan-out ${JSON.stringify(fanout.serverLoopDelayMs)} (ms); load average ${result.machine.loadavg1} on ${result.machine.cpus} cores\n`)
process.stderr.write(`ratios: median ${result.ratio.medianVsBaseline}x the 1-subscriber baseline; goal median < ${GOAL_MEDIAN_MS} ms: ${result.goal.met ? 'met' : 'NOT met'}\n`)
process.stdout.write(JSON.stringify(result) + '\n')
clearTimeout(killer)
await exited
process.exit(baseline.everySubscriberGotEveryEvent === true && fanout.everySubscriberGotEveryEvent === true ? 0 : 1)
