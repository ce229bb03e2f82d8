// Audit rows across tenants: an organization admin reads the rows of its own organization's transfers
// only; another organization's answer 404 exactly like rows that do not exist (docs/security.md). The
// operator's admin key still reads every transfer's rows.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { buildApp } from '../../../api/app.ts'
import { storeAuditReader } from '../../../actors/telemetry/audit.ts'
import { keys as rowKeys } from '../../../actors/transfer/model.ts'
import { testDeps } from '../../helpers/api.ts'
import { settled, ORCH, WORKER, WORKER_B } from '../../helpers/telemetry.ts'

const env = testDeps()
const { accounts, store } = env
env.deps.audit = storeAuditReader({ store })
const app = await buildApp(env.deps)
await app.ready()
t.teardown(() => app.close())

const orgA = await accounts.createOrganization({ name: 'a' })
const orgB = await accounts.createOrganization({ name: 'b' })
const adminA = (await accounts.createKey(orgA.id, { role: 'admin' })).key
const adminB = (await accounts.createKey(orgB.id, { role: 'admin' })).key
const operator = (await accounts.createKey(orgB.id, { role: 'admin', operator: true })).key

/** A transfer coordinated by ORCH with one settled chunk by WORKER; `org` undefined: no transfer row here. */
async function transfer (org: string | undefined): Promise<string> {
  const id = randomUUID()
  if (org !== undefined) await store.table('transfers').put(id, { id, coordinator_id: ORCH, org_id: org, metadata: { name: 'x' }, upload: null })
  const { row, attempt } = settled({ transferId: id, orchestrator: ORCH, worker: WORKER, offeredAtMs: 1000, receivedAtMs: 2000 })
  await store.table('task_attempts').put(rowKeys.row(id, attempt.id), attempt)
  await store.table('task_results').put(rowKeys.row(id, attempt.id), row)
  await store.table('tasks').put(rowKeys.row(id, attempt.task_id), { id: attempt.task_id, transfer_id: id, orchestrator_id: ORCH, assigned_worker_id: WORKER })
  await store.table('transfer_assignment_plans').put(rowKeys.plan(id, 0), { transfer_id: id, wave: 0, deliveries: [{ orchestrator_id: ORCH, chunk_indices: [0] }] })
  return id
}
const ofA = await transfer(orgA.id)
const noOwnerHere = await transfer(undefined)

const get = async (url: string, key: string) => await app.inject({ method: 'GET', url, headers: { 'x-api-key': key } })
const routes = (id: string): string[] => [`/api/audit/orchestrator/${ORCH}/transfers/${id}`, `/api/audit/worker/${WORKER}/transfers/${id}`]

t.test("org B's admin gets 404 on org A's rows, on both audit routes, like a missing transfer", async t => {
  for (const url of routes(ofA)) {
    const res = await get(url, adminB)
    t.equal(res.statusCode, 404, url)
    t.equal(res.json().code, 'BWN_ERR_AUDIT_NOT_FOUND')
    t.notMatch(res.body, /task_attempts|transfer_assignment_plans/, 'no rows leak')
    const missing = await get(url.replace(ofA, randomUUID()), adminB)
    t.equal(missing.statusCode, 404)
    t.equal(missing.json().code, res.json().code, 'the same answer as a transfer that does not exist')
  }
})

t.test("org A's admin reads its own transfer's rows", async t => {
  for (const url of routes(ofA)) {
    const res = await get(url, adminA)
    t.equal(res.statusCode, 200, url)
    t.equal(res.json().task_attempts.length, 1)
  }
})

t.test('rows of a transfer whose owner this node does not hold are not an organization admin\'s', async t => {
  for (const url of routes(noOwnerHere)) {
    t.equal((await get(url, adminA)).statusCode, 404, url)
    t.equal((await get(url, operator)).statusCode, 200, `${url}: the operator reads them`)
  }
})

t.test("the operator's admin key reads every organization's rows", async t => {
  for (const url of routes(ofA)) t.equal((await get(url, operator)).statusCode, 200, url)
})

