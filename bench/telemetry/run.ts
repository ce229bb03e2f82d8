// Telemetry bench: requests/s and p99 latency of GET /v1/telemetry/network (200, charged) and of its
// 304 path (If-None-Match, free), against a bare Fastify route returning the same JSON, in one run.
// Paths are interleaved in rounds so machine noise hits all alike. The server is a child process
// (server.ts); this process is the load generator (keep-alive HTTP, fixed concurrency).
// Usage: npm run bench:telemetry -- [--seconds 3] [--rounds 3] [--concurrency 16] [--out file]
import { spawn } from 'node:child_process'
import { parseArgs } from 'node:util'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Agent, request } from 'node:http'
import { cpus } from 'node:os'
import { createInterface } from 'node:readline'

const DEFAULT_SECONDS = 3 // per path per round
const DEFAULT_ROUNDS = 3
const DEFAULT_CONCURRENCY = 16 // requests in flight
const MAX_REQUESTS_PER_SLICE = 2_000_000 // bound on each load loop whatever the options say
const SERVER_READY_TIMEOUT_MS = 30_000
const REPO = join(import.meta.dirname, '..', '..')
const DEFAULT_OUT = join(REPO, 'bench', 'out', 'telemetry.json')
const LOOPBACK = '127.0.0.1'

const { values: args } = parseArgs({ options: { seconds: { type: 'string' }, rounds: { type: 'string' }, concurrency: { type: 'string' }, out: { type: 'string' } } })
const seconds = Number(args.seconds ?? DEFAULT_SECONDS)
const rounds = Number(args.rounds ?? DEFAULT_ROUNDS)
const concurrency = Number(args.concurrency ?? DEFAULT_CONCURRENCY)
for (const [n, v] of [['seconds', seconds], ['rounds', rounds], ['concurrency', concurrency]] as const) if (!(v > 0)) throw new Error(`--${n} must be positive`)

interface Ready { apiPort: number, barePort: number, key: string, etag: string, bytes: number }
const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'server.ts')], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] })
const killer = setTimeout(() => { child.kill('SIGKILL') }, (seconds * rounds * 3 + 60) * 1000 + SERVER_READY_TIMEOUT_MS)
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
  telemetry: { port: ready.apiPort, headers: { 'x-api-key': ready.key }, expect: 200 },
  telemetry304: { port: ready.apiPort, headers: { 'x-api-key': ready.key, 'if-none-match': ready.etag }, expect: 304 }
} as const
type PathName = keyof typeof PATHS
const agent = new Agent({ keepAlive: true, maxSockets: concurrency })

function once (p: typeof PATHS[PathName]): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: LOOPBACK, port: p.port, path: '/v1/telemetry/network', agent, headers: p.headers }, (res) => {
      res.resume()
      res.on('end', () => (res.statusCode === p.expect ? resolve(res.statusCode) : reject(new Error(`status ${res.statusCode}, expected ${p.expect}`))))
    })
    req.on('error', reject)
    req.end()
  })
}

async function slice (name: PathName): Promise<{ requests: number, ms: number, latencies: number[] }> {
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

const totals: Record<PathName, { requests: number, ms: number, latencies: number[] }> = { bare: { requests: 0, ms: 0, latencies: [] }, telemetry: { requests: 0, ms: 0, latencies: [] }, telemetry304: { requests: 0, ms: 0, latencies: [] } }
for (const name of Object.keys(PATHS) as PathName[]) await slice(name).catch((e) => { throw e }) // warm-up, not counted
for (let r = 0; r < rounds; r++) {
  for (const name of Object.keys(PATHS) as PathName[]) {
    const s = await slice(name)
    totals[name].requests += s.requests
    totals[name].ms += s.ms
    for (const l of s.latencies) totals[name].latencies.push(l)
  }
}
agent.destroy()
child.kill('SIGTERM')

const p99 = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)] ?? 0 }
const result: Record<string, unknown> = { bench: 'telemetry', seconds, rounds, concurrency, cpus: cpus().length, node: process.version, bodyBytes: ready.bytes }
for (const name of Object.keys(PATHS) as PathName[]) {
  const t = totals[name]
  result[name] = { requests: t.requests, rps: Math.round(t.requests / (t.ms / 1000)), p99Ms: Number(p99(t.latencies).toFixed(3)) }
}
const rps = (n: PathName): number => (result[n] as { rps: number }).rps
const lat = (n: PathName): number => (result[n] as { p99Ms: number }).p99Ms
result.ratios = {
  telemetryVsBareRps: Number((rps('telemetry') / rps('bare')).toFixed(3)),
  telemetry304VsBareRps: Number((rps('telemetry304') / rps('bare')).toFixed(3)),
  telemetryVsBareP99: Number((lat('telemetry') / lat('bare')).toFixed(3)),
  telemetry304VsBareP99: Number((lat('telemetry304') / lat('bare')).toFixed(3))
}
process.stderr.write(`path          req/s     p99 ms\n`)
for (const name of Object.keys(PATHS) as PathName[]) process.stderr.write(`${name.padEnd(13)} ${String(rps(name)).padStart(8)} ${lat(name).toFixed(3).padStart(9)}\n`)
process.stderr.write(`ratios ${JSON.stringify(result.ratios)}\n`)
const out = args.out ?? DEFAULT_OUT
await mkdir(dirname(out), { recursive: true })
await writeFile(out, JSON.stringify(result, null, 2) + '\n')
process.stdout.write(JSON.stringify(result) + '\n')
