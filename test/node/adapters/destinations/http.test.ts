// The http driver against a small node:http server that writes Content-Range PUTs into memory.
import t from 'tap'
import { createServer, type IncomingMessage } from 'node:http'
import { createHash, randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { cryptoReady, newHotkey, verifySignedUrl } from '../../../../protocol/index.ts'
import { HttpDriver } from '../../../../node/adapters/destinations/http.ts'
import { eventually } from '../../../helpers/proc.ts'

await cryptoReady()
const coordinator = newHotkey()
const UPLOAD_TOKEN = 'upload-token-for-this-destination'
const CONTROL_TOKEN = 'control-token-never-given-to-workers'
const objects = new Map<string, Buffer>()
const completions: unknown[] = []
const seen: Array<{ method: string, auth: string | undefined, signed: boolean }> = []

const body = async (req: IncomingMessage): Promise<Buffer> => { const parts: Buffer[] = []; for await (const c of req) parts.push(c as Buffer); return Buffer.concat(parts) }
const server = createServer((req, res) => {
  void (async () => {
    const url = new URL(req.url!, 'http://h')
    const authority = `127.0.0.1:${(server.address() as AddressInfo).port}`
    const signed = verifySignedUrl({ method: req.method!, url: req.url!, authority, audience: 'http-destination', now: Date.now(), trustedSigners: new Set([coordinator.address]) }).ok
    seen.push({ method: req.method!, auth: req.headers.authorization, signed })
    const bytes = await body(req)
    if (req.method === 'PUT') {
      if (req.headers.authorization !== `Bearer ${UPLOAD_TOKEN}` || !signed) { res.writeHead(403).end(); return }
      const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(req.headers['content-range'] ?? '')
      if (!m || Number(m[2]) - Number(m[1]) + 1 !== bytes.length) { res.writeHead(400).end(); return }
      const object = objects.get(url.pathname) ?? Buffer.alloc(Number(m[3]))
      bytes.copy(object, Number(m[1]))
      objects.set(url.pathname, object)
      res.writeHead(200, { etag: `"${createHash('sha256').update(bytes).digest('hex')}"` }).end()
      return
    }
    if (req.headers.authorization !== `Bearer ${CONTROL_TOKEN}`) { res.writeHead(401).end(); return }
    if (req.method === 'POST' && url.pathname === '/complete') { completions.push(JSON.parse(bytes.toString())); res.writeHead(204).end(); return }
    const object = objects.get(url.pathname)
    if (!object) { res.writeHead(404).end(); return }
    if (req.method === 'DELETE') { objects.delete(url.pathname); res.writeHead(204).end(); return }
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')
    if (!m) { res.writeHead(200).end(object); return }
    res.writeHead(206, { 'content-range': `bytes ${m[1]}-${m[2]}/${object.length}` }).end(object.subarray(Number(m[1]), Number(m[2]) + 1))
  })()
})
await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
t.teardown(() => new Promise<void>(resolve => { server.closeAllConnections(); server.close(() => resolve()) }))
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

const driver = new HttpDriver({
  url: `${base}/files/{transferId}/{filename}`,
  uploadHeaders: { authorization: `Bearer ${UPLOAD_TOKEN}` },
  controlHeaders: { authorization: `Bearer ${CONTROL_TOKEN}` },
  completeUrl: `${base}/complete`
}, { signer: coordinator })

const CHUNK = 1000
const TOTAL = 2 * CHUNK + 10
const source = randomBytes(TOTAL)
const chunkOf = (i: number): Buffer => source.subarray(i * CHUNK, Math.min(TOTAL, (i + 1) * CHUNK))

t.test('ranged PUTs by workers, complete, read back, abort', async t => {
  const state = await driver.begin({ transferId: 't 1', filename: 'a/b.bin', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: 3 })
  t.equal(state.url, `${base}/files/t%201/a/b.bin`, '{transferId} and {filename} are percent-encoded; a relative path keeps its \'/\' between segments')
  const parts = []
  for (const i of [2, 0, 1]) {
    const target = await driver.target(state, { index: i, offset: i * CHUNK, length: chunkOf(i).length, attemptSlot: 0 }, Date.now() + 60_000)
    t.notOk(JSON.stringify(target).includes(CONTROL_TOKEN), 'control headers never reach a worker')
    t.equal(target.headers['content-range'], `bytes ${i * CHUNK}-${i * CHUNK + chunkOf(i).length - 1}/${TOTAL}`)
    const res = await fetch(target.url, { method: 'PUT', headers: target.headers, body: new Uint8Array(chunkOf(i)) })
    t.equal(res.status, 200)
    parts.push({ index: i, attemptSlot: 0, etag: res.headers.get('etag') })
  }
  t.same(Buffer.from(await driver.readRange(state, 995, 10)), source.subarray(995, 1005), 'reads back before complete')
  await driver.complete(state, parts)
  t.match(completions.at(-1), { transferId: 't 1', totalSize: TOTAL, chunkSize: CHUNK, parts: [{ index: 0 }, { index: 1 }, { index: 2 }] })
  t.same(Buffer.from(await driver.readRange(state, 0, TOTAL)), source, 'a 200 for the whole object is accepted')
  await t.rejects(driver.readRange(state, 0, TOTAL + 1), RangeError)
  await driver.abort(state)
  await driver.abort(state) // 404 counts as done
  await t.rejects(driver.readRange(state, 0, 1), { code: 'BWN_ERR_DESTINATION_REFUSED', status: 404 })
  t.ok(seen.filter(s => s.method === 'PUT').every(s => s.signed), 'every worker PUT carried a valid signature')
})

t.test('a mismatched chunk length, a bad server answer, an unreachable server', async t => {
  const state = await driver.begin({ transferId: 't2', filename: 'x', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: 3 })
  await t.rejects(driver.target(state, { index: 2, offset: 2000, length: 1000, attemptSlot: 0 }, Date.now() + 1000), RangeError)
  const noControl = new HttpDriver({ url: `${base}/files/x`, completeUrl: `${base}/complete` })
  const s2 = await noControl.begin({ transferId: 't3', filename: 'x', totalSize: 1, chunkSize: 1, totalChunks: 1 })
  await t.rejects(noControl.complete(s2, [{ index: 0, attemptSlot: 0, etag: null }]), { code: 'BWN_ERR_DESTINATION_REFUSED', status: 401 })
  const closed = new HttpDriver({ url: 'http://127.0.0.1:1/x' })
  const s3 = await closed.begin({ transferId: 't4', filename: 'x', totalSize: 1, chunkSize: 1, totalChunks: 1 })
  await t.rejects(closed.readRange(s3, 0, 1), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE' })
  t.throws(() => new HttpDriver({ url: 'ftp://h/x' }), TypeError)
})

t.test('the check hashes a chunk as it streams back; a server answering more than asked is cut off, not buffered', async t => {
  const state = await driver.begin({ transferId: 't5', filename: 'c.bin', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: 3 })
  t.teardown(() => driver.abort(state))
  for (const i of [0, 1, 2]) {
    const target = await driver.target(state, { index: i, offset: i * CHUNK, length: chunkOf(i).length, attemptSlot: 0 }, Date.now() + 60_000)
    t.equal((await fetch(target.url, { method: 'PUT', headers: target.headers, body: new Uint8Array(chunkOf(i)) })).status, 200)
  }
  for (const i of [0, 1, 2]) {
    t.equal(await driver.chunkSha256(state, { index: i, length: chunkOf(i).length }), createHash('sha256').update(chunkOf(i)).digest('hex'), `chunk ${i}`)
  }

  // A client's destination that answers every read with a body far longer than the range.
  const ENDLESS = 256 * 1024 * 1024
  const written: number[] = []
  const hostile = createServer((req, res) => {
    req.resume()
    if (req.url === '/declared') { res.writeHead(206, { 'content-length': String(ENDLESS) }); res.write(Buffer.alloc(16)); return } // and never more
    if (req.url === '/error') res.writeHead(500) // and a body as long as the endless one
    else res.writeHead(206) // no length: chunked, ends when the server likes
    const piece = Buffer.alloc(64 * 1024, 1)
    let sent = 0
    const pump = (): void => {
      while (sent < ENDLESS && !res.destroyed) {
        sent += piece.length
        if (!res.write(piece)) { res.once('drain', pump); return }
      }
      if (!res.destroyed) res.end()
    }
    res.once('close', () => written.push(sent))
    pump()
  })
  await new Promise<void>(resolve => hostile.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>(resolve => { hostile.closeAllConnections(); hostile.close(() => resolve()) }))
  const at = (path: string): HttpDriver => new HttpDriver({ url: `http://127.0.0.1:${(hostile.address() as AddressInfo).port}${path}`, deleteOnAbort: false })
  const endless = at('/endless')
  const hs = await endless.begin({ transferId: 't6', filename: 'x', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: 3 })
  await t.rejects(endless.chunkSha256(hs, { index: 1, length: CHUNK }), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE', message: /more than the 1000 bytes/ })
  await t.rejects(endless.readRange(hs, 0, CHUNK), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE', message: /more than the 1000 bytes/ })
  await eventually(async () => written.length === 2, 10_000, 'both reads to be cut off')
  for (const n of written) t.ok(n < 32 * 1024 * 1024, `the server got ${n} bytes out of ${ENDLESS} before the connection closed`)
  const declared = at('/declared')
  await t.rejects(declared.readRange(await declared.begin({ transferId: 't7', filename: 'x', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: 3 }), 0, CHUNK), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE', message: /268435456 bytes, at most 1000/ }, 'a declared length over the range is refused before any byte')
  const error = at('/error')
  const es = await error.begin({ transferId: 't8', filename: 'x', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: 3 })
  await t.rejects(error.chunkSha256(es, { index: 0, length: CHUNK }), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE', status: 500, message: /HTTP 500 \x01/ })
  await t.rejects(error.readRange(es, 0, CHUNK), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE', status: 500 })
  await eventually(async () => written.length === 4, 10_000, 'both error answers to be cut off')
  for (const n of written.slice(2)) t.ok(n < 32 * 1024 * 1024, `an error answer: the server got ${n} bytes out of ${ENDLESS} out before the connection closed`)
})
