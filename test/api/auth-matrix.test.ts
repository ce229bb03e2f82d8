// Who gets what: every kind of caller against every kind of guarded route, with the problem code.
// Routes added later (transfers, destinations, telemetry) append rows to ROUTES and CASES.
import t from 'tap'
import { buildApp } from '../../api/app.ts'
import { PROBLEM_CONTENT_TYPE } from '../../api/problem.ts'
import type { NewKey } from '../../api/accounts/model.ts'
import { testDeps } from '../helpers/api.ts'
import { PROBES, PROBE_ETAG, registerProbes } from '../helpers/probes.ts'
import { randomBytes } from 'node:crypto'
import { TelemetryProjection } from '../../actors/telemetry/index.ts'
import { storeAuditReader } from '../../actors/telemetry/audit.ts'

const HOUR = 3_600_000
const env = testDeps()
const { accounts } = env
const orgA = await accounts.createOrganization({ name: 'a' })
const orgB = await accounts.createOrganization({ name: 'b-no-credits' })
const project = await accounts.createProject(orgA.id, { name: 'p' })
const environment = await accounts.createEnvironment(project.id, { name: 'prod' })
await accounts.grantCredits(orgA.id, 1000)
const BOTH = ['telemetry:read', 'telemetry:realtime:read'] as NewKey['scopes']

const issue = async (org: string, k: NewKey) => (await accounts.createKey(org, { plan: 'enterprise', ...k })).key
const keys = {
  admin: await issue(orgA.id, { role: 'admin' }),
  client: await issue(orgA.id, { role: 'client' }),
  worker: await issue(orgA.id, { role: 'worker' }),
  console: await issue(orgA.id, { role: 'console', scopes: BOTH }),
  consoleProject: await issue(orgA.id, { role: 'console', scopes: BOTH, projectId: project.id }),
  consoleEnvironment: await issue(orgA.id, { role: 'console', scopes: BOTH, environmentId: environment.id }),
  consoleSnapshotOnly: await issue(orgA.id, { role: 'console', scopes: ['telemetry:read'] }),
  consoleNoScopes: await issue(orgA.id, { role: 'console' }),
  consoleBroke: await issue(orgB.id, { role: 'console', scopes: BOTH }),
  revoked: await issue(orgA.id, { role: 'client' }),
  expired: await issue(orgA.id, { role: 'client', expiresAt: new Date(env.clock.now() + HOUR).toISOString() }),
  unknown: 'bwn_0123456789abcdef_' + 'A'.repeat(43),
  malformed: 'not-a-key'
}
await accounts.revokeKey(keys.revoked.split('_')[1]!)
env.clock.advance(2 * HOUR)

env.deps.telemetry = { projection: new TelemetryProjection({ epochAt: () => 0 }), clock: env.clock, cursorKey: randomBytes(32), epochs: null, sellAllowance: null }
env.deps.audit = storeAuditReader({ store: env.store })
const app = await buildApp(env.deps)
await registerProbes(app)
await app.ready()
t.teardown(() => app.close())

type KeyName = keyof typeof keys | null
type Via = 'bearer' | 'x-api-key'
interface Row { method?: 'GET' | 'POST' | 'DELETE', payload?: object, route: string, key: KeyName, via?: Via, headers?: Record<string, string>, status: number, code?: string }

