// sendFileRange: file bytes to an HTTP response through reused buffers. A buffer must not be reused
// before the socket is done with it, so concurrent responses (sharing the pool) and a slow reader must
// all get their own bytes, and a response that holds its write callbacks back sees each buffer unchanged
// until it calls back; a short file, a vanished or stalled client ends the send with an error; an idle
// pool lets its free buffers go.
import t from 'tap'
import http from 'node:http'
import { EventEmitter, once } from 'node:events'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { sendFileRange, SendCut, FILE_PIECE_BYTES, FileBufferPool, KEEP_IDLE_MS, type FileResponse } from '../../../node/adapters/file-response.ts'
import { eventually } from '../../helpers/proc.ts'

/** What these helpers use of a tap test. */
interface Test { teardown (fn: () => unknown): void }

const MIB = 1024 * 1024
const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')

async function fixture (t: Test, size: number): Promise<{ path: string, data: Buffer }> {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-file-response-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const data = randomBytes(size)
  const path = join(dir, 'blob')
  await writeFile(path, data)
  return { path, data }
}

/** A server answering GET /?start=&length=&promise= with that range of `path` (promise: the Content-Length). */
async function serve (t: Test, path: string): Promise<{ base: string, outcomes: Array<Promise<string>> }> {
  const outcomes: Array<Promise<string>> = []
  const server = http.createServer((req, res) => {
    const q = new URL(req.url!, 'http://x').searchParams
    const start = Number(q.get('start')); const length = Number(q.get('length'))
    outcomes.push((async () => {
      const fh = await open(path, 'r')
      try {
        res.writeHead(200, { 'content-length': q.get('promise') ?? String(length) })
        await sendFileRange(res, fh, start, length)
        return 'sent'
      } catch (err) { return `failed (${(err as SendCut).side}): ${(err as Error).message}` } finally { await fh.close() }
    })())
  })
  server.listen(0, '127.0.0.1'); await once(server, 'listening')
  t.teardown(() => { server.closeAllConnections(); server.close() })
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, outcomes }
}

/** GETs a URL; `slow` reads 64 KiB every few ms, so the server's writes wait on the socket. */
function get (url: string, slow = false): Promise<{ body: Buffer, complete: boolean }> {
  return new Promise((resolve) => {
    const parts: Buffer[] = []
    const req = http.get(url, { agent: false }, (res) => {
      const done = (complete: boolean): void => resolve({ body: Buffer.concat(parts), complete })
      res.once('end', () => done(res.complete)).once('error', () => done(false)).once('aborted', () => done(false))
      if (!slow) { res.on('data', (d: Buffer) => parts.push(d)); return }
      const pacer = setInterval(() => {
        const d = res.read(64 * 1024) as Buffer | null ?? res.read() as Buffer | null
        if (d !== null) parts.push(d)
      }, 2)
      res.once('close', () => clearInterval(pacer))
    })
    req.once('error', () => resolve({ body: Buffer.concat(parts), complete: false }))
  })
}

t.test('every response gets its own bytes, also concurrent ones and a slow reader', async t => {
  const size = 6 * FILE_PIECE_BYTES + 12345
  const { path, data } = await fixture(t, size)
  const { base, outcomes } = await serve(t, path)
  const ranges: Array<[number, number, boolean]> = [
    [0, size, true], // slow: its writes wait on the socket while the others reuse the pool
    [0, size, false],
    [777, 3 * FILE_PIECE_BYTES + 5, false],
    [size - 10, 10, false],
    [FILE_PIECE_BYTES, FILE_PIECE_BYTES, true]
  ]
  const got = await Promise.all(ranges.map(([start, length, slow]) => get(`${base}/?start=${start}&length=${length}`, slow)))
  ranges.forEach(([start, length, slow], i) => {
    t.ok(got[i]!.complete, `range ${start}+${length} complete`)
    t.equal(sha256(got[i]!.body), sha256(data.subarray(start, start + length)), `range ${start}+${length}${slow ? ' (slow reader)' : ''} byte for byte`)
  })
  t.same(await Promise.all(outcomes), ranges.map(() => 'sent'))
})

t.test('a file shorter than promised cuts the connection instead of hanging', async t => {
  const { path } = await fixture(t, 2 * MIB)
  const { base, outcomes } = await serve(t, path)
  const got = await get(`${base}/?start=${MIB}&length=${2 * MIB}`)
  t.notOk(got.complete, 'the reader sees a short body')
  t.ok(got.body.length <= MIB, `at most the ${MIB} bytes the file has (${got.body.length})`)
  t.match(await outcomes[0], /^failed \(file\): the file ended \d+ bytes early/)
})

