// The admin API's input checks and answers (the happy path runs in test/node/commands/admin.test.ts).
import t from 'tap'
import { buildApp } from '../../api/app.ts'
import { bootstrapDevnetKeys } from '../../api/accounts/devnet.ts'
import { testDeps } from '../helpers/api.ts'

const env = testDeps()
const keys = await bootstrapDevnetKeys(env.accounts)
const app = await buildApp(env.deps)
await app.ready()
t.teardown(() => app.close())
const headers = { authorization: `Bearer ${keys.admin}` }
const org = (await app.inject({ method: 'POST', url: '/admin/organizations', headers, payload: { name: 'acme' } })).json()
const MISSING = '00000000-0000-4000-8000-000000000000'

const CASES: Array<[string, string, unknown, number, string]> = [
  ['POST', '/admin/organizations', {}, 400, 'BWN_ERR_VALIDATION'],
  ['POST', '/admin/organizations', { name: '' }, 400, 'BWN_ERR_VALIDATION'],
  ['POST', '/admin/organizations', { name: 'x', extra: 1 }, 400, 'BWN_ERR_VALIDATION'],
  ['GET', '/admin/organizations/not-a-uuid', undefined, 400, 'BWN_ERR_VALIDATION'],
  ['GET', `/admin/organizations/${MISSING}`, undefined, 404, 'BWN_ERR_ORGANIZATION_NOT_FOUND'],
  ['POST', `/admin/organizations/${MISSING}/projects`, { name: 'p' }, 404, 'BWN_ERR_ORGANIZATION_NOT_FOUND'],
  ['POST', `/admin/projects/${MISSING}/environments`, { name: 'e' }, 404, 'BWN_ERR_PROJECT_NOT_FOUND'],
  ['POST', `/admin/organizations/${org.id}/keys`, { role: 'root' }, 400, 'BWN_ERR_VALIDATION'],
  ['POST', `/admin/organizations/${org.id}/keys`, { role: 'console', scopes: ['telemetry:write'] }, 400, 'BWN_ERR_VALIDATION'],
  ['POST', `/admin/organizations/${org.id}/keys`, { role: 'console', plan: 'gold' }, 400, 'BWN_ERR_VALIDATION'],
  ['POST', `/admin/organizations/${org.id}/keys`, { role: 'worker', scopes: ['telemetry:read'] }, 400, 'BWN_ERR_BAD_REQUEST'],
  ['POST', `/admin/organizations/${org.id}/keys`, { role: 'client', environmentId: MISSING }, 404, 'BWN_ERR_ENVIRONMENT_NOT_FOUND'],
  ['POST', `/admin/organizations/${org.id}/keys`, { role: 'client', expiresAt: 'tomorrow' }, 400, 'BWN_ERR_VALIDATION'],
  ['GET', '/admin/keys/0123456789abcdef', undefined, 404, 'BWN_ERR_API_KEY_NOT_FOUND'],
  ['DELETE', '/admin/keys/XYZ', undefined, 400, 'BWN_ERR_VALIDATION'],
  ['POST', `/admin/organizations/${org.id}/credits`, { amount: -5 }, 400, 'BWN_ERR_VALIDATION'],
  ['POST', `/admin/organizations/${org.id}/credits`, { amount: 1.5 }, 400, 'BWN_ERR_VALIDATION'],
  ['GET', `/admin/organizations/${org.id}/credits/ledger?limit=5000`, undefined, 400, 'BWN_ERR_VALIDATION'],
  ['GET', `/admin/organizations/${MISSING}/credits`, undefined, 404, 'BWN_ERR_ORGANIZATION_NOT_FOUND']
]

for (const [method, url, payload, status, code] of CASES) {
  t.test(`${method} ${url} ${JSON.stringify(payload) ?? ''} → ${status} ${code}`, async t => {
    const res = await app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
    t.equal(res.statusCode, status, res.body)
    t.match(res.headers['content-type'], 'application/problem+json')
    t.equal(res.json().code, code)
  })
}

t.test('a validation problem names the field', async t => {
  const res = await app.inject({ method: 'POST', url: `/admin/organizations/${org.id}/credits`, headers, payload: { amount: 0 } })
  t.match(res.json().errors, [{ field: 'body/amount' }])
})

t.test('a key issued with a future expiry and a name round-trips', async t => {
  const expiresAt = new Date(env.clock.now() + 86_400_000).toISOString()
  const res = await app.inject({ method: 'POST', url: `/admin/organizations/${org.id}/keys`, headers, payload: { role: 'worker', name: 'w1', expiresAt, plan: 'pro' } })
  t.equal(res.statusCode, 201)
  t.match(res.json().apiKey, { role: 'worker', name: 'w1', expiresAt, plan: 'pro', revokedAt: null })
  t.notOk('hash' in res.json().apiKey, 'the hash is not shown either')
})
