// Issue 10 item 5: destinations cannot point the orchestrator or its workers at the operator's own
// network. The policy matrix at create (POST /destinations → 400 problem+json with a stable code and a
// `reason`), the same URLs allowed when the operator allows private destinations, and the check at
// connection time (a name that resolves elsewhere later, IP literals, redirects).
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../../../api/app.ts'
import { cryptoReady, newHotkey } from '../../../protocol/index.ts'
import { DestinationRegistry, type DestinationRow } from '../../../node/transfers/destinations.ts'
import { guardedFetch, addressClass } from '../../../node/adapters/destinations/url-policy.ts'
import { testDeps } from '../../helpers/api.ts'

await cryptoReady()
const FAKE_DNS: Record<string, string[]> = {
  'public.example': ['93.184.216.34'],
  'rebind.example': ['127.0.0.1'],
  'mixed.example': ['93.184.216.34', '10.0.0.7'],
  'meta.example': ['169.254.169.254']
}
const resolve = async (host: string): Promise<string[]> => {
  if (host === 'localhost') return ['127.0.0.1', '::1'] // what the system resolver says, without asking it
  const a = FAKE_DNS[host]
  if (a === undefined) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' })
  return a
}

async function appWith (allowPrivate: boolean) {
  const h = testDeps()
  const registry = new DestinationRegistry(h.store, newHotkey(), { now: () => Date.now() } as never, { allowPrivate }, resolve)
  const app = await buildApp({ ...h.deps, destinations: registry })
  const org = await h.accounts.createOrganization({ name: 'o' })
  const key = (await h.accounts.createKey(org.id, { role: 'client', plan: 'enterprise' })).key
  const create = async (kind: string, config: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: '/destinations', headers: { 'x-api-key': key }, payload: { name: 'd', kind, config } })
    return { status: res.statusCode, type: String(res.headers['content-type']), body: res.json() }
  }
  return { app, create }
}

