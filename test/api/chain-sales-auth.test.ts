// POST /chain/sales checks the key before it reads or validates the body (401 first), and its OpenAPI
// entry declares the security it needs.
import t from 'tap'
import chainRoutes from '../../api/routes/chain.ts'
import { buildApp } from '../../api/app.ts'
import { testDeps } from '../helpers/api.ts'

const env = testDeps()
const app = await buildApp(env.deps)
const recorded: unknown[] = []
const chain = { recordSale: async (...args: unknown[]) => { recorded.push(args); return { hotkey: 'x', alphaRao: 1n, block: 0, epoch: 0 } } } as never
await app.register(chainRoutes, { chain, dev: true, writeAuth: { roles: ['admin'], operator: true } })
await app.ready()
t.teardown(() => app.close())
const org = await env.accounts.createOrganization({ name: 'o' })
const client = (await env.accounts.createKey(org.id, { role: 'client' })).key

t.test('no key, or a wrong key, is refused before the body is looked at', async t => {
  for (const payload of [{}, { hotkey: 'nonsense', alphaRao: '-1' }, 'not json at all']) {
    const res = await app.inject({ method: 'POST', url: '/chain/sales', headers: { 'content-type': 'application/json' }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) })
    t.equal(res.statusCode, 401, `no key: ${JSON.stringify(payload)}`)
    t.equal(res.json().code, 'BWN_ERR_KEY_MISSING')
  }
  const wrongRole = await app.inject({ method: 'POST', url: '/chain/sales', headers: { authorization: `Bearer ${client}` }, payload: {} })
  t.equal(wrongRole.statusCode, 403)
  t.equal(wrongRole.json().code, 'BWN_ERR_ROLE_FORBIDDEN')
  const orgAdmin = (await env.accounts.createKey(org.id, { role: 'admin' })).key
  const notOperator = await app.inject({ method: 'POST', url: '/chain/sales', headers: { authorization: `Bearer ${orgAdmin}` }, payload: {} })
  t.equal(notOperator.statusCode, 403)
  t.equal(notOperator.json().code, 'BWN_ERR_OPERATOR_ONLY', 'an organization admin does not record sales')
  t.equal(recorded.length, 0)
  const operator = (await env.accounts.createKey(org.id, { role: 'admin', operator: true })).key
  const bad = await app.inject({ method: 'POST', url: '/chain/sales', headers: { authorization: `Bearer ${operator}` }, payload: { hotkey: 'x' } })
  t.equal(bad.statusCode, 400, 'the operator\'s request reaches validation')
})

t.test('OpenAPI declares the route\'s security and its 401/403 answers', async t => {
  const spec = (app as unknown as { swagger (): any }).swagger()
  const op = spec.paths['/chain/sales'].post
  t.same(op.security, [{ bearerAuth: [] }, { apiKey: [] }])
  t.ok(op.responses['401'] && op.responses['403'], 'documents 401 and 403')
})
