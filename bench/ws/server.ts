// The ws bench's server process: a devnet (the same `Devnet` that `bwnet devnet` starts: orchestrator
// with its API, workers, a validator, the dev chain, a hyperdht testnet on loopback). Prints one JSON
// line `ready` with its base URL and a client key, then takes commands on stdin, one JSON line each:
//   {"cmd":"create","sizeMib":N}  creates a transfer, answers {"event":"created","id":…}
//   {"cmd":"run","id":…}          uploads its chunks, finalizes, waits for a terminal status,
//                                  answers {"event":"done","id":…,"status":…}
// The upload runs in this process, as a client's would against a node: the load the event path sees.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { createInterface } from 'node:readline'
import { pino } from 'pino'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { Devnet } from '../../node/devnet.ts'
import { bootstrapDevnetKeys } from '../../api/accounts/devnet.ts'

const READY_TIMEOUT_MS = 60_000
const RUN_TIMEOUT_MS = 300_000
const MIB = 1024 * 1024

const data = await mkdtemp(join(tmpdir(), 'bwnet-bench-ws-'))
const workers = Number(process.env.BWN_BENCH_WORKERS ?? 3)
const devnet = new Devnet({ port: 0, data, workers, logLevel: 'silent' }, pino({ level: 'silent' }), { bootstrapKeys: async (o) => ({ ...await bootstrapDevnetKeys(o.accounts!) }) })
const file = await devnet.start()
const until = async (what: string, timeoutMs: number, fn: () => Promise<boolean>): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}
await until('workers', READY_TIMEOUT_MS, async () => ((await (await fetch(`${file.baseUrl}/health`)).json()) as { nodes: { worker: number } }).nodes.worker === workers)
const accounts = devnet.orchestrator.accounts!
const org = (await accounts.listOrganizations())[0]!
const key = (await accounts.createKey(org.id, { role: 'client', plan: 'enterprise', name: 'bench ws' })).key
const auth = { authorization: `Bearer ${key}` }
const say = (m: Record<string, unknown>): void => { process.stdout.write(JSON.stringify(m) + '\n') }

const transfers = new Map<string, { size: number, chunkSize: number, chunks: number }>()
async function create (sizeMib: number): Promise<void> {
  const size = sizeMib * MIB
  const res = await fetch(`${file.baseUrl}/transfers/create`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ sender_hotkey: file.nodes[0]!.hotkey, total_size: size, filename: `bench-${transfers.size}.bin`, tier: 'STANDARD' }) })
  const t = await res.json() as { id: string, chunk_size: number, total_chunks: number }
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(t)}`)
  transfers.set(t.id, { size, chunkSize: t.chunk_size, chunks: t.total_chunks })
  say({ event: 'created', id: t.id, chunks: t.total_chunks })
}

async function run (id: string): Promise<void> {
  const t = transfers.get(id)!
  // How late this process's event loop ran during the transfer: the floor under any event's latency.
  const lag = monitorEventLoopDelay({ resolution: 10 })
  lag.enable()
  for (let i = 0; i < t.chunks; i++) {
    const chunk = Buffer.alloc(Math.min(t.chunkSize, t.size - i * t.chunkSize), (i * 7 + 1) & 0xff)
    chunk.write(`${id}/${i}`)
    const res = await fetch(`${file.baseUrl}/transfers/${id}/chunks`, { method: 'POST', headers: { ...auth, 'content-type': 'application/octet-stream', 'x-chunk-index': String(i), 'x-chunk-sha256': createHash('sha256').update(chunk).digest('hex') }, body: chunk })
    if (res.status !== 201) throw new Error(`chunk ${i} answered ${res.status}`)
    await res.arrayBuffer()
  }
  await (await fetch(`${file.baseUrl}/transfers/${id}/finalize`, { method: 'POST', headers: auth })).arrayBuffer()
  let status = ''
  await until(`transfer ${id}`, RUN_TIMEOUT_MS, async () => {
    status = ((await (await fetch(`${file.baseUrl}/transfers/${id}`, { headers: auth })).json()) as { status: string }).status
    return ['completed', 'failed', 'cancelled'].includes(status)
  })
  lag.disable()
  say({ event: 'done', id, status, loopDelayMs: { p50: Number((lag.percentile(50) / 1e6).toFixed(1)), p99: Number((lag.percentile(99) / 1e6).toFixed(1)), max: Number((lag.max / 1e6).toFixed(1)) } })
}

let stopping: Promise<void> | null = null
const stop = (): Promise<void> => (stopping ??= (async () => { await devnet.stop(); await rm(data, { recursive: true, force: true }); process.exit(0) })())
process.on('SIGTERM', () => { void stop() })
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line) as { cmd: string, sizeMib?: number, id?: string }
  const job = m.cmd === 'create' ? create(m.sizeMib!) : m.cmd === 'run' ? run(m.id!) : m.cmd === 'stop' ? stop() : Promise.reject(new Error(`unknown command ${m.cmd}`))
  job.catch((err: Error) => { say({ event: 'error', message: err.message }); process.exitCode = 1 })
}).on('close', () => { void stop() })
say({ event: 'ready', baseUrl: file.baseUrl, key })
