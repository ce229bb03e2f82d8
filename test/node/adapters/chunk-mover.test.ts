// The worker's streamed move against real HTTP servers on loopback: pull → check → PUT. A chunk whose
// bytes do not match the offer fails the attempt and its PUT never completes at the destination; the
// swarm bulk fallback streams the same way; the in-flight budget bounds concurrent moves.
import t from 'tap'
import http from 'node:http'
import { once } from 'node:events'
import { createHash, randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { HttpChunkMover, ChunkCheck, STREAM_WINDOW_BYTES, sourcePolicy } from '../../../node/adapters/chunk-mover.ts'
import { refusedClass } from '../../../node/adapters/destinations/url-policy.ts'
import { InflightBudget } from '../../../node/adapters/inflight-budget.ts'
import { MAX_CHUNK_BODY_BYTES, type TaskOffer } from '../../../protocol/index.ts'

/** The test servers listen on loopback, which the destination policy must allow here. */
const LOOPBACK = { allowPrivate: true }

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')
const CHUNK = randomBytes(3 * 1024 * 1024 + 17)

interface Received { complete: boolean, bytes: number, sha256: string | null }

/** A source serving `body` in 64 KiB pieces, and a destination recording what each PUT delivered. */
async function servers (t: { teardown (fn: () => unknown): void }, body: Buffer) {
  const received: Received[] = []
  let sourceGets = 0
  const source = http.createServer((req, res) => {
    sourceGets++
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(body.length) })
    for (let off = 0; off < body.length; off += 64 * 1024) res.write(body.subarray(off, off + 64 * 1024))
    res.end()
  })
  const dest = http.createServer((req, res) => {
    const hash = createHash('sha256')
    const r: Received = { complete: false, bytes: 0, sha256: null }
    received.push(r)
    req.on('data', (c: Buffer) => { hash.update(c); r.bytes += c.length })
    req.on('end', () => {
      r.complete = true
      r.sha256 = hash.digest('hex')
      if (Number(req.headers['content-length']) !== r.bytes) { res.writeHead(400).end('length'); return }
      res.writeHead(200, { etag: `"${r.sha256}"` }).end()
    })
    req.on('error', () => {})
  })
  for (const s of [source, dest]) { s.listen(0, '127.0.0.1'); await once(s, 'listening') }
  t.teardown(() => { source.closeAllConnections(); dest.closeAllConnections(); source.close(); dest.close() })
  const url = (s: http.Server): string => `http://127.0.0.1:${(s.address() as AddressInfo).port}`
  return { sourceUrl: url(source) + '/chunk', destUrl: url(dest) + '/put', received, sourceGets: () => sourceGets }
}

function offer (sourceUrl: string, destUrl: string, bytes: Buffer, over: Partial<TaskOffer> = {}): TaskOffer {
  return {
    taskId: 't', attemptId: 'a', transferId: 'x', chunkIndex: 0, length: bytes.length, sha256: sha256(bytes),
    source: { url: sourceUrl, path: '/chunk', coordinator: 'c' },
    target: { method: 'PUT', url: destUrl, headers: { 'content-type': 'application/octet-stream' }, expiresAt: Date.now() + 60_000 },
    ...over
  } as unknown as TaskOffer
}

const noSwarm = { transport: { fetchBulkPieces: async () => { throw new Error('no swarm here') } }, messenger: { peerOf: () => undefined } }

t.test('streams the chunk into the PUT and reports its sha256 and the destination ETag', async t => {
  const s = await servers(t, CHUNK)
  const mover = new HttpChunkMover(noSwarm.transport as never, noSwarm.messenger as never, LOOPBACK)
  const r = await mover.move(offer(s.sourceUrl, s.destUrl, CHUNK), { signal: new AbortController().signal, corrupt: false })
  t.same(r, { sha256: sha256(CHUNK), etag: `"${sha256(CHUNK)}"`, bytes: CHUNK.length, via: 'http' })
  t.same(s.received, [{ complete: true, bytes: CHUNK.length, sha256: sha256(CHUNK) }], 'the destination got the exact bytes once')
})

