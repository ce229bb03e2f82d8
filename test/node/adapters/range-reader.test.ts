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
