// One access line per request, written when it is answered, with the request and the answer together.
import t from 'tap'
import { request } from 'node:http'
import { buildApp } from '../../api/app.ts'
import { testDeps } from '../helpers/api.ts'
import { eventually } from '../helpers/proc.ts'

const env = testDeps()
const app = await buildApp(env.deps)
app.get('/probe/internal', { config: { internal: true }, schema: { querystring: { type: 'object', properties: { ok: { type: 'string' } } } } }, async (req, reply) => {
  if ((req.query as { ok?: string }).ok !== 'yes') return await reply.code(403).send({ refused: true })
  return { fine: true }
})
let releaseSlow: () => void = () => {}
const slowSeen = new Promise<void>(resolve => {
  app.get('/probe/slow', async () => { resolve(); await new Promise<void>(r => { releaseSlow = r }); return {} })
})
app.get('/probe/fails', { schema: { response: { 200: { type: 'object', properties: {} } } } }, async () => { throw new Error('the handler broke') })
await app.ready()
t.teardown(() => app.close())

const linesFor = (path: string) => env.logLines.map(l => JSON.parse(l)).filter(l => typeof l.req?.url === 'string' && l.req.url.startsWith(path))

t.test('an answered request leaves one line: method, redacted URL, status, response time', async t => {
  const res = await app.inject({ method: 'GET', url: '/healthz?token=hunter2' })
  t.equal(res.statusCode, 200)
  const lines = linesFor('/healthz')
  t.equal(lines.length, 1, 'one line, not one on arrival and one on answer')
  const [line] = lines
  t.equal(line.msg, 'request completed')
  t.equal(line.level, 30)
  t.equal(line.req.method, 'GET')
  t.equal(line.req.url, '/healthz?token=[redacted]')
  t.equal(line.res.statusCode, 200)
  t.type(line.responseTime, 'number')
  t.type(line.reqId, 'string', 'the request id ties it to what the handler logged')
  t.notOk(env.logLines.some(l => l.includes('"incoming request"')))
})

t.test('a refused request is logged with its status', async t => {
  const res = await app.inject({ method: 'GET', url: '/admin/organizations' })
  t.equal(res.statusCode, 401)
  const lines = linesFor('/admin/organizations')
  t.equal(lines.length, 1)
  t.equal(lines[0].res.statusCode, 401)
})

t.test('a failing handler still leaves its access line, with the status sent', async t => {
  const res = await app.inject({ method: 'GET', url: '/probe/fails' })
  t.equal(res.statusCode, 500)
  const lines = linesFor('/probe/fails').filter(l => l.msg === 'request completed')
  t.equal(lines.length, 1)
  t.equal(lines[0].res.statusCode, 500)
})

t.test('node-to-node routes: a success is logged at debug, a refusal at info', async t => {
  t.equal((await app.inject({ method: 'GET', url: '/probe/internal?ok=yes' })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/probe/internal?ok=no' })).statusCode, 403)
  const lines = linesFor('/probe/internal')
  t.same(lines.map(l => [l.res.statusCode, l.level]), [[200, 20], [403, 30]])
})

t.test('a request the client gave up on leaves a `request aborted` line', async t => {
  const base = await app.listen({ host: '127.0.0.1', port: 0 })
  const req = request(`${base}/probe/slow?x=1`)
  req.on('error', () => {})
  req.end()
  await slowSeen
  req.destroy()
  const [line] = await eventually(async () => { const l = linesFor('/probe/slow'); return l.length > 0 && l }, 10_000, 'the aborted request\'s line', 10)
  t.equal(line?.msg, 'request aborted')
  t.equal(line?.req.method, 'GET')
  t.equal(line?.res.statusCode, null, 'nothing was sent')
  releaseSlow()
})

t.test('at a level above info nothing is written, and nothing is watched, for a request', async t => {
  const closeListeners = async (level: string): Promise<number> => {
    const env2 = testDeps()
    env2.deps.logger.level = level
    const app2 = await buildApp(env2.deps)
    app2.get('/probe/listeners', async (_req, reply) => ({ n: reply.raw.listenerCount('close') }))
    await app2.ready()
    t.teardown(() => app2.close())
    t.equal((await app2.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
    if (level === 'warn') t.same(env2.logLines.filter(l => l.includes('/healthz')), [], 'no line at warn')
    return (await app2.inject({ method: 'GET', url: '/probe/listeners' })).json().n
  }
  const atInfo = await closeListeners('info')
  const atWarn = await closeListeners('warn')
  t.equal(atInfo - atWarn, 1, 'the close listener for an unanswered request exists only where its line could be written')
})
