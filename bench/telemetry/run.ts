// Telemetry bench: requests/s and p99 latency of GET /v1/telemetry/network (200, charged) and of its
// 304 path (If-None-Match, free) on a running devnet, against a bare Fastify route returning the same
// JSON in the same process (and the same route's 304 for the same ETag, `bare304`: what a bare 304 costs on
// this machine, printed beside the goals), in one run. Paths are interleaved in rounds so machine noise hits all
// alike. The server is a child process (server.ts: the devnet and the bare app); this process is the
// load generator (keep-alive HTTP, fixed concurrency).
// Goals (docs/benchmarks.md): 200 and 304 ≥ 0.9× bare, p99 < 10 ms at 32 connections; every 200 is
// answered only once its charge is written (docs/telemetry.md#charges-and-the-ledger).
// Usage: npm run bench:telemetry -- [--seconds 3] [--rounds 3] [--concurrency 32] [--out file]
//        [--paths telemetry]   load only the named paths (comma-separated; no ratios), e.g. to profile one:
//        BWN_BENCH_SERVER_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' npm run bench:telemetry -- --paths telemetry
//        node bench/profile-top.ts /tmp/prof/<largest>.cpuprofile 25 --skip-ms <serverStartupMs of the output>
import { spawn } from 'node:child_process'
import { parseArgs } from 'node:util'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Agent, request } from 'node:http'
import { Pool } from 'undici'
import { cpus } from 'node:os'
import { createInterface } from 'node:readline'

const DEFAULT_SECONDS = 3 // per path per round
const DEFAULT_ROUNDS = 3
const DEFAULT_CONCURRENCY = 32 // requests in flight (connections)
const MAX_REQUESTS_PER_SLICE = 2_000_000 // bound on each load loop whatever the options say
const MAX_PATHS = 4 // bare, bare304, telemetry, telemetry304 (PATHS below)
const SERVER_READY_TIMEOUT_MS = 120_000 // a devnet start and one transfer
const REPO = join(import.meta.dirname, '..', '..')
const DEFAULT_OUT = join(REPO, 'bench', 'out', 'telemetry.json')
const LOOPBACK = '127.0.0.1'

const { values: args } = parseArgs({ options: { seconds: { type: 'string' }, rounds: { type: 'string' }, concurrency: { type: 'string' }, out: { type: 'string' }, paths: { type: 'string' } } })
const seconds = Number(args.seconds ?? DEFAULT_SECONDS)
const rounds = Number(args.rounds ?? DEFAULT_ROUNDS)
const concurrency = Number(args.concurrency ?? DEFAULT_CONCURRENCY)
for (const [n, v] of [['seconds', seconds], ['rounds', rounds], ['concurrency', concurrency]] as const) if (!(v > 0)) throw new Error(`--${n} must be positive`)

interface Ready { apiPort: number, barePort: number, key: string, etag: string, bytes: number, evidence: number, startupMs: number }
const GOALS = { rps200: 0.9, rps304: 0.9, p99Ms: 10 }
const child = spawn(process.execPath, [...(process.env.BWN_BENCH_SERVER_ARGS ?? '').split(' ').filter(Boolean), join(import.meta.dirname, 'server.ts')], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] })
// Every path loads for a warm-up slice and one slice per round; the bound leaves a minute beside that.
const killer = setTimeout(() => { child.kill('SIGKILL') }, (seconds * (rounds + 1) * MAX_PATHS + 60) * 1000 + SERVER_READY_TIMEOUT_MS)
killer.unref()
const ready = await new Promise<Ready>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error('server not ready')), SERVER_READY_TIMEOUT_MS)
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try { const m = JSON.parse(line); if (m.event === 'ready') { clearTimeout(timer); resolve(m) } } catch {}
  })
  child.once('exit', (code) => reject(new Error(`server exited ${code}`)))
})

const PATHS = {
  bare: { port: ready.barePort, headers: {}, expect: 200 },
  bare304: { port: ready.barePort, headers: { 'if-none-match': ready.etag }, expect: 304 },
  telemetry: { port: ready.apiPort, headers: { 'x-api-key': ready.key }, expect: 200 },
  telemetry304: { port: ready.apiPort, headers: { 'x-api-key': ready.key, 'if-none-match': ready.etag }, expect: 304 }
} as const
type PathName = keyof typeof PATHS
const ALL = Object.keys(PATHS) as PathName[]
const selected = args.paths === undefined ? ALL : args.paths.split(',').map(p => p.trim())
for (const p of selected) if (!ALL.includes(p as PathName)) throw new Error(`--paths: unknown path ${p} (${ALL.join(', ')})`)
const names = selected as PathName[]
const agent = new Agent({ keepAlive: true, maxSockets: concurrency })

// undici's pool: the load generator shares the 2 cores with the server, and node:http's client costs
// about as much CPU per request as the server does; a lighter client measures the server, not itself.
const pools = new Map<number, Pool>()
const pool = (port: number): Pool => {
  let p = pools.get(port)
  if (p === undefined) { p = new Pool(`http://${LOOPBACK}:${port}`, { connections: concurrency, pipelining: 1 }); pools.set(port, p) }
  return p
}

async function once (p: typeof PATHS[PathName]): Promise<number> {
  const res = await pool(p.port).request({ method: 'GET', path: '/v1/telemetry/network', headers: p.headers })
  await res.body.dump()
  if (res.statusCode !== p.expect) throw new Error(`status ${res.statusCode}, expected ${p.expect}`)
  return res.statusCode
}