t.test('a source that does not match the offer fails the attempt and never completes the PUT', async t => {
  const bad = Buffer.from(CHUNK); bad[12345]! ^= 1
  const s = await servers(t, bad)
  const mover = new HttpChunkMover(noSwarm.transport as never, noSwarm.messenger as never, LOOPBACK)
  await t.rejects(mover.move(offer(s.sourceUrl, s.destUrl, CHUNK), { signal: new AbortController().signal, corrupt: false }), { code: 'source_hash_mismatch' })
  await new Promise(resolve => setImmediate(resolve))
  t.equal(s.received.length, 1, 'the PUT began: the bytes stream before the hash is known')
  t.ok(s.received.every(r => !r.complete), `no PUT completed (${JSON.stringify(s.received)})`)
  t.ok(s.received.every(r => r.bytes < CHUNK.length), 'the last bytes were held back')
})

t.test('a source longer or shorter than the offer fails the attempt', async t => {
  for (const [name, body] of [['longer', Buffer.concat([CHUNK, Buffer.from('x')])], ['shorter', CHUNK.subarray(1)]] as const) {
    const s = await servers(t, body)
    const mover = new HttpChunkMover(noSwarm.transport as never, noSwarm.messenger as never, LOOPBACK)
    await t.rejects(mover.move(offer(s.sourceUrl, s.destUrl, CHUNK), { signal: new AbortController().signal, corrupt: false }), { code: 'source_size_mismatch' }, name)
    t.same(s.received, [], `${name}: refused before any PUT (the source's Content-Length says so)`)
  }
})

t.test('a coordinator that refuses the pull, or never answers within the move\'s time, fails the attempt with a reason', async t => {
  const s = await servers(t, CHUNK)
  const held: http.ServerResponse[] = []
  const odd = http.createServer((req, res) => {
    if (req.url === '/gone') { res.writeHead(404).end('no such chunk'); return }
    held.push(res) // never answers
  })
  odd.listen(0, '127.0.0.1'); await once(odd, 'listening')
  t.teardown(() => { for (const r of held) r.destroy(); odd.closeAllConnections(); odd.close() })
  const base = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`
  // The refusal with the default idle time (a busy machine may take longer than a short one to answer).
  const patient = new HttpChunkMover(noSwarm.transport as never, noSwarm.messenger as never, LOOPBACK)
  await t.rejects(patient.move(offer(`${base}/gone`, s.destUrl, CHUNK), { signal: new AbortController().signal, corrupt: false }), { code: 'source_refused', message: /404/ })
  const mover = new HttpChunkMover(noSwarm.transport as never, noSwarm.messenger as never, LOOPBACK, { moveTimeoutMs: 300 })
  await t.rejects(mover.move(offer(`${base}/silent`, s.destUrl, CHUNK), { signal: new AbortController().signal, corrupt: false }), { code: 'source_unreachable', message: /in time/ })
  t.equal(s.received.length, 0, 'nothing was PUT')
})

t.test('judged by progress: a slow source that keeps its minimum outlives the window; one that stops or trickles fails as move_stalled', async t => {
  const body = randomBytes(1024 * 1024)
  const s = await servers(t, body)
  const timers: NodeJS.Timeout[] = []
  // 64 KiB every 40 ms: the whole body takes about 0.65 s, over twice the mover's 300 ms idle time.
  const trickle = http.createServer((req, res) => {
    res.writeHead(200, { 'content-length': String(body.length) })
    let off = 0
    const stopAt = req.url === '/stops' ? body.length >> 1 : body.length
    // '/trickles': a KiB every 40 ms, far below the minimum, and never silent for the window.
    const piece = req.url === '/trickles' ? 1024 : 64 * 1024
    const timer = setInterval(() => {
      if (off >= stopAt) { clearInterval(timer); if (stopAt === body.length) res.end(); return }
      res.write(body.subarray(off, off + piece)); off += piece
    }, 40)
    timers.push(timer)
  })
  trickle.listen(0, '127.0.0.1'); await once(trickle, 'listening')
  t.teardown(() => { for (const x of timers) clearInterval(x); trickle.closeAllConnections(); trickle.close() })
  const base = `http://127.0.0.1:${(trickle.address() as AddressInfo).port}`
  // A window of 300 ms that must bring 256 KiB: the slow source brings ~480 KiB per window.
  const mover = new HttpChunkMover(noSwarm.transport as never, noSwarm.messenger as never, LOOPBACK, { moveTimeoutMs: 300, moveProgressBytes: 256 * 1024 })
  let reading: (() => number) | null = null
  const readings: number[] = []
  const sampler = setInterval(() => { if (reading !== null) readings.push(reading()) }, 20)
  t.teardown(() => clearInterval(sampler))
  const t0 = Date.now()
  const r = await mover.move(offer(`${base}/slow`, s.destUrl, body), { signal: new AbortController().signal, corrupt: false, progress: (read) => { reading = read } })
  t.ok(Date.now() - t0 > 300, `the move took ${Date.now() - t0} ms, longer than the idle time`)
  t.equal(r.sha256, sha256(body), 'and delivered every byte')
  t.equal(s.received[0]!.sha256, sha256(body))
  t.equal(reading!(), body.length, 'the progress reading ends at the chunk\'s length')
  t.ok(readings.some(b => b > 0 && b < body.length), 'and read part-way while it moved')
  await t.rejects(mover.move(offer(`${base}/stops`, s.destUrl, body), { signal: new AbortController().signal, corrupt: false }), { code: 'move_stalled', message: /too little progress/ })
  const t1 = Date.now()
  await t.rejects(mover.move(offer(`${base}/trickles`, s.destUrl, body), { signal: new AbortController().signal, corrupt: false }), { code: 'move_stalled', message: /too little progress/ }, 'a source that trickles below the minimum fails too, though never silent')
  t.ok(Date.now() - t1 < 5_000, `within about a window (${Date.now() - t1} ms), not the 41 s the trickle would take`)
})

