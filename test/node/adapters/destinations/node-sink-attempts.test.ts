// The node sink's hold on what was delivered and checked: a chunk URL names one attempt; an earlier
// attempt writes nothing once a later one has, a checked attempt writes nothing more, nothing lands
// once complete() has begun (also a write that was waiting for the in-flight budget), a body that stops
// sending gives its budget back, and complete() names the chunks to deliver again.
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import http from 'node:http'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cryptoReady, newHotkey, authorityOf } from '../../../../protocol/index.ts'
import { sinkRoutes, NodeSinkDriver, STREAM_WINDOW_BYTES, type SinkRoutesOptions } from '../../../../node/adapters/destinations/node-sink.ts'
import { InflightBudget } from '../../../../node/adapters/inflight-budget.ts'
import type { UploadState } from '../../../../actors/destination.ts'
import { eventually } from '../../../helpers/proc.ts'

await cryptoReady()
const coordinator = newHotkey()
const CHUNK = 64 * 1024
const CHUNKS = 3
const TOTAL = CHUNK * CHUNKS
const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')
const soon = (): number => Date.now() + 60_000
let uploads = 0

async function sink (t: Test, opts: Partial<SinkRoutesOptions> = {}): Promise<{ dir: string, driver: NodeSinkDriver, app: ReturnType<typeof Fastify> }> {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-sink-attempts-'))
  const app = Fastify({ logger: false })
  let baseUrl = ''
  await app.register(sinkRoutes, { dir, trustedSigners: new Set([coordinator.address]), authority: () => authorityOf(baseUrl), maxChunkBytes: 1024 * 1024, ...opts })
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(async () => { await app.close(); await rm(dir, { recursive: true, force: true }) })
  return { dir, driver: new NodeSinkDriver({ baseUrl, key: coordinator }), app }
}

/** A fresh upload of a random file: its bytes, state, and a URL per chunk attempt. */
async function upload (driver: NodeSinkDriver): Promise<{ source: Buffer, state: UploadState, chunkOf: (i: number) => Buffer, url: (index: number, attemptNo: number) => Promise<string>, name: string }> {
  const name = `f-${++uploads}.bin`
  const source = randomBytes(TOTAL)
  const state = await driver.begin({ transferId: `tr-${uploads}`, filename: name, totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  const chunkOf = (i: number): Buffer => source.subarray(i * CHUNK, (i + 1) * CHUNK)
  const url = async (index: number, attemptNo: number): Promise<string> => (await driver.target(state, { index, offset: index * CHUNK, length: CHUNK, attemptSlot: attemptNo % 3, attemptNo }, soon())).url
  return { source, state, chunkOf, url, name }
}

const put = async (url: string, body: Buffer): Promise<Response> => await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(body) })
/** What the coordinator completes with: the sha256 of every chunk as it staged it. */
const staged = (chunkOf: (i: number) => Buffer): Array<{ index: number, attemptSlot: number, etag: string }> =>
  Array.from({ length: CHUNKS }, (_v, i) => ({ index: i, attemptSlot: 0, etag: sha256(chunkOf(i)) }))

/** A PUT whose headers go out now and whose body waits for `send` (or never comes). */
function heldPut (url: string): { req: http.ClientRequest, answer: Promise<string>, send: (body: Buffer) => void } {
  const req = http.request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(CHUNK) } })
  const answer = new Promise<string>(resolve => {
    req.once('response', res => { res.resume(); resolve(`answered ${res.statusCode}`) })
    req.once('error', () => resolve('cut off'))
  })
  req.flushHeaders()
  return { req, answer, send: (body) => { req.end(body) } }
}

