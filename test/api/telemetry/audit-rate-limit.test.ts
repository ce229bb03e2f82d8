// Audit reads count against the plan's rate limit, 304s included: their ETag is a digest of the rows,
// so answering a conditional read before the limit would give a key unlimited full-cost reads; and a
// read past the limit is refused before any row is read.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { buildApp } from '../../../api/app.ts'
import { storeAuditReader } from '../../../actors/telemetry/audit.ts'
import { keys as rowKeys } from '../../../actors/transfer/model.ts'
import { testDeps } from '../../helpers/api.ts'
import { settled, ORCH } from '../../helpers/telemetry.ts'

const env = testDeps()
const { accounts, store } = env
const reader = storeAuditReader({ store })
let reads = 0
env.deps.audit = { ...reader, orchestrator: async (...a: Parameters<typeof reader.orchestrator>) => { reads++; return await reader.orchestrator(...a) } }
const app = await buildApp(env.deps)
await app.ready()
t.teardown(() => app.close())

const org = await accounts.createOrganization({ name: 'a' })
const key = (await accounts.createKey(org.id, { role: 'admin', plan: 'free' })).key
const id = randomUUID()
await store.table('transfers').put(id, { id, coordinator_id: ORCH, org_id: org.id, metadata: { name: 'x' }, upload: null })
const { row, attempt } = settled({ transferId: id, orchestrator: ORCH, worker: 'w', offeredAtMs: 1000, receivedAtMs: 2000 })
await store.table('task_attempts').put(rowKeys.row(id, attempt.id), attempt)
await store.table('task_results').put(rowKeys.row(id, attempt.id), row)

t.test('conditional audit reads are counted, and a read past the limit reads nothing', async t => {
  const url = `/api/audit/orchestrator/${ORCH}/transfers/${id}`
  const first = await app.inject({ method: 'GET', url, headers: { 'x-api-key': key } })
  t.equal(first.statusCode, 200)
  const etag = first.headers.etag as string
  const codes: Record<number, number> = {}
  for (let i = 0; i < 80; i++) {
    const r = await app.inject({ method: 'GET', url, headers: { 'x-api-key': key, 'if-none-match': i % 2 === 0 ? '*' : etag } })
    codes[r.statusCode] = (codes[r.statusCode] ?? 0) + 1
  }
  t.equal(codes[304], 59, 'the Free plan\'s 60 a minute, the first read included')
  t.equal(codes[429], 21, 'then refused')
  t.equal(reads, 60, 'and the refused ones read no rows')
})
