// A tenant's destinations stay small and few: header sets of at most MAX_DESTINATION_HEADERS, a body
// limit on the route, and at most MAX_DESTINATIONS_PER_ORG per organization (another organization's
// count is its own).
import t from 'tap'
import { buildApp } from '../../../api/app.ts'
import { cryptoReady, newHotkey } from '../../../protocol/index.ts'
import { DestinationRegistry } from '../../../node/transfers/destinations.ts'
import { MAX_DESTINATION_HEADERS, MAX_DESTINATIONS_PER_ORG } from '../../../api/transfers.ts'
import { testDeps } from '../../helpers/api.ts'

await cryptoReady()
const resolve = async (): Promise<string[]> => ['93.184.216.34']

t.test('header sets, body size and count per organization are bounded', async t => {
  const h = testDeps()
  const registry = new DestinationRegistry(h.store, newHotkey(), { now: () => Date.now() } as never, { allowPrivate: false }, resolve)
  const app = await buildApp({ ...h.deps, destinations: registry })
  t.teardown(() => app.close())
  const keyOf = async (name: string): Promise<string> => {
    const org = await h.accounts.createOrganization({ name })
    return (await h.accounts.createKey(org.id, { role: 'client', plan: 'enterprise' })).key
  }
  const [a, b] = [await keyOf('a'), await keyOf('b')]
  const create = async (key: string, config: Record<string, unknown>) => {
    const res = await app.inject({ method: 'POST', url: '/destinations', headers: { 'x-api-key': key }, payload: { name: 'd', kind: 'http', config: { url: 'http://public.example/x', ...config } } })
    return { status: res.statusCode, body: res.json() }
  }
  const headers = (n: number): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-meta-${i}`, 'v'.repeat(2048)]))
  t.equal((await create(a, { uploadHeaders: headers(MAX_DESTINATION_HEADERS), controlHeaders: headers(MAX_DESTINATION_HEADERS) })).status, 201, 'the largest allowed record is taken')
  t.match(await create(a, { uploadHeaders: headers(MAX_DESTINATION_HEADERS + 1) }), { status: 400, body: { code: 'BWN_ERR_VALIDATION' } }, 'one header more is refused')
  t.match(await create(a, { controlHeaders: headers(MAX_DESTINATION_HEADERS + 1) }), { status: 400, body: { code: 'BWN_ERR_VALIDATION' } })
  const huge = await app.inject({ method: 'POST', url: '/destinations', headers: { 'x-api-key': a, 'content-type': 'application/json' }, payload: JSON.stringify({ name: 'd', kind: 'http', config: { url: 'http://public.example/x' }, pad: 'x'.repeat(300 * 1024) }) })
  t.match({ status: huge.statusCode, code: huge.json().code }, { status: 413, code: 'BWN_ERR_BODY_TOO_LARGE' }, 'a body past the route\'s limit is refused before it is parsed')
  for (let i = 1; i < MAX_DESTINATIONS_PER_ORG; i++) t.equal((await create(a, {})).status, 201)
  const over = await create(a, {})
  t.match(over, { status: 409, body: { code: 'BWN_ERR_DESTINATION_LIMIT', limit: MAX_DESTINATIONS_PER_ORG } }, 'one past the limit is refused')
  t.equal((await create(b, {})).status, 201, 'another organization registers its own')
  const list = await app.inject({ method: 'GET', url: '/destinations', headers: { 'x-api-key': a } })
  const mine = list.json().items.filter((d: { builtin: boolean }) => !d.builtin)
  t.equal(mine.length, MAX_DESTINATIONS_PER_ORG)
  const del = await app.inject({ method: 'DELETE', url: `/destinations/${mine[0].id}`, headers: { 'x-api-key': a } })
  t.equal(del.statusCode, 204)
  t.equal((await create(a, {})).status, 201, 'a place freed is taken again')
})
