// The disk sweep of a node sink's partial files, through a real sink on loopback: an abandoned upload's
// partial file and record go once older than the grace period; a live one, a fresh one and one a chunk
// write is streaming into stay; a completed upload keeps its record and its delivered file.
import t from 'tap'
import Fastify from 'fastify'
import http from 'node:http'
import { randomBytes } from 'node:crypto'
import { link, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile, open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cryptoReady, newHotkey, authorityOf } from '../../../../protocol/index.ts'
import { sinkRoutes, NodeSinkDriver } from '../../../../node/adapters/destinations/node-sink.ts'
import { SinkPartials } from '../../../../node/adapters/destinations/sink-partials.ts'
import type { UploadState } from '../../../../actors/destination.ts'
import { eventually } from '../../../helpers/proc.ts'

await cryptoReady()
const HOUR = 3_600_000
const coordinator = newHotkey()
const dir = await mkdtemp(join(tmpdir(), 'bwnet-sink-sweep-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))
const partials = new SinkPartials(dir)
const app = Fastify({ logger: false })
let baseUrl = ''
await app.register(sinkRoutes, { dir, trustedSigners: new Set([coordinator.address]), authority: () => authorityOf(baseUrl), partials })
baseUrl = await app.listen({ host: '127.0.0.1', port: 0 })
t.teardown(() => app.close())
const driver = new NodeSinkDriver({ baseUrl, key: coordinator })

const CHUNK = 64 * 1024
const TOTAL = 2 * CHUNK
const source = randomBytes(TOTAL)
const chunkOf = (i: number): Buffer => source.subarray(i * CHUNK, (i + 1) * CHUNK)
const coords = (index: number, attemptSlot = 0) => ({ index, offset: index * CHUNK, length: CHUNK, attemptSlot })
const soon = (): number => Date.now() + 60_000
const partialDir = join(dir, '.partial')
const begin = async (id: string): Promise<UploadState> => await driver.begin({ transferId: id, filename: `${id}.bin`, totalSize: TOTAL, chunkSize: CHUNK, totalChunks: 2 })
const put = async (state: UploadState, i: number, attemptSlot = 0): Promise<Response> => {
  const target = await driver.target(state, coords(i, attemptSlot), soon())
  return await fetch(target.url, { method: 'PUT', headers: target.headers, body: new Uint8Array(chunkOf(i)) })
}
/** Sets the times of an upload's files `ms` into the past. */
async function age (id: string, ms = 2 * HOUR): Promise<void> {
  const when = new Date(Date.now() - ms)
  for (const f of [id, `${id}.json`, `${id}.json.tmp`]) await utimes(join(partialDir, f), when, when).catch(() => {})
}
const filesOf = async (id: string): Promise<string[]> => (await readdir(partialDir)).filter(f => f === id || f.startsWith(`${id}.`)).sort()
const onDisk = async (...paths: string[]): Promise<number> => { let n = 0; for (const p of paths) n += (await stat(p)).blocks * 512; return n }

t.test('an abandoned upload goes; a live one and a fresh one stay; the sink forgets what went', async t => {
  const gone = await begin('tr-abandoned')
  t.equal((await put(gone, 1)).status, 200)
  const live = await begin('tr-live')
  await begin('tr-fresh')
  await age('tr-abandoned')
  await age('tr-live')
  const bytes = await onDisk(join(partialDir, 'tr-abandoned'), join(partialDir, 'tr-abandoned.json'))
  const r = await partials.sweep({ isLive: (id) => id === 'tr-live', graceMs: HOUR })
  t.same(r, { partials: { files: 2, bytes }, errors: 0 }, 'the partial file and its record, their blocks on disk')
  t.same(await filesOf('tr-abandoned'), [], 'an upload no live transfer names, older than the grace period: gone')
  t.same(await filesOf('tr-live'), ['tr-live', 'tr-live.json'], 'a live transfer\'s upload stays, however old')
  t.same(await filesOf('tr-fresh'), ['tr-fresh', 'tr-fresh.json'], 'one younger than the grace period stays')
  t.equal((await put(live, 0)).status, 200, 'the live upload still takes chunks')
  // Begun again (as only a coordinator that lost its state would): a new upload, not the forgotten one.
  const again = await begin('tr-abandoned')
  t.equal((await put(again, 0)).status, 200, 'the sink had forgotten it: begin made a new partial file')
})

/** A raw PUT whose body stays open after `first` bytes. */
function heldPut (url: string, first: Buffer): { req: http.ClientRequest, settled: Promise<unknown> } {
  const req = http.request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(CHUNK) } })
  const settled = new Promise(resolve => { req.once('response', resolve); req.once('error', resolve) })
  req.flushHeaders()
  req.write(first)
  return { req, settled }
}

/** Begins upload `id` and holds a chunk write open into it, once its first bytes are in the partial file. */
async function writeHeld (id: string): Promise<ReturnType<typeof heldPut>> {
  const state = await begin(id)
  const head = chunkOf(0).subarray(0, 100)
  const held = heldPut((await driver.target(state, coords(0), soon())).url, head)
  const written = async (): Promise<boolean> => {
    const fh = await open(join(partialDir, id), 'r')
    try { const b = Buffer.alloc(100); await fh.read(b, 0, 100, 0); return b.equals(head) } finally { await fh.close() }
  }
  await eventually(written, 10_000, 'the held write\'s first bytes in the partial file', 5)
  return held
}

