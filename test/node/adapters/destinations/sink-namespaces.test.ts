// Tenant namespaces in the node sink (issue 32 point 5): each organization's files in a directory of its
// own, the stored name answered by complete, and the name check looking at the asking organization's
// files only. Uploads begun without an organization (before namespaces) keep the flat layout.
import t from 'tap'
import Fastify from 'fastify'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cryptoReady, newHotkey, signUrl, authorityOf } from '../../../../protocol/index.ts'
import { sinkRoutes, NodeSinkDriver, sinkFilePath, NAMESPACES_DIR } from '../../../../node/adapters/destinations/node-sink.ts'
import { sinkNameRoutes } from '../../../../node/adapters/destinations/sink-names.ts'
import type { DeliveredPart, UploadSpec, UploadState } from '../../../../actors/destination.ts'

type Teardown = { teardown (fn: () => unknown): void }

await cryptoReady()
const coordinator = newHotkey()
const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')
const CHUNK = 16 * 1024

/** A sink (upload and name routes, as a node mounts them) over `dir`, and a driver for it. */
async function startSink (t: Teardown, dir: string): Promise<{ driver: NodeSinkDriver, baseUrl: string }> {
  const app = Fastify({ logger: false })
  let baseUrl = ''
  const auth = { trustedSigners: new Set([coordinator.address]), authority: () => authorityOf(baseUrl), now: () => Date.now() }
  await app.register(sinkRoutes, { dir, ...auth })
  await app.register(sinkNameRoutes, { dir, ...auth })
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  return { driver: new NodeSinkDriver({ baseUrl, key: coordinator }), baseUrl }
}

