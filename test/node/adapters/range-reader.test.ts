// The validator's streamed read-back against a loopback server: hash and count of the range, a refusal
// as read_refused, a server sending more than asked shows up in the count.
import t from 'tap'
import http from 'node:http'
import { once } from 'node:events'
import { createHash, randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { httpRangeReader } from '../../../node/adapters/range-reader.ts'

const data = randomBytes(5 * 1024 * 1024 + 3)
const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')

t.test('hashes the range as it streams; refusals and overlong answers are visible', async t => {
  const server = http.createServer((req, res) => {
    if (req.url === '/refuse') { res.writeHead(403).end(); return }
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')
    if (m === null) { res.writeHead(200).end(data); return }
    res.writeHead(206).end(data.subarray(Number(m[1]), Number(m[2]) + 1))
  })
  server.listen(0, '127.0.0.1'); await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const expiresAt = Date.now() + 60_000
  const range = { method: 'GET' as const, url: `${base}/obj`, headers: { range: 'bytes=1000-4194303' }, expiresAt }
  t.same(await httpRangeReader({ allowPrivate: true }).sha256Of(range as never, 4194303 - 1000 + 1), { sha256: sha256(data.subarray(1000, 4194304)), bytes: 4194303 - 1000 + 1 })
  await t.rejects(httpRangeReader({ allowPrivate: true }).sha256Of({ ...range, url: `${base}/refuse` } as never, 10), { code: 'read_refused' })
  const whole = await httpRangeReader({ allowPrivate: true }).sha256Of({ ...range, headers: {} } as never, 1000)
  t.ok(whole.bytes > 1000, 'a server that sends the whole object instead of the range is caught by the count')
})

t.test('a stalled answer times out as read_timeout; a declared overlong body is counted unread; the address policy and no redirects', async t => {
  const held: http.ServerResponse[] = []
  const server = http.createServer((req, res) => {
    if (req.url === '/silent') { held.push(res); return } // never answers
    if (req.url === '/stall') { res.writeHead(206, { 'content-length': '1000' }); res.write(Buffer.alloc(10)); held.push(res); return }
    if (req.url === '/declared') { res.writeHead(206, { 'content-length': String(1 << 30) }); res.write(Buffer.alloc(10)); held.push(res); return }
    if (req.url === '/moved') { res.writeHead(302, { location: '/obj' }).end(); return }
    res.writeHead(206).end(data.subarray(0, 10))
  })
  server.listen(0, '127.0.0.1'); await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const port = (server.address() as AddressInfo).port
  const target = (url: string): never => ({ method: 'GET', url, headers: {}, expiresAt: Date.now() + 60_000 }) as never
  const reader = httpRangeReader({ allowPrivate: true }, { timeoutMs: 300 })
  await t.rejects(reader.sha256Of(target(`http://127.0.0.1:${port}/silent`), 1000), { code: 'read_timeout' }, 'no answer at all')
  await t.rejects(reader.sha256Of(target(`http://127.0.0.1:${port}/stall`), 1000), { code: 'read_timeout' }, 'an answer that stops halfway')
  t.same(await reader.sha256Of(target(`http://127.0.0.1:${port}/declared`), 1000), { sha256: '', bytes: 1 << 30 }, 'a declared length over the range, counted without reading it')
  await t.rejects(reader.sha256Of(target(`http://127.0.0.1:${port}/moved`), 10), { code: 'read_refused', message: /302/ }, 'a redirect is not followed')
  const strict = httpRangeReader({ allowPrivate: false })
  for (const host of ['localhost', '127.0.0.1', '[::ffff:127.0.0.1]']) {
    await t.rejects(strict.sha256Of(target(`http://${host}:${port}/obj`), 10), { code: 'BWN_ERR_ADDRESS_REFUSED' }, `${host} refused by the policy`)
  }
  // A validator's own host (its public addresses, node/roles tenantPolicy): a coordinator of another
  // operator must not point its read-backs at services on the validator's machine. Loopback stands in
  // for the public address, with the ranges off so only the own-host rule can refuse it.
  const ownHost = httpRangeReader({ allowPrivate: false, ranges: false, own: ['127.0.0.1'] })
  await t.rejects(ownHost.sha256Of(target(`http://127.0.0.1:${port}/obj`), 10), { code: 'BWN_ERR_ADDRESS_REFUSED', message: /own host/ }, 'the own host refused')
  t.same(await httpRangeReader({ allowPrivate: false, ranges: false }).sha256Of(target(`http://127.0.0.1:${port}/declared`), 1000), { sha256: '', bytes: 1 << 30 }, 'the same address read when it is not the own host')
  for (const res of held) res.destroy()
})
