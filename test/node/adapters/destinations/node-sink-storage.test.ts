// The node sink asks the storage guard (node/storage.ts): a begin needs room for the file's declared
// size, a chunk PUT reserves its length before a byte of its body is read, and a write that fails for
// space (ENOSPC) answers the same 507 BWN_ERR_STORAGE_FULL problem, acknowledges nothing and keeps no
// hash of the chunk. The guard sees a fake filesystem (its `space` option): the free space is whatever
// the test says, so the watermark is crossed exactly where a test puts it.
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import http from 'node:http'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, readdir, rm, symlink, open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cryptoReady, newHotkey, authorityOf, signUrl } from '../../../../protocol/index.ts'
import { sinkRoutes, NodeSinkDriver } from '../../../../node/adapters/destinations/node-sink.ts'
import { StorageGuard } from '../../../../node/storage.ts'
import type { UploadState } from '../../../../actors/destination.ts'
import { eventually } from '../../../helpers/proc.ts'
import { silentLogger } from '../../../helpers/logger.ts'

await cryptoReady()
const coordinator = newHotkey()
const MIB = 1024 * 1024
const CHUNK = 64 * 1024
const CHUNKS = 4
const TOTAL = CHUNK * CHUNKS
const MIN_FREE = 8 * MIB
const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')
const soon = (): number => Date.now() + 60_000
let uploads = 0

interface Sink { dir: string, driver: NodeSinkDriver, guard: StorageGuard, baseUrl: string, setFree: (bytes: number) => void, refusedForRoom: string[] }

async function sink (t: Test): Promise<Sink> {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-sink-storage-'))
  let free = MIN_FREE + 64 * MIB
  const guard = new StorageGuard({
    dir, node: '5Sink', logger: silentLogger(), minFreeBytes: MIN_FREE,
    probe: async () => {}, reopen: async () => {},
    // A tiny filesystem's total keeps the ballast a few bytes.
    space: async () => ({ freeBytes: free, totalBytes: 1024 })
  })
  await guard.open()
  const app = Fastify({ logger: false })
  let baseUrl = ''
  // What the sink tells its coordinator of the PUTs it refused for room: `upload/chunk/attempt`.
  const refusedForRoom: string[] = []
  await app.register(sinkRoutes, { dir, trustedSigners: new Set([coordinator.address]), authority: () => authorityOf(baseUrl), maxChunkBytes: MIB, storage: guard, writeStallMs: 10_000, onRefusedForRoom: (uploadId, index, attempt) => { refusedForRoom.push(`${uploadId}/${index}/${attempt}`) } })
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(async () => { guard.close(); await app.close(); await rm(dir, { recursive: true, force: true }) })
  return { dir, driver: new NodeSinkDriver({ baseUrl, key: coordinator }), guard, baseUrl, setFree: (bytes) => { free = bytes }, refusedForRoom }
}

async function upload (s: Sink): Promise<{ state: UploadState, id: string, chunkOf: (i: number) => Buffer, url: (index: number, attemptNo?: number) => Promise<string> }> {
  const id = `tr-${++uploads}`
  const source = randomBytes(TOTAL)
  const state = await s.driver.begin({ transferId: id, filename: `${id}.bin`, totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  const chunkOf = (i: number): Buffer => source.subarray(i * CHUNK, (i + 1) * CHUNK)
  const url = async (index: number, attemptNo = 0): Promise<string> => (await s.driver.target(state, { index, offset: index * CHUNK, length: CHUNK, attemptSlot: attemptNo % 3, attemptNo }, soon())).url
  return { state, id, chunkOf, url }
}

const put = async (url: string, body: Buffer): Promise<Response> => await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(body) })

/** A chunk PUT whose headers go out now and whose body waits for `send` (or never comes). */
function heldPut (url: string): { req: http.ClientRequest, answer: Promise<{ status: number, body: string }>, answered: () => boolean, send: (body: Buffer) => void } {
  const req = http.request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(CHUNK) } })
  let done = false
  const answer = new Promise<{ status: number, body: string }>((resolve, reject) => {
    req.once('response', res => {
      const pieces: Buffer[] = []
      res.on('data', (p: Buffer) => pieces.push(p))
      res.once('end', () => { done = true; resolve({ status: res.statusCode ?? 0, body: Buffer.concat(pieces).toString('utf8') }) })
    })
    req.on('error', reject)
  })
  answer.catch(() => {})
  req.flushHeaders()
  return { req, answer, answered: () => done, send: (body) => { req.end(body) } }
}