t.test("an organization admin's way to another organization's rows: every key it may issue is confined", async t => {
  const mint = await app.inject({ method: 'POST', url: `/admin/organizations/${orgB.id}/keys`, headers: { 'x-api-key': adminB }, payload: { role: 'validator' } })
  t.equal(mint.statusCode, 403, 'no validator key for an organization admin')
  t.equal(mint.json().code, 'BWN_ERR_OPERATOR_ONLY')
  for (const role of ['admin', 'orchestrator', 'worker'] as const) {
    const issued = await app.inject({ method: 'POST', url: `/admin/organizations/${orgB.id}/keys`, headers: { 'x-api-key': adminB }, payload: { role } })
    t.equal(issued.statusCode, 201, `${role}: issued by B's admin`)
    for (const url of routes(ofA)) {
      const res = await get(url, issued.json().key)
      t.not(res.statusCode, 200, `${role} key of B on ${url}`)
      t.notMatch(res.body, /task_attempts/, 'no rows')
    }
  }
})

t.test('who reads across organizations: the operator and validator keys only; participant keys their own rows', async t => {
  const validatorB = (await accounts.createKey(orgB.id, { role: 'validator' })).key
  const boundToOrch = (await accounts.createKey(orgB.id, { role: 'orchestrator', hotkey: ORCH })).key
  const boundToWorker = (await accounts.createKey(orgB.id, { role: 'worker', hotkey: WORKER })).key
  for (const url of routes(ofA)) {
    t.equal((await get(url, validatorB)).statusCode, 200, `${url}: a validator key (the operator's to issue) reads every organization's rows`)
    t.equal((await get(url, adminB)).statusCode, 404, `${url}: an organization admin does not`)
  }
  const [orchUrl, workerUrl] = routes(ofA) as [string, string]
  t.equal((await get(orchUrl, boundToOrch)).statusCode, 200, 'an orchestrator key reads its own participant\'s rows on any transfer')
  t.equal((await get(workerUrl, boundToWorker)).statusCode, 200, 'a worker key likewise')
  t.equal((await get(orchUrl.replace(ORCH, WORKER), boundToOrch)).statusCode, 404, '… and no other participant\'s')
})

t.test("a worker's standing shows an organization admin no other organization's transfers", async t => {
  const ofB = await transfer(orgB.id)
  const attemptOnB = randomUUID()
  const standing = (strikes: Array<{ transfer_id: string, attempt_id: string }>): Record<string, unknown> => ({
    worker_id: WORKER, hotkey: WORKER, coordinator_id: ORCH, status: 'good', exclusions: 0, excluded_at: null, excluded_until: null, exclusion_reason: null,
    updated_at: '2026-01-01T00:00:00.000Z', strikes: strikes.map(s => ({ at: '2026-01-01T00:00:00.000Z', reason: 'no_progress', ...s }))
  })
  await store.table('workers').put(`standing/${WORKER}`, standing([{ transfer_id: ofB, attempt_id: attemptOnB }, { transfer_id: ofA, attempt_id: 'on-a' }]))
  await store.table('workers').put(`standing/${WORKER_B}`, standing([{ transfer_id: ofB, attempt_id: attemptOnB }]))
  t.teardown(async () => { await store.table('workers').del(`standing/${WORKER}`); await store.table('workers').del(`standing/${WORKER_B}`) })

  const res = await get(`/api/audit/worker/${WORKER}/transfers/${ofA}`, adminA)
  t.equal(res.statusCode, 200, "A's admin reads the worker that worked on A's transfer")
  t.notMatch(res.body, ofB, "no B transfer id in A's answer")
  t.notMatch(res.body, attemptOnB)
  const row = res.json().workers.find((w: { strikes?: unknown }) => w.strikes !== undefined)
  t.same(row.strikes.map((s: { transfer_id: string }) => s.transfer_id), [ofA], 'the strikes earned on the transfer asked about, only')

  const stranger = await get(`/api/audit/worker/${WORKER_B}/transfers/${ofA}`, adminA)
  t.equal(stranger.statusCode, 404, "a worker (by hotkey) that did no work on A's transfer answers 404, like one that does not exist")
  t.equal(stranger.json().code, 'BWN_ERR_AUDIT_NOT_FOUND')
  t.notMatch(stranger.body, ofB)

  const byOperator = await get(`/api/audit/worker/${WORKER}/transfers/${ofA}`, operator)
  t.match(byOperator.body, ofB, "the operator still reads the worker's whole standing")
})