t.test('a corrupting worker writes flipped bytes and reports the hash of what it pulled', async t => {
  const s = await servers(t, CHUNK)
  const mover = new HttpChunkMover(noSwarm.transport as never, noSwarm.messenger as never, LOOPBACK)
  const r = await mover.move(offer(s.sourceUrl, s.destUrl, CHUNK), { signal: new AbortController().signal, corrupt: true })
  t.equal(r.sha256, sha256(CHUNK))
  const flipped = Buffer.from(CHUNK); flipped[CHUNK.length >> 1]! ^= 0xff
  t.equal(s.received[0]!.sha256, sha256(flipped), 'exactly the middle byte differs at the destination')
  t.equal(sha256(CHUNK), offer('', '', CHUNK).sha256, 'the source buffer was not touched')
})

t.test('the destination refusing the PUT fails the attempt with its status; out of room (507) is destination_full', async t => {
  const s = await servers(t, CHUNK)
  const mover = new HttpChunkMover(noSwarm.transport as never, noSwarm.messenger as never, LOOPBACK)
  for (const [status, code] of [[403, 'destination_refused'], [507, 'destination_full'], [503, 'destination_unavailable']] as const) {
    const refusing = http.createServer((req, res) => { res.writeHead(status).end('no'); req.resume() })
    refusing.listen(0, '127.0.0.1'); await once(refusing, 'listening')
    t.teardown(() => { refusing.closeAllConnections(); refusing.close() })
    await t.rejects(mover.move(offer(s.sourceUrl, `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/`, CHUNK), { signal: new AbortController().signal, corrupt: false }), { code, message: new RegExp(String(status)) }, `${status}: ${code}`)
  }
})

t.test('a destination that refuses before reading the body (as the node sink answers 507) ends the move at once, not at its idle timeout', async t => {
  const big = randomBytes(32 * 1024 * 1024) // more than the sockets' buffers hold
  const s = await servers(t, big)
  const sockets = new Set<import('node:net').Socket>()
  const full = http.createServer((req, res) => {
    req.pause() // reads nothing of the body
    res.writeHead(507, { 'content-type': 'application/problem+json' }).end('{"code":"BWN_ERR_STORAGE_FULL"}')
  })
  full.on('connection', (c) => { sockets.add(c) })
  full.listen(0, '127.0.0.1'); await once(full, 'listening')
  t.teardown(() => { for (const c of sockets) c.destroy(); full.close() })
  const idleMs = 20_000
  const mover = new HttpChunkMover(noSwarm.transport as never, noSwarm.messenger as never, LOOPBACK, { moveTimeoutMs: idleMs })
  const t0 = performance.now()
  await t.rejects(mover.move(offer(s.sourceUrl, `http://127.0.0.1:${(full.address() as AddressInfo).port}/`, big), { signal: new AbortController().signal, corrupt: false }), { code: 'destination_full', message: /507 \{"code":"BWN_ERR_STORAGE_FULL"\}/ }, 'with the destination\'s answer')
  t.ok(performance.now() - t0 < idleMs / 2, `ended in ${Math.round(performance.now() - t0)} ms, not at the ${idleMs} ms idle timeout`)
})