t.test('a checked attempt writes nothing more: the bytes checked are the bytes completed', async t => {
  const { dir, driver } = await sink(t)
  const { state, chunkOf, url, name, source } = await upload(driver)
  const urls = await Promise.all([0, 1, 2].map(async i => await url(i, 0)))
  for (let i = 0; i < CHUNKS; i++) t.equal((await put(urls[i]!, chunkOf(i))).status, 200, `chunk ${i} delivered`)
  t.equal((await put(urls[1]!, chunkOf(1))).status, 200, 'an attempt may write its chunk again until it is checked')
  t.equal(await driver.chunkSha256(state, { index: 1, length: CHUNK, attemptNo: 0 }), sha256(chunkOf(1)), 'the coordinator\'s check passes')
  const garbage = Buffer.alloc(CHUNK, 0x41)
  const again = await put(urls[1]!, garbage)
  t.equal(again.status, 409, 'the same URL after the check is refused')
  t.match(await again.json(), { code: 'BWN_ERR_SINK_CONFLICT', detail: /checked/ })
  t.equal(await driver.chunkSha256(state, { index: 1, length: CHUNK, attemptNo: 0 }), sha256(chunkOf(1)), 'the chunk holds what was checked')
  await driver.complete(state, staged(chunkOf))
  t.equal(sha256(await readFile(join(dir, name))), sha256(source), 'the file is the source')
})

t.test('a chunk changed after a check the sink did not see (a validator\'s read-back) is named at complete and delivered again', async t => {
  const { dir, driver } = await sink(t)
  const { state, chunkOf, url, name, source } = await upload(driver)
  for (let i = 0; i < CHUNKS; i++) t.equal((await put(await url(i, 0), chunkOf(i))).status, 200)
  const garbage = Buffer.alloc(CHUNK, 0x41)
  t.equal((await put(await url(1, 0), garbage)).status, 200, 'written before any check by the sink')
  t.equal((await put(await url(2, 0), garbage)).status, 200)
  await t.rejects(driver.complete(state, staged(chunkOf)), { code: 'BWN_ERR_DESTINATION_INCOMPLETE', status: 409, chunks: [1, 2] }, 'the chunks to deliver again')
  t.equal((await put(await url(1, 0), chunkOf(1))).status, 409, 'complete checked them: the attempt that wrote them writes nothing more')
  t.equal((await put(await url(1, 1), chunkOf(1))).status, 200, 'the redelivery, a later attempt, does')
  t.equal((await put(await url(2, 1), chunkOf(2))).status, 200)
  await driver.complete(state, staged(chunkOf))
  t.equal(sha256(await readFile(join(dir, name))), sha256(source))
})

t.test('a superseded attempt\'s URL cannot overwrite a later attempt\'s delivery', async t => {
  const { driver } = await sink(t)
  const { state, chunkOf, url } = await upload(driver)
  const stale = await url(0, 0) // slot 0
  const later = await url(0, 1) // slot 1
  t.equal((await put(later, chunkOf(0))).status, 200, 'the later attempt delivers')
  const junk = Buffer.alloc(CHUNK, 0x41)
  const overwrite = await put(stale, junk)
  t.equal(overwrite.status, 409, 'the earlier attempt\'s URL is refused')
  t.match(await overwrite.json(), { code: 'BWN_ERR_SINK_CONFLICT', detail: /later attempt/ })
  t.same(Buffer.from(await driver.readRange(state, 0, CHUNK)), chunkOf(0), 'a read-back sees the later attempt\'s bytes')
  t.equal((await put(await url(0, 3), chunkOf(0))).status, 200, 'slots repeat (attempt 3 is slot 0 again): the attempt number orders them')
  t.equal((await put(later, junk)).status, 409, 'and attempt 1 is now the earlier one')
})

t.test('a later attempt cuts off an earlier one still streaming', async t => {
  const { driver, app } = await sink(t)
  const { state, chunkOf, url } = await upload(driver)
  const stale = await url(2, 0)
  const arrived = new Promise<http.IncomingMessage>(resolve => {
    const onRequest = (req: http.IncomingMessage): void => { if (stale.endsWith(req.url ?? '')) { app.server.off('request', onRequest); resolve(req) } }
    app.server.on('request', onRequest)
  })
  const held = heldPut(stale)
  held.req.write(Buffer.alloc(100, 0x41))
  const atSink = await arrived
  await eventually(async () => atSink.readableDidRead, 10_000, 'the sink to read the stale write\'s first bytes', 5)
  t.equal((await put(await url(2, 1), chunkOf(2))).status, 200, 'the later attempt delivers')
  t.equal(await held.answer, 'cut off', 'the earlier one was stopped')
  t.equal(await driver.chunkSha256(state, { index: 2, length: CHUNK, attemptNo: 1 }), sha256(chunkOf(2)))
})