t.test('begin is refused with 507 BWN_ERR_STORAGE_FULL while the file\'s declared size does not fit above the watermark', async t => {
  const s = await sink(t)
  s.setFree(MIN_FREE + TOTAL - 1)
  await t.rejects(s.driver.begin({ transferId: 'tr-big', filename: 'big.bin', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS }),
    { code: 'BWN_ERR_DESTINATION_UNAVAILABLE', status: 507, message: /BWN_ERR_STORAGE_FULL/ }, 'the coordinator sees the refusal (and fails the transfer: actors/transfer/state.ts begun)')
  const raw = await fetch(signUrl({ method: 'PUT', url: `${s.baseUrl}/sink/uploads/tr-big?filename=big.bin&size=${TOTAL}&chunkSize=${CHUNK}`, audience: 'bwnet-sink', expiresAt: soon(), key: coordinator }), { method: 'PUT' })
  t.equal(raw.status, 507)
  t.match(raw.headers.get('content-type'), /^application\/problem\+json/)
  t.match(await raw.json(), { status: 507, code: 'BWN_ERR_STORAGE_FULL', node: '5Sink', needed_bytes: TOTAL, min_free_bytes: MIN_FREE, detail: /cannot store a \d+-byte file \(upload tr-big\)/ })
  t.same((await readdir(join(s.dir, '.partial'))).filter(f => f.startsWith('tr-big')), [], 'nothing was created')

  s.setFree(MIN_FREE + TOTAL)
  const { state } = await upload(s)
  s.setFree(0)
  t.same(await s.driver.begin({ transferId: state.uploadId as string, filename: state.filename as string, totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS }), state, 'a repeated begin of an upload that exists is not refused: it takes no new room')
})

t.test('a chunk PUT below the watermark is refused before its body is read', async t => {
  const s = await sink(t)
  const u = await upload(s)
  s.setFree(MIN_FREE + CHUNK - 1)
  // Only the headers go out: an answer can only come from a refusal made before the body was read.
  const held = heldPut(await u.url(0))
  t.teardown(() => held.req.destroy())
  const answer = await held.answer
  t.equal(answer.status, 507)
  t.match(JSON.parse(answer.body), { code: 'BWN_ERR_STORAGE_FULL', needed_bytes: CHUNK, detail: new RegExp(`cannot store chunk 0 of upload ${u.id}`) })
  t.equal(s.guard.reservedBytes, 0, 'a refused chunk holds no room')
  t.same(s.refusedForRoom, [`${u.id}/0/0`], 'the coordinator is told which attempt\'s PUT was refused')
  s.setFree(MIN_FREE + CHUNK)
  const res = await put(await u.url(0), u.chunkOf(0))
  t.equal(res.status, 200, 'the chunk lands once it fits')
  t.same(s.refusedForRoom, [`${u.id}/0/0`], 'a PUT that lands is not reported')
  t.equal(res.headers.get('etag'), `"${sha256(u.chunkOf(0))}"`)
  t.equal(s.guard.reservedBytes, 0, 'its reservation went with the answer')
})

t.test('a refusal while another write of the same chunk streams is not reported: that write\'s own room counted against it', async t => {
  const s = await sink(t)
  const u = await upload(s)
  s.setFree(MIN_FREE + 1.5 * CHUNK) // room for one chunk
  const first = heldPut(await u.url(0))
  t.teardown(() => first.req.destroy())
  await eventually(async () => s.guard.reservedBytes === CHUNK, 10_000, 'the first PUT to hold its room', 5)
  const again = await put(await u.url(0), u.chunkOf(0))
  t.equal(again.status, 507, 'the same URL again meets the first one\'s reservation')
  t.same(s.refusedForRoom, [], 'not reported: it says nothing of the disk')
  t.equal((await put(await u.url(1), u.chunkOf(1))).status, 507, 'another chunk finds no room either')
  t.same(s.refusedForRoom, [`${u.id}/1/0`], 'that one is reported')
  // Room again for chunk 2's second attempt, then none: its first attempt's URL may no longer write.
  first.send(u.chunkOf(0))
  t.equal((await first.answer).status, 200)
  s.setFree(MIN_FREE + 1.5 * CHUNK)
  t.equal((await put(await u.url(2, 1), u.chunkOf(2))).status, 200, 'chunk 2 written by its second attempt')
  s.setFree(0)
  t.equal((await put(await u.url(2, 0), u.chunkOf(2))).status, 507, 'the superseded attempt meets no room')
  t.same(s.refusedForRoom, [`${u.id}/1/0`], 'and is not reported: its attempt could not have written')
})