t.test('HTTP unreachable: the swarm bulk read streams into the same PUT, accounted in the budget', async t => {
  const s = await servers(t, CHUNK)
  const budget = new InflightBudget(64 * 1024 * 1024)
  let peak = 0
  const transport = { fetchBulkPieces: async () => { await new Promise(resolve => setImmediate(resolve)); return [new Uint8Array(CHUNK)] } }
  const mover = new HttpChunkMover(transport as never, { peerOf: () => 'peer' } as never, LOOPBACK, { budget })
  const timer = setInterval(() => { peak = Math.max(peak, budget.used) }, 1)
  t.teardown(() => clearInterval(timer))
  const r = await mover.move(offer('http://127.0.0.1:9/chunk', s.destUrl, CHUNK), { signal: new AbortController().signal, corrupt: false })
  t.equal(r.via, 'bulk')
  t.equal(r.sha256, sha256(CHUNK))
  t.same(s.received, [{ complete: true, bytes: CHUNK.length, sha256: sha256(CHUNK) }])
  t.equal(budget.used, 0, 'everything given back')
  const bad = Buffer.from(CHUNK); bad[0]! ^= 1
  const liar = new HttpChunkMover({ fetchBulkPieces: async () => [bad] } as never, { peerOf: () => 'peer' } as never, LOOPBACK, { budget })
  await t.rejects(liar.move(offer('http://127.0.0.1:9/chunk', s.destUrl, CHUNK), { signal: new AbortController().signal, corrupt: false }), { code: 'source_hash_mismatch' })
  t.equal(budget.used, 0)
})

t.test('an offer over the largest chunk a node moves is refused before anything is read or reserved', async t => {
  const s = await servers(t, CHUNK)
  const budget = new InflightBudget(64 * 1024 * 1024)
  let bulkReads = 0
  const transport = { fetchBulkPieces: async () => { bulkReads++; return [new Uint8Array(CHUNK)] } }
  const mover = new HttpChunkMover(transport as never, { peerOf: () => 'peer' } as never, LOOPBACK, { budget })
  // A rogue coordinator's offer: its data endpoint unreachable (so the bulk channel would be next).
  for (const length of [MAX_CHUNK_BODY_BYTES + 1, 50 * 1024 ** 3]) {
    await t.rejects(mover.move(offer('http://127.0.0.1:9/chunk', s.destUrl, CHUNK, { length }), { signal: AbortSignal.timeout(10_000), corrupt: false }), { code: 'source_size_mismatch', message: /over the/ }, `${length} bytes refused`)
  }
  await t.rejects(mover.move(offer(s.sourceUrl, s.destUrl, CHUNK, { length: 50 * 1024 ** 3 }), { signal: AbortSignal.timeout(10_000), corrupt: false }), { code: 'source_size_mismatch' }, 'with a reachable source too')
  t.same([bulkReads, s.sourceGets(), s.received.length, budget.used], [0, 0, 0, 0], 'no bulk read, no GET, no PUT, nothing reserved')
})

t.test('a bulk read reserves its chunk before the read, within the budget, and moves wait for each other without blocking', async t => {
  const s = await servers(t, CHUNK)
  // Smaller than the chunk: a bulk read takes all of it.
  const budget = new InflightBudget(2 * 1024 * 1024)
  const atStart: number[] = []
  let peak = 0
  const transport = {
    fetchBulkPieces: async (_peer: string, _key: string, _timeout: number, max: number, onBytes?: (n: number) => void) => {
      atStart.push(budget.used)
      t.equal(max, CHUNK.length, 'the read takes no more than the offer\'s length')
      const pieces: Uint8Array[] = []
      for (let off = 0; off < CHUNK.length; off += 256 * 1024) {
        await new Promise(resolve => setImmediate(resolve))
        peak = Math.max(peak, budget.used)
        pieces.push(CHUNK.subarray(off, off + 256 * 1024))
        onBytes?.(Math.min(CHUNK.length, off + 256 * 1024))
      }
      return pieces
    }
  }
  const mover = new HttpChunkMover(transport as never, { peerOf: () => 'peer' } as never, LOOPBACK, { budget })
  const timer = setInterval(() => { peak = Math.max(peak, budget.used) }, 1)
  t.teardown(() => clearInterval(timer))
  // Bounded: a move that waits for bytes it can never get fails the test rather than hanging it.
  const moves = Array.from({ length: 3 }, async () => await mover.move(offer('http://127.0.0.1:9/chunk', s.destUrl, CHUNK), { signal: AbortSignal.timeout(20_000), corrupt: false }))
  const results = await Promise.all(moves)
  t.ok(results.every(r => r.via === 'bulk' && r.sha256 === sha256(CHUNK)), 'every move delivered the chunk')
  t.same(atStart, [budget.capacity, budget.capacity, budget.capacity], 'each read began holding the whole budget (its chunk, capped), not only its stream window')
  t.ok(peak <= budget.capacity, `peak reservation ${peak} within ${budget.capacity}`)
  t.equal(s.received.filter(r => r.complete && r.sha256 === sha256(CHUNK)).length, 3)
  t.equal(budget.used, 0, 'everything given back')
})