const ADMIN = '/admin/organizations'
// [route, key, via, expected status, expected code]
const CASES: Row[] = [
  // public routes stay public
  { route: '/health', key: null, status: 200 },
  { route: '/healthz', key: null, status: 200 },
  { route: '/health', key: 'unknown', status: 200 },
  // admin API
  { route: ADMIN, key: null, status: 401, code: 'BWN_ERR_KEY_MISSING' },
  { route: ADMIN, key: 'unknown', status: 401, code: 'BWN_ERR_KEY_INVALID' },
  { route: ADMIN, key: 'malformed', status: 401, code: 'BWN_ERR_KEY_INVALID' },
  { route: ADMIN, key: 'revoked', status: 401, code: 'BWN_ERR_KEY_REVOKED' },
  { route: ADMIN, key: 'expired', status: 401, code: 'BWN_ERR_KEY_EXPIRED' },
  { route: ADMIN, key: 'client', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' },
  { route: ADMIN, key: 'console', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' },
  { route: ADMIN, key: 'admin', status: 200 },
  { route: ADMIN, key: 'admin', via: 'x-api-key', status: 200 },
  // a client (transfer) route: Bearer or X-Api-Key
  { route: PROBES.transfer, key: null, status: 401, code: 'BWN_ERR_KEY_MISSING' },
  { route: PROBES.transfer, key: 'unknown', status: 401, code: 'BWN_ERR_KEY_INVALID' },
  { route: PROBES.transfer, key: 'revoked', status: 401, code: 'BWN_ERR_KEY_REVOKED' },
  { route: PROBES.transfer, key: 'expired', via: 'x-api-key', status: 401, code: 'BWN_ERR_KEY_EXPIRED' },
  { route: PROBES.transfer, key: 'worker', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' },
  { route: PROBES.transfer, key: 'admin', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' },
  { route: PROBES.transfer, key: 'client', via: 'bearer', status: 200 },
  { route: PROBES.transfer, key: 'client', via: 'x-api-key', status: 200 },
  // a destination route: X-Api-Key only
  { route: PROBES.destination, key: 'client', via: 'bearer', status: 401, code: 'BWN_ERR_KEY_MISSING' },
  { route: PROBES.destination, key: 'client', via: 'x-api-key', status: 200 },
  // a telemetry snapshot read
  { route: PROBES.telemetry, key: null, status: 401, code: 'BWN_ERR_KEY_MISSING' },
  { route: PROBES.telemetry, key: 'console', via: 'bearer', status: 401, code: 'BWN_ERR_KEY_MISSING' },
  { route: PROBES.telemetry, key: 'unknown', via: 'x-api-key', status: 401, code: 'BWN_ERR_KEY_INVALID' },
  { route: PROBES.telemetry, key: 'client', via: 'x-api-key', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' },
  { route: PROBES.telemetry, key: 'consoleNoScopes', via: 'x-api-key', status: 403, code: 'BWN_ERR_SCOPE_MISSING' },
  { route: PROBES.telemetry, key: 'consoleEnvironment', via: 'x-api-key', status: 403, code: 'BWN_ERR_GRANT_TOO_NARROW' },
  { route: PROBES.telemetry, key: 'consoleBroke', via: 'x-api-key', status: 402, code: 'BWN_ERR_INSUFFICIENT_CREDITS' },
  { route: PROBES.telemetry, key: 'console', via: 'x-api-key', status: 200 },
  { route: PROBES.telemetry, key: 'consoleProject', via: 'x-api-key', status: 200 },
  { route: PROBES.telemetry, key: 'consoleSnapshotOnly', via: 'x-api-key', status: 200 },
  { route: PROBES.telemetry, key: 'console', via: 'x-api-key', headers: { 'if-none-match': PROBE_ETAG }, status: 304 },
  // 304 comes before the balance check: an empty balance holding the current ETag is not refused
  { route: PROBES.telemetry, key: 'consoleBroke', via: 'x-api-key', headers: { 'if-none-match': PROBE_ETAG }, status: 304 },
  // a telemetry realtime read
  { route: PROBES.realtime, key: 'consoleSnapshotOnly', via: 'x-api-key', status: 403, code: 'BWN_ERR_SCOPE_MISSING' },
  { route: PROBES.realtime, key: 'consoleEnvironment', via: 'x-api-key', status: 403, code: 'BWN_ERR_GRANT_TOO_NARROW' },
  { route: PROBES.realtime, key: 'consoleBroke', via: 'x-api-key', status: 402, code: 'BWN_ERR_INSUFFICIENT_CREDITS' },
  { route: PROBES.realtime, key: 'revoked', via: 'x-api-key', status: 401, code: 'BWN_ERR_KEY_REVOKED' },
  { route: PROBES.realtime, key: 'console', via: 'x-api-key', status: 200 },
  { route: PROBES.realtime, key: 'consoleProject', via: 'x-api-key', status: 200 },
  // the paid sell-allowance read: organization grant only
  { route: PROBES.sellAllowance, key: 'consoleProject', via: 'x-api-key', status: 403, code: 'BWN_ERR_GRANT_TOO_NARROW' },
  { route: PROBES.sellAllowance, key: 'consoleEnvironment', via: 'x-api-key', status: 403, code: 'BWN_ERR_GRANT_TOO_NARROW' },
  { route: PROBES.sellAllowance, key: 'consoleNoScopes', via: 'x-api-key', status: 403, code: 'BWN_ERR_SCOPE_MISSING' },
  { route: PROBES.sellAllowance, key: 'worker', via: 'x-api-key', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' },
  { route: PROBES.sellAllowance, key: 'consoleBroke', via: 'x-api-key', status: 402, code: 'BWN_ERR_INSUFFICIENT_CREDITS' },
  { route: PROBES.sellAllowance, key: 'consoleBroke', via: 'x-api-key', headers: { 'if-none-match': PROBE_ETAG }, status: 304 },
  { route: PROBES.realtime, key: 'consoleBroke', via: 'x-api-key', headers: { 'if-none-match': PROBE_ETAG }, status: 304 },
  { route: PROBES.sellAllowance, key: 'console', via: 'x-api-key', status: 200 }
]

// The telemetry routes themselves (api/routes/telemetry.ts): console keys only, X-Api-Key only.
const HOTKEY = '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY'
const SNAPSHOT_ROUTES = ['/v1/telemetry/network', '/v1/telemetry/network/history', '/v1/telemetry/tasks', '/v1/telemetry/epochs']
const REALTIME_ROUTES = ['/v1/telemetry/realtime/network', '/v1/telemetry/realtime/network/history', '/v1/telemetry/realtime/tasks', '/v1/telemetry/realtime/epochs']
for (const route of [...SNAPSHOT_ROUTES, ...REALTIME_ROUTES]) {
  const realtime = REALTIME_ROUTES.includes(route)
  CASES.push(
    { route, key: null, status: 401, code: 'BWN_ERR_KEY_MISSING' },
    { route, key: 'console', via: 'bearer', status: 401, code: 'BWN_ERR_KEY_MISSING' },
    { route, key: 'client', via: 'x-api-key', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' },
    { route, key: 'admin', via: 'x-api-key', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' },
    { route, key: 'consoleNoScopes', via: 'x-api-key', status: 403, code: 'BWN_ERR_SCOPE_MISSING' },
    { route, key: 'consoleEnvironment', via: 'x-api-key', status: 403, code: 'BWN_ERR_GRANT_TOO_NARROW' },
    { route, key: 'consoleBroke', via: 'x-api-key', status: 402, code: 'BWN_ERR_INSUFFICIENT_CREDITS' },
    { route, key: 'consoleSnapshotOnly', via: 'x-api-key', ...(realtime ? { status: 403, code: 'BWN_ERR_SCOPE_MISSING' } : { status: 200 }) },
    { route, key: 'console', via: 'x-api-key', status: 200 },
    { route, key: 'consoleProject', via: 'x-api-key', status: 200 }
  )
}
const SELL_ROUTE = `/v1/telemetry/sell-allowance/${HOTKEY}`
CASES.push(
  { route: SELL_ROUTE, key: null, status: 401, code: 'BWN_ERR_KEY_MISSING' },
  { route: SELL_ROUTE, key: 'consoleProject', via: 'x-api-key', status: 403, code: 'BWN_ERR_GRANT_TOO_NARROW' },
  { route: SELL_ROUTE, key: 'worker', via: 'x-api-key', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' },
  { route: SELL_ROUTE, key: 'consoleBroke', via: 'x-api-key', status: 402, code: 'BWN_ERR_INSUFFICIENT_CREDITS' },
  { route: SELL_ROUTE, key: 'console', via: 'x-api-key', status: 404, code: 'BWN_ERR_SELL_ALLOWANCE_NOT_FOUND' },
  // The free audit read is public: no key needed, a key is not looked at.
  { route: `/v1/audit/sell-allowance/${HOTKEY}`, key: null, status: 404, code: 'BWN_ERR_SELL_ALLOWANCE_NOT_FOUND' },
  { route: `/v1/audit/sell-allowance/${HOTKEY}`, key: 'unknown', status: 404, code: 'BWN_ERR_SELL_ALLOWANCE_NOT_FOUND' }
)
// Dashboard audit routes: admin (and validator, orchestrator; worker on the worker route), Bearer or X-Api-Key.
const AUDIT_ORCH = `/api/audit/orchestrator/${HOTKEY}/transfers/00000000-0000-4000-8000-000000000000`
const AUDIT_WORKER = `/api/audit/worker/${HOTKEY}/transfers/00000000-0000-4000-8000-000000000000`
for (const route of [AUDIT_ORCH, AUDIT_WORKER]) {
  CASES.push(
    { route, key: null, status: 401, code: 'BWN_ERR_KEY_MISSING' },
    { route, key: 'revoked', status: 401, code: 'BWN_ERR_KEY_REVOKED' },
    { route, key: 'client', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' },
    { route, key: 'console', via: 'x-api-key', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' },
    { route, key: 'admin', status: 404, code: 'BWN_ERR_AUDIT_NOT_FOUND' }
  )
}
CASES.push(
  { route: AUDIT_ORCH, key: 'worker', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' },
  { route: AUDIT_WORKER, key: 'worker', status: 404, code: 'BWN_ERR_AUDIT_NOT_FOUND' }
)

// Every admin route refuses everyone but an admin key, before looking at its input.
const ADMIN_ROUTES: Array<[NonNullable<Row['method']>, string]> = [
  ['POST', '/admin/organizations'], ['GET', `/admin/organizations/${orgA.id}`],
  ['POST', `/admin/organizations/${orgA.id}/projects`], ['GET', `/admin/organizations/${orgA.id}/projects`],
  ['POST', `/admin/projects/${project.id}/environments`], ['GET', `/admin/projects/${project.id}/environments`],
  ['POST', `/admin/organizations/${orgA.id}/keys`], ['GET', `/admin/organizations/${orgA.id}/keys`],
  ['GET', '/admin/keys/0123456789abcdef'], ['DELETE', '/admin/keys/0123456789abcdef'],
  ['POST', `/admin/organizations/${orgA.id}/credits`], ['GET', `/admin/organizations/${orgA.id}/credits`],
  ['GET', `/admin/organizations/${orgA.id}/credits/ledger`]
]
for (const [method, route] of ADMIN_ROUTES) {
  const payload = method === 'POST' ? {} : undefined
  CASES.push(
    { method, route, payload, key: null, status: 401, code: 'BWN_ERR_KEY_MISSING' },
    { method, route, payload, key: 'expired', status: 401, code: 'BWN_ERR_KEY_EXPIRED' },
    { method, route, payload, key: 'client', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' },
    { method, route, payload, key: 'console', via: 'x-api-key', status: 403, code: 'BWN_ERR_ROLE_FORBIDDEN' }
  )
}

for (const row of CASES) {
  const via = row.via ?? 'bearer'
  t.test(`${row.method ?? 'GET'} ${row.route} with ${row.key ?? 'no key'}${row.key ? ' via ' + via : ''}${row.headers ? ' ' + JSON.stringify(row.headers) : ''} → ${row.status}`, async t => {
    const headers: Record<string, string> = { ...row.headers }
    if (row.key !== null) {
      if (via === 'bearer') headers.authorization = `Bearer ${keys[row.key]}`
      else headers['x-api-key'] = keys[row.key]
    }
    const res = await app.inject({ method: row.method ?? 'GET', url: row.route, headers, ...(row.payload === undefined ? {} : { payload: row.payload }) })
    t.equal(res.statusCode, row.status, res.body)
    if (row.status >= 400) {
      t.match(res.headers['content-type'], PROBLEM_CONTENT_TYPE)
      const body = res.json()
      t.equal(body.code, row.code)
      t.equal(body.status, row.status)
      t.equal(body.type, `urn:bwnet:problem:${row.code}`)
      t.type(body.title, 'string')
      t.type(body.detail, 'string')
      t.type(body.instance, 'string')
    }
    // Routes that take Bearer keys challenge for one on 401.
    if (row.status === 401 && (row.route.startsWith('/admin/') || row.route === PROBES.transfer)) t.match(res.headers['www-authenticate'], /^Bearer/)
    if (row.status === 304) t.equal(res.body, '')
  })
}

t.test('two different keys in Authorization and X-Api-Key are refused', async t => {
  const res = await app.inject({ url: PROBES.transfer, headers: { authorization: `Bearer ${keys.client}`, 'x-api-key': keys.worker } })
  t.equal(res.statusCode, 400)
  t.equal(res.json().code, 'BWN_ERR_BAD_REQUEST')
})

t.test('revocation applies to the very next request', async t => {
  const { key, apiKey } = await accounts.createKey(orgA.id, { role: 'client' })
  const call = () => app.inject({ url: PROBES.transfer, headers: { authorization: `Bearer ${key}` } })
  t.equal((await call()).statusCode, 200)
  const res = await app.inject({ method: 'DELETE', url: `/admin/keys/${apiKey.id}`, headers: { 'x-api-key': keys.admin } })
  t.equal(res.statusCode, 200)
  t.type(res.json().revokedAt, 'string')
  t.equal((await call()).json().code, 'BWN_ERR_KEY_REVOKED')
})

t.test('a key that differs only in its secret is unknown', async t => {
  const forged = keys.client.slice(0, -1) + (keys.client.endsWith('A') ? 'B' : 'A')
  const res = await app.inject({ url: PROBES.transfer, headers: { authorization: `Bearer ${forged}` } })
  t.equal(res.json().code, 'BWN_ERR_KEY_INVALID')
})