t.test('an upload a chunk write is streaming into stays, whatever its age and its transfer', async t => {
  const held = await writeHeld('tr-writing')
  await age('tr-writing')
  const r = await partials.sweep({ isLive: () => false, graceMs: HOUR })
  t.same(r.partials, { files: 0, bytes: 0 }, 'kept while the write runs')
  t.same(await filesOf('tr-writing'), ['tr-writing', 'tr-writing.json'])
  held.req.destroy()
  await held.settled
  await eventually(async () => (await partials.sweep({ isLive: () => false, graceMs: HOUR })).partials.files === 2, 10_000, 'the upload to go once its write ended')
  t.same(await filesOf('tr-writing'), [])
})

t.test('a completed upload\'s leftover partial file goes; its record and its delivered file stay', async t => {
  const state = await begin('tr-done')
  const parts = []
  for (const i of [0, 1]) parts.push({ index: i, attemptSlot: 0, etag: (await put(state, i)).headers.get('etag') })
  const { storedName } = await driver.complete(state, parts)
  const delivered = join(dir, storedName!)
  // A crash between the link and the unlink of complete() leaves the partial file as a second link.
  await link(delivered, join(partialDir, 'tr-done'))
  await age('tr-done')
  const r = await partials.sweep({ isLive: () => false, graceMs: HOUR })
  t.same(r.partials, { files: 1, bytes: 0 }, 'the leftover link; its bytes stay with the delivered file')
  t.same(await filesOf('tr-done'), ['tr-done.json'], 'the record stays: it names the delivered file')
  t.same(await readFile(delivered), source, 'the delivered file is whole')
  t.same(Buffer.from(await driver.readRange(state, 0, TOTAL)), source, 'and still reads back')
})

t.test('remove: a completed upload\'s record goes with its transfer, through the sink; its delivered file stays', async t => {
  const state = await begin('tr-retired')
  const parts = []
  for (const i of [0, 1]) parts.push({ index: i, attemptSlot: 0, etag: (await put(state, i)).headers.get('etag') })
  const { storedName } = await driver.complete(state, parts)
  const delivered = join(dir, storedName!)
  t.same(Buffer.from(await driver.readRange(state, 0, TOTAL)), source, 'reads back before')
  const r = await partials.remove('tr-retired')
  t.ok(r !== null && r.files === 1, 'its record')
  t.same(await filesOf('tr-retired'), [], 'nothing of the upload is left in .partial')
  t.same(await readFile(delivered), source, 'the delivered file is whole')
  await t.rejects(driver.readRange(state, 0, TOTAL), 'the sink forgot the upload: no read-back through it')
  // A write streaming into an upload keeps it.
  const held = await writeHeld('tr-removing')
  t.equal(await partials.remove('tr-removing'), null, 'kept while the write runs')
  t.same(await filesOf('tr-removing'), ['tr-removing', 'tr-removing.json'])
  held.req.destroy()
  await held.settled
  await eventually(async () => (await partials.remove('tr-removing')) !== null ? true : undefined, 10_000, 'removed once the write ended')
  t.same(await filesOf('tr-removing'), [])
})

t.test('without a mounted sink the sweep removes the files itself; liveness is asked again last', async t => {
  const sinkDir = await mkdtemp(join(tmpdir(), 'bwnet-sink-sweep-bare-'))
  t.teardown(() => rm(sinkDir, { recursive: true, force: true }))
  const bare = new SinkPartials(sinkDir)
  await mkdir(bare.partialDir, { recursive: true })
  const file = async (name: string, body: string | Buffer): Promise<void> => {
    const path = join(bare.partialDir, name)
    await writeFile(path, body)
    const when = new Date(Date.now() - 2 * HOUR)
    await utimes(path, when, when)
  }
  await file('open', randomBytes(1000))
  await file('open.json', JSON.stringify({ status: 'open' }))
  await file('crashed.json.tmp', '{"status":"op') // a record save cut short
  await file('done.json', JSON.stringify({ status: 'completed', finalName: 'done.bin' }))
  await file('finished', randomBytes(10)) // completed, its partial file left by a crash
  await file('finished.json', JSON.stringify({ status: 'completed', finalName: 'finished.bin' }))
  await file('revived', randomBytes(10))
  await file('not.an.upload', 'x')
  let asked = 0
  const r = await bare.sweep({ graceMs: HOUR, isLive: (id) => id === 'revived' && ++asked > 1 })
  t.equal(r.partials.files, 4, 'the open upload\'s two files, the stray temp record, the completed upload\'s partial file')
  t.same((await readdir(bare.partialDir)).sort(), ['done.json', 'finished.json', 'not.an.upload', 'revived'], 'completed records, a live upload (live by the last look) and a stranger stay')
})

t.test('a partial directory that is a symbolic link is not walked: the sweep deletes nothing where it leads', async t => {
  const elsewhere = await mkdtemp(join(tmpdir(), 'bwnet-sink-elsewhere-'))
  t.teardown(() => rm(elsewhere, { recursive: true, force: true }))
  const victim = join(elsewhere, 'hostname')
  await writeFile(victim, 'not the sink\'s')
  const when = new Date(Date.now() - 2 * HOUR)
  await utimes(victim, when, when)
  const linkedSink = await mkdtemp(join(tmpdir(), 'bwnet-sink-linked-'))
  t.teardown(() => rm(linkedSink, { recursive: true, force: true }))
  await symlink(elsewhere, join(linkedSink, '.partial'))
  const r = await new SinkPartials(linkedSink).sweep({ isLive: () => false, graceMs: HOUR })
  t.same(r, { partials: { files: 0, bytes: 0 }, errors: 0 })
  t.equal(await readFile(victim, 'utf8'), 'not the sink\'s', 'the file it points at stays')
})
