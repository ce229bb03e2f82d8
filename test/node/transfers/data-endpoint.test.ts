// The coordinator's data endpoint tells it of every read of a staged chunk under a valid signed path
// (node/transfers/data-endpoint.ts `onRead`): its own evidence that the attempt's worker acted on the
// offer, whatever the worker's orchestrator relays of its progress (docs/transfers.md#worker-standing).
// Each response is reported as it begins and as it ends, whole or cut (the coordinator counts the chunk as
// read while one is served and once one ended whole); a HEAD, or a path that is unsigned, forged, expired
// or of a chunk no longer staged, tells it nothing.
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import http from 'node:http'
import { randomUUID, randomBytes, createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../../actors/store.ts'
import { keys } from '../../../actors/transfer/model.ts'
import { cryptoReady, newHotkey } from '../../../protocol/index.ts'
import { dataRoutes, signChunkSource, signedChunkSha, MAX_READS_PER_URL, type ChunkSource } from '../../../node/transfers/data-endpoint.ts'
import { BadSignatures, BAD_SIGNATURES_PER_WINDOW, BAD_SIGNATURE_WINDOW_MS } from '../../../node/adapters/bad-signatures.ts'
import { SIGNATURE_PARAM, mintedUrls } from '../../../protocol/signed-url.ts'
import { FileBlobStore } from '../../../node/adapters/blob-store.ts'
import type { BlobStore } from '../../../actors/ports.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { eventually } from '../../helpers/proc.ts'

await cryptoReady()
// More than loopback's socket buffers can hold in flight (up to 4 MiB sent and 6 MiB received by default):
// a reader that stops holds the send.
const CHUNK = 32 * 1024 * 1024

interface Endpoint { src: ChunkSource, clock: ManualClock, reads: Array<[string, string, string]>, base: string, connections: () => Promise<number>, staged: (index: number) => Promise<{ transferId: string, attemptId: string, path: string, bytes: Buffer }> }

async function endpoint (t: Test, blobs: BlobStore): Promise<Endpoint> {
  const store = new LevelStore(new MemoryLevel({ valueEncoding: 'json' }) as never)
  const clock = new ManualClock(Date.now())
  const reads: Array<[string, string, string]> = []
  const app = Fastify({ logger: false })
  let base = ''
  const src: ChunkSource = { key: newHotkey(), store, blobs, clock, baseUrl: () => base, onRead: (transfer, attempt, phase) => { reads.push([transfer, attempt, phase]) }, badSignatures: new BadSignatures({ now: () => clock.now() }) }
  await app.register(dataRoutes(src))
  base = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(async () => { await app.close() })
  const staged = async (index: number): Promise<{ transferId: string, attemptId: string, path: string, bytes: Buffer }> => {
    const bytes = randomBytes(CHUNK)
    const sha256 = await blobs.put(bytes)
    const transferId = randomUUID(); const attemptId = randomUUID()
    await store.table('chunks').put(keys.chunk(transferId, index), { transfer_id: transferId, chunk_index: index, sha256 } as never)
    return { transferId, attemptId, path: signChunkSource(src, transferId, index, attemptId, clock.now() + 60_000).path, bytes }
  }
  const connections = async (): Promise<number> => await new Promise((resolve, reject) => app.server.getConnections((err, n) => { if (err) reject(err); else resolve(n) }))
  return { src, clock, reads, base, staged, connections }
}

/** Sends `method` to the path; resolves with the status once the head arrives, and reads the body only when told. */
function request (base: string, path: string, method: string, localAddress?: string): Promise<{ status: number, res: http.IncomingMessage, req: http.ClientRequest }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, base), { method, agent: false, localAddress }) // one connection each: the server's count says when all are done
    req.once('response', res => { resolve({ status: res.statusCode ?? 0, res, req }) })
    req.once('error', reject)
    req.end()
  })
}

async function body (res: http.IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const p of res) parts.push(p as Buffer)
  return Buffer.concat(parts)
}

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')

/** A blob store of files in a temporary directory, removed after the test. */
async function fileBlobs (t: Test): Promise<FileBlobStore> {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-data-endpoint-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const files = new FileBlobStore(dir)
  await files.open()
  return files
}

