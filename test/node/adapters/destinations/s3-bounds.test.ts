// The s3 driver against a tenant's S3 endpoint that misbehaves: a small fake S3 server on loopback
// (node:http, path-style) answering the calls each case needs. Every call ends within the driver's
// deadline, its body included, and ListParts ends within the plan's pages, whatever the endpoint does.
import t from 'tap'
import http from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { S3Driver } from '../../../../node/adapters/destinations/s3.ts'
import type { UploadState } from '../../../../actors/destination.ts'

const DEADLINE_MS = 300
const BUCKET = 'bucket'
const KEY = 'inbox/file.bin'
const UPLOAD = 'upload-1'
const CHUNK = 5 * 1024 * 1024

const state = (totalChunks: number): UploadState => ({ kind: 's3', bucket: BUCKET, key: KEY, uploadId: UPLOAD, totalSize: totalChunks * CHUNK, chunkSize: CHUNK, totalChunks })

const part = (n: number): string => `<Part><PartNumber>${n}</PartNumber><ETag>"${String(n).padStart(32, '0')}"</ETag><Size>${CHUNK}</Size><LastModified>2026-01-01T00:00:00.000Z</LastModified></Part>`

/** A ListParts page: its parts, and the marker of the next page when there is one. */
function listPage (marker: number, parts: number[], next: number | null): string {
  return '<?xml version="1.0" encoding="UTF-8"?><ListPartsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    `<Bucket>${BUCKET}</Bucket><Key>${KEY}</Key><UploadId>${UPLOAD}</UploadId><PartNumberMarker>${marker}</PartNumberMarker>` +
    (next !== null ? `<NextPartNumberMarker>${next}</NextPartNumberMarker>` : '') +
    `<MaxParts>1000</MaxParts><IsTruncated>${next !== null}</IsTruncated>${parts.map(part).join('')}</ListPartsResult>`
}

interface Fake { driver: S3Driver, requests: Array<{ method: string, query: URLSearchParams }>, closed: () => number, /** Resolves once every request so far was cut unanswered. */ allCut: () => Promise<void> }

/** A fake S3 endpoint whose answers `answer` gives (or withholds); a driver pointed at it. */
async function fake (t: { teardown (fn: () => unknown): void }, answer: (req: http.IncomingMessage, res: http.ServerResponse, query: URLSearchParams) => void, options: { completeTimeoutMs?: number } = {}): Promise<Fake> {
  const requests: Fake['requests'] = []
  let closed = 0
  let wake: () => void = () => {}
  const server = http.createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://x').searchParams
    requests.push({ method: req.method ?? '', query })
    res.on('close', () => { if (!res.writableEnded) { closed++; wake() } })
    answer(req, res, query)
  })
  server.listen(0, '127.0.0.1'); await once(server, 'listening')
  const driver = new S3Driver({
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, region: 'us-east-1', bucket: BUCKET, accessKeyId: 'test', secretAccessKey: 'test'
  }, { callTimeoutMs: DEADLINE_MS, ...options })
  t.teardown(() => { driver.destroy(); server.closeAllConnections(); server.close() })
  const allCut = async (): Promise<void> => {
    while (closed < requests.length) await new Promise<void>(resolve => { wake = resolve })
  }
  return { driver, requests, closed: () => closed, allCut }
}

const xml = (res: http.ServerResponse, body: string): void => { res.writeHead(200, { 'content-type': 'application/xml' }).end(body) }

