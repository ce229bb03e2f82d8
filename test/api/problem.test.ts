import t from 'tap'
import { connect, type AddressInfo } from 'node:net'
import { buildApp } from '../../api/app.ts'
import { INTERNAL_DETAIL, OUT_OF_FILES_DETAIL, problemHeaders, toProblem } from '../../api/problem.ts'
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

t.test('a 5xx keeps only a BWN_ERR_ code; anything else is BWN_ERR_INTERNAL with the fixed detail', async t => {
  const fsErr = Object.assign(new Error("EACCES: permission denied, open '/var/lib/bwnet/blobs/tmp/ab12'"), { code: 'EACCES', errno: -13 })
  const level = Object.assign(new Error('Database is not open'), { code: 'LEVEL_DATABASE_NOT_OPEN' })
  const gone = Object.assign(new Error("ENOENT: no such file or directory, open '/srv/x'"), { code: 'ENOENT', statusCode: 503 })
  const node = Object.assign(new Error('write after end'), { code: 'ERR_STREAM_WRITE_AFTER_END' })
  for (const err of [fsErr, level, gone, node]) {
    const p = toProblem(err as never, 'req-1')
    t.equal(p.code, 'BWN_ERR_INTERNAL', err.code)
    t.equal(p.type, 'urn:bwnet:problem:BWN_ERR_INTERNAL')
    t.equal(p.detail, INTERNAL_DETAIL, `${err.code}: the message stays in the log`)
    t.notMatch(JSON.stringify(p), /var\/lib|srv|LEVEL_|EACCES|ENOENT|errno/)
  }
  t.equal(toProblem(gone as never, 'r').status, 503, 'the status is kept')
  const ours = toProblem(Object.assign(new Error('The coordinator did not answer in time; retry.'), { code: 'BWN_ERR_TIMEOUT', statusCode: 504 }) as never, 'r')
  t.match(ours, { code: 'BWN_ERR_TIMEOUT', status: 504, detail: 'The coordinator did not answer in time; retry.' }, 'a 5xx of our own keeps its code and detail')
  t.match(toProblem(Object.assign(new Error('bad'), { code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 }) as never, 'r'), { code: 'BWN_ERR_BAD_REQUEST', status: 400, detail: 'bad' })
})

t.test('a 5xx with a foreign code is logged with its real error', async t => {
  const env = testDeps()
  const a = await buildApp(env.deps)
  a.get('/eacces', async () => { throw Object.assign(new Error("EACCES: permission denied, open '/var/lib/bwnet/x'"), { code: 'EACCES' }) })
  t.teardown(() => a.close())
  const res = await a.inject('/eacces')
  t.equal(res.statusCode, 500)
  t.match(res.headers['content-type'], /^application\/problem\+json/)
  t.match(res.json(), { code: 'BWN_ERR_INTERNAL', detail: INTERNAL_DETAIL, instance: String })
  const line = env.logLines.map(l => JSON.parse(l)).find(l => l.reqId === res.json().instance && l.msg === 'request failed')
  t.match(line?.err, { code: 'EACCES', message: /var\/lib\/bwnet\/x/ }, 'the log has the cause under the same request id')
})

t.test('out of file descriptors is busy, not broken: 503 with Retry-After, no path in the answer', async t => {
  const env = testDeps()
  const a = await buildApp(env.deps)
  for (const code of ['EMFILE', 'ENFILE']) {
    a.get(`/${code}`, async () => { throw Object.assign(new Error(`${code}: too many open files, open '/var/lib/bwnet/blobs/ab'`), { code, errno: -24 }) })
  }
  t.teardown(() => a.close())
  for (const code of ['EMFILE', 'ENFILE']) {
    const res = await a.inject(`/${code}`)
    t.equal(res.statusCode, 503, code)
    t.equal(res.headers['retry-after'], '1')
    t.match(res.json(), { code: 'BWN_ERR_UNAVAILABLE', detail: OUT_OF_FILES_DETAIL })
    t.notMatch(res.body, /var\/lib|EMFILE|ENFILE/, 'the cause stays in the log')
  }
  t.equal(problemHeaders(Object.assign(new Error('x'), { code: 'EMFILE', statusCode: 500 })), undefined, 'an error that set its own status keeps it')
  t.equal(toProblem(Object.assign(new Error('x'), { code: 'EMFILE', statusCode: 500 }) as never, 'r').status, 500)
})

t.test('errors met before a route runs are problems: a path that does not decode, a parameter too long', async t => {
  const a = await app()
  for (const url of ['/admin/keys/%zz', '/transfers/%E0%A4%A']) {
    const res = await a.inject(url)
    t.equal(res.statusCode, 400, url)
    t.match(res.headers['content-type'], /^application\/problem\+json/)
    t.match(res.json(), { type: 'urn:bwnet:problem:BWN_ERR_BAD_REQUEST', status: 400, code: 'BWN_ERR_BAD_REQUEST', instance: String }, url)
  }
  const long = await a.inject(`/admin/keys/${'a'.repeat(300)}`)
  t.equal(long.statusCode, 414)
  t.match(long.headers['content-type'], /^application\/problem\+json/)
  t.match(long.json(), { status: 414, code: 'BWN_ERR_BAD_REQUEST', title: 'URI Too Long' })
})

t.test("the HTTP parser's refusals are problems: oversized headers 431, garbage 400", async t => {
  const env = testDeps()
  const a = await buildApp(env.deps)
  t.teardown(() => a.close())
  await a.listen({ host: '127.0.0.1', port: 0 })
  const { port } = a.server.address() as AddressInfo
  const raw = async (request: string): Promise<{ status: number, headers: string, body: string }> => {
    const socket = connect(port, '127.0.0.1')
    socket.end(request)
    let text = ''
    for await (const chunk of socket) text += String(chunk)
    const [head, body] = text.split('\r\n\r\n') as [string, string]
    return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body }
  }
  const key = `bwn_${'0'.repeat(16)}_${'k'.repeat(43)}`
  const big = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Pad: ${'a'.repeat(20 * 1024)}\r\n\r\n`)
  t.equal(big.status, 431)
  t.match(big.headers, /content-type: application\/problem\+json/)
  t.match(JSON.parse(big.body), { type: 'urn:bwnet:problem:BWN_ERR_BAD_REQUEST', title: 'Request Header Fields Too Large', status: 431, code: 'BWN_ERR_BAD_REQUEST', instance: String })
  const garbage = await raw('NOT HTTP AT ALL\r\n\r\n')
  t.equal(garbage.status, 400)
  t.match(JSON.parse(garbage.body), { status: 400, code: 'BWN_ERR_BAD_REQUEST' })
  t.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200, 'the server still answers')
  t.ok(env.logLines.some(l => l.includes('HPE_HEADER_OVERFLOW')), 'the refusal is logged')
  t.notOk(env.logLines.some(l => l.includes('k'.repeat(43)) || l.includes('rawPacket')), 'without the request\'s bytes (its key)')
})