function cpuNow (): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: LOOPBACK, port: ready.barePort, path: '/__cpu', agent }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (d: string) => { text += d }).on('end', () => { const c = JSON.parse(text); resolve(c.user + c.system) })
    })
    req.on('error', reject)
    req.end()
  })
}

async function slice (name: PathName): Promise<{ requests: number, ms: number, latencies: number[], cpuUs: number }> {
  const cpu0 = await cpuNow()
  const s = await load(name)
  return { ...s, cpuUs: (await cpuNow()) - cpu0 }
}

async function load (name: PathName): Promise<{ requests: number, ms: number, latencies: number[] }> {
  const p = PATHS[name]
  const latencies: number[] = []
  const start = performance.now()
  const end = start + seconds * 1000
  let sent = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end && sent < MAX_REQUESTS_PER_SLICE) {
      sent++
      const t0 = performance.now()
      await once(p)
      latencies.push(performance.now() - t0)
    }
  }))
  return { requests: latencies.length, ms: performance.now() - start, latencies }
}

const totals: Record<PathName, { requests: number, ms: number, latencies: number[], cpuUs: number }> = { bare: { requests: 0, ms: 0, latencies: [], cpuUs: 0 }, bare304: { requests: 0, ms: 0, latencies: [], cpuUs: 0 }, telemetry: { requests: 0, ms: 0, latencies: [], cpuUs: 0 }, telemetry304: { requests: 0, ms: 0, latencies: [], cpuUs: 0 } }
for (const name of names) await slice(name).catch((e) => { throw e }) // warm-up, not counted
for (let r = 0; r < rounds; r++) {
  for (const name of names) {
    const s = await slice(name)
    totals[name].requests += s.requests
    totals[name].ms += s.ms
    totals[name].cpuUs += s.cpuUs
    for (const l of s.latencies) totals[name].latencies.push(l)
  }
}
agent.destroy()
await Promise.all([...pools.values()].map(async (p) => await p.close()))
child.kill('SIGTERM')

const p99 = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)] ?? 0 }
// serverStartupMs: how long the server took to be ready; a --cpu-prof of it skips that much (profile-top --skip-ms).
const result: Record<string, unknown> = { bench: 'telemetry', target: 'devnet', seconds, rounds, concurrency, cpus: cpus().length, node: process.version, bodyBytes: ready.bytes, evidenceTasks: ready.evidence, serverStartupMs: ready.startupMs }
for (const name of names) {
  const t = totals[name]
  result[name] = { requests: t.requests, rps: Math.round(t.requests / (t.ms / 1000)), p99Ms: Number(p99(t.latencies).toFixed(3)), serverCpuUsPerRequest: Number((t.cpuUs / Math.max(1, t.requests)).toFixed(1)) }
}
const rps = (n: PathName): number => (result[n] as { rps: number }).rps
const lat = (n: PathName): number => (result[n] as { p99Ms: number }).p99Ms
const cpuPer = (n: PathName): number => (result[n] as { serverCpuUsPerRequest: number }).serverCpuUsPerRequest
if (names.length === ALL.length) {
  result.ratios = {
    telemetryVsBareRps: Number((rps('telemetry') / rps('bare')).toFixed(3)),
    telemetry304VsBareRps: Number((rps('telemetry304') / rps('bare')).toFixed(3)),
    telemetryVsBareP99: Number((lat('telemetry') / lat('bare')).toFixed(3)),
    telemetry304VsBareP99: Number((lat('telemetry304') / lat('bare')).toFixed(3)),
    // Requests per server CPU-second, relative to bare: the throughput ratio when the server is CPU-bound,
    // with other load on the machine mostly factored out.
    telemetryVsBareCpu: Number((cpuPer('bare') / cpuPer('telemetry')).toFixed(3)),
    telemetry304VsBareCpu: Number((cpuPer('bare') / cpuPer('telemetry304')).toFixed(3)),
    // The 304 path against a bare 304: no body on either side, so what is left is the paid path's own work.
    telemetry304VsBare304Rps: Number((rps('telemetry304') / rps('bare304')).toFixed(3)),
    telemetry304VsBare304Cpu: Number((cpuPer('bare304') / cpuPer('telemetry304')).toFixed(3))
  }
  result.goals = {
    rps200: { want: `>= ${GOALS.rps200}`, met: (result.ratios as any).telemetryVsBareRps >= GOALS.rps200 },
    rps304: { want: `>= ${GOALS.rps304}`, met: (result.ratios as any).telemetry304VsBareRps >= GOALS.rps304 },
    p99: { want: `< ${GOALS.p99Ms} ms`, met: lat('telemetry') < GOALS.p99Ms && lat('telemetry304') < GOALS.p99Ms }
  }
}
process.stderr.write(`path          req/s     p99 ms   server CPU µs/req\n`)
for (const name of names) process.stderr.write(`${name.padEnd(13)} ${String(rps(name)).padStart(8)} ${lat(name).toFixed(3).padStart(9)} ${cpuPer(name).toFixed(1).padStart(12)}\n`)
if (result.ratios !== undefined) process.stderr.write(`ratios ${JSON.stringify(result.ratios)}\ngoals ${JSON.stringify(result.goals)}\n`)
const out = args.out ?? DEFAULT_OUT
await mkdir(dirname(out), { recursive: true })
await writeFile(out, JSON.stringify(result, null, 2) + '\n')
process.stdout.write(JSON.stringify(result) + '\n')