const s3 = (endpoint: string) => ({ endpoint, region: 'us-east-1', bucket: 'bucket', accessKeyId: 'a', secretAccessKey: 's' })
const MATRIX: Array<[string, string, Record<string, unknown>, string, string]> = [
  ['127.0.0.1', 'http', { url: 'http://127.0.0.1:8000/admin/organizations' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'loopback'],
  ['[::1]', 'http', { url: 'http://[::1]:8000/x' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'loopback'],
  ['IPv4-mapped loopback', 'http', { url: 'http://[::ffff:127.0.0.1]:8000/x' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'loopback'],
  ['decimal loopback', 'http', { url: 'http://2130706433:8000/x' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'loopback'],
  ['10.x', 'http', { url: 'http://10.1.2.3/x' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'private'],
  ['192.168.x', 'http', { url: 'http://192.168.1.1/x' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'private'],
  ['cloud metadata', 'http', { url: 'http://169.254.169.254/latest/meta-data/' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'link_local'],
  ['0.0.0.0', 'http', { url: 'http://0.0.0.0:8000/x' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'unspecified'],
  ['multicast', 'http', { url: 'http://224.0.0.1/x' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'multicast'],
  ['localhost', 'http', { url: 'http://localhost:8000/x' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'loopback'],
  ['a name resolving to loopback', 'http', { url: 'http://rebind.example/x' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'loopback'],
  ['one private address among public ones', 'http', { url: 'http://mixed.example/x' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'private'],
  ['a name resolving to link-local', 'http', { url: 'http://meta.example/x' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'link_local'],
  ['completeUrl on loopback', 'http', { url: 'http://public.example/x', completeUrl: 'http://127.0.0.1:8000/admin/organizations' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'loopback'],
  ['userinfo in URL', 'http', { url: 'http://user:pass@public.example/x' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'credentials'],
  ['unresolvable host', 'http', { url: 'http://nowhere.example/x' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'unresolvable'],
  ['file: completeUrl', 'http', { url: 'http://public.example/x', completeUrl: 'file:///etc/passwd' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'scheme'],
  ['s3 endpoint on loopback', 's3', s3('http://127.0.0.1:7480'), 'BWN_ERR_DESTINATION_URL_REFUSED', 'loopback'],
  ['s3 endpoint file:', 's3', s3('file:///etc/passwd'), 'BWN_ERR_DESTINATION_URL_REFUSED', 'scheme'],
  ['s3 endpoint gopher:', 's3', s3('gopher://public.example/'), 'BWN_ERR_DESTINATION_URL_REFUSED', 'scheme'],
  ['node baseUrl on loopback', 'node', { baseUrl: 'http://127.0.0.1:8000' }, 'BWN_ERR_DESTINATION_URL_REFUSED', 'loopback'],
  ['Host control header', 'http', { url: 'http://public.example/x', controlHeaders: { Host: 'internal' } }, 'BWN_ERR_DESTINATION_HEADER_REFUSED', 'not_allowed'],
  ['X-Api-Key is fine, X-Forwarded-For is not', 'http', { url: 'http://public.example/x', controlHeaders: { 'x-api-key': 'k', 'X-Forwarded-For': '127.0.0.1' } }, 'BWN_ERR_DESTINATION_HEADER_REFUSED', 'not_allowed'],
  ['Content-Range upload header', 'http', { url: 'http://public.example/x', uploadHeaders: { 'Content-Range': 'bytes 0-1/2' } }, 'BWN_ERR_DESTINATION_HEADER_REFUSED', 'not_allowed'],
  ['header value with CRLF', 'http', { url: 'http://public.example/x', uploadHeaders: { authorization: 'Bearer a\r\nHost: x' } }, 'BWN_ERR_DESTINATION_HEADER_REFUSED', 'malformed']
]

t.test('the policy matrix at create: 400 problem+json with a stable code and reason', async t => {
  const { app, create } = await appWith(false)
  t.teardown(() => app.close())
  for (const [name, kind, config, code, reason] of MATRIX) {
    const res = await create(kind, config)
    t.equal(res.status, 400, name)
    t.match(res.type, /^application\/problem\+json/, name)
    t.match(res.body, { code, reason }, name)
  }
  const ok = await create('http', { url: 'http://public.example/{transferId}/{filename}', uploadHeaders: { Authorization: 'Bearer scoped' }, controlHeaders: { 'x-api-key': 'k', 'x-meta-owner': 'me' } })
  t.equal(ok.status, 201, 'a public destination with allowed headers is accepted')
  t.equal((await create('s3', s3('https://public.example'))).status, 201, 'a public s3 endpoint is accepted')
})

t.test('with allowPrivateDestinations the private addresses are accepted; scheme, credentials and headers are still checked', async t => {
  const { app, create } = await appWith(true)
  t.teardown(() => app.close())
  for (const [name, kind, config, code, reason] of MATRIX) {
    const res = await create(kind, config)
    if (['scheme', 'credentials', 'not_allowed', 'malformed'].includes(reason)) t.match(res.body, { code, reason }, `${name}: still refused`)
    else t.equal(res.status, 201, `${name}: allowed`)
  }
})

t.test('at connection time: names that resolve to refused ranges, IP literals and redirects are not followed', async t => {
  let hits = 0
  const server = createServer((req, res) => {
    hits++
    if (req.url === '/redirect') { res.writeHead(307, { location: `http://127.0.0.1:${(server.address() as AddressInfo).port}/inner` }).end(); return }
    res.writeHead(200).end('ok')
  })
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  const port = (server.address() as AddressInfo).port
  const strict = guardedFetch({ allowPrivate: false })
  await t.rejects(strict(`http://localhost:${port}/`), { cause: { code: 'BWN_ERR_ADDRESS_REFUSED' } }, 'localhost (resolved at connect) refused')
  await t.rejects(strict(`http://127.0.0.1:${port}/`), { cause: { code: 'BWN_ERR_ADDRESS_REFUSED' } }, 'IP literal refused')
  await t.rejects(strict(`http://[::ffff:127.0.0.1]:${port}/`), { cause: { code: 'BWN_ERR_ADDRESS_REFUSED' } }, 'IPv4-mapped literal refused')
  t.equal(hits, 0, 'no request reached the server')
  const open = guardedFetch({ allowPrivate: true })
  t.equal((await open(`http://127.0.0.1:${port}/`)).status, 200, 'allowed when the operator allows private destinations')
  await t.rejects(open(`http://127.0.0.1:${port}/redirect`), { message: /fetch failed/ }, 'a redirect is not followed')
  t.equal(hits, 2, 'the redirect target was never requested')

  // A destination stored while its name was public and resolving to loopback now (DNS rebinding): the
  // registry's driver connects through the guard.
  const h = testDeps()
  const registry = new DestinationRegistry(h.store, newHotkey(), { now: () => Date.now() } as never, { allowPrivate: false }, resolve)
  const row: DestinationRow = { id: 'd1', name: 'rebound', kind: 'http', builtin: false, org_id: 'o', config: { url: `http://localhost:${port}/obj` }, created_at: new Date().toISOString() }
  await h.store.table('destinations').put(row.id, row)
  const driver = await registry.driverFor('d1')
  const state = await driver.begin({ transferId: 't', filename: 'f', totalSize: 10, chunkSize: 10, totalChunks: 1 })
  await t.rejects(driver.readRange(state, 0, 10), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE' })
  t.equal(hits, 2, 'the driver never reached the loopback server')
})

t.test('address classes', async t => {
  for (const a of ['127.0.0.1', '::1', '::ffff:7f00:1', '10.0.0.1', '172.16.0.1', '192.168.0.1', '100.64.0.1', 'fd00::1']) t.ok(addressClass(a), a)
  for (const a of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111']) t.equal(addressClass(a), null, a)
})
