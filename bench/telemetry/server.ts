// The telemetry bench's server process: the real API (auth, rate limit, credits, telemetry routes) over
// a memory store with a projection holding evidence, and a bare Fastify app whose one route returns the
// same network envelope as a constant. Prints one JSON line with the ports, a console key and the ETag.
import Fastify from 'fastify'
import { randomBytes, randomUUID } from 'node:crypto'
import { pino } from 'pino'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../actors/store.ts'
import { AccountsService } from '../../api/accounts/service.ts'
import { buildApp } from '../../api/app.ts'
import { TelemetryProjection } from '../../actors/telemetry/index.ts'
import { isoFromMs } from '../../actors/domain/chain-time.ts'

const EVIDENCE_TRANSFERS = 50 // transfers of 20 chunks each in the projection
const CHUNKS_PER_TRANSFER = 20
const ORCH = '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY'
const WORKER = '5FLSigC9HGRKVhB9FiEo4Y3koPsNmBmLJbpXg2mp1hXcS59Y'

const clock = { now: () => Date.now() }
const store = new LevelStore(new MemoryLevel() as never)
const accounts = new AccountsService({ store, clock })
const projection = new TelemetryProjection({ epochAt: (ms) => Math.floor(ms / 4_320_000) })
const t0 = Date.now() - 3_600_000
for (let tr = 0; tr < EVIDENCE_TRANSFERS; tr++) {
  const transferId = randomUUID()
  for (let i = 0; i < CHUNKS_PER_TRANSFER; i++) {
    const at = t0 + tr * 1000 + i * 10
    const attemptId = randomUUID(); const taskId = randomUUID()
    projection.apply({
      type: 'result',
      row: { attempt_id: attemptId, task_id: taskId, transfer_id: transferId, chunk_index: i, orchestrator_id: ORCH, worker_id: WORKER, success: true, bytes: 8_388_608, claimed_bytes: 8_388_608, duration_ms: 1, sha256: null, etag: null, error: null, via: 'http', outcome: 'accepted', received_at: isoFromMs(at) },
      attempt: { id: attemptId, task_id: taskId, transfer_id: transferId, chunk_index: i, attempt_no: 0, attempt_slot: 0, orchestrator_id: ORCH, worker_id: WORKER, batch_id: randomUUID(), wave_kind: 'initial', recovery: false, state: 'succeeded', offered_at: isoFromMs(at - 800), accepted_at: null, finished_at: isoFromMs(at), failure_reason: null }
    }, at)
  }
  projection.apply({ type: 'transfer', id: transferId, status: 'completed', completedAtMs: t0 + tr * 1000 + 500 }, t0 + tr * 1000 + 500)
}
projection.setParticipants({ workerCount: 12, orchestratorCount: 3, validatorCount: 2, reportedCapacityMbps: 12_000, providers: [{ provider: 'unknown', workerCount: 12 }] }, {})
projection.publishNetwork(Date.now())

const logger = pino({ level: 'silent' })
const org = await accounts.createOrganization({ name: 'bench' })
await accounts.grantCredits(org.id, 1_000_000_000_000)
const key = (await accounts.createKey(org.id, { role: 'console', plan: 'enterprise', scopes: ['telemetry:read', 'telemetry:realtime:read'] })).key
const app = await buildApp({
  logger, self: { hotkey: ORCH, role: 'orchestrator', software: 'bwnet/bench' },
  membership: { counts: async () => ({ orchestrator: 1, worker: 0, validator: 0 }), peers: async () => [] },
  ready: () => true, accounts,
  telemetry: { projection, clock, cursorKey: randomBytes(32), epochs: null, sellAllowance: null }
})
await app.listen({ port: 0, host: '127.0.0.1' })

const envelope = projection.latestNetwork(Date.now()).env
const bare = Fastify({ logger: false })
bare.get('/v1/telemetry/network', async () => envelope)
await bare.listen({ port: 0, host: '127.0.0.1' })

const port = (a: typeof bare): number => (a.server.address() as { port: number }).port
process.stdout.write(JSON.stringify({ event: 'ready', apiPort: port(app as never), barePort: port(bare), key, etag: `"${envelope.snapshotId}"`, bytes: JSON.stringify(envelope).length }) + '\n')
process.on('SIGTERM', () => { void Promise.all([app.close(), bare.close()]).then(() => process.exit(0)) })