t.test('a bulk read shows progress while it arrives: half a byte per byte in, half per byte out, the chunk\'s length at the end', async t => {
  const s = await servers(t, CHUNK)
  let reading: (() => number) | undefined
  const seen: number[] = []
  // Two pieces arrive over the swarm, the progress reading is read between them (as the worker's ticker does).
  const transport = {
    fetchBulkPieces: async (_peer: string, _key: string, _timeout: number, _max: number, onBytes?: (n: number) => void) => {
      const half = CHUNK.length >> 1
      onBytes?.(half); seen.push(reading!())
      await new Promise(resolve => setImmediate(resolve))
      onBytes?.(CHUNK.length); seen.push(reading!())
      return [new Uint8Array(CHUNK)]
    }
  }
  const mover = new HttpChunkMover(transport as never, { peerOf: () => 'peer' } as never, LOOPBACK, { moveTimeoutMs: 60_000 })
  const r = await mover.move(offer('http://127.0.0.1:9/chunk', s.destUrl, CHUNK), { signal: new AbortController().signal, corrupt: false, progress: (read) => { reading = read } })
  t.equal(r.via, 'bulk')
  t.same(seen, [(CHUNK.length >> 1) / 2, CHUNK.length / 2], 'the bytes coming in count half each, as they arrive')
  t.equal(reading!(), CHUNK.length, 'the reading ends at the chunk\'s length once the PUT is done')
})

t.test('the in-flight budget bounds concurrent moves', async t => {
  const s = await servers(t, CHUNK)
  const budget = new InflightBudget(2 * STREAM_WINDOW_BYTES)
  const mover = new HttpChunkMover(noSwarm.transport as never, noSwarm.messenger as never, LOOPBACK, { budget })
  let peak = 0
  const timer = setInterval(() => { peak = Math.max(peak, budget.used) }, 1)
  t.teardown(() => clearInterval(timer))
  const moves = Array.from({ length: 6 }, async () => await mover.move(offer(s.sourceUrl, s.destUrl, CHUNK), { signal: new AbortController().signal, corrupt: false }))
  t.equal(budget.waiting, 4, 'two run, four wait')
  const results = await Promise.all(moves)
  t.equal(results.length, 6)
  t.ok(results.every(r => r.sha256 === sha256(CHUNK)))
  t.ok(peak <= budget.capacity, `peak reservation ${peak} within ${budget.capacity}`)
  t.equal(budget.used, 0)
})

t.test('ChunkCheck holds back the last piece until the hash is known', async t => {
  const check = new ChunkCheck(6, sha256(Buffer.from('abcdef')), false)
  const out: Buffer[] = []
  check.on('data', (b: Buffer) => out.push(b))
  check.write(Buffer.from('abc'))
  await new Promise(resolve => setImmediate(resolve))
  t.same(out, [], 'the first piece waits for a second')
  check.write(Buffer.from('def'))
  await new Promise(resolve => setImmediate(resolve))
  t.equal(Buffer.concat(out).toString(), 'abc', 'the last piece is held')
  check.end()
  await once(check, 'end')
  t.equal(Buffer.concat(out).toString(), 'abcdef')
  t.equal(check.digest, sha256(Buffer.from('abcdef')))
})