t.test('a write waiting for the in-flight budget when complete() begins never lands', async t => {
  const budget = new InflightBudget(STREAM_WINDOW_BYTES)
  const { dir, driver } = await sink(t, { budget })
  const { chunkOf, url, state, name, source } = await upload(driver)
  for (let i = 0; i < CHUNKS; i++) t.equal((await put(await url(i, 0), chunkOf(i))).status, 200)
  // A later attempt of chunk 0 holds the whole budget without sending; one of chunk 2 waits behind it.
  const holder = heldPut(await url(0, 1))
  await eventually(async () => budget.used === budget.capacity, 10_000, 'the first write to hold the budget', 5)
  const late = heldPut(await url(2, 1))
  await eventually(async () => budget.waiting === 1, 10_000, 'the second write to wait for the budget', 5)
  await driver.complete(state, staged(chunkOf))
  late.send(Buffer.alloc(CHUNK, 0x41))
  t.equal(await late.answer, 'cut off', 'the waiting write was stopped by complete()')
  t.equal(await holder.answer, 'cut off')
  t.equal(sha256(await readFile(join(dir, name))), sha256(source), 'the completed file is the source')
  t.equal(budget.used, 0, 'the budget is back')
  t.equal(budget.waiting, 0)
})

t.test('a chunk body that stops sending is cut off and gives its budget back', async t => {
  const budget = new InflightBudget(STREAM_WINDOW_BYTES)
  const { driver } = await sink(t, { budget, writeStallMs: 200 })
  const { chunkOf, url, state } = await upload(driver)
  const silent = heldPut(await url(0, 0))
  t.equal(await silent.answer, 'cut off', 'a body that never comes')
  await eventually(async () => budget.used === 0, 10_000, 'the stalled write to give its budget back', 5)
  const partial = heldPut(await url(1, 0))
  partial.req.write(chunkOf(1).subarray(0, 1000))
  t.equal(await partial.answer, 'cut off', 'a body that stops halfway')
  await eventually(async () => budget.used === 0, 10_000, 'the half-written chunk to give its budget back', 5)
  t.equal((await put(await url(1, 0), chunkOf(1))).status, 200, 'the sink takes writes again')
  t.equal(await driver.chunkSha256(state, { index: 1, length: CHUNK }), sha256(chunkOf(1)))
  // A byte now and then is no progress: the chunk's rest (under 1 MiB here) must come within the window.
  const trickle = heldPut(await url(2, 0))
  const drip = setInterval(() => { trickle.req.write(Buffer.alloc(1, 0x41)) }, 20)
  t.teardown(() => clearInterval(drip))
  t.equal(await trickle.answer, 'cut off', 'a body that trickles a byte every 20 ms')
  clearInterval(drip)
  await eventually(async () => budget.used === 0, 10_000, 'the trickled write to give its budget back', 5)
})

t.test('one write per chunk at a time: a URL opened many times holds one window of the budget', async t => {
  const budget = new InflightBudget(4 * STREAM_WINDOW_BYTES)
  const { driver } = await sink(t, { budget })
  const { chunkOf, url, state } = await upload(driver)
  const target = await url(0, 0)
  const first = heldPut(target)
  await eventually(async () => budget.used === STREAM_WINDOW_BYTES, 10_000, 'the first request to hold a window', 5)
  const second = heldPut(target)
  t.equal(await first.answer, 'cut off', 'a second request of the same attempt replaces the first')
  const third = heldPut(target)
  t.equal(await second.answer, 'cut off')
  await eventually(async () => budget.used <= STREAM_WINDOW_BYTES, 10_000, 'one window held for the URL', 5)
  third.send(chunkOf(0))
  t.equal(await third.answer, 'answered 200', 'the last request delivers')
  t.equal(await driver.chunkSha256(state, { index: 0, length: CHUNK }), sha256(chunkOf(0)))
  t.equal(budget.used, 0)
})
