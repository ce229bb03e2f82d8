// JSON bodies are not coerced ("10", true are not integers); querystrings and params still are.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { buildApp } from '../../api/app.ts'
import { testDeps } from '../helpers/api.ts'
import { lazySerializers, lazyValidator } from '../../api/validation.ts'

const env = testDeps()
const app = await buildApp(env.deps)
app.post('/probe/:n', {
  schema: {
    params: Type.Object({ n: Type.Integer() }),
    querystring: Type.Object({ limit: Type.Integer({ default: 3 }), flag: Type.Optional(Type.Boolean()) }),
    body: Type.Object({ total_size: Type.Integer({ minimum: 1 }), name: Type.Optional(Type.String()), when: Type.Optional(Type.String({ format: 'date-time' })) }, { additionalProperties: false })
  }
}, async (req) => ({ params: req.params, query: req.query, body: req.body }))
await app.ready()
t.teardown(() => app.close())
const post = (url: string, payload: unknown) => app.inject({ method: 'POST', url, payload: payload as object })

t.test('body values of the wrong JSON type are refused', async t => {
  for (const bad of [{ total_size: true }, { total_size: '10' }, { total_size: 10.5 }, { total_size: [10] }, { total_size: 10, name: 5 }, { total_size: 10, when: 'tomorrow' }]) {
    const res = await post('/probe/1', bad)
    t.equal(res.statusCode, 400, JSON.stringify(bad))
    t.equal(res.json().code, 'BWN_ERR_VALIDATION', JSON.stringify(bad))
  }
  const ok = await post('/probe/1', { total_size: 10 })
  t.equal(ok.statusCode, 200)
  t.same(ok.json().body, { total_size: 10 })
})

t.test('querystrings and params are still coerced', async t => {
  const res = await post('/probe/7?limit=5&flag=true', { total_size: 1 })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { params: { n: 7 }, query: { limit: 5, flag: true }, body: { total_size: 1 } })
  t.same((await post('/probe/7', { total_size: 1 })).json().query, { limit: 3 }, 'defaults still apply')
  t.equal((await post('/probe/x', { total_size: 1 })).statusCode, 400)
})

t.test('POST /transfers/create refuses total_size true and "10" before the service sees them', async t => {
  const h = testDeps()
  const seen: unknown[] = []
  const transfers = { maxChunkBytes: 1024, create: async (body: unknown) => { seen.push(body); throw new Error('not reached') } } as never
  const api = await buildApp({ ...h.deps, transfers })
  t.teardown(() => api.close())
  const org = await h.accounts.createOrganization({ name: 'o' })
  const key = (await h.accounts.createKey(org.id, { role: 'client', plan: 'enterprise' })).key
  const good = { sender_hotkey: '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY', filename: 'a.bin', tier: 'STANDARD' }
  for (const size of [true, '10', 1.5, null]) {
    const res = await api.inject({ method: 'POST', url: '/transfers/create', headers: { authorization: `Bearer ${key}` }, payload: { ...good, total_size: size } })
    t.equal(res.statusCode, 400, `total_size ${JSON.stringify(size)}`)
    t.equal(res.json().code, 'BWN_ERR_VALIDATION')
  }
  t.equal(seen.length, 0)
})

t.test('schemas are compiled on a route\'s first use, once, with Ajv\'s errors and root coercion passed through', async t => {
  const { Ajv } = await import('ajv')
  const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true })
  let compiles = 0
  const validate = lazyValidator(() => { compiles++; return ajv.compile(Type.Object({ limit: Type.Integer({ default: 3 }) })) })
  t.equal(compiles, 0, 'nothing compiled when the route is set up')
  t.equal(validate.errors, null, 'no errors before any call')
  t.ok(validate.schemaEnv, 'Fastify sees an Ajv function (so it passes the request as the parent)')
  t.equal(compiles, 1)
  t.equal(validate('x'), false)
  t.match(validate.errors, [{ instancePath: '', keyword: 'type' }], 'the failure\'s errors are Ajv\'s')
  // Called as Fastify calls an Ajv function: the request as the parent, so Ajv may coerce the part as a whole.
  const request: Record<string, unknown> = { query: { limit: '5' } }
  t.equal(validate(request.query, { parentData: request, parentDataProperty: 'query' } as never), true)
  t.same(request.query, { limit: 5 }, 'coerced in place')
  t.equal(compiles, 1, 'compiled once')

  let builds = 0
  const factory = lazySerializers(() => () => { builds++; return (data: unknown) => `<${JSON.stringify(data)}>` })
  const serialize = factory({}, {})({ schema: {}, url: '/x', method: 'GET', httpStatus: '200' })
  t.equal(builds, 0, 'no serializer built when the route is set up')
  t.equal(serialize({ a: 1 }), '<{"a":1}>')
  t.equal(serialize({ a: 2 }), '<{"a":2}>')
  t.equal(builds, 1, 'built once, on the first response')

  // Through a real app: the probe route above answered with its validator built on first use.
  const res = await post('/probe/3?limit=2', { total_size: 1 })
  t.same(res.json().query, { limit: 2 })
})

t.test('a schema that does not compile fails its route with an internal error, compiled once, and the others still answer', async t => {
  let compiles = 0
  const validate = lazyValidator(() => { compiles++; throw new Error('schema is invalid: data/type must be equal to one of the allowed values') })
  for (let i = 0; i < 2; i++) t.throws(() => validate({}), { code: 'BWN_ERR_INTERNAL', statusCode: 500 })
  t.equal(compiles, 1, 'the failure is kept, not compiled again per request')

  const h = testDeps()
  const api = await buildApp(h.deps)
  t.teardown(() => api.close())
  api.post('/broken-body', { schema: { body: { type: 'object', properties: { a: { type: 'nonsense' } } } } }, async () => ({ ok: true }))
  api.get('/broken-response', { schema: { response: { 200: { type: 'nonsense' } } } }, async () => ({ ok: true }))
  await api.ready()
  for (const req of [{ method: 'POST' as const, url: '/broken-body', payload: { a: 1 } }, { method: 'GET' as const, url: '/broken-response' }]) {
    for (let i = 0; i < 2; i++) {
      const res = await api.inject(req)
      t.equal(res.statusCode, 500, `${req.url}: 500`)
      t.match(res.headers['content-type'], /application\/problem\+json/)
      t.match(res.json(), { code: 'BWN_ERR_INTERNAL', detail: 'The server could not complete the request.' }, `${req.url}: an internal error that shows nothing of the schema`)
    }
  }
  t.equal((await api.inject({ method: 'GET', url: '/health' })).statusCode, 200, 'the other routes answer')
})
