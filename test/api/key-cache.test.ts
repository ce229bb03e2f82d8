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
