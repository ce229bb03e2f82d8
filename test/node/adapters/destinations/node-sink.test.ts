// The node sink through a real Fastify server on loopback, driven by NodeSinkDriver and plain fetch.
import t from 'tap'
import Fastify from 'fastify'
import http from 'node:http'
import { createHash, randomBytes } from 'node:crypto'
import { link, mkdtemp, open, readFile, readdir, readlink, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cryptoReady, newHotkey, signUrl as signAny, authorityOf, SIGNATURE_PARAM, type SignUrlOptions } from '../../../../protocol/index.ts'
import { sinkRoutes, NodeSinkDriver, filenameProblem, READS_PER_URL } from '../../../../node/adapters/destinations/node-sink.ts'
import { STREAM_WINDOW_BYTES } from '../../../../node/adapters/chunk-mover.ts'
import { InflightBudget } from '../../../../node/adapters/inflight-budget.ts'
import type { DeliveryTarget, UploadState } from '../../../../actors/destination.ts'
import { eventually } from '../../../helpers/proc.ts'

await cryptoReady()
const signUrl = (o: Omit<SignUrlOptions, 'audience'>): string => signAny({ audience: 'bwnet-sink', ...o })
const coordinator = newHotkey()
const stranger = newHotkey()
const dir = await mkdtemp(join(tmpdir(), 'bwnet-sink-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))
const app = Fastify({ logger: false })
let baseUrl = ''
await app.register(sinkRoutes, { dir, trustedSigners: new Set([coordinator.address]), authority: () => authorityOf(baseUrl), maxChunkBytes: 1024 * 1024 })
baseUrl = await app.listen({ host: '127.0.0.1', port: 0 })
t.teardown(() => app.close())
const driver = new NodeSinkDriver({ baseUrl, key: coordinator })

const CHUNK = 64 * 1024
const TOTAL = 3 * CHUNK + 1234
const CHUNKS = 4
const source = randomBytes(TOTAL)
const chunkOf = (i: number): Buffer => source.subarray(i * CHUNK, Math.min(TOTAL, (i + 1) * CHUNK))
const coords = (index: number, attemptSlot = 0) => ({ index, offset: index * CHUNK, length: chunkOf(index).length, attemptSlot })
const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')
const soon = (): number => Date.now() + 60_000
const put = async (target: DeliveryTarget | string, body: Buffer, headers: Record<string, string> = { 'content-type': 'application/octet-stream' }): Promise<Response> =>
  await fetch(typeof target === 'string' ? target : target.url, { method: 'PUT', headers: typeof target === 'string' ? headers : target.headers, body: new Uint8Array(body) })

async function deliverAll (state: UploadState): Promise<Array<{ index: number, attemptSlot: number, etag: string | null }>> {
  const parts = []
  for (let i = CHUNKS - 1; i >= 0; i--) { // any order
    const res = await put(await driver.target(state, coords(i), soon()), chunkOf(i))
    parts.push({ index: i, attemptSlot: 0, etag: res.headers.get('etag') })
  }
  return parts
}

t.test('filenames: one safe directory entry or refused', async t => {
  for (const bad of ['../evil', 'a/b', 'a\\b', '..', '.hidden', '.partial', '', 'x\u0000y', 'é'.repeat(200)]) t.ok(filenameProblem(bad), JSON.stringify(bad))
  for (const good of ['data.bin', 'report 2024.csv', 'ünïcode.txt']) t.equal(filenameProblem(good), null, good)
})

t.test('deliver, read back before and after complete, land under the filename', async t => {
  const state = await driver.begin({ transferId: 'tr-ok', filename: 'movie.mkv', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  t.same(state, { kind: 'node', uploadId: 'tr-ok', filename: 'movie.mkv', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  const again = await driver.begin({ transferId: 'tr-ok', filename: 'movie.mkv', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  t.same(again, state, 'begin is idempotent')
  const first = await put(await driver.target(state, coords(1), soon()), chunkOf(1))
  t.equal(first.status, 200)
  t.equal(first.headers.get('etag'), `"${sha256(chunkOf(1))}"`, 'ETag is the sha256 of the bytes')
  t.same(Buffer.from(await driver.readRange(state, CHUNK, CHUNK)), chunkOf(1), 'a delivered chunk reads back before complete')
  const parts = await deliverAll(state)
  await t.rejects(driver.complete(state, parts.slice(1)), { code: 'BWN_ERR_DESTINATION_INCOMPLETE' })
  await driver.complete(state, parts)
  await driver.complete(state, parts) // idempotent
  t.equal(sha256(await readFile(join(dir, 'movie.mkv'))), sha256(source), 'the file is the source')
  t.same(Buffer.from(await driver.readRange(state, CHUNK - 5, 10)), source.subarray(CHUNK - 5, CHUNK + 5), 'reads back after complete')
  t.same(await readdir(join(dir, '.partial')), ['tr-ok.json'], 'the partial file is gone; its record stays for read-back')
  const late = await put(await driver.target(state, coords(0), soon()), chunkOf(0))
  t.equal(late.status, 409, 'no writes after complete')
  await t.rejects(driver.abort(state), { code: 'BWN_ERR_DESTINATION_REFUSED', status: 409 }, 'a completed file is not aborted')

  const clash = await driver.begin({ transferId: 'tr-clash', filename: 'movie.mkv', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  await driver.complete(clash, await deliverAll(clash))
  t.equal(sha256(await readFile(join(dir, 'movie-1.mkv'))), sha256(source), 'a clash gets a suffix; nothing is overwritten')
})

t.test('signed URLs: expired, tampered, unsigned and foreign ones get 403 problem+json', async t => {
  const state = await driver.begin({ transferId: 'tr-auth', filename: 'auth.bin', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  t.teardown(() => driver.abort(state))
  const good = await driver.target(state, coords(0), soon())
  const cases: Array<[string, string, string]> = []
  cases.push(['expired', signUrl({ method: 'PUT', url: good.url, expiresAt: Date.now() - 1, key: coordinator }), 'BWN_ERR_SIGNED_URL_EXPIRED'])
  const tampered = new URL(good.url); tampered.pathname = tampered.pathname.replace(/\/0$/, '/1')
  cases.push(['other chunk', tampered.toString(), 'BWN_ERR_SIGNED_URL_INVALID'])
  const unsigned = new URL(good.url); unsigned.search = ''
  cases.push(['unsigned', unsigned.toString(), 'BWN_ERR_SIGNED_URL_REQUIRED'])
  const noSig = new URL(good.url); noSig.searchParams.delete(SIGNATURE_PARAM)
  cases.push(['no signature', noSig.toString(), 'BWN_ERR_SIGNED_URL_INVALID'])
  cases.push(['untrusted signer', signUrl({ method: 'PUT', url: unsigned, expiresAt: soon(), key: stranger }), 'BWN_ERR_SIGNED_URL_INVALID'])
  for (const [name, url, code] of cases) {
    const res = await put(url, chunkOf(0))
    t.equal(res.status, 403, name)
    t.match(res.headers.get('content-type'), /^application\/problem\+json/, name)
    t.match(await res.json(), { status: 403, code }, name)
  }
  const putOnly = signUrl({ method: 'PUT', url: `${baseUrl}/sink/uploads/tr-auth`, expiresAt: soon(), key: coordinator })
  const del = await fetch(putOnly, { method: 'DELETE' })
  t.equal(del.status, 403, 'a URL signed for PUT does not allow DELETE')
  t.equal((await put(good, chunkOf(0))).status, 200, 'the untouched URL still works')
})

t.test('bad input: traversal filename, wrong sizes, wrong ETag', async t => {
  await t.rejects(driver.begin({ transferId: 'tr-evil', filename: '../../etc/passwd', totalSize: 10, chunkSize: 10, totalChunks: 1 }), { code: 'BWN_ERR_DESTINATION_REFUSED', status: 400, message: /BWN_ERR_SINK_BAD_FILENAME/ })
  t.notOk((await readdir(join(dir, '.partial'))).includes('tr-evil'), 'nothing allocated')
  const state = await driver.begin({ transferId: 'tr-bad', filename: 'bad.bin', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  const short = await put(await driver.target(state, coords(0), soon()), chunkOf(0).subarray(1))
  t.equal(short.status, 400)
  t.match(await short.json(), { code: 'BWN_ERR_SINK_CHUNK_SIZE' })
  const past = await put(signUrl({ method: 'PUT', url: `${baseUrl}/sink/uploads/tr-bad/chunks/9`, expiresAt: soon(), key: coordinator }), chunkOf(0))
  t.equal(past.status, 400, 'a chunk past the end')
  const parts = await deliverAll(state)
  parts[0]!.etag = `"${'0'.repeat(64)}"`
  await t.rejects(driver.complete(state, parts), { code: 'BWN_ERR_DESTINATION_INCOMPLETE', status: 409, chunks: [parts[0]!.index] }, 'the chunk whose ETag differs, to deliver again')
  await driver.abort(state)
  await driver.abort(state) // idempotent
  t.notOk((await readdir(join(dir, '.partial'))).some(f => f.startsWith('tr-bad')), 'abort deletes the partial file and its record')
  await t.rejects(driver.readRange(state, 0, 1), { code: 'BWN_ERR_DESTINATION_REFUSED', status: 404 })
  await t.rejects(driver.target({ kind: 's3' }, coords(0), soon()), { code: 'BWN_ERR_DESTINATION_STATE' })
})

/** A raw PUT: the body goes out in `pieces`, chunked unless `length` is given; `hold` keeps the request open. */
function rawPut (url: string, pieces: Buffer[], opts: { length?: number, hold?: boolean } = {}): { req: http.ClientRequest, answer: Promise<{ status: number, body: string }> } {
  const req = http.request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', ...(opts.length === undefined ? {} : { 'content-length': String(opts.length) }) } })
  const answer = new Promise<{ status: number, body: string }>((resolve, reject) => {
    req.once('response', (res) => { let body = ''; res.setEncoding('utf8').on('data', (d: string) => { body += d }).on('end', () => resolve({ status: res.statusCode!, body })) })
    req.once('error', reject)
  })
  req.flushHeaders()
  for (const p of pieces) req.write(p)
  if (opts.hold !== true) req.end()
  return { req, answer }
}

t.test('chunk bodies stream: chunked encoding works, one byte too many is refused as it arrives', async t => {
  const state = await driver.begin({ transferId: 'tr-stream', filename: 'stream.bin', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  t.teardown(() => driver.abort(state).catch(() => {}))
  const c0 = chunkOf(0)
  const ok = rawPut((await driver.target(state, coords(0), soon())).url, [c0.subarray(0, 1000), c0.subarray(1000)])
  t.match(await ok.answer, { status: 200 }, 'a chunked body of the right length lands')
  // The excess byte is refused while the sender still holds the request open: nothing waits for the end.
  const over = rawPut((await driver.target(state, coords(1), soon())).url, [chunkOf(1), Buffer.from('x')], { hold: true })
  over.req.on('error', () => {})
  const answer = await over.answer
  t.equal(answer.status, 400)
  t.match(JSON.parse(answer.body), { code: 'BWN_ERR_SINK_CHUNK_SIZE' })
  over.req.destroy()
  const declared = rawPut((await driver.target(state, coords(1), soon())).url, [], { length: CHUNK * 100, hold: true })
  declared.req.on('error', () => {})
  t.match(await declared.answer, { status: 400 }, 'a declared length other than the chunk\'s is refused before any byte')
  declared.req.destroy()
})

t.test('complete stops a write still streaming (a superseded attempt) before it checks', async t => {
  const state = await driver.begin({ transferId: 'tr-stall', filename: 'stall.bin', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  const parts = await deliverAll(state)
  const url = (await driver.target(state, coords(2, 1), soon())).url
  // The sink's side of the stalled request (observed, never read here: that would take its bytes).
  const arrived = new Promise<http.IncomingMessage>(resolve => {
    const onRequest = (req: http.IncomingMessage): void => { if (url.endsWith(req.url ?? '')) { app.server.off('request', onRequest); resolve(req) } }
    app.server.on('request', onRequest)
  })
  const stalled = rawPut(url, [chunkOf(2).subarray(0, 100)], { length: CHUNK, hold: true })
  const settled = stalled.answer.then(() => 'answered', () => 'cut off')
  const atSink = await arrived
  await eventually(async () => atSink.readableDidRead, 10_000, 'the sink to read the stalled write\'s first bytes', 5)
  await driver.complete(state, parts)
  t.equal(sha256(await readFile(join(dir, 'stall.bin'))), sha256(source), 'the file is the source')
  t.ok(['answered', 'cut off'].includes(await settled), 'the stalled write was stopped')
})

t.test('complete is idempotent across a crash: an existing link to the partial file is the file', async t => {
  // A crash after link() and before the record said so: the next process completes again.
  const state = await driver.begin({ transferId: 'tr-crash', filename: 'crash.bin', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  const parts = await deliverAll(state)
  await link(join(dir, '.partial', 'tr-crash'), join(dir, 'crash.bin'))
  const restarted = Fastify({ logger: false })
  let restartedUrl = ''
  await restarted.register(sinkRoutes, { dir, trustedSigners: new Set([coordinator.address]), authority: () => authorityOf(restartedUrl), maxChunkBytes: 1024 * 1024 })
  restartedUrl = await restarted.listen({ host: '127.0.0.1', port: 0 })
  const again = new NodeSinkDriver({ baseUrl: restartedUrl, key: coordinator })
  t.teardown(() => restarted.close())
  await again.complete(state, parts) // no hashes in memory: every region is read back
  t.equal(sha256(await readFile(join(dir, 'crash.bin'))), sha256(source))
  t.notOk((await readdir(dir)).includes('crash-1.bin'), 'not linked a second time under another name')
  t.notOk((await readdir(join(dir, '.partial'))).includes('tr-crash'), 'the partial file is gone')
  // A crash after the record and before the partial file was removed: complete removes it.
  await link(join(dir, 'crash.bin'), join(dir, '.partial', 'tr-crash'))
  await again.complete(state, parts)
  t.notOk((await readdir(join(dir, '.partial'))).includes('tr-crash'), 'the left-over partial file is removed')
  t.equal(sha256(await readFile(join(dir, 'crash.bin'))), sha256(source), 'the file is untouched')
  t.same((await readdir(dir)).filter(f => f.startsWith('crash')), ['crash.bin'])
})

t.test('a second write of a chunk is checked by its bytes on disk, whatever the first one hashed', async t => {
  const state = await driver.begin({ transferId: 'tr-twice', filename: 'twice.bin', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  t.teardown(() => driver.abort(state).catch(() => {}))
  const parts = await deliverAll(state)
  const bad = Buffer.from(chunkOf(1)); bad[7]! ^= 1
  t.equal((await put(await driver.target(state, coords(1, 1), soon()), bad)).status, 200, 'a later attempt overwrites the chunk')
  await t.rejects(driver.complete(state, parts), { code: 'BWN_ERR_DESTINATION_INCOMPLETE', status: 409, chunks: [1] }, 'the first ETag no longer describes the region')
  t.equal((await put(await driver.target(state, coords(1, 2), soon()), chunkOf(1))).status, 200, 'the upload is open again after a failed complete')
  await driver.complete(state, parts)
  t.equal(sha256(await readFile(join(dir, 'twice.bin'))), sha256(source))
})

t.test('a chunk\'s sha256 from the sink: the hash its lone write took, else the bytes on disk', async t => {
  const state = await driver.begin({ transferId: 'tr-digest', filename: 'digest.bin', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  t.teardown(() => driver.abort(state).catch(() => {}))
  await deliverAll(state)
  for (let i = 0; i < CHUNKS; i++) t.equal(await driver.chunkSha256(state, coords(i)), sha256(chunkOf(i)), `chunk ${i}`)
  // Bytes changed on disk behind the sink's back: this process answers from what its write hashed
  // (validators read the bytes themselves); a restarted sink has no such hash and reads the region.
  const partial = join(dir, '.partial', 'tr-digest')
  const fh = await open(partial, 'r+')
  await fh.write(Buffer.from('XYZ'), 0, 3, 2 * CHUNK + 10)
  await fh.close()
  t.equal(await driver.chunkSha256(state, coords(2)), sha256(chunkOf(2)), 'the write-time hash')
  const restarted = Fastify({ logger: false })
  let restartedUrl = ''
  await restarted.register(sinkRoutes, { dir, trustedSigners: new Set([coordinator.address]), authority: () => authorityOf(restartedUrl), maxChunkBytes: 1024 * 1024 })
  restartedUrl = await restarted.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => restarted.close())
  const again = new NodeSinkDriver({ baseUrl: restartedUrl, key: coordinator })
  const onDisk = Buffer.from(chunkOf(2)); onDisk.write('XYZ', 10)
  t.equal(await again.chunkSha256(state, coords(2)), sha256(onDisk), 'after a restart: the bytes on disk')
  t.equal(await again.chunkSha256(state, coords(3)), sha256(chunkOf(3)), 'the short last chunk, read back')
  // A later write of a chunk replaces what the sink says about it.
  const bad = Buffer.from(chunkOf(0)); bad[0]! ^= 1
  t.equal((await put(await driver.target(state, coords(0, 1), soon()), bad)).status, 200)
  t.equal(await driver.chunkSha256(state, coords(0)), sha256(bad), 'the second write\'s bytes')
  await t.rejects(driver.chunkSha256(state, { index: 1, length: CHUNK - 1 }), { code: 'BWN_ERR_DESTINATION_UNAVAILABLE', message: /65536 bytes there/ }, 'a length that disagrees')
  const past = await fetch(signUrl({ method: 'GET', url: `${baseUrl}/sink/uploads/tr-digest/chunks/${CHUNKS}`, expiresAt: soon(), key: coordinator }))
  t.equal(past.status, 400, 'a chunk past the end')
  const workerUrl = (await driver.target(state, coords(1), soon())).url
  t.equal((await fetch(workerUrl)).status, 403, 'a worker\'s PUT URL does not ask for hashes')
  await t.rejects(driver.chunkSha256({ kind: 'node', uploadId: 'tr-nothing', totalChunks: 1 }, coords(0)), { code: 'BWN_ERR_DESTINATION_REFUSED', status: 404 })
})

t.test('cross-tenant replay: a token minted for anything but this sink at this authority is refused', async t => {
  const victim = await driver.begin({ transferId: 'tr-victim', filename: 'victim.bin', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  t.teardown(() => driver.abort(victim))
  const chunkPath = '/sink/uploads/tr-victim/chunks/0?slot=0'
  const evil = Buffer.alloc(chunkOf(0).length, 0x41)
  const replay = async (minted: string, init: { method?: string, host?: string } = {}): Promise<{ status: number, code: string }> => {
    const u = new URL(minted)
    const res = await fetch(`${baseUrl}${u.pathname}${u.search}`, { method: init.method ?? 'PUT', headers: { 'content-type': 'application/octet-stream', ...(init.host ? { host: init.host } : {}) }, body: (init.method ?? 'PUT') === 'PUT' ? new Uint8Array(evil) : undefined })
    return { status: res.status, code: ((await res.json()) as { code: string }).code }
  }
  // 1. An http destination a tenant pointed at its own server, with the sink's path: the orchestrator's
  //    http driver signs the worker's PUT for that server; replayed here it must not verify.
  const { HttpDriver } = await import('../../../../node/adapters/destinations/http.ts')
  const http = new HttpDriver({ url: `http://attacker.example:9000${chunkPath}` }, { signer: coordinator })
  const hs = await http.begin({ transferId: 'tr-attacker', filename: 'x.bin', totalSize: TOTAL, chunkSize: CHUNK, totalChunks: CHUNKS })
  const captured = (await http.target(hs, coords(0), soon())).url
  t.match(await replay(captured), { status: 403, code: 'BWN_ERR_SIGNED_URL_INVALID' }, 'http destination token replayed at the sink')
  t.match(await replay(captured, { host: 'attacker.example:9000' }), { status: 403 }, 'a forged Host header does not help')
  // 2. The same sink path and audience signed for another authority (an alias of this host, another port).
  const alias = new NodeSinkDriver({ baseUrl: baseUrl.replace('127.0.0.1', 'localhost'), key: coordinator })
  t.match(await replay((await alias.target(victim, coords(0), soon())).url), { status: 403, code: 'BWN_ERR_SIGNED_URL_INVALID' }, 'other authority')
  // 3. The data endpoint's audience at this very authority.
  t.match(await replay(signAny({ method: 'PUT', url: `${baseUrl}${chunkPath}`, audience: 'bwnet-data', expiresAt: soon(), key: coordinator })), { status: 403, code: 'BWN_ERR_SIGNED_URL_INVALID' }, 'other audience')
  // 4. A real sink token for one chunk, used for another method or path.
  const good = (await driver.target(victim, coords(0), soon())).url
  const readUrl = (await driver.readTarget(victim, 0, 16, soon())).url
  t.match(await replay(readUrl, { method: 'DELETE' }), { status: 403, code: 'BWN_ERR_SIGNED_URL_INVALID' }, 'a read token used to delete')
  const otherChunk = new URL(good); otherChunk.pathname = otherChunk.pathname.replace(/\/0$/, '/1')
  t.match(await replay(otherChunk.toString()), { status: 403 }, 'other path')
  const bytes = await driver.readRange(victim, 0, 16)
  t.same([...bytes], new Array(16).fill(0), 'nothing was written to the victim upload')
})

t.test('read-backs over 1 MiB through the reused buffers; an aborted one or a HEAD gives its budget back', async t => {
  const budget = new InflightBudget(64 * 1024 * 1024)
  const bigDir = await mkdtemp(join(tmpdir(), 'bwnet-sink-big-'))
  t.teardown(() => rm(bigDir, { recursive: true, force: true }))
  const big = Fastify({ logger: false })
  let bigUrl = ''
  await big.register(sinkRoutes, { dir: bigDir, trustedSigners: new Set([coordinator.address]), authority: () => authorityOf(bigUrl), maxChunkBytes: 4 * 1024 * 1024, budget })
  bigUrl = await big.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => big.close())
  const bigDriver = new NodeSinkDriver({ baseUrl: bigUrl, key: coordinator })
  const chunk = 2 * 1024 * 1024
  const bytes = randomBytes(3 * chunk - 77)
  const state = await bigDriver.begin({ transferId: 'tr-big', filename: 'big.bin', totalSize: bytes.length, chunkSize: chunk, totalChunks: 3 })
  for (let i = 0; i < 3; i++) {
    const piece = bytes.subarray(i * chunk, (i + 1) * chunk)
    const res = await put(await bigDriver.target(state, { index: i, offset: i * chunk, length: piece.length, attemptSlot: 0 }, soon()), piece)
    t.equal(res.status, 200, `chunk ${i} stored`)
  }
  const back = await bigDriver.readRange(state, 1000, bytes.length - 2000)
  t.equal(sha256(back), sha256(bytes.subarray(1000, bytes.length - 1000)), 'a 6 MiB read-back byte for byte')
  t.equal(budget.used, 0, 'its reservation is back')

  const signed = signUrl({ method: 'GET', url: new URL('/sink/uploads/tr-big', bigUrl), expiresAt: soon(), key: coordinator })
  await new Promise<void>((resolve, reject) => {
    const req = http.get(signed, { headers: { range: `bytes=0-${bytes.length - 1}` }, agent: false }, (res) => {
      t.equal(res.statusCode, 206)
      res.once('data', () => { req.destroy(); resolve() })
    })
    req.once('error', (err) => { if (!req.destroyed) reject(err) })
  })
  await eventually(async () => budget.used === 0, 10_000, 'the aborted read-back releases its reservation')

  const head = await fetch(signSinkHead(bigUrl), { method: 'HEAD', headers: { range: `bytes=0-${bytes.length - 1}` } })
  t.equal(head.status, 206, 'HEAD answers like GET')
  t.equal(head.headers.get('content-length'), String(bytes.length))
  await eventually(async () => budget.used === 0, 10_000, 'HEAD holds no reservation')
})

/** A HEAD on the read-back route, signed for HEAD. */
function signSinkHead (base: string): string {
  return signUrl({ method: 'HEAD', url: new URL('/sink/uploads/tr-big', base), expiresAt: soon(), key: coordinator })
}

t.test('a handed-out read URL reads its signed range only, at most READS_PER_URL at once; a read waiting for its window holds no file and leaves with its reader', async t => {
  const budget = new InflightBudget(STREAM_WINDOW_BYTES) // one read at a time
  const rdir = await mkdtemp(join(tmpdir(), 'bwnet-sink-reads-'))
  t.teardown(() => rm(rdir, { recursive: true, force: true }))
  const app = Fastify({ logger: false })
  let base = ''
  await app.register(sinkRoutes, { dir: rdir, trustedSigners: new Set([coordinator.address]), authority: () => authorityOf(base), maxChunkBytes: 16 * 1024 * 1024, budget })
  base = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  const d = new NodeSinkDriver({ baseUrl: base, key: coordinator })
  const chunk = 16 * 1024 * 1024 // more than loopback's socket buffers: a reader that stops holds its send
  const bytes = randomBytes(2 * chunk)
  const state = await d.begin({ transferId: 'tr-reads', filename: 'reads.bin', totalSize: bytes.length, chunkSize: chunk, totalChunks: 2 })
  for (let i = 0; i < 2; i++) t.equal((await put(await d.target(state, { index: i, offset: i * chunk, length: chunk, attemptSlot: 0 }, soon()), bytes.subarray(i * chunk, (i + 1) * chunk))).status, 200)
  const target = await d.readTarget(state, chunk, chunk, soon()) // the second chunk
  const get = (range: string): Promise<http.IncomingMessage> => new Promise((resolve, reject) => {
    const req = http.get(target.url, { headers: { range }, agent: false }, resolve)
    req.once('error', (err) => { if (!req.destroyed) reject(err) })
  })
  const whole = async (res: http.IncomingMessage): Promise<Buffer> => { const parts: Buffer[] = []; for await (const p of res) parts.push(p as Buffer); return Buffer.concat(parts) }
  const own = await get(target.headers.range!)
  t.equal(own.statusCode, 206)
  t.equal(sha256(await whole(own)), sha256(bytes.subarray(chunk)), 'its own range')
  const wider = await get(`bytes=0-${bytes.length - 1}`)
  t.equal(wider.statusCode, 416, 'the whole file through the same URL is refused')
  wider.resume()

  const partial = join(rdir, '.partial', String(state.uploadId))
  const opened = async (): Promise<number> => {
    let n = 0
    for (const fd of await readdir('/proc/self/fd')) { try { if (await readlink(`/proc/self/fd/${fd}`) === partial) n++ } catch {} }
    return n
  }
  // Two readers take their heads and then nothing: the first holds the only window, the second waits for it.
  const first = await get(target.headers.range!)
  t.equal(first.statusCode, 206)
  const second = http.get(target.url, { headers: { range: target.headers.range! }, agent: false })
  second.on('error', () => {})
  await eventually(async () => budget.waiting === 1, 10_000, 'the second read to wait for a window', 5)
  t.equal(await opened(), 1, 'the waiting read holds no file')
  const third = await get(target.headers.range!)
  t.equal(third.statusCode, 503, `a third read of one URL is refused (${READS_PER_URL} at once)`)
  t.equal(third.headers['retry-after'], '1')
  third.resume()
  second.destroy()
  await eventually(async () => budget.waiting === 0, 10_000, 'the read whose reader left to stop waiting', 5)
  first.destroy()
  await eventually(async () => budget.used === 0 && await opened() === 0, 10_000, 'the window and the file given back', 5)
})