async function tempDir (t: Teardown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-sink-ns-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

const spec = (filename: string, bytes: Buffer, namespace?: string): UploadSpec => ({
  transferId: randomUUID(), filename, totalSize: bytes.length, chunkSize: CHUNK, totalChunks: Math.ceil(bytes.length / CHUNK),
  ...(namespace !== undefined ? { namespace } : {})
})

/** Begins, delivers every chunk and completes: what complete() answered. */
async function deliver (driver: NodeSinkDriver, upload: UploadSpec, bytes: Buffer): Promise<{ state: UploadState, parts: DeliveredPart[], storedName: string | undefined }> {
  const state = await driver.begin(upload)
  const parts: DeliveredPart[] = []
  for (let i = 0; i < upload.totalChunks; i++) {
    const target = await driver.target(state, { index: i, offset: i * CHUNK, length: Math.min(CHUNK, bytes.length - i * CHUNK), attemptSlot: 0 }, Date.now() + 60_000)
    const res = await fetch(target.url, { method: 'PUT', headers: target.headers, body: new Uint8Array(bytes.subarray(i * CHUNK, (i + 1) * CHUNK)) })
    parts.push({ index: i, attemptSlot: 0, etag: res.headers.get('etag') })
  }
  const done = await driver.complete(state, parts)
  return { state, parts, storedName: done.storedName }
}

/** The sink's answer to its name check, status and body, as the coordinator would ask it. */
async function nameAnswer (baseUrl: string, filename: string, org: string): Promise<{ status: number, body: unknown }> {
  const url = signUrl({ method: 'GET', url: new URL(`/sink/names?${new URLSearchParams({ filename, org })}`, baseUrl), audience: 'bwnet-sink', expiresAt: Date.now() + 60_000, key: coordinator })
  const res = await fetch(url)
  const body = await res.json() as Record<string, unknown>
  return { status: res.status, body: res.ok ? body : { code: body.code } }
}

t.test('two organizations delivering one name each keep their own bytes under the name complete reports', async t => {
  const dir = await tempDir(t)
  const { driver } = await startSink(t, dir)
  const orgA = randomUUID()
  const orgB = randomUUID()
  const bytesA = randomBytes(2 * CHUNK + 7)
  const bytesB = randomBytes(CHUNK + 3)
  // B goes first, as a squatter would.
  const b = await deliver(driver, spec('invoice-7.pdf', bytesB, orgB), bytesB)
  const a = await deliver(driver, spec('invoice-7.pdf', bytesA, orgA), bytesA)
  t.equal(a.storedName, 'invoice-7.pdf', 'A\'s file keeps its name')
  t.equal(b.storedName, 'invoice-7.pdf', 'so does B\'s')
  t.equal(sha256(await readFile(sinkFilePath(dir, orgA, 'invoice-7.pdf'))), sha256(bytesA), 'A\'s name holds A\'s bytes')
  t.equal(sha256(await readFile(sinkFilePath(dir, orgB, 'invoice-7.pdf'))), sha256(bytesB), 'B\'s name holds B\'s bytes')
  t.same(await readdir(join(dir, NAMESPACES_DIR, orgA)), ['invoice-7.pdf'], 'nothing else in A\'s namespace')
  t.same((await readdir(dir)).filter(f => !f.startsWith('.')), [NAMESPACES_DIR], 'nothing in the flat layout')
  // Within one organization a clash still gets a variant, and complete says which.
  const again = randomBytes(CHUNK)
  const b2 = await deliver(driver, spec('invoice-7.pdf', again, orgB), again)
  t.equal(b2.storedName, 'invoice-7-1.pdf', 'the organization\'s own clash: the stored name is reported')
  t.equal(sha256(await readFile(sinkFilePath(dir, orgB, 'invoice-7-1.pdf'))), sha256(again))
  // Read-back by upload id finds each file in its namespace.
  t.equal(sha256(await driver.readRange(a.state, 0, bytesA.length)), sha256(bytesA), 'read-back of A\'s upload reads A\'s file')
  // A repeated complete (a coordinator that restarted) answers the same stored name.
  t.same(await driver.complete(b2.state, b2.parts), { storedName: 'invoice-7-1.pdf' }, 'a repeated complete answers the same stored name')
})

t.test('a name with folders: complete reports the stored path, a clash\'s variant included', async t => {
  const dir = await tempDir(t)
  const { driver } = await startSink(t, dir)
  const org = randomUUID()
  const first = randomBytes(CHUNK + 1)
  const second = randomBytes(CHUNK + 2)
  const a = await deliver(driver, spec('sub/b.txt', first, org), first)
  const b = await deliver(driver, spec('sub/b.txt', second, org), second)
  t.equal(a.storedName, 'sub/b.txt')
  t.equal(b.storedName, 'sub/b-1.txt', 'the variant the sink chose is reported, not left unknown')
  t.equal(sha256(await readFile(sinkFilePath(dir, org, 'sub/b-1.txt'))), sha256(second))
})

t.test('an organization\'s name check answers the same whether or not another organization holds the name', async t => {
  const dir = await tempDir(t)
  const { driver, baseUrl } = await startSink(t, dir)
  const orgA = randomUUID()
  const orgB = randomUUID()
  const long = `${'n'.repeat(250)}.bin` // 254 bytes: no `-1` variant fits in 255
  const medium = 'report.csv'
  const before = { long: await nameAnswer(baseUrl, long, orgB), medium: await nameAnswer(baseUrl, medium, orgB) }
  t.same(before.long, { status: 200, body: { filename: long } }, 'free before anyone delivered it')
  const bytes = randomBytes(100)
  await deliver(driver, spec(long, bytes, orgA), bytes)
  await deliver(driver, spec(medium, bytes, orgA), bytes)
  t.same(await nameAnswer(baseUrl, long, orgB), before.long, 'B\'s answer for the 254-byte name is unchanged by A\'s file: no oracle')
  t.same(await nameAnswer(baseUrl, medium, orgB), before.medium, 'and for a short one: no variant hinting at A\'s file')
  await t.resolves(driver.checkName({ ...spec(long, bytes, orgB) }), 'the driver\'s check passes for B')
  // B's own file is what counts for B: its own 254-byte name has no free variant.
  await deliver(driver, spec(long, bytes, orgB), bytes)
  t.same(await nameAnswer(baseUrl, long, orgB), { status: 409, body: { code: 'BWN_ERR_SINK_CONFLICT' } }, 'B\'s own name taken: 409 for B')
  t.same(await nameAnswer(baseUrl, medium, orgB), before.medium, 'still unchanged where B holds nothing')
})

t.test('files of the flat layout (delivered before namespaces) stay readable and count for no organization', async t => {
  const dir = await tempDir(t)
  // What an earlier version left: a file in the sink directory and its completed upload record.
  const legacy = randomBytes(CHUNK + 5)
  await mkdir(join(dir, '.partial'), { recursive: true })
  await writeFile(join(dir, 'old.bin'), legacy)
  await writeFile(join(dir, '.partial', 'tr-old.json'), JSON.stringify({ filename: 'old.bin', totalSize: legacy.length, chunkSize: CHUNK, status: 'completed', finalName: 'old.bin' }))
  const { driver, baseUrl } = await startSink(t, dir)
  const oldState: UploadState = { kind: 'node', uploadId: 'tr-old', filename: 'old.bin', totalSize: legacy.length, chunkSize: CHUNK, totalChunks: 2 }
  t.equal(sha256(await driver.readRange(oldState, 0, legacy.length)), sha256(legacy), 'the old upload reads back from the flat file')
  t.equal(await driver.chunkSha256(oldState, { index: 1, length: 5 }), sha256(legacy.subarray(CHUNK)), 'its chunk hashes too')
  t.same(await nameAnswer(baseUrl, 'old.bin', randomUUID()), { status: 200, body: { filename: 'old.bin' } }, 'a flat file takes no organization\'s name')
  // An upload begun before the upgrade (no organization in its record) completes where it would have.
  const inFlight = randomBytes(CHUNK)
  const { storedName } = await deliver(driver, spec('old.bin', inFlight), inFlight)
  t.equal(storedName, 'old-1.bin', 'an upload without an organization lands in the flat layout, beside the old files')
  t.equal(sha256(await readFile(join(dir, 'old-1.bin'))), sha256(inFlight))
  t.equal(sha256(await readFile(join(dir, 'old.bin'))), sha256(legacy), 'the old file is untouched')
  // Without an organization, a name under the namespaces directory would land in one's namespace.
  const victim = randomUUID()
  await t.rejects(deliver(driver, spec(`${NAMESPACES_DIR}/${victim}/invoice.pdf`, inFlight), inFlight), /BWN_ERR_SINK_BAD_FILENAME|cannot be named/, 'a flat upload named into a namespace is refused')
  t.same(await readdir(join(dir, NAMESPACES_DIR)), [], 'no namespace was made or written')
})

t.test('an upload begun by an earlier version without an organization, named into a namespace, is refused at complete', async t => {
  const dir = await tempDir(t)
  // The begin passed before the check existed: its record is open, its partial file holds the chunk.
  const victim = randomUUID()
  const filename = `${NAMESPACES_DIR}/${victim}/invoice.pdf`
  const bytes = randomBytes(CHUNK)
  await mkdir(join(dir, '.partial'), { recursive: true })
  await writeFile(join(dir, '.partial', 'tr-open-old'), Buffer.alloc(bytes.length))
  await writeFile(join(dir, '.partial', 'tr-open-old.json'), JSON.stringify({ filename, totalSize: bytes.length, chunkSize: CHUNK, status: 'open' }))
  const { driver } = await startSink(t, dir)
  const state: UploadState = { kind: 'node', uploadId: 'tr-open-old', filename, totalSize: bytes.length, chunkSize: CHUNK, totalChunks: 1 }
  const target = await driver.target(state, { index: 0, offset: 0, length: bytes.length, attemptSlot: 0 }, Date.now() + 60_000)
  const res = await fetch(target.url, { method: 'PUT', headers: target.headers, body: new Uint8Array(bytes) })
  t.equal(res.status, 200, 'its chunk is written to the partial file')
  await t.rejects(driver.complete(state, [{ index: 0, attemptSlot: 0, etag: res.headers.get('etag') }]), /BWN_ERR_SINK_BAD_FILENAME|cannot be named/, 'its complete is refused')
  await t.rejects(readdir(join(dir, NAMESPACES_DIR, victim)), { code: 'ENOENT' }, 'nothing landed in the namespace')
})

t.test('a flat-layout file named like the namespaces directory stops the sink with a clear message', async t => {
  const dir = await tempDir(t)
  await writeFile(join(dir, NAMESPACES_DIR), 'a file delivered as "orgs" before namespaces')
  await t.rejects(startSink(t, dir), /holds a file named orgs/)
  t.equal(await readFile(join(dir, NAMESPACES_DIR), 'utf8'), 'a file delivered as "orgs" before namespaces', 'the file is left as it was')
})

t.test('a namespace is one safe directory entry', async t => {
  const dir = await tempDir(t)
  const { driver } = await startSink(t, dir)
  for (const bad of ['../x', '.hidden', 'a/b', '']) {
    await t.rejects(driver.begin(spec('x.bin', randomBytes(10), bad)), { code: 'BWN_ERR_DESTINATION_REFUSED', status: 400, message: /sink begin/ }, JSON.stringify(bad))
  }
  t.throws(() => sinkFilePath(dir, '../escape', 'x.bin'), RangeError)
})
