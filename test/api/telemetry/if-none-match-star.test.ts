// `If-None-Match: *` on a paid read: a client that holds no version has nothing to revalidate, so `*`
// matches nothing there and the read is served (and charged) or refused like any other. Otherwise an
// organization with an empty balance polled every route's current version (the live snapshotId on
// /realtime/network) through free 304s, unlimited. Refusals (402, 429) carry no ETag either.
import t from 'tap'
import { telemetryApp, publishOneOfEach, orgConsoleKey, PAID_READS as PAID, ORCH } from '../../helpers/telemetry.ts'

const T = await telemetryApp()
t.teardown(() => T.app.close())
publishOneOfEach(T)
const STAR = { 'if-none-match': '*' }

t.test('an empty balance: `*` is a 402 with no ETag, on every paid route', async t => {
  const { orgId: brokeId, key } = await orgConsoleKey(T, 'broke')
  for (const url of PAID) {
    const res = await T.get(url, key, STAR)
    t.equal(res.statusCode, 402, url)
    t.equal(res.json().code, 'BWN_ERR_INSUFFICIENT_CREDITS')
    t.equal(res.headers.etag, undefined, `${url}: no ETag on the refusal`)
  }
  t.same(await T.env.accounts.ledger(brokeId), [])
})

t.test('a funded key: `*` is served and charged like a read without the header', async t => {
  for (const url of PAID) {
    const res = await T.get(url, T.keys.console, STAR)
    t.equal(res.statusCode, 200, url)
    t.ok(Number(res.headers['x-credits-charged']) > 0, 'charged')
    t.type(res.headers.etag, 'string', 'the ETag of what was served')
  }
})

t.test('over the plan: 429 with no ETag, `*` or not', async t => {
  const { key } = await orgConsoleKey(T, 'free', { plan: 'free', credits: 1_000_000 })
  let limited = 0
  for (let i = 0; i < 70 && limited === 0; i++) if ((await T.get('/v1/telemetry/network', key)).statusCode === 429) limited++
  t.equal(limited, 1, 'the plan limit is reached')
  for (const url of PAID) {
    for (const headers of [STAR, {}]) {
      const res = await T.get(url, key, headers)
      t.equal(res.statusCode, 429, url)
      t.equal(res.headers.etag, undefined, `${url}: no ETag on the refusal`)
    }
  }
})

t.test('the free audit route keeps `*` (nothing to charge there)', async t => {
  const res = await T.get(`/v1/audit/sell-allowance/${ORCH}`, null, STAR)
  t.equal(res.statusCode, 304)
})