t.test('an endpoint that never answers ListParts: the call fails within its deadline and lets its connection go', { timeout: 20_000 }, async t => {
  const f = await fake(t, () => { /* never answers */ })
  const t0 = performance.now()
  await t.rejects(f.driver.listParts(state(4)), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE', message: /ListParts: no answer within 300 ms/ })
  const took = performance.now() - t0
  t.ok(took < 5_000, `failed in ${Math.round(took)} ms`)
  t.ok(f.requests.length >= 1 && f.requests.every(r => r.query.get('uploadId') === UPLOAD), 'it was asked ListParts')
  await f.allCut() // the test's timeout fails it if one stays open
  t.equal(f.closed(), f.requests.length, 'every request it was sent was cut, not left open')
  // complete() lists first: it fails the same way (its destination lane's slot is free again).
  await t.rejects(f.driver.complete(state(1), [{ index: 0, attemptSlot: 0, etag: '"0"' }] as never), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE', message: /no answer within/ })
})

t.test('an endpoint that answers a read\'s headers and never its body: the read fails within its deadline', { timeout: 20_000 }, async t => {
  const f = await fake(t, (_req, res) => { res.writeHead(206, { 'content-length': '1024', 'content-range': 'bytes 0-1023/1024' }); res.write(Buffer.alloc(10)) })
  await t.rejects(f.driver.readRange(state(1), 0, 1024), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE', message: /GetObject: no answer within 300 ms/ })
})

t.test('an endpoint that pages ListParts for ever: the call fails after the plan\'s pages, holding no more than the plan\'s parts', { timeout: 20_000 }, async t => {
  // Markers that move forward (by one part a page), beyond the plan's part numbers too.
  const forward = await fake(t, (_req, res, q) => {
    const marker = Number(q.get('part-number-marker') ?? 0)
    xml(res, listPage(marker, [marker + 1], marker + 1))
  })
  // 4 chunks: part numbers 1..12, at most ceil(12 / 1000) + 1 = 2 pages.
  await t.rejects(forward.driver.listParts(state(4)), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE', message: /ListParts: more than 2 pages/ })
  t.equal(forward.requests.length, 2, 'two pages asked, no more')
  // 3,000 chunks (9,000 part numbers): 10 pages at most.
  await t.rejects(forward.driver.listParts(state(3000)), { message: /more than 10 pages/ })
  t.equal(forward.requests.length, 12)

  // A marker that does not move: refused at once.
  const stuck = await fake(t, (_req, res) => { xml(res, listPage(0, [1, 2], 2)) })
  await t.rejects(stuck.driver.listParts(state(3000)), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE', message: /marker "2" does not follow 2/ })
  t.equal(stuck.requests.length, 2)
  const garbage = await fake(t, (_req, res) => { xml(res, listPage(0, [1], Number.NaN)) })
  await t.rejects(garbage.driver.listParts(state(3000)), { message: /does not follow 0/ })
})

t.test('ListParts keeps only the plan\'s part numbers, once each, and pages an honest endpoint to its end', { timeout: 20_000 }, async t => {
  // Two pages: the first with parts of the plan, one beyond it and a repeat; the second ends the list.
  const f = await fake(t, (_req, res, q) => {
    const marker = Number(q.get('part-number-marker') ?? 0)
    if (marker === 0) xml(res, listPage(0, [1, 4, 4, 13, 99_999], 4))
    else xml(res, listPage(marker, [7], null))
  })
  const parts = await f.driver.listParts(state(4)) // part numbers 1..12
  t.same(parts.map(p => [p.index, p.attemptSlot]), [[0, 0], [1, 0], [2, 0]], 'parts 1, 4 and 7: 13 and 99,999 lie outside the plan, the repeat is one')
  t.equal(f.requests.length, 2)
  // A marker past the plan's last part number: nothing of the plan lies beyond, the list ends there.
  const past = await fake(t, (_req, res) => { xml(res, listPage(0, [12], 50)) })
  t.same((await past.driver.listParts(state(4))).map(p => p.index), [3])
  t.equal(past.requests.length, 1)
})

t.test('CompleteMultipartUpload has its own, longer deadline: S3 may take a while to assemble a large upload', { timeout: 20_000 }, async t => {
  const etag = `"${'1'.padStart(32, '0')}"`
  const done = '<?xml version="1.0" encoding="UTF-8"?><CompleteMultipartUploadResult><Bucket>bucket</Bucket><Key>inbox/file.bin</Key><ETag>"x-1"</ETag></CompleteMultipartUploadResult>'
  const slow = (completeAfterMs: number | null) => (req: http.IncomingMessage, res: http.ServerResponse, q: URLSearchParams): void => {
    if (req.method === 'GET') { xml(res, listPage(Number(q.get('part-number-marker') ?? 0), [1], null)); return }
    req.resume()
    if (completeAfterMs !== null) setTimeout(() => xml(res, done), completeAfterMs)
  }
  // Answered after twice the call deadline, within Complete's own.
  const f = await fake(t, slow(2 * DEADLINE_MS), { completeTimeoutMs: 5 * DEADLINE_MS })
  await f.driver.complete(state(1), [{ index: 0, attemptSlot: 0, etag }] as never)
  t.ok(f.requests.some(r => r.method === 'POST' && r.query.get('uploadId') === UPLOAD), 'completed after 600 ms, past the 300 ms call deadline')
  // Never answered: it still ends, within Complete's deadline.
  const never = await fake(t, slow(null), { completeTimeoutMs: 5 * DEADLINE_MS })
  const t0 = performance.now()
  await t.rejects(never.driver.complete(state(1), [{ index: 0, attemptSlot: 0, etag }] as never), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE', message: /CompleteMultipartUpload: no answer within 1500 ms/ })
  t.ok(performance.now() - t0 < 5_000)
})