t.test('concurrent chunk PUTs cannot together take more than the room: each holds its length until written', async t => {
  const s = await sink(t)
  const u = await upload(s)
  // Room for two and a half chunks: of four PUTs admitted at once, two are taken, two refused.
  s.setFree(MIN_FREE + 2.5 * CHUNK)
  const puts = await Promise.all([0, 1, 2, 3].map(async i => ({ i, held: heldPut(await u.url(i)) })))
  t.teardown(() => { for (const p of puts) p.held.req.destroy() })
  await eventually(async () => puts.filter(p => p.held.answered()).length >= 2, 10_000, 'two of the four PUTs to be refused', 5)
  const refused = puts.filter(p => p.held.answered())
  const taken = puts.filter(p => !p.held.answered())
  t.equal(refused.length, 2, 'two refused')
  for (const p of refused) t.match(JSON.parse((await p.held.answer).body), { status: 507, code: 'BWN_ERR_STORAGE_FULL', reserved_bytes: 2 * CHUNK }, `chunk ${p.i} refused, naming what the others hold`)
  t.equal(s.guard.reservedBytes, 2 * CHUNK, 'the two taken hold their lengths while their bodies are awaited')
  t.same([...s.refusedForRoom].sort(), refused.map(p => `${u.id}/${p.i}/0`).sort(), 'the two refused are reported, with their attempts')
  for (const p of taken) p.held.send(u.chunkOf(p.i))
  for (const p of taken) t.equal((await p.held.answer).status, 200, `chunk ${p.i} lands`)
  t.equal(s.guard.reservedBytes, 0, 'written: their room is given back')
  for (const p of refused) t.equal((await put(await u.url(p.i, 1), u.chunkOf(p.i))).status, 200, `chunk ${p.i} lands when delivered again`)
  await s.driver.complete(u.state, Array.from({ length: CHUNKS }, (_v, i) => ({ index: i, attemptSlot: 0, etag: sha256(u.chunkOf(i)) })))
  s.setFree(0)
  t.equal((await put(await u.url(0, 2), u.chunkOf(0))).status, 409, 'a chunk for a completed upload is a 409 whatever the disk holds')
  t.equal(s.refusedForRoom.length, 2, 'and a 409 is no refusal for room')
})

t.test('ENOSPC while a chunk is written: 507 BWN_ERR_STORAGE_FULL, nothing acknowledged, the chunk not taken as written', { skip: process.platform !== 'linux' ? '/dev/full is Linux' : false }, async t => {
  const s = await sink(t)
  const u = await upload(s)
  const partial = join(s.dir, '.partial', u.id)
  // Every write to /dev/full fails with ENOSPC: the partial file stands on a full disk.
  await rm(partial)
  await symlink('/dev/full', partial)
  const res = await put(await u.url(1), u.chunkOf(1))
  t.equal(res.status, 507, 'the same problem as at the door, not a 500')
  t.equal(res.headers.get('etag'), null, 'no ETag: nothing acknowledged')
  t.match(await res.json(), { code: 'BWN_ERR_STORAGE_FULL', detail: new RegExp(`cannot store chunk 1 of upload ${u.id} \\(65536 bytes\\): its data directory is out of space \\(ENOSPC`) })
  t.equal(s.guard.reservedBytes, 0, 'the failed write gave its room back')
  t.same(s.refusedForRoom, [`${u.id}/1/0`], 'reported like a refusal at the door')
  t.match(s.guard.problem(), /ENOSPC|no space/i, 'the guard was told: the storage is failing until a probe write succeeds')
  await eventually(async () => s.guard.problem() === null, 10_000, 'the probe to clear the failing state')

  // Space is back (a real file again, holding what the failed write left: zeros here).
  await rm(partial)
  const fh = await open(partial, 'w')
  await fh.truncate(TOTAL)
  await fh.close()
  for (const i of [0, 2, 3]) t.equal((await put(await u.url(i), u.chunkOf(i))).status, 200)
  const parts = Array.from({ length: CHUNKS }, (_v, i) => ({ index: i, attemptSlot: 0, etag: sha256(u.chunkOf(i)) }))
  t.not(await s.driver.chunkSha256(u.state, { index: 1, length: CHUNK, attemptNo: 0 }), sha256(u.chunkOf(1)), 'the sink does not answer the failed body\'s hash for the chunk')
  await t.rejects(s.driver.complete(u.state, parts), { code: 'BWN_ERR_DESTINATION_INCOMPLETE', chunks: [1] }, 'complete names the chunk to deliver again')
  t.equal((await put(await u.url(1, 1), u.chunkOf(1))).status, 200, 'a later attempt writes it')
  await s.driver.complete(u.state, parts)
})