t.test('this host\'s own addresses: refused for a source and a target, except the own orchestrator\'s node', async t => {
  const s = await servers(t, CHUNK)
  // Loopback stands in for the host's public address (the own check comes before the ranges'). A
  // foreign coordinator's data endpoint on this host is refused, and its chunk comes over the swarm.
  let bulkReads = 0
  const swarm = { fetchBulkPieces: async () => { bulkReads++; return [new Uint8Array(CHUNK)] } }
  const mover = new HttpChunkMover(swarm as never, { peerOf: () => 'peer' } as never, { allowPrivate: false, own: ['127.0.0.1'] })
  const move = async (target: string, fromOwnOrchestrator: boolean) =>
    await mover.move(offer(s.sourceUrl, target, CHUNK), { signal: new AbortController().signal, corrupt: false, fromOwnOrchestrator })
  const sameOrigin = new URL('/put', s.sourceUrl).href
  await t.rejects(move(s.destUrl, true), { code: 'destination_refused', message: /own host/ }, 'a tenant\'s target on this host')
  await t.rejects(move(sameOrigin, false), { code: 'destination_refused', message: /own host/ }, 'a foreign coordinator\'s "sink" on this host')
  await t.rejects(move(sameOrigin, true), { code: 'destination_refused', message: /loopback/ }, 'the own orchestrator\'s sink: the own check is lifted, the ranges still hold')
  t.equal(s.sourceGets(), 2, 'the own orchestrator\'s data endpoint was read over HTTP (its range not judged)')
  t.equal(bulkReads, 1, 'the foreign coordinator\'s over the swarm, refused before connecting')
  t.equal(s.received.length, 0, 'no PUT reached the destination')

  // With no public address of its own (the list empty), another coordinator's data endpoint on this host
  // is still refused: loopback, or any interface's address. The own orchestrator's is read over HTTP.
  const plain = new HttpChunkMover(swarm as never, { peerOf: () => 'peer' } as never, { allowPrivate: false })
  const read = async (source: string, fromOwnOrchestrator: boolean) =>
    await plain.move(offer(source, s.destUrl, CHUNK), { signal: new AbortController().signal, corrupt: false, fromOwnOrchestrator }).catch((e: Error) => e.message)
  const [gets, bulk] = [s.sourceGets(), bulkReads]
  await read(s.sourceUrl, false)
  await read(s.sourceUrl.replace('127.0.0.1', 'localhost'), false)
  t.same([s.sourceGets() - gets, bulkReads - bulk], [0, 2], 'a foreign coordinator\'s source on loopback: over the swarm')
  await read(s.sourceUrl, true)
  t.same([s.sourceGets() - gets, bulkReads - bulk], [1, 2], 'the own orchestrator\'s: over HTTP')
})

t.test('a coordinator\'s data endpoint: link-local (cloud metadata) refused on every node, private ranges unless the node allows them', async t => {
  const judge = (address: string, policy: { allowPrivate: boolean }, ownNode: boolean): string | null => refusedClass(address, sourcePolicy(policy, ownNode))
  for (const allowPrivate of [false, true]) {
    for (const ownNode of [false, true]) {
      const where = `allowPrivate ${allowPrivate}, ${ownNode ? 'the own orchestrator' : 'another coordinator'}`
      for (const address of ['169.254.169.254', '169.254.0.1', 'fe80::1', '::ffff:169.254.169.254']) t.equal(judge(address, { allowPrivate }, ownNode), 'link_local', `${address}: ${where}`)
      t.equal(judge('93.184.216.34', { allowPrivate }, ownNode), null, `a public address: ${where}`)
    }
    for (const address of ['10.1.2.3', '192.168.1.10', '172.16.0.5', 'fd00::5']) {
      t.equal(judge(address, { allowPrivate }, false), allowPrivate ? null : 'private', `${address}, another coordinator's: ${allowPrivate ? 'allowed where the node allows private addresses' : 'refused'}`)
      t.equal(judge(address, { allowPrivate }, true), null, `${address}, the own orchestrator's: allowed (allowPrivate ${allowPrivate})`)
    }
  }

  // Through the mover, on a node that allows private addresses (as the devnet does): refused before any
  // connection is made, and the chunk comes over the swarm instead.
  const s = await servers(t, CHUNK)
  let bulkReads = 0
  const swarm = { fetchBulkPieces: async () => { bulkReads++; return [new Uint8Array(CHUNK)] } }
  const mover = new HttpChunkMover(swarm as never, { peerOf: () => 'peer' } as never, LOOPBACK)
  for (const [source, fromOwnOrchestrator] of [['http://169.254.169.254/latest/meta-data/', false], ['http://169.254.169.254/latest/meta-data/', true], ['http://[::ffff:a9fe:a9fe]/', false]] as const) {
    const r = await mover.move(offer(source, s.destUrl, CHUNK), { signal: AbortSignal.timeout(10_000), corrupt: false, fromOwnOrchestrator })
    t.equal(r.via, 'bulk', `${source} (own orchestrator: ${fromOwnOrchestrator}): not read over HTTP`)
  }
  t.equal(bulkReads, 3)
})
