// The key-lookup cache: a hot key is not read from the store again, yet a revocation is effective on
// the very next request and an expiry on the first request after it.
import t from 'tap'
import { buildApp } from '../../api/app.ts'
import { testDeps } from '../helpers/api.ts'
import { PROBES, registerProbes } from '../helpers/probes.ts'

t.test('revocation and expiry beat the cache', async t => {
  const env = testDeps()
  const org = await env.accounts.createOrganization({ name: 'org' })
  const app = await buildApp(env.deps)
  await registerProbes(app)
  t.teardown(() => app.close())
  const { key, apiKey } = await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise' })
  const call = () => app.inject({ url: PROBES.transfer, headers: { authorization: `Bearer ${key}` } })
  let lookups = 0
  const original = env.accounts.authenticate.bind(env.accounts)
  env.accounts.authenticate = async (k: string) => { lookups++; return original(k) }
  for (let i = 0; i < 5; i++) t.equal((await call()).statusCode, 200)
  t.equal(lookups, 1, 'one store lookup for five requests')
  await env.accounts.revokeKey(apiKey.id)
  const refused = await call()
  t.equal(refused.statusCode, 401, 'the next request after the revocation is refused')
  t.equal(refused.json().code, 'BWN_ERR_KEY_REVOKED')

  const soon = new Date(env.clock.now() + 60_000).toISOString()
  const expiring = await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise', expiresAt: soon })
  const callExpiring = () => app.inject({ url: PROBES.transfer, headers: { 'x-api-key': expiring.key } })
  t.equal((await callExpiring()).statusCode, 200)
  t.equal((await callExpiring()).statusCode, 200)
  env.clock.advance(60_000)
  const expired = await callExpiring()
  t.equal(expired.statusCode, 401)
  t.equal(expired.json().code, 'BWN_ERR_KEY_EXPIRED')
})

t.test('the paid read path admits a cached key without a lookup, and a revocation on the next request', async t => {
  const env = testDeps()
  const org = await env.accounts.createOrganization({ name: 'org' })
  await env.accounts.grantCredits(org.id, 100)
  const app = await buildApp(env.deps)
  await registerProbes(app)
  t.teardown(() => app.close())
  const { key, apiKey } = await env.accounts.createKey(org.id, { role: 'console', plan: 'enterprise', scopes: ['telemetry:read'] })
  const { key: other } = await env.accounts.createKey(org.id, { role: 'console', plan: 'enterprise', scopes: ['telemetry:read'] })
  let lookups = 0
  const original = env.accounts.authenticate.bind(env.accounts)
  env.accounts.authenticate = async (k: string) => { lookups++; return original(k) }
  const read = (k: string) => app.inject({ url: PROBES.telemetry, headers: { 'x-api-key': k } })
  for (let i = 0; i < 5; i++) t.equal((await read(key)).statusCode, 200)
  t.equal((await read(other)).statusCode, 200)
  t.equal(lookups, 2, 'one store lookup per key')
  // Revoked while reads are in flight: the reads that started after it are refused, and none is charged.
  const before = (await env.accounts.balance(org.id)).balance
  const revoking = env.accounts.revokeKey(apiKey.id)
  const during = await Promise.all([read(key), read(key)])
  await revoking
  for (const r of during) t.ok(r.statusCode === 200 || r.statusCode === 401, 'served before the revocation landed, or refused')
  const charged = during.filter(r => r.statusCode === 200).length
  const refused = await read(key)
  t.equal(refused.statusCode, 401)
  t.equal(refused.json().code, 'BWN_ERR_KEY_REVOKED')
  t.equal((await env.accounts.balance(org.id)).balance, before - charged, 'a refused read costs nothing')
  t.equal((await read(other)).statusCode, 200, 'the organization\'s other key still reads')
  t.equal((await read(key)).statusCode, 401, 'and stays refused')
})
