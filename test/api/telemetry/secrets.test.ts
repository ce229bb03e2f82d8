// Acceptance 4: a transfer driven through the real coordinator actor (the orchestrator's router and the
// workers played by the test over an in-memory network), its events fed to the real telemetry actor;
// then every telemetry and audit response is scanned: no destination credential, presigned URL, object
// path, signature, display name or worker timing claim.
import t from 'tap'
import { createHash, randomUUID } from 'node:crypto'
import { startSystem, stopActor, ask, tell, type Ref } from '../../../actors/runtime.ts'
import { startCoordinator, type CoordinatorMsg } from '../../../actors/transfer/coordinator.ts'
import { startTelemetry } from '../../../actors/telemetry/index.ts'
import { storeAuditReader } from '../../../actors/telemetry/audit.ts'
import type { BlobStore, Network } from '../../../actors/ports.ts'
import type { DestinationDriver, UploadState } from '../../../actors/destination.ts'
import type { TransferRow } from '../../../actors/transfer/model.ts'
import type { TaskOfferBatch } from '../../../protocol/index.ts'
import { systemClock } from '../../../node/clock.ts'
import { buildApp } from '../../../api/app.ts'
import { testDeps } from '../../helpers/api.ts'
import { silentLogger } from '../../helpers/logger.ts'
import { eventually } from '../../helpers/proc.ts'
import { scanForSecrets } from '../../helpers/secret-scan.ts'
import { ORCH, WORKER, WORKER_B } from '../../helpers/telemetry.ts'

const SECRETS = {
  credential: 'DEST-CREDENTIAL-5ecr3t',
  presignedSig: 'PRESIGNED-SIG-5ecr3t',
  objectPath: 'OBJECT-PATH-5ecr3t',
  sourceSig: 'SOURCE-SIG-5ecr3t',
  displayName: 'Quarterly Board Pack 5ecr3t',
  claimedDurationMs: '7777777'
}
const CHUNK = 64 * 1024
const CHUNKS = 6

