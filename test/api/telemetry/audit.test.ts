// Dashboard audit routes: rows by table for one participant, per-table paging, redaction.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { storeAuditReader, redactRow, REDACTED } from '../../../actors/telemetry/audit.ts'
import { keys as rowKeys } from '../../../actors/transfer/model.ts'
import { telemetryApp, settled, ORCH, ORCH_B, WORKER, WORKER_B } from '../../helpers/telemetry.ts'
import { testDeps } from '../../helpers/api.ts'
import { nodeIdOf } from '../../../protocol/node-id.ts'

const store = testDeps().store
const UIDS = new Map([[3, ORCH], [7, ORCH_B]])
const T = await telemetryApp({ audit: storeAuditReader({ store, hotkeyOfUid: async (uid) => UIDS.get(uid) ?? null }) })
t.teardown(() => T.app.close())

const transferId = randomUUID()
await store.table('transfers').put(transferId, { id: transferId, coordinator_id: ORCH, metadata: { name: 'Secret name' }, upload: { kind: 's3', key: 'path/x' } })
const rows = [
  settled({ transferId, index: 0, orchestrator: ORCH, worker: WORKER, offeredAtMs: 1000, receivedAtMs: 2000 }),
  settled({ transferId, index: 1, orchestrator: ORCH, worker: WORKER, offeredAtMs: 1000, receivedAtMs: 2000 }),
  settled({ transferId, index: 2, orchestrator: ORCH, worker: WORKER, offeredAtMs: 1000, receivedAtMs: 2000 }),
  settled({ transferId, index: 3, orchestrator: ORCH_B, worker: WORKER_B, offeredAtMs: 1000, receivedAtMs: 2000, outcome: 'failed', attemptState: 'failed', error: 'PUT https://s3.example/b/k?X-Amz-Signature=abc failed' })
]
for (const { row, attempt } of rows) {
  await store.table('task_attempts').put(rowKeys.row(transferId, attempt.id), attempt)
  await store.table('task_results').put(rowKeys.row(transferId, attempt.id), row)
  await store.table('tasks').put(rowKeys.row(transferId, attempt.task_id), { id: attempt.task_id, transfer_id: transferId, orchestrator_id: attempt.orchestrator_id, assigned_worker_id: attempt.worker_id })
}
await store.table('transfer_assignment_plans').put(rowKeys.plan(transferId, 0), { transfer_id: transferId, wave: 0, deliveries: [{ orchestrator_id: ORCH, chunk_indices: [0, 1, 2] }, { orchestrator_id: ORCH_B, chunk_indices: [3] }] })
await store.table('workers').put(`session/${WORKER_B}`, { worker_id: WORKER_B, orchestrator_id: ORCH_B, session: 's1' })

const get = (url: string, key = T.keys.admin) => T.get(url, key)

t.test('the coordinator sees every row, paged per table', async t => {
  const res = await get(`/api/audit/orchestrator/${ORCH}/transfers/${transferId}?limit=2&offset=1`)
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.equal(body.transfer_name, null)
  t.equal(body.task_results.length, 2)
  t.same(body.pagination.tables.task_results, { limit: 2, offset: 1, returned: 2, has_more: true, next_offset: 3 })
  t.same(body.pagination.tables.transfer_assignment_plans, { limit: 2, offset: 1, returned: 0, has_more: false, next_offset: 1 })
  t.same(Object.keys(body.pagination.tables).sort(), ['overseer_interventions', 'task_attempts', 'task_offer_batches', 'task_results', 'tasks', 'transfer_assignment_plans'])
  for (const r of body.task_results) t.notOk('duration_ms' in r, 'no worker timing claim')
  const last = (await get(`/api/audit/orchestrator/${ORCH}/transfers/${transferId}?offset=3`)).json()
  t.same(last.pagination.tables.task_results, { limit: 1000, offset: 3, returned: 1, has_more: false, next_offset: 4 })
})

t.test('another orchestrator and a worker see their own rows; failure texts with URLs are redacted', async t => {
  const b = (await get(`/api/audit/orchestrator/${ORCH_B}/transfers/${transferId}`, T.keys.orchestrator)).json()
  t.equal(b.task_results.length, 1)
  t.equal(b.task_results[0].error, REDACTED)
  t.equal(b.transfer_assignment_plans.length, 1)
  const w = (await get(`/api/audit/worker/${WORKER_B}/transfers/${transferId}`, T.keys.worker)).json()
  t.equal(w.task_attempts.length, 1)
  t.equal(w.tasks.length, 1)
  t.equal(w.workers.length, 1)
  t.same(Object.keys(w.pagination.tables).sort(), ['overseer_interventions', 'task_attempts', 'task_results', 'tasks', 'transfer_assignment_plans', 'workers'])
  t.equal((await get(`/api/audit/worker/${WORKER}/transfers/${transferId}`)).json().task_results.length, 3)
  t.equal((await get(`/api/audit/worker/${WORKER}/transfers/${randomUUID()}`)).statusCode, 404)
})