t.test('a reader that goes away ends the send', async t => {
  const { path } = await fixture(t, 32 * MIB)
  const { base, outcomes } = await serve(t, path)
  await new Promise<void>((resolve) => {
    const req = http.get(`${base}/?start=0&length=${32 * MIB}`, { agent: false }, (res) => {
      res.once('data', () => { req.destroy(); resolve() })
    })
    req.once('error', () => {})
  })
  t.match(await outcomes[0], /^failed \(client\): /, 'the send rejects once the client is gone')
})

t.test('HEAD gets the headers and no body', async t => {
  const { path } = await fixture(t, 3 * MIB)
  const { base, outcomes } = await serve(t, path)
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    http.request(`${base}/?start=0&length=${3 * MIB}`, { method: 'HEAD', agent: false }, resolve).once('error', reject).end()
  })
  t.equal(res.headers['content-length'], String(3 * MIB))
  t.equal(await outcomes[0], 'sent')
})

/**
 * A response that holds each write's callback back until the next write (or end) and checks, before
 * calling back, that the buffer still holds what was written: any reuse before the callback shows.
 */
class HoldingResponse extends EventEmitter {
  destroyed = false
  body: Buffer[] = []
  changed = 0
  stall = false
  #held: { buf: Buffer, copy: Buffer, cb: (err?: Error | null) => void } | null = null
  #release (): void {
    const h = this.#held
    this.#held = null
    if (h === null) return
    if (!h.buf.equals(h.copy)) this.changed++
    this.body.push(h.copy)
    h.cb(null)
  }

  write (buf: Buffer, cb: (err?: Error | null) => void): boolean {
    this.#release()
    this.#held = { buf, copy: Buffer.from(buf), cb }
    if (this.stall) return false
    // Release on a later turn unless another write comes first: the send awaits its callback before reusing.
    setImmediate(() => { if (this.#held?.buf === buf) this.#release() })
    return false
  }

  end (): this { this.#release(); this.emit('finish'); return this }
  destroy (): this { this.destroyed = true; this.emit('close'); return this }
}

t.test('a buffer is not reused before its write calls back, also with two sends sharing the pool', async t => {
  const size = 5 * FILE_PIECE_BYTES + 99
  const { path, data } = await fixture(t, size)
  const fh1 = await open(path, 'r'); const fh2 = await open(path, 'r')
  t.teardown(async () => { await fh1.close(); await fh2.close() })
  const a = new HoldingResponse(); const b = new HoldingResponse()
  await Promise.all([
    sendFileRange(a as unknown as FileResponse, fh1, 0, size),
    sendFileRange(b as unknown as FileResponse, fh2, 7, size - 7)
  ])
  t.equal(a.changed + b.changed, 0, 'no buffer changed between its write and its callback')
  t.equal(sha256(Buffer.concat(a.body)), sha256(data))
  t.equal(sha256(Buffer.concat(b.body)), sha256(data.subarray(7)))
})

t.test('a reader that stops reading is cut after the stall time', async t => {
  const { path } = await fixture(t, 4 * FILE_PIECE_BYTES)
  const fh = await open(path, 'r')
  t.teardown(() => fh.close())
  const res = new HoldingResponse()
  res.stall = true
  const started = Date.now()
  await t.rejects(sendFileRange(res as unknown as FileResponse, fh, 0, 4 * FILE_PIECE_BYTES, { stallMs: 200 }), { side: 'client', message: /no write completed in 200 ms/ })
  t.ok(res.destroyed, 'the response is destroyed')
  t.ok(Date.now() - started >= 190, 'not before the stall time')
})

t.test('the pool keeps its free buffers while in use and lets them go once idle', async t => {
  const { path, data } = await fixture(t, 3 * FILE_PIECE_BYTES)
  const fh = await open(path, 'r')
  t.teardown(() => fh.close())
  const pool = new FileBufferPool(300)
  const send = async (): Promise<void> => {
    const res = new HoldingResponse()
    await sendFileRange(res as unknown as FileResponse, fh, 0, data.length, { pool })
    t.equal(sha256(Buffer.concat(res.body)), sha256(data), 'sent byte for byte')
  }
  await send()
  t.ok(pool.free >= 1 && pool.free <= 2, `buffers kept for the next response (${pool.free})`)
  // A send that starts before the idle time is up keeps the buffers: the timer looks again later.
  const kept = pool.free
  // The pool's idle time runs from its last use, which is inside the send: measured from the send's
  // start, a release before the idle time shows however long the send itself took on a loaded machine.
  const secondStarted = performance.now()
  await send()
  t.equal(pool.free, kept, 'the second send reused them')
  await eventually(async () => pool.free === 0, 10_000, 'the idle pool lets its buffers go')
  t.ok(performance.now() - secondStarted >= 250, 'not before the idle time')
  t.equal(KEEP_IDLE_MS, 10_000, 'the shared pool waits 10 s')
})
