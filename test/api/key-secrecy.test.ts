// A key is shown once, in the response that creates it, and nowhere else: not in any other response
// (bodies or headers), not in any log line, whatever the outcome of the request.
import t from 'tap'
import type { InjectOptions } from 'fastify'
import { buildApp } from '../../api/app.ts'
import { bootstrapDevnetKeys } from '../../api/accounts/devnet.ts'
import { testDeps } from '../helpers/api.ts'
import { collect } from '../../actors/store.ts'
import { hashKey } from '../../api/accounts/keys.ts'
import { PROBES, registerProbes } from '../helpers/probes.ts'

const env = testDeps()
const devnet = await bootstrapDevnetKeys(env.accounts)
const app = await buildApp(env.deps)
await registerProbes(app)
// A careless route that logs every header: the logger's redaction must still hide the key.
app.get('/probe/log-headers', { schema: { response: { 200: { type: 'object', properties: {} } } } }, async (req) => {
  req.log.info({ headers: req.headers }, 'headers seen')
  req.log.info({ req: { headers: req.headers } }, 'request seen')
  return {}
})
await app.ready()
t.teardown(() => app.close())

// bwn_<16 hex id>_<43 base64url chars>: the id is public, the rest is the secret.
const secretOf = (key: string): string => key.slice('bwn_'.length + 17)
const secrets: string[] = [devnet.admin, devnet.client, devnet.console]
const seenResponses: string[] = []
async function call (opts: InjectOptions, { creates = false } = {}) {
  const res = await app.inject(opts)
  if (creates) secrets.push(res.json().key)
  else seenResponses.push(JSON.stringify(res.headers) + '\n' + res.body)
  return res
}
const admin = { authorization: `Bearer ${devnet.admin}` }

t.test('drive every outcome over HTTP', async t => {
  const org = (await call({ method: 'POST', url: '/admin/organizations', headers: admin, payload: { name: 'acme' } })).json()
  const project = (await call({ method: 'POST', url: `/admin/organizations/${org.id}/projects`, headers: admin, payload: { name: 'p' } })).json()
  const environment = (await call({ method: 'POST', url: `/admin/projects/${project.id}/environments`, headers: admin, payload: { name: 'e' } })).json()
  const make = async (payload: object) => {
    const res = await call({ method: 'POST', url: `/admin/organizations/${org.id}/keys`, headers: admin, payload }, { creates: true })
    t.equal(res.statusCode, 201)
    t.equal(res.headers['cache-control'], 'no-store')
    return res.json() as { key: string, apiKey: { id: string } }
  }
  const client = await make({ role: 'client', plan: 'free' })
  const consoleKey = await make({ role: 'console', scopes: ['telemetry:read'], projectId: project.id })
  const envKey = await make({ role: 'console', scopes: ['telemetry:read'], environmentId: environment.id })
  const doomed = await make({ role: 'client' })
  await call({ method: 'POST', url: `/admin/organizations/${org.id}/credits`, headers: admin, payload: { amount: 1 } })

  await call({ url: PROBES.transfer, headers: { authorization: `Bearer ${client.key}` } })
  await call({ url: PROBES.transfer, headers: { 'x-api-key': client.key } })
  await call({ url: PROBES.telemetry, headers: { 'x-api-key': consoleKey.key } })
  t.equal((await call({ url: PROBES.telemetry, headers: { 'x-api-key': consoleKey.key } })).statusCode, 402, 'answers 402')
  t.equal((await call({ url: PROBES.telemetry, headers: { 'x-api-key': envKey.key } })).statusCode, 403, 'answers 403')
  t.equal((await call({ url: PROBES.telemetry, headers: { authorization: `Bearer ${consoleKey.key}` } })).statusCode, 401, 'answers 401')
  await call({ url: PROBES.realtime, headers: { 'x-api-key': devnet.console } })
  t.equal((await call({ url: PROBES.transfer, headers: { authorization: `Bearer ${client.key}`, 'x-api-key': doomed.key } })).statusCode, 400, 'answers 400')
  t.equal((await call({ url: '/admin/organizations', headers: { authorization: `Bearer ${client.key}` } })).statusCode, 403, 'answers 403')
  await call({ url: `/admin/organizations/${org.id}/keys`, headers: admin })
  await call({ url: `/admin/keys/${doomed.apiKey.id}`, headers: admin })
  await call({ method: 'DELETE', url: `/admin/keys/${doomed.apiKey.id}`, headers: admin })
  t.equal((await call({ url: PROBES.transfer, headers: { authorization: `Bearer ${doomed.key}` } })).statusCode, 401, 'revoked')
  t.equal((await call({ url: PROBES.transfer, headers: { authorization: `Bearer ${doomed.key.slice(0, -2)}xy` } })).statusCode, 401, 'unknown')
  await call({ url: PROBES.transfer, headers: { authorization: `Bearer ${client.key}`, 'content-type': 'application/json' }, payload: '{bad' })
  t.equal((await call({ url: `/admin/organizations/${org.id}/keys`, method: 'POST', headers: admin, payload: { role: 'nobody' } })).statusCode, 400, 'answers 400')
  t.equal((await call({ url: '/no/such/route', headers: { authorization: `Bearer ${client.key}` } })).statusCode, 404, 'answers 404')
  await call({ url: '/probe/log-headers', headers: { authorization: `Bearer ${client.key}`, 'x-api-key': client.key } })
  for (let i = 0; i < 61; i++) await call({ url: PROBES.transfer, headers: { authorization: `Bearer ${client.key}` } }) // reaches 429
  t.ok(seenResponses.some(r => r.includes('BWN_ERR_RATE_LIMITED')))
  t.ok(seenResponses.some(r => r.includes('BWN_ERR_KEY_REVOKED')))
  t.ok(seenResponses.some(r => r.includes('BWN_ERR_INSUFFICIENT_CREDITS')))
})

t.test('no key material in any other response or any log line', async t => {
  t.ok(env.logLines.length > 50, 'requests were logged')
  t.ok(env.logLines.some(l => l.includes('"headers seen"') && l.includes('[redacted]')), 'logged headers are redacted')
  t.equal(secrets.length, 7)
  for (const key of secrets) {
    const secret = secretOf(key)
    t.equal(secret.length, 43, '32 random bytes, base64url')
    for (const text of [...seenResponses, ...env.logLines]) {
      if (text.includes(secret)) t.fail(`secret of ${key.slice(0, 21)}… leaked in: ${text.slice(0, 200)}`)
    }
  }
  t.pass(`${seenResponses.length} responses and ${env.logLines.length} log lines scanned`)
})

t.test('only the hash is stored', async t => {
  const rows = JSON.stringify(await collect(env.store.table('api_keys')))
  t.ok(rows.includes('"hash"'))
  for (const key of secrets) {
    t.notOk(rows.includes(secretOf(key)), 'no secret in the stored rows')
    t.ok(rows.includes(hashKey(key)), 'the sha256 is')
  }
})
