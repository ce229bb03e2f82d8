// 304 before any limit (seed §4.4 rule 1): an organization with an empty balance that holds the
// current ETag gets 304 and no ledger entry, on every real /v1 route (the paid sell-allowance read
// included); without the ETag it gets 402. The free audit route is limited per source address (429).
import t from 'tap'
import { telemetryApp, publishOneOfEach, orgConsoleKey, PAID_READS, ORCH } from '../../helpers/telemetry.ts'
import { FREE_AUDIT_REQUESTS_PER_MINUTE } from '../../../api/routes/telemetry.ts'
import { injectClient } from '../../helpers/client.ts'

const T = await telemetryApp()
t.teardown(() => T.app.close())
publishOneOfEach(T)
const ROUTES = PAID_READS

t.test('empty balance + matching ETag → 304, no ledger entry; without it → 402', async t => {
  // The ETags of the current versions, read by a funded organization.
  const etags = new Map<string, string>()
  for (const url of ROUTES) {
    const res = await T.get(url)
    t.equal(res.statusCode, 200, url)
    etags.set(url, res.headers.etag as string)
  }
  const { orgId: brokeId, key } = await orgConsoleKey(T, 'broke')
  for (const url of ROUTES) {
    const hit = await T.get(url, key, { 'if-none-match': etags.get(url)! })
    t.equal(hit.statusCode, 304, `${url}: 304 with an empty balance`)
    t.equal(hit.body, '', 'no body')
    t.equal(hit.headers['x-credits-charged'], undefined)
    const miss = await T.get(url, key, { 'if-none-match': '"stale"' })
    t.equal(miss.statusCode, 402, `${url}: 402 once the ETag does not match`)
    t.equal(miss.json().code, 'BWN_ERR_INSUFFICIENT_CREDITS')
  }
  t.same(await T.env.accounts.ledger(brokeId), [], 'no ledger entry at all')
  t.equal((await T.env.accounts.balance(brokeId)).balance, 0)
})

t.test('304 before the rate limit: a Free key over its plan still gets 304 on its ETag', async t => {
  const org = await T.env.accounts.createOrganization({ name: 'free' })
  await T.env.accounts.grantCredits(org.id, 1000)
  const { key } = await T.env.accounts.createKey(org.id, { role: 'console', plan: 'free', scopes: ['telemetry:read'] })
  const first = await T.get('/v1/telemetry/network', key)
  const etag = first.headers.etag as string
  let limited = 0
  for (let i = 0; i < 70 && limited === 0; i++) if ((await T.get('/v1/telemetry/network', key)).statusCode === 429) limited++
  t.equal(limited, 1, 'the plan limit is reached')
  t.equal((await T.get('/v1/telemetry/network', key, { 'if-none-match': etag })).statusCode, 304, 'still 304')
})

t.test('the free audit route answers 429 per source address, 304s not counted', async t => {
  const url = `/v1/audit/sell-allowance/${ORCH}`
  const from = (ip: string, headers: Record<string, string> = {}) => T.app.inject({ url, remoteAddress: ip, headers })
  const first = await from('127.0.0.9')
  t.equal(first.statusCode, 200)
  for (let i = 0; i < 5; i++) t.equal((await from('127.0.0.9', { 'if-none-match': first.headers.etag as string })).statusCode, 304)
  const statuses: number[] = []
  for (let i = 1; i <= FREE_AUDIT_REQUESTS_PER_MINUTE; i++) statuses.push((await from('127.0.0.9')).statusCode)
  t.equal(statuses.filter(s => s === 200).length, FREE_AUDIT_REQUESTS_PER_MINUTE - 1, 'the first request and 59 more pass; 304s were not counted')
  t.equal(statuses.at(-1), 429)
  const limited = await from('127.0.0.9')
  t.equal(limited.statusCode, 429)
  t.equal(limited.json().code, 'BWN_ERR_RATE_LIMITED')
  t.match(limited.headers['content-type'], 'application/problem+json')
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After')
  t.equal((await from('127.0.0.10')).statusCode, 200, 'another address has its own budget')
  // IPv6 by its /64: one host holds a whole /64, and counting its addresses one by one gave it 2^64 budgets.
  for (let i = 1; i <= FREE_AUDIT_REQUESTS_PER_MINUTE; i++) t.equal((await from(`2001:db8:7:9::${i.toString(16)}`)).statusCode, 200)
  t.equal((await from('2001:db8:7:9:ffff::1')).statusCode, 429, 'another address of the same /64 shares its budget')
  t.equal((await from('2001:db8:7:a::1')).statusCode, 200, 'another /64 has its own')
})

t.test('through the typed client: 200 with a typed body, then 304 on its ETag with an empty balance', async t => {
  const funded = injectClient(T.app, { key: T.keys.console, keyHeader: 'x-api-key' })
  const first = await funded.GET('/v1/telemetry/network')
  t.equal(first.response.status, 200)
  t.equal(typeof first.data?.data.workerCount, 'number', 'typed: data.workerCount')
  const etag = first.response.headers.get('etag')!
  const org = await T.env.accounts.createOrganization({ name: 'broke via client' })
  const { key } = await T.env.accounts.createKey(org.id, { role: 'console', plan: 'enterprise', scopes: ['telemetry:read'] })
  const broke = injectClient(T.app, { key, keyHeader: 'x-api-key' })
  const again = await broke.GET('/v1/telemetry/network', { params: { header: { 'if-none-match': etag } } })
  t.equal(again.response.status, 304)
  const miss = await broke.GET('/v1/telemetry/network')
  t.equal(miss.response.status, 402)
  t.equal(miss.error?.code, 'BWN_ERR_INSUFFICIENT_CREDITS', 'typed: the Problem code')
  t.equal(miss.error?.price, 1, 'typed: the Problem extension member')
  const free = await broke.GET('/v1/audit/sell-allowance/{hotkey}', { params: { path: { hotkey: ORCH } } })
  t.equal(free.data?.data.sellAllowance.allowanceRemainingAlphaRao !== undefined, true)
})
