// Prepaid credits on paid reads: no overdraw under a burst, 304 free, realtime twice the price,
// plan rate limits with Retry-After.
import t from 'tap'
import { buildApp } from '../../api/app.ts'
import { testDeps } from '../helpers/api.ts'
import { PROBES, PROBE_ETAG, registerProbes } from '../helpers/probes.ts'
import { telemetryApp, ORCH } from '../helpers/telemetry.ts'
import { serveResolvedRead } from '../../api/telemetry/read.ts'

const BURST = 40

async function setup (opts: Parameters<typeof testDeps>[0] = {}) {
  const env = testDeps(opts)
  const org = await env.accounts.createOrganization({ name: 'org' })
  const { key } = await env.accounts.createKey(org.id, { role: 'console', plan: 'enterprise', scopes: ['telemetry:read', 'telemetry:realtime:read'] })
  const app = await buildApp(env.deps)
  await registerProbes(app)
  await app.ready()
  const read = (url: string, headers: Record<string, string> = {}) => app.inject({ url, headers: { 'x-api-key': key, ...headers } })
  return { ...env, org, key, app, read }
}

t.test('a burst of concurrent reads never overdraws', async t => {
  const s = await setup({ pricing: { snapshotRead: 3 } })
  t.teardown(() => s.app.close())
  await s.accounts.grantCredits(s.org.id, 20) // covers 6 reads at 3, with 2 left over
  const results = await Promise.all(Array.from({ length: BURST }, () => s.read(PROBES.telemetry)))
  const ok = results.filter(r => r.statusCode === 200)
  const refused = results.filter(r => r.statusCode === 402)
  t.equal(ok.length, 6)
  t.equal(refused.length, BURST - 6)
  t.equal(ok.length + refused.length, BURST, 'every read is either served or refused')
  for (const r of refused) t.equal(r.json().code, 'BWN_ERR_INSUFFICIENT_CREDITS')
  t.equal((await s.accounts.balance(s.org.id)).balance, 2)
  const ledger = await s.accounts.ledger(s.org.id)
  t.equal(ledger.length, 7, 'one grant and six debits')
  t.equal(ledger.reduce((sum, e) => sum + e.amount, 0), 2, 'balance is the sum of the ledger')
  t.ok(ledger.every(e => e.balanceAfter >= 0), 'never below zero at any step')
})

t.test('the same burst on realtime reads, racing the final debit (pre-check passed)', async t => {
  const s = await setup()
  t.teardown(() => s.app.close())
  await s.accounts.grantCredits(s.org.id, 5) // realtime costs 2: two reads, 1 left
  const results = await Promise.all(Array.from({ length: BURST }, () => s.read(PROBES.realtime)))
  t.equal(results.filter(r => r.statusCode === 200).length, 2)
  const refused = results.filter(r => r.statusCode === 402)
  t.equal(refused.length, BURST - 2)
  for (const r of refused) {
    t.equal(r.headers.etag, undefined, 'a refused read carries no ETag')
    t.equal(r.json().price, 2)
  }
  t.equal((await s.accounts.balance(s.org.id)).balance, 1)
})

t.test('a 304 costs nothing; a realtime read costs twice a snapshot read', async t => {
  const s = await setup({ pricing: { snapshotRead: 5 } })
  t.teardown(() => s.app.close())
  await s.accounts.grantCredits(s.org.id, 100)
  const snap = await s.read(PROBES.telemetry)
  t.equal(snap.statusCode, 200)
  t.equal(snap.headers['x-credits-charged'], '5')
  t.equal(snap.headers.etag, PROBE_ETAG)
  t.equal((await s.accounts.balance(s.org.id)).balance, 95)

  for (let i = 0; i < 3; i++) {
    const again = await s.read(PROBES.telemetry, { 'if-none-match': PROBE_ETAG })
    t.equal(again.statusCode, 304)
    t.equal(again.headers['x-credits-charged'], undefined)
  }
  t.equal((await s.read(PROBES.realtime, { 'if-none-match': `W/${PROBE_ETAG}, "other"` })).statusCode, 304)
  t.equal((await s.accounts.balance(s.org.id)).balance, 95, '304s were free')

  const rt = await s.read(PROBES.realtime)
  t.equal(rt.statusCode, 200)
  t.equal(rt.headers['x-credits-charged'], '10')
  t.equal(rt.headers['x-credits-remaining'], '85')
  const sell = await s.read(PROBES.sellAllowance)
  t.equal(sell.headers['x-credits-charged'], '1', 'sell-allowance has its own price')
  t.equal((await s.accounts.balance(s.org.id)).balance, 84)
  const kinds = (await s.accounts.ledger(s.org.id)).map(e => e.amount)
  t.same(kinds, [-1, -10, -5, 100], 'newest first')
})