t.test('no secret in any telemetry or audit response of a real coordinator transfer', async t => {
  const env = testDeps()
  const store = env.store
  const logger = silentLogger()
  const actorEnv = { clock: systemClock, logger }
  const system = startSystem()
  t.teardown(() => stopActor(system))

  const blobs = new Map<string, Uint8Array>()
  const blobStore: BlobStore = {
    put: async (b) => { const h = createHash('sha256').update(b).digest('hex'); blobs.set(h, b); return h },
    get: async (h) => blobs.get(h),
    has: async (h) => blobs.has(h),
    delete: async (h) => { blobs.delete(h) }
  }
  const object = new Uint8Array(CHUNK * CHUNKS)
  const driver: DestinationDriver = {
    kind: 'http',
    readableBeforeComplete: true,
    begin: async (u) => ({ kind: 'http', url: `https://dest.example/${SECRETS.objectPath}/${u.filename}`, objectPath: `${SECRETS.objectPath}/${u.filename}` }) as UploadState,
    target: async (_s, c, expiresAt) => ({ method: 'PUT', url: `https://dest.example/${SECRETS.objectPath}?partNumber=${c.index}&X-Amz-Signature=${SECRETS.presignedSig}`, headers: { authorization: `Bearer ${SECRETS.credential}` }, expiresAt }),
    complete: async () => {},
    abort: async () => {},
    readRange: async (_s, offset, length) => object.slice(offset, offset + length)
  }

  let coordinator: Ref<CoordinatorMsg>
  let failedOnce = false
  const net: Network = {
    self: ORCH,
    send (_to, type, body) {
      if (type !== 'task_offer_batch') return true
      const batch = body as TaskOfferBatch
      // The orchestrator's router and its workers, played here: assign, deliver, report.
      setImmediate(() => {
        batch.offers.forEach((offer, i) => {
          const worker = i % 2 === 0 ? WORKER : WORKER_B
          tell(coordinator, { type: 'assigned', from: ORCH, body: { transferId: batch.transferId, batchId: batch.batchId, assignments: [{ attemptId: offer.attemptId, worker }] } })
          const bytes = blobs.get(offer.sha256)!
          const fail = !failedOnce && offer.chunkIndex === 2
          if (fail) failedOnce = true
          else object.set(bytes, offer.chunkIndex * CHUNK)
          tell(coordinator, {
            type: 'result', from: ORCH,
            body: {
              taskId: offer.taskId, attemptId: offer.attemptId, transferId: offer.transferId, worker, success: !fail, bytes: fail ? 0 : bytes.length,
              durationMs: Number(SECRETS.claimedDurationMs), sha256: fail ? null : offer.sha256, etag: null, via: 'http',
              error: fail ? `PUT ${offer.target.url} failed` : null
            }
          })
        })
      })
      return true
    },
    broadcast: () => 0
  }

  const telemetry = await startTelemetry(system, {
    env: actorEnv, store,
    participants: async () => ({ counts: { orchestrator: 1, worker: 2, validator: 1 }, workers: [{ bandwidthMbps: 100 }, { bandwidthMbps: 250 }] })
  })
  t.teardown(() => telemetry.stop())
  let completed = false
  const c = startCoordinator(system, {
    env: actorEnv, self: ORCH, net, store, blobs: blobStore,
    driverFor: async () => driver,
    candidates: async () => [{ hotkey: ORCH, workers: 2, score: 1 }],
    signSource: (transferId, index, attemptId, expiresAt) => ({ url: `http://127.0.0.1:1/data/${transferId}/${index}?a=${attemptId}&e=${expiresAt}&sig=${SECRETS.sourceSig}`, path: `/data/${transferId}/${index}?sig=${SECRETS.sourceSig}` }),
    onEvent: (e) => { telemetry.onCoordinatorEvent(e); if (e.type === 'transfer' && e.row.status === 'completed') completed = true }
  })
  t.teardown(() => c.stop())
  coordinator = c.ref

  const transferId = randomUUID()
  const iso = new Date().toISOString()
  const row: TransferRow = {
    id: transferId, status: 'pending', sender_hotkey: ORCH, filename: 'board-pack.bin', total_size: CHUNK * CHUNKS, chunk_size: CHUNK, total_chunks: CHUNKS,
    tier: 'STANDARD', destination_id: 'd1', api_key_id: 'k1', org_id: null, coordinator_id: ORCH, metadata: { name: SECRETS.displayName }, upload: null,
    chunks_received: 0, chunks_delivered: 0, chunks_verified: 0, bytes_received: 0, bytes_delivered: 0, finalize_requested: false,
    created_at: iso, updated_at: iso, started_at: null, finalized_at: null, completed_at: null, error_code: null, error_message: null
  }
  const created = await ask<CoordinatorMsg, any>(coordinator, systemClock, 5000, reply => ({ type: 'create', row, reply }))
  t.ok(created.ok)
  for (let i = 0; i < CHUNKS; i++) {
    const bytes = new Uint8Array(CHUNK).fill(i + 1)
    const sha256 = await blobStore.put(bytes)
    const md5 = createHash('md5').update(bytes).digest('hex')
    const r = await ask<CoordinatorMsg, any>(coordinator, systemClock, 5000, reply => ({ type: 'chunk', transferId, index: i, sha256, md5, length: CHUNK, reply }))
    t.ok(r.ok, `chunk ${i}`)
  }
  const fin = await ask<CoordinatorMsg, any>(coordinator, systemClock, 5000, reply => ({ type: 'finalize', transferId, reply }))
  t.ok(fin.ok)
  await eventually(async () => completed, 10_000, 'the transfer to complete')
  await eventually(async () => telemetry.reader.projection.publishedTasks().length >= CHUNKS + 1, 5000, 'published evidence')

  env.deps.telemetry = telemetry.reader
  env.deps.audit = storeAuditReader({ store })
  const app = await buildApp(env.deps)
  t.teardown(() => app.close())
  const org = await env.accounts.createOrganization({ name: 'scan' })
  await env.accounts.grantCredits(org.id, 1_000_000)
  const consoleKey = (await env.accounts.createKey(org.id, { role: 'console', plan: 'enterprise', scopes: ['telemetry:read', 'telemetry:realtime:read'] })).key
  const adminKey = (await env.accounts.createKey(org.id, { role: 'admin', operator: true, plan: 'enterprise' })).key

  const urls = [
    '/v1/telemetry/network', '/v1/telemetry/realtime/network', '/v1/telemetry/network/history', '/v1/telemetry/realtime/network/history',
    '/v1/telemetry/tasks', `/v1/telemetry/tasks?transferId=${transferId}`, '/v1/telemetry/realtime/tasks', `/v1/telemetry/realtime/tasks?participantId=${WORKER}`,
    '/v1/telemetry/epochs', '/v1/telemetry/realtime/epochs', `/v1/telemetry/sell-allowance/${ORCH}`, `/v1/audit/sell-allowance/${ORCH}`
  ]
  const responses = []
  for (const url of urls) {
    const res = await app.inject({ url, headers: { 'x-api-key': consoleKey } })
    // No validator publishes a sell allowance in this fixture: those two answer 404 (their error bodies are
    // scanned too); every other body scanned is a real answer.
    t.equal(res.statusCode, url.includes('/sell-allowance/') ? 404 : 200, `${url}: answered as expected`)
    responses.push({ url, statusCode: res.statusCode, body: res.body, headers: res.headers })
  }
  for (const url of [`/api/audit/orchestrator/${ORCH}/transfers/${transferId}`, `/api/audit/worker/${WORKER}/transfers/${transferId}`, `/api/audit/worker/${WORKER_B}/transfers/${transferId}`]) {
    const res = await app.inject({ url, headers: { 'x-api-key': adminKey } })
    t.equal(res.statusCode, 200, url)
    responses.push({ url, statusCode: res.statusCode, body: res.body, headers: res.headers })
  }

  // The run really produced the evidence and rows being scanned.
  const tasks = JSON.parse(responses[5]!.body)
  t.equal(tasks.items.length, CHUNKS + 1, 'six verified deliveries and one failure')
  t.same(tasks.items.map((i: any) => i.data.state).sort(), [...Array(CHUNKS).fill('verified'), 'failed'].sort())
  for (const i of tasks.items) t.ok(i.data.trustedDurationMs < Number(SECRETS.claimedDurationMs), 'trusted duration is the coordinator\'s, not the claim')
  const network = JSON.parse(responses[0]!.body)
  t.match(network.data, { completedTransfers: 1, transferredBytes: CHUNK * CHUNKS, workerCount: 2, orchestratorCount: 1, validatorCount: 1 })
  const audit = JSON.parse(responses[urls.length]!.body)
  t.equal(audit.transfer_name, null)
  t.equal(audit.task_results.length, CHUNKS + 1)
  t.equal(audit.pagination.tables.task_results.returned, CHUNKS + 1)
  t.ok(audit.task_results.some((r: any) => r.error === '[redacted]'), 'the failure text carrying a presigned URL is redacted')
  const stored = JSON.stringify([...blobs.keys()]) + JSON.stringify(await store.table('task_results').get(`${transferId}/${tasks.items.find((i: any) => i.data.state === 'failed').data.attemptId}`))
  t.match(stored, SECRETS.presignedSig, 'the secret was really in the stored rows (the scan can fail)')

  const findings = scanForSecrets(responses, Object.values(SECRETS))
  t.same(findings, [], 'nothing private in any response')
  // The scanner itself finds what it looks for.
  t.equal(scanForSecrets([{ url: 'x', statusCode: 200, body: JSON.stringify({ e: `https://h/${SECRETS.objectPath}?X-Amz-Signature=1`, duration_ms: 5 }) }], Object.values(SECRETS)).length, 4, "path, URL, presigned parameter, claimed duration")
})
