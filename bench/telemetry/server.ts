// The telemetry bench's server process: a running devnet (the same `Devnet` that `bwnet devnet`
// starts: orchestrator with its API on a level store on disk, workers, a validator, the dev chain,
// a hyperdht testnet on loopback), with one small transfer completed so the network summary carries
// evidence, and — in the same process, sharing its event loop — a bare Fastify app whose one route
// returns the same network envelope as a constant (304 when If-None-Match names its ETag). Prints one JSON line with the ports, the devnet's
// console key and the ETag.
import Fastify from 'fastify'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { pino } from 'pino'
import { Devnet } from '../../node/devnet.ts'
import { bootstrapDevnetKeys } from '../../api/accounts/devnet.ts'
import { createApiClient } from '../../api/client/index.ts'

const WORKERS = 2
const TRANSFER_BYTES = 2 * 1024 * 1024 + 3 // one chunk of evidence per worker at most
const READY_TIMEOUT_MS = 60_000

const data = await mkdtemp(join(tmpdir(), 'bwnet-bench-telemetry-'))
const devnet = new Devnet({ port: 0, data, workers: WORKERS, logLevel: 'silent' }, pino({ level: 'silent' }), { bootstrapKeys: async (o) => ({ ...await bootstrapDevnetKeys(o.accounts!) }) })
const file = await devnet.start()
const deadline = Date.now() + READY_TIMEOUT_MS
const until = async (what: string, fn: () => Promise<boolean>): Promise<void> => {
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`devnet: timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}
await until('workers', async () => ((await (await fetch(`${file.baseUrl}/health`)).json()) as { nodes: { worker: number } }).nodes.worker === WORKERS)

// One transfer, completed: published task evidence in the network summary.
const client = createApiClient(file.baseUrl, { key: file.keys.client })
const bytes = Buffer.alloc(TRANSFER_BYTES, 7)
const created = await client.POST('/transfers/create', { body: { sender_hotkey: file.nodes[0]!.hotkey, total_size: bytes.byteLength, filename: 'bench.bin', tier: 'STANDARD' } })
const transfer = created.data!
for (let i = 0; i < transfer.total_chunks; i++) {
  const chunk = bytes.subarray(i * transfer.chunk_size, Math.min(bytes.byteLength, (i + 1) * transfer.chunk_size))
  await client.POST('/transfers/{id}/chunks', {
    params: { path: { id: transfer.id }, header: { 'x-chunk-index': String(i), 'x-chunk-sha256': createHash('sha256').update(chunk).digest('hex') } },
    body: chunk as never, bodySerializer: (b: unknown) => b as Uint8Array<ArrayBuffer>, headers: { 'content-type': 'application/octet-stream' }
  })
}
await client.POST('/transfers/{id}/finalize', { params: { path: { id: transfer.id } } })
await until('the transfer to complete', async () => (await client.GET('/transfers/{id}', { params: { path: { id: transfer.id } } })).data?.status === 'completed')

const telemetry = createApiClient(file.telemetryUrl, { key: file.keys.console, keyHeader: 'x-api-key' })
const read = await telemetry.GET('/v1/telemetry/network')
if (read.data === undefined) throw new Error(`network read answered ${read.response.status}`)
const envelope = read.data
const etag = read.response.headers.get('etag')!

const bare = Fastify({ logger: false })
// If-None-Match naming the ETag: 304 with the ETag, as the paid route answers it (the bench's bare304 path).
bare.get('/v1/telemetry/network', async (req, reply) => {
  if (req.headers['if-none-match'] === etag) return await reply.code(304).header('etag', etag).send()
  return envelope
})
// The load generator reads the process's CPU time around each slice: CPU per request is the cost of a
// route, much less sensitive than wall time to other load on a shared machine.
bare.get('/__cpu', async () => process.cpuUsage())
await bare.listen({ port: 0, host: '127.0.0.1' })

const apiPort = Number(new URL(file.telemetryUrl).port)
process.stdout.write(JSON.stringify({ event: 'ready', apiPort, barePort: (bare.server.address() as { port: number }).port, key: file.keys.console, etag, bytes: JSON.stringify(envelope).length, evidence: envelope.data.workloads[0]?.successfulTasks ?? 0, startupMs: Math.round(process.uptime() * 1000) }) + '\n')
process.on('SIGTERM', () => {
  void Promise.allSettled([bare.close(), devnet.stop()]).then(() => rm(data, { recursive: true, force: true })).then(() => process.exit(0))
})
