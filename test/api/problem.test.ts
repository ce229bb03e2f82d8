import t from 'tap'
import { buildApp } from '../../api/app.ts'
import { testDeps } from '../helpers/api.ts'

async function app (ready = true) {
  const { deps } = testDeps()
  const a = await buildApp({
    ...deps,
    membership: { counts: async () => ({ orchestrator: 1, worker: 2, validator: 0 }), peers: async () => [] },
    ready: () => ready
  })
  a.post('/echo', { schema: { body: { type: 'object', required: ['n'], properties: { n: { type: 'integer', maximum: 5 } }, additionalProperties: false } } }, async (req) => req.body)
  a.get('/boom', async () => { throw new Error('secret internal path /var/lib/x') })
  return a
}

t.test('health reports counts by role', async t => {
  const a = await app()
  const res = await a.inject('/health')
  t.equal(res.statusCode, 200)
  t.same(res.json().nodes, { orchestrator: 1, worker: 2, validator: 0 })
  t.equal(res.json().total, 3)
  t.equal((await a.inject('/readyz')).statusCode, 200)
  const notReady = await (await app(false)).inject('/readyz')
  t.equal(notReady.statusCode, 503)
  t.equal(notReady.json().code, 'BWN_ERR_UNAVAILABLE')
})

t.test('errors are problem+json with a stable code', async t => {
  const a = await app()
  const nf = await a.inject('/nope')
  t.equal(nf.statusCode, 404)
  t.match(nf.headers['content-type'], /^application\/problem\+json/)
  t.match(nf.json(), { type: 'urn:bwnet:problem:BWN_ERR_NOT_FOUND', title: 'Not Found', status: 404, code: 'BWN_ERR_NOT_FOUND', instance: String })

  const bad = await a.inject({ method: 'POST', url: '/echo', payload: { n: 9 } })
  t.equal(bad.statusCode, 400)
  t.match(bad.json(), { code: 'BWN_ERR_VALIDATION', errors: [{ field: 'body/n' }] })
  const missing = await a.inject({ method: 'POST', url: '/echo', payload: {} })
  t.match(missing.json(), { code: 'BWN_ERR_VALIDATION', errors: [{ field: 'body/n' }] })
  const notJson = await a.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{oops' })
  t.equal(notJson.statusCode, 400)
  t.equal(notJson.json().code, 'BWN_ERR_BAD_REQUEST')
  const wrongType = await a.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'text/weird' }, payload: 'x' })
  t.equal(wrongType.statusCode, 415)
  t.equal(wrongType.json().code, 'BWN_ERR_UNSUPPORTED_MEDIA_TYPE')
  const tooBig = await a.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ n: 1, pad: 'x'.repeat(2 * 1024 * 1024) }) })
  t.equal(tooBig.statusCode, 413)
  t.equal(tooBig.json().code, 'BWN_ERR_BODY_TOO_LARGE')

  const boom = await a.inject('/boom')
  t.equal(boom.statusCode, 500)
  t.equal(boom.json().code, 'BWN_ERR_INTERNAL')
  t.notMatch(boom.body, /var\/lib/, 'internal details never leave the server')
})