for (const kind of ['file', 'memory'] as const) {
  t.test(`${kind} blobs: a whole read is reported with its transfer and attempt; a HEAD and a read cut short are not`, async t => {
    let blobs: BlobStore
    if (kind === 'file') {
      blobs = await fileBlobs(t)
    } else {
      // A store without files: the route answers from memory.
      const held = new Map<string, Uint8Array>()
      blobs = { put: async (b: Uint8Array) => { const s = sha(b); held.set(s, b); return s }, get: async (s: string) => held.get(s) } as unknown as BlobStore
    }
    const e = await endpoint(t, blobs)
    const whole = await e.staged(3)
    const got = await request(e.base, whole.path, 'GET')
    t.equal(got.status, 200)
    t.equal(sha(await body(got.res)), sha(whole.bytes), 'the staged bytes')
    await eventually(async () => e.reads.length === 2, 5_000, 'the read\'s end to be reported', 10)
    t.same(e.reads, [[whole.transferId, whole.attemptId, 'start'], [whole.transferId, whole.attemptId, 'done']], 'begun, then whole, with its transfer and attempt')

    const head = await e.staged(4)
    const h = await request(e.base, head.path, 'HEAD')
    h.res.resume()
    t.equal(h.status, 404, 'a HEAD is no route here: it would move nothing')

    const cut = await e.staged(5)
    const c = await request(e.base, cut.path, 'GET')
    t.equal(c.status, 200)
    c.req.destroy() // the head arrived; the body is never read whole
    t.equal(await signedChunkSha(e.src, head.path), await blobs.put(head.bytes), 'checking a path reports nothing by itself')

    const other = { ...e.src, key: newHotkey() }
    const forged = signChunkSource(other, whole.transferId, 3, whole.attemptId, e.clock.now() + 60_000).path
    for (const [what, path] of [['signed by another key', forged], ['moved to another attempt', whole.path.replace(whole.attemptId, randomUUID())], ['unsigned', whole.path.split('?')[0]!], ['a chunk not staged', signChunkSource(e.src, whole.transferId, 9, randomUUID(), e.clock.now() + 60_000).path]] as const) {
      const r = await request(e.base, path, 'GET')
      t.ok(r.status >= 400 && r.status < 500, `${what}: refused (${r.status})`)
      r.res.resume()
    }
    e.clock.advance(61_000)
    const late = await request(e.base, whole.path, 'GET')
    t.ok(late.status >= 400 && late.status < 500, `expired: refused (${late.status})`)
    late.res.resume()
    // Every connection closed on the server's side, the cut one included: its handler has seen the close.
    await eventually(async () => await e.connections() === 0, 10_000, 'every connection to close', 10)
    await new Promise(resolve => setImmediate(resolve))
    const seen = e.reads.slice(2)
    if (kind === 'file') t.same(seen, [[cut.transferId, cut.attemptId, 'start'], [cut.transferId, cut.attemptId, 'cut']], 'the read cut short: begun, then cut; no other is reported')
    else t.same(seen.filter(r => r[0] !== cut.transferId), [], 'no other is reported (from memory the cut answer may reach the socket whole first)')
  })
}

t.test('one signed URL has at most MAX_READS_PER_URL responses in flight: more are a 503 with Retry-After', async t => {
  const e = await endpoint(t, await fileBlobs(t))
  const c = await e.staged(0)
  // Readers that take the head and then nothing: each response waits on a full socket.
  const held = await Promise.all(Array.from({ length: MAX_READS_PER_URL }, async () => await request(e.base, c.path, 'GET')))
  for (const h of held) t.equal(h.status, 200)
  const more = await request(e.base, c.path, 'GET')
  t.equal(more.status, 503, 'one more is refused')
  t.equal(more.res.headers['retry-after'], '1')
  t.match(JSON.parse((await body(more.res)).toString('utf8')), { code: 'BWN_ERR_UNAVAILABLE', statusCode: 503 }, 'named as unavailable')
  const other = await e.staged(1)
  const free = await request(e.base, other.path, 'GET')
  t.equal(sha(await body(free.res)), sha(other.bytes), 'another URL is read meanwhile')
  for (const h of held) h.req.destroy()
  await eventually(async () => {
    const again = await request(e.base, c.path, 'GET')
    if (again.status !== 200) { again.res.resume(); return false }
    t.equal(sha(await body(again.res)), sha(c.bytes), 'the URL is read whole once the others ended')
    return true
  }, 10_000, 'the URL to be served again', 20)
})

t.test('an address whose signatures keep failing gets no more full checks (429) until its window ends; minted URLs and others are served', async t => {
  const e = await endpoint(t, await fileBlobs(t))
  const c = await e.staged(0)
  // The same path under a made-up signature in its one canonical spelling: it reaches the curve check.
  const forged = (): string => {
    const u = new URL(c.path, 'http://x')
    u.searchParams.set(SIGNATURE_PARAM, randomBytes(64).toString('base64url').slice(0, 85) + 'A')
    return u.pathname + u.search
  }
  for (let i = 0; i < BAD_SIGNATURES_PER_WINDOW; i++) {
    const r = await request(e.base, forged(), 'GET', '127.0.0.1')
    t.equal(r.status, 403, `forged signature ${i + 1} is checked and refused`)
    r.res.resume()
  }
  const refused = await request(e.base, forged(), 'GET', '127.0.0.1')
  t.equal(refused.status, 429, 'then a signature from that address is refused unchecked')
  t.equal(refused.res.headers['retry-after'], String(BAD_SIGNATURE_WINDOW_MS / 1000))
  t.match(JSON.parse((await body(refused.res)).toString('utf8')), { code: 'BWN_ERR_RATE_LIMITED' })
  const minted = await request(e.base, c.path, 'GET', '127.0.0.1')
  t.equal(sha(await body(minted.res)), sha(c.bytes), 'a URL this node minted needs no full check: served from that address too')
  // As after a restart: the node no longer holds what it signed, and its URLs take the full check.
  mintedUrls.clear()
  const unchecked = await request(e.base, c.path, 'GET', '127.0.0.1')
  t.equal(unchecked.status, 429, 'a good URL that needs a full check is refused from that address')
  unchecked.res.resume()
  t.equal(e.src.badSignatures!.refused, 2)
  const other = await request(e.base, c.path, 'GET', '127.0.0.2')
  t.equal(sha(await body(other.res)), sha(c.bytes), 'another address is served')
  e.clock.advance(BAD_SIGNATURE_WINDOW_MS)
  const c2 = await e.staged(1) // the first URL has expired meanwhile
  mintedUrls.clear()
  const later = await request(e.base, c2.path, 'GET', '127.0.0.1')
  t.equal(sha(await body(later.res)), sha(c2.bytes), 'the address is served again once its window ended')
  t.equal(e.reads.filter(([, , phase]) => phase === 'done').length, 3, 'three whole reads reported, none for the refused')
})