t.test('an orchestrator by node UUID, chain UID or hotkey; a worker by worker id or hotkey', async t => {
  const byHotkey = (await get(`/api/audit/orchestrator/${ORCH}/transfers/${transferId}`)).json()
  for (const id of [nodeIdOf(ORCH), nodeIdOf(ORCH).toUpperCase(), '3']) {
    const res = await get(`/api/audit/orchestrator/${id}/transfers/${transferId}`)
    t.equal(res.statusCode, 200, `orchestrator ${id}`)
    t.same({ ...res.json(), participant: null }, { ...byHotkey, participant: null }, `${id}: the same rows as by hotkey`)
    t.equal(res.json().participant.hotkey, ORCH)
  }
  t.equal((await get(`/api/audit/orchestrator/7/transfers/${transferId}`)).json().task_results.length, 1, 'UID 7 is ORCH_B')
  t.equal((await get(`/api/audit/orchestrator/99/transfers/${transferId}`)).statusCode, 404, 'an unregistered UID')
  t.equal((await get(`/api/audit/orchestrator/${randomUUID()}/transfers/${transferId}`)).statusCode, 404, 'a UUID of no participant')
  const wByHotkey = (await get(`/api/audit/worker/${WORKER}/transfers/${transferId}`)).json()
  const wById = await get(`/api/audit/worker/${nodeIdOf(WORKER)}/transfers/${transferId}`)
  t.equal(wById.statusCode, 200)
  t.same({ ...wById.json(), participant: null }, { ...wByHotkey, participant: null }, 'worker id and hotkey read the same rows')
  t.equal(wById.json().participant.hotkey, WORKER)
  t.equal((await get(`/api/audit/worker/${nodeIdOf(ORCH)}/transfers/${transferId}`)).statusCode, 404, 'an orchestrator\'s id is no worker id')
})

t.test('keys bound to participants read only their own rows; admin and validator read all', async t => {
  // T.keys.orchestrator is bound to ORCH_B, T.keys.worker to WORKER_B.
  const validator = (await T.env.accounts.createKey((await T.env.accounts.createOrganization({ name: 'v' })).id, { role: 'validator', plan: 'enterprise' })).key
  for (const key of [T.keys.admin, validator]) {
    t.equal((await get(`/api/audit/orchestrator/${ORCH}/transfers/${transferId}`, key)).statusCode, 200)
    t.equal((await get(`/api/audit/worker/${WORKER}/transfers/${transferId}`, key)).statusCode, 200)
  }
  t.equal((await get(`/api/audit/orchestrator/${ORCH}/transfers/${transferId}`, T.keys.orchestrator)).statusCode, 404, 'another orchestrator\'s rows')
  t.equal((await get(`/api/audit/orchestrator/${nodeIdOf(ORCH)}/transfers/${transferId}`, T.keys.orchestrator)).statusCode, 404, '… by UUID too')
  t.equal((await get(`/api/audit/orchestrator/3/transfers/${transferId}`, T.keys.orchestrator)).statusCode, 404, '… by UID too')
  t.equal((await get(`/api/audit/orchestrator/7/transfers/${transferId}`, T.keys.orchestrator)).statusCode, 200, 'its own by UID')
  const wrongWorker = await get(`/api/audit/worker/${WORKER}/transfers/${transferId}`, T.keys.worker)
  t.equal(wrongWorker.statusCode, 404, 'a worker key reading another worker\'s rows')
  t.equal(wrongWorker.json().code, 'BWN_ERR_AUDIT_NOT_FOUND')
  t.equal((await get(`/api/audit/worker/${nodeIdOf(WORKER)}/transfers/${transferId}`, T.keys.worker)).statusCode, 404, '… by worker id too')
  t.equal((await get(`/api/audit/worker/${nodeIdOf(WORKER_B)}/transfers/${transferId}`, T.keys.worker)).statusCode, 200, 'its own by worker id')
  t.equal((await get(`/api/audit/worker/${WORKER}/transfers/${transferId}`, T.keys.orchestrator)).statusCode, 404, 'an orchestrator key: not a worker that never worked through it')
  const viaB = await get(`/api/audit/worker/${WORKER_B}/transfers/${transferId}`, T.keys.orchestrator)
  t.equal(viaB.statusCode, 200, 'an orchestrator key: its own worker')
  t.equal(viaB.json().task_attempts.length, 1)
  const org = (await T.env.accounts.createOrganization({ name: 'u' })).id
  const unbound = (await T.env.accounts.createKey(org, { role: 'worker', plan: 'enterprise' })).key
  t.equal((await get(`/api/audit/worker/${WORKER_B}/transfers/${transferId}`, unbound)).statusCode, 404, 'an unbound worker key reads nothing')
  await t.rejects(T.env.accounts.createKey(org, { role: 'client', hotkey: ORCH }), { code: 'BWN_ERR_BAD_REQUEST' }, 'only orchestrator and worker keys are bound')
})

t.test('redactRow', async t => {
  t.same(redactRow({ upload: { a: 1 }, target_url: 'x', metadata: { name: 'n', size: 1 }, transfer_name: 'n', duration_ms: 5, etag: '"e"', note: 'see https://x/y' }),
    { upload: REDACTED, target_url: REDACTED, metadata: { size: 1 }, transfer_name: null, etag: '"e"', note: REDACTED })
})