t.test('refused and failed requests cost nothing', async t => {
  const s = await setup()
  t.teardown(() => s.app.close())
  await s.accounts.grantCredits(s.org.id, 10)
  const { key: narrow } = await s.accounts.createKey(s.org.id, { role: 'console', scopes: ['telemetry:read'] })
  t.equal((await s.app.inject({ url: PROBES.realtime, headers: { 'x-api-key': narrow } })).statusCode, 403)
  t.equal((await s.accounts.balance(s.org.id)).balance, 10)
})

t.test('plans set the request rate: 429 with Retry-After', async t => {
  const s = await setup({ planRequestsPerMinute: { free: 3, pro: 5 } })
  t.teardown(() => s.app.close())
  const make = async (plan: 'free' | 'pro' | 'enterprise') => (await s.accounts.createKey(s.org.id, { role: 'client', plan })).key
  const counts = async (key: string, n: number) => {
    const statuses: number[] = []
    for (let i = 0; i < n; i++) statuses.push((await s.app.inject({ url: PROBES.transfer, headers: { authorization: `Bearer ${key}` } })).statusCode)
    return statuses
  }
  const free = await make('free')
  t.same(await counts(free, 5), [200, 200, 200, 429, 429])
  const res = await s.app.inject({ url: PROBES.transfer, headers: { authorization: `Bearer ${free}` } })
  t.equal(res.statusCode, 429)
  t.equal(res.json().code, 'BWN_ERR_RATE_LIMITED')
  t.match(res.headers['content-type'], 'application/problem+json')
  t.ok(Number(res.headers['retry-after']) > 0, 'Retry-After in seconds')
  t.same(await counts(await make('free'), 2), [429, 429], 'counted per organization and plan: another key of it shares the rate')
  const other = await s.accounts.createOrganization({ name: 'another' })
  t.same(await counts((await s.accounts.createKey(other.id, { role: 'client', plan: 'free' })).key, 3), [200, 200, 200], 'another organization has its own')
  t.same((await counts(await make('pro'), 6)).filter(c => c === 429).length, 1)
  t.same((await counts(await make('enterprise'), 20)).filter(c => c === 429).length, 0)
})

t.test('default plan limits are the published ones (Free 60/min)', async t => {
  const s = await setup()
  t.teardown(() => s.app.close())
  const { key } = await s.accounts.createKey(s.org.id, { role: 'client', plan: 'free' })
  let ok = 0
  let limited = 0
  for (let i = 0; i < 61; i++) {
    const code = (await s.app.inject({ url: PROBES.transfer, headers: { 'x-api-key': key } })).statusCode
    if (code === 200) ok++
    if (code === 429) limited++
  }
  t.equal(ok, 60)
  t.equal(limited, 1)
})

t.test('paid reads are GET only: a HEAD is not served, and costs nothing', async t => {
  const T = await telemetryApp()
  t.teardown(() => T.app.close())
  const org = (await T.env.accounts.listOrganizations()).find(o => o.name === 'telemetry')!.id
  const paid = ['/v1/telemetry/network', '/v1/telemetry/realtime/network', '/v1/telemetry/network/history', '/v1/telemetry/realtime/network/history',
    '/v1/telemetry/tasks', '/v1/telemetry/realtime/tasks', '/v1/telemetry/epochs', '/v1/telemetry/realtime/epochs', `/v1/telemetry/sell-allowance/${ORCH}`, '/v1/telemetry/realtime/stream']
  const before = await T.env.accounts.balance(org)
  for (const url of paid) {
    const head = await T.app.inject({ method: 'HEAD', url, headers: { 'x-api-key': T.keys.console } })
    t.equal(head.statusCode, 404, `HEAD ${url}`)
    t.equal(head.headers['x-credits-charged'], undefined, `HEAD ${url}: nothing charged`)
    t.equal(head.body, '')
  }
  t.same(await T.env.accounts.balance(org), before, 'the balance and the ledger did not move')
  const got = await T.get('/v1/telemetry/network/history')
  t.equal(got.statusCode, 200, 'GET still serves the read')
  t.equal(got.headers['x-credits-charged'], '1', '… and charges it')
  t.equal((await T.app.inject({ method: 'HEAD', url: '/health' })).statusCode, 200, 'a free route still answers HEAD')
})

t.test('a paid route that would be served by HEAD is refused when registered', async t => {
  const env = testDeps()
  const app = await buildApp(env.deps)
  t.teardown(() => app.close())
  t.throws(() => app.get('/paid-with-head', { config: { auth: { telemetry: {} }, read: () => ({ etag: 'x', body: () => '{}' }) } }, serveResolvedRead), /exposeHeadRoute: false/)
})
