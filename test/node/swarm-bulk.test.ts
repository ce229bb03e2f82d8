// The swarm bulk channel carries bytes exactly: payloads spanning many frames and not a multiple of
// the frame size, an empty payload, and an unknown key refused with BWN_ERR_BULK. A read hears only the
// connection it was asked on; requests are served to admitted peers only, a bounded number at once per
// connection; a file is streamed and let go when its connection closes.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readlink, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import createTestnet from 'hyperdht/testnet.js'
import Hyperswarm from 'hyperswarm'
import Protomux from 'protomux'
import c from 'compact-encoding'
import { SwarmTransport, BULK_FRAME_BYTES, BULK_PROTOCOL, CONTROL_PROTOCOL, MAX_BULK_REQUESTS_PER_PEER, networkTopic } from '../../node/adapters/swarm-transport.ts'
import { pack, unpack } from '../../protocol/index.ts'
import { silentLogger } from '../helpers/logger.ts'
import { eventually } from '../helpers/proc.ts'

const CONNECT_TIMEOUT_MS = 15_000
const quiet = { onFrame: () => {}, onPeerDown: () => {}, onPeerUp: () => {} }

interface BareEnd { from: string, id: number, bytes: number, error?: string }
interface BareLink {
  request (id: number, key: string): void
  data (id: number, piece: Uint8Array): void
  end (id: number, bytes: number): void
  close (): void
}
/** A bare hyperswarm peer that opens the transport's two channels and speaks on them by hand (no node behind it). */
interface Bare { publicKey: string, links: Map<string, BareLink>, requests: Array<{ from: string, id: number, key: string }>, ends: BareEnd[] }

async function bare (t: { teardown (fn: () => unknown): void }, testnet: { createNode (): any }, network: string, server = true): Promise<Bare> {
  const swarm = new Hyperswarm({ dht: testnet.createNode() })
  t.teardown(() => swarm.destroy())
  const out: Bare = { publicKey: swarm.keyPair.publicKey.toString('hex'), links: new Map(), requests: [], ends: [] }
  swarm.on('connection', (conn: any, info: any) => {
    const from = info.publicKey.toString('hex')
    conn.on('error', () => {})
    const mux = Protomux.from(conn)
    const control = mux.createChannel({ protocol: CONTROL_PROTOCOL })!
    const bulk = mux.createChannel({ protocol: BULK_PROTOCOL, onopen: () => { out.links.set(from, link) } })!
    control.addMessage({ encoding: c.raw, onmessage: () => {} })
    const req = bulk.addMessage({ encoding: c.raw, onmessage: (m: Uint8Array) => { out.requests.push({ from, ...unpack<{ id: number, key: string }>(m) }) } })
    const data = bulk.addMessage({ encoding: c.raw, onmessage: () => {} })
    const end = bulk.addMessage({ encoding: c.raw, onmessage: (m: Uint8Array) => { out.ends.push({ from, ...unpack<Omit<BareEnd, 'from'>>(m) }) } })
    const link: BareLink = {
      request: (id, key) => { req.send(pack({ id, key })) },
      // The wire form of a data message: the request id in 4 bytes (big-endian), then the bytes.
      data: (id, piece) => { const head = Buffer.alloc(4); head.writeUInt32BE(id); data.send(Buffer.concat([head, piece])) },
      end: (id, bytes) => { end.send(pack({ id, bytes })) },
      close: () => conn.destroy()
    }
    control.open()
    bulk.open()
  })
  swarm.join(networkTopic(network), { server, client: true })
  return out
}

async function started (t: { teardown (fn: () => unknown): void }, transport: SwarmTransport): Promise<SwarmTransport> {
  t.teardown(() => transport.stop())
  await transport.start()
  return transport
}

t.test('bulk reads return the served bytes exactly', async t => {
  const testnet = await createTestnet(3, { host: '127.0.0.1' })
  t.teardown(() => testnet.destroy())
  const network = `bulk-${process.pid}`
  const blobs = new Map<string, Uint8Array>([
    ['multi-frame', randomBytes(3 * BULK_FRAME_BYTES + 17)],
    ['one-byte', randomBytes(1)],
    ['empty', new Uint8Array(0)]
  ])
  const quiet = { onFrame: () => {}, onPeerDown: () => {} }
  const server = new SwarmTransport({ dht: testnet.createNode(), networkId: network, logger: silentLogger(), events: { ...quiet, onPeerUp: () => {} } })
  // 'swept': a blob file named by the lookup and gone before its read opens it.
  server.serveBulk(async (_peer, key) => key === 'swept' ? { file: join(tmpdir(), `bwnet-swept-${process.pid}-${Date.now()}`) } : blobs.get(key) ?? null, { admitted: () => true })
  t.teardown(() => server.stop())
  await server.start()

  let up: (peer: string) => void = () => {}
  const connected = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('peers did not connect')), CONNECT_TIMEOUT_MS)
    up = (peer) => { if (peer === server.publicKey) { clearTimeout(timer); resolve(peer) } }
  })
  const client = new SwarmTransport({ dht: testnet.createNode(), networkId: network, logger: silentLogger(), events: { ...quiet, onPeerUp: (p) => up(p) } })
  t.teardown(() => client.stop())
  await client.start()
  const peer = await connected

  for (const [key, bytes] of blobs) {
    const got = await client.fetchBulk(peer, key)
    t.equal(got.byteLength, bytes.byteLength, `${key}: length`)
    t.ok(Buffer.from(bytes).equals(got), `${key}: same bytes`)
  }
  // The reader hears the bytes received so far as the frames arrive: growing, ending at the total.
  const heard: number[] = []
  await client.fetchBulk(peer, 'multi-frame', 30_000, Number.POSITIVE_INFINITY, (n) => heard.push(n))
  t.ok(heard.length > 1 && heard.every((n, i) => i === 0 || n > heard[i - 1]!), `bytes received reported per frame, growing (${heard.length} reports)`)
  t.equal(heard.at(-1), blobs.get('multi-frame')!.byteLength, 'the last report is the whole read')
  // Concurrent reads are told apart by their request id.
  const both = await Promise.all([client.fetchBulk(peer, 'multi-frame'), client.fetchBulk(peer, 'one-byte')])
  t.ok(Buffer.from(blobs.get('multi-frame')!).equals(both[0]), 'concurrent multi-frame read intact')
  t.ok(Buffer.from(blobs.get('one-byte')!).equals(both[1]), 'concurrent one-byte read intact')
  await t.rejects(client.fetchBulk(peer, 'missing'), { code: 'BWN_ERR_BULK', message: /not_found/ }, 'unknown key refused')
  await t.rejects(client.fetchBulk(peer, 'swept'), { code: 'BWN_ERR_BULK', message: /not_found/ }, 'a file gone before its read is not found, not a failure')
  // A peer that sends more than the reader expects cannot make it buffer without bound.
  await t.rejects(client.fetchBulk(peer, 'multi-frame', 30_000, 10), { code: 'BWN_ERR_BULK', message: /over its 10-byte limit/ }, 'over the limit refused')
  t.ok(Buffer.from(blobs.get('one-byte')!).equals(await client.fetchBulk(peer, 'one-byte', 30_000, 1)), 'the channel still serves reads after a refused one')
})

t.test('a bulk read hears only the connection it was asked on', async t => {
  const testnet = await createTestnet(3, { host: '127.0.0.1' })
  t.teardown(() => testnet.destroy())
  const network = `bulk-conn-${process.pid}`
  const coordinator = await bare(t, testnet, network)
  const rogue = await bare(t, testnet, network)
  const client = await started(t, new SwarmTransport({ dht: testnet.createNode(), networkId: network, logger: silentLogger(), events: quiet }))
  await eventually(async () => client.peers().includes(coordinator.publicKey) && coordinator.links.has(client.publicKey) && rogue.links.has(client.publicKey), CONNECT_TIMEOUT_MS, 'the reader connected to both peers')

  const real = randomBytes(BULK_FRAME_BYTES + 5)
  const read = client.fetchBulk(coordinator.publicKey, 'chunk-key')
  const asked = await eventually(async () => coordinator.requests[0], CONNECT_TIMEOUT_MS, 'the request at the coordinator')
  // Another peer answers with the very id the coordinator was asked with (the worst case: it guessed it).
  const fake = Buffer.from('not the chunk')
  rogue.links.get(client.publicKey)!.data(asked.id, fake)
  rogue.links.get(client.publicKey)!.end(asked.id, fake.byteLength)
  await eventually(async () => client.bulkDropped.get('unsolicited') === 2, CONNECT_TIMEOUT_MS, 'the other peer\'s replies ignored')
  const answer = coordinator.links.get(client.publicKey)!
  answer.data(asked.id, real.subarray(0, BULK_FRAME_BYTES))
  answer.data(asked.id, real.subarray(BULK_FRAME_BYTES))
  answer.end(asked.id, real.byteLength)
  t.ok(real.equals(await read), 'the read ends with the coordinator\'s bytes')

  // A read whose connection closes fails then, not at its timeout.
  const orphan = client.fetchBulk(coordinator.publicKey, 'chunk-key', 60_000)
  await eventually(async () => coordinator.requests.length === 2, CONNECT_TIMEOUT_MS, 'the second request at the coordinator')
  answer.close()
  await t.rejects(orphan, { code: 'BWN_ERR_BULK', message: /connection closed/ }, 'the read failed with its connection')
})

t.test('bulk requests are served to admitted peers only', async t => {
  const testnet = await createTestnet(3, { host: '127.0.0.1' })
  t.teardown(() => testnet.destroy())
  const network = `bulk-admit-${process.pid}`
  const admitted = new Set<string>()
  let calls = 0
  const server = new SwarmTransport({ dht: testnet.createNode(), networkId: network, logger: silentLogger(), events: quiet })
  server.serveBulk(async () => { calls++; return null }, { admitted: (peer) => admitted.has(peer) })
  await started(t, server)
  const peer = await bare(t, testnet, network, false)
  await eventually(async () => peer.links.has(server.publicKey), CONNECT_TIMEOUT_MS, 'the peer connected')
  const link = peer.links.get(server.publicKey)!
  for (let id = 0; id < 200; id++) link.request(id, '/data/transfers/x/chunks/0')
  await eventually(async () => server.bulkDropped.get('not_admitted') === 200, CONNECT_TIMEOUT_MS, 'every request of the peer dropped')
  t.equal(calls, 0, 'none reached the handler')
  t.same(peer.ends, [], 'none was answered')
  // Once admitted, the same connection is served.
  admitted.add(peer.publicKey)
  link.request(500, 'missing')
  await eventually(async () => peer.ends.length === 1, CONNECT_TIMEOUT_MS, 'an answer')
  t.same(peer.ends, [{ from: server.publicKey, id: 500, bytes: 0, error: 'not_found' }], 'the admitted peer\'s request answered')
  t.equal(calls, 1)
})

t.test('a connection has at most MAX_BULK_REQUESTS_PER_PEER requests served at once', async t => {
  const testnet = await createTestnet(3, { host: '127.0.0.1' })
  t.teardown(() => testnet.destroy())
  const network = `bulk-cap-${process.pid}`
  const small = randomBytes(100)
  let release = (): void => {}
  let held = new Promise<void>(resolve => { release = resolve })
  let calls = 0; let running = 0; let most = 0
  const server = new SwarmTransport({ dht: testnet.createNode(), networkId: network, logger: silentLogger(), events: quiet })
  server.serveBulk(async () => {
    calls++; running++; most = Math.max(most, running)
    await held
    running--
    return small
  }, { admitted: () => true })
  await started(t, server)
  const peer = await bare(t, testnet, network, false)
  await eventually(async () => peer.links.has(server.publicKey), CONNECT_TIMEOUT_MS, 'the peer connected')
  const link = peer.links.get(server.publicKey)!
  for (let id = 0; id < 40; id++) link.request(id, 'small')
  await eventually(async () => peer.ends.length === 40 - MAX_BULK_REQUESTS_PER_PEER, CONNECT_TIMEOUT_MS, 'the requests beyond the bound refused')
  t.equal(calls, MAX_BULK_REQUESTS_PER_PEER, 'only the bound reached the handler')
  t.same(peer.ends.map(e => e.id).sort((a, b) => a - b), Array.from({ length: 40 - MAX_BULK_REQUESTS_PER_PEER }, (_, i) => i + MAX_BULK_REQUESTS_PER_PEER), 'the later ones refused')
  t.ok(peer.ends.every(e => e.error === 'busy' && e.bytes === 0), 'each with a busy ending')
  release()
  await eventually(async () => peer.ends.length === 40, CONNECT_TIMEOUT_MS, 'the served ones answered')
  t.ok(peer.ends.slice(-MAX_BULK_REQUESTS_PER_PEER).every(e => e.error === undefined && e.bytes === small.byteLength), 'the served ones ended whole')

  // A reader keeps to the bound itself: 3 × the bound at once wait on its side, and none is refused.
  held = new Promise<void>(resolve => { release = resolve })
  calls = 0; most = 0
  const client = await started(t, new SwarmTransport({ dht: testnet.createNode(), networkId: network, logger: silentLogger(), events: quiet }))
  await eventually(async () => client.peers().includes(server.publicKey), CONNECT_TIMEOUT_MS, 'the reader connected')
  const reads = Array.from({ length: 3 * MAX_BULK_REQUESTS_PER_PEER }, () => client.fetchBulk(server.publicKey, 'small'))
  await eventually(async () => calls === MAX_BULK_REQUESTS_PER_PEER, CONNECT_TIMEOUT_MS, 'the first reads at the server')
  release()
  const got = await Promise.all(reads)
  t.ok(got.every(b => small.equals(b)), 'every read served')
  t.equal(most, MAX_BULK_REQUESTS_PER_PEER, 'never more than the bound at once')
  t.equal(calls, 3 * MAX_BULK_REQUESTS_PER_PEER)
})

/**
 * A server serving the files `files` from a directory of its own (their send ends recorded in `ended` as
 * "name whole|cut"), a client connected to it, and what the tests look into: the server's connection to
 * the client, and how many descriptors this process holds on a file.
 */
async function fileServer (t: { teardown (fn: () => unknown): void }, name: string, files: Record<string, Buffer>, sendStallMs?: number): Promise<{ server: SwarmTransport, client: SwarmTransport, dir: string, ended: string[], conn: () => any, opened: (file: string) => Promise<number> }> {
  const testnet = await createTestnet(3, { host: '127.0.0.1' })
  t.teardown(() => testnet.destroy())
  const network = `bulk-${name}-${process.pid}`
  const dir = await mkdtemp(join(tmpdir(), `bwnet-bulk-${name}-`))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  for (const [file, bytes] of Object.entries(files)) await writeFile(join(dir, file), bytes)
  const server = new SwarmTransport({ dht: testnet.createNode(), networkId: network, logger: silentLogger(), events: quiet, ...(sendStallMs !== undefined ? { sendStallMs } : {}) })
  const ended: string[] = []
  server.serveBulk(async (_peer, key) => ({ file: join(dir, key), ended: (whole) => { ended.push(`${key} ${whole ? 'whole' : 'cut'}`) } }), { admitted: () => true })
  await started(t, server)
  const client = await started(t, new SwarmTransport({ dht: testnet.createNode(), networkId: network, logger: silentLogger(), events: quiet }))
  await eventually(async () => client.peers().includes(server.publicKey), CONNECT_TIMEOUT_MS, 'the reader connected')
  const conn = (): any => [...(server.swarm as any).connections].find((c: any) => c.remotePublicKey.toString('hex') === client.publicKey)
  const opened = async (file: string): Promise<number> => {
    let n = 0
    for (const fd of await readdir('/proc/self/fd')) { try { if (await readlink(`/proc/self/fd/${fd}`) === join(dir, file)) n++ } catch {} }
    return n
  }
  return { server, client, dir, ended, conn, opened }
}

t.test('a file is streamed; a connection that closes midway lets the file go', async t => {
  const files = { chunk: randomBytes(3 * BULK_FRAME_BYTES + 17), empty: Buffer.alloc(0), big: randomBytes(64 * BULK_FRAME_BYTES) }
  const { server, client, ended, conn: connOf, opened } = await fileServer(t, 'file', files)
  t.ok(files.chunk.equals(await client.fetchBulk(server.publicKey, 'chunk')), 'a multi-frame file arrives exactly')
  t.equal((await client.fetchBulk(server.publicKey, 'empty')).byteLength, 0, 'an empty file arrives empty')
  await t.rejects(client.fetchBulk(server.publicKey, 'absent'), { code: 'BWN_ERR_BULK', message: /not_found/ }, 'a missing file ends the read as not found')
  t.same(ended, ['chunk whole', 'empty whole', 'absent cut'], 'each read is told how its send ended, once')

  // The server's connection closes while a piece waits for it to drain (a full write buffer): the
  // stream must end there and close its file, though no drain will ever come.
  const conn = connOf()
  const write = conn.write.bind(conn)
  conn.write = (b: Uint8Array): boolean => {
    const ok = write(b)
    if (!ok && b.byteLength >= BULK_FRAME_BYTES) queueMicrotask(() => conn.destroy())
    return ok
  }
  const read = client.fetchBulk(server.publicKey, 'big', 600_000)
  await t.rejects(read, { code: 'BWN_ERR_BULK', message: /connection closed/ }, 'the read failed with its connection')
  await eventually(async () => await opened('big') === 0, CONNECT_TIMEOUT_MS, 'the file closed at the server')
  t.pass('the server let the file go')
  await eventually(async () => ended.length === 4, CONNECT_TIMEOUT_MS, 'the cut read to be told')
  t.same(ended.at(-1), 'big cut', 'a read cut short is told so')
})

t.test('a reader whose connection takes nothing more loses it after the send stall: the read ends, the file goes', async t => {
  const { server, client, ended, conn: connOf, opened } = await fileServer(t, 'stall', { big: randomBytes(64 * BULK_FRAME_BYTES) }, 300)
  // The connection says its buffer is full at the first data frame and never drains (a peer that stopped
  // taking bytes), while it stays open for everything else.
  const conn = connOf()
  const write = conn.write.bind(conn)
  conn.write = (b: Uint8Array): boolean => { const ok = write(b); return b.byteLength >= BULK_FRAME_BYTES ? false : ok }
  const emit = conn.emit.bind(conn)
  conn.emit = (event: string, ...args: unknown[]): boolean => event === 'drain' ? false : emit(event, ...args)
  await t.rejects(client.fetchBulk(server.publicKey, 'big', 600_000), { code: 'BWN_ERR_BULK', message: /connection closed/ }, 'the read ends with its connection')
  t.ok(conn.destroyed, 'the server closed the connection that took nothing: nothing more piles up behind it')
  await eventually(async () => await opened('big') === 0, CONNECT_TIMEOUT_MS, 'the file closed at the server')
  await eventually(async () => ended.length === 1, CONNECT_TIMEOUT_MS, 'the read to be told it ended')
  t.same(ended, ['big cut'], 'cut, not whole')
})

t.test('a reader that takes a frame now and then, under 1 MiB per send stall, loses its connection too', async t => {
  const { server, client, ended, conn: connOf } = await fileServer(t, 'trickle', { big: randomBytes(64 * BULK_FRAME_BYTES) }, 400)
  // Every data frame waits for a drain that comes 250 ms later: 4 frames (1 MiB) take 1 s, over the 400 ms
  // window, though no single wait is that long.
  const conn = connOf()
  const write = conn.write.bind(conn)
  const emit = conn.emit.bind(conn)
  conn.emit = (event: string, ...args: unknown[]): boolean => event === 'drain' ? false : emit(event, ...args)
  conn.write = (b: Uint8Array): boolean => {
    const ok = write(b)
    if (b.byteLength < BULK_FRAME_BYTES) return ok
    setTimeout(() => { if (!conn.destroyed) emit('drain') }, 250)
    return false
  }
  await t.rejects(client.fetchBulk(server.publicKey, 'big', 600_000), { code: 'BWN_ERR_BULK', message: /connection closed/ }, 'the read ends with its connection')
  t.ok(conn.destroyed, 'the server closed it')
  await eventually(async () => ended.length === 1, CONNECT_TIMEOUT_MS, 'the read to be told it ended')
  t.same(ended, ['big cut'], 'cut')
})

/** A server serving bulk reads through `handler`, a client connected to it, and the server's key as the client's peer. */
async function bulkPair (t: { teardown (fn: () => unknown): void }, name: string, handler: Parameters<SwarmTransport['serveBulk']>[0]): Promise<{ server: SwarmTransport, client: SwarmTransport, peer: string }> {
  const testnet = await createTestnet(3, { host: '127.0.0.1' })
  t.teardown(() => testnet.destroy())
  const network = `bulk-${name}-${process.pid}`
  const quiet = { onFrame: () => {}, onPeerDown: () => {} }
  const server = new SwarmTransport({ dht: testnet.createNode(), networkId: network, logger: silentLogger(), events: { ...quiet, onPeerUp: () => {} } })
  server.serveBulk(handler, { admitted: () => true })
  t.teardown(() => server.stop())
  await server.start()
  let up: (peer: string) => void = () => {}
  const connected = new Promise<string>(resolve => { up = (peer) => { if (peer === server.publicKey) resolve(peer) } })
  const client = new SwarmTransport({ dht: testnet.createNode(), networkId: network, logger: silentLogger(), events: { ...quiet, onPeerUp: (p) => up(p) } })
  t.teardown(() => client.stop())
  await client.start()
  return { server, client, peer: await connected }
}

t.test('a read its caller gives up on ends at once: its place goes to the next read', async t => {
  const small = randomBytes(1024)
  // 'hang': a read the server never answers (a source that sends nothing).
  const { client, peer } = await bulkPair(t, 'abort', async (_peer, key) => key === 'hang' ? await new Promise<null>(() => {}) : key === 'small' ? small : null)
  // Every place of the connection taken by reads that hang; one more waits in the queue.
  const controllers = Array.from({ length: MAX_BULK_REQUESTS_PER_PEER }, () => new AbortController())
  const hanging = controllers.map(async c => await client.fetchBulk(peer, 'hang', 30_000, Number.POSITIVE_INFINITY, undefined, c.signal).then(() => 'read', (e: Error) => e.message))
  const queuedController = new AbortController()
  const queued = client.fetchBulk(peer, 'small', 30_000, Number.POSITIVE_INFINITY, undefined, queuedController.signal).then(() => 'read', (e: Error) => e.message)
  const t0 = Date.now()
  controllers[0]!.abort()
  t.match(await hanging[0], /aborted/, 'a read the server serves, given up on: its caller is answered at once')
  queuedController.abort()
  t.match(await queued, /aborted/, 'a read still queued, given up on: it leaves the queue at once')
  t.ok(Date.now() - t0 < 10_000, 'long before any timeout')
  // The served one keeps its place until the server ends it: a read sent in its place would only meet
  // the server's "busy" (it still serves the eight it was asked for).
  for (const c of controllers) c.abort()
  t.ok((await Promise.all(hanging)).every(m => /aborted/.test(m)))
  await t.rejects(client.fetchBulk(peer, 'small', 30_000, Number.POSITIVE_INFINITY, undefined, AbortSignal.abort()), /aborted/, 'a signal already aborted: refused at once')
})

t.test('a read given up on while served keeps its place until the server ends it: the next is not refused busy', async t => {
  const small = randomBytes(1024)
  let release = (): void => {}
  const held = new Promise<void>(resolve => { release = resolve })
  let serving = 0; let most = 0; let heldCalls = 0; let smallCalls = 0
  const { server, client, peer } = await bulkPair(t, 'place', async (_peer, key) => {
    serving++; most = Math.max(most, serving)
    try {
      if (key === 'held') { heldCalls++; await held }
      else smallCalls++
      return small
    } finally { serving-- }
  })
  const controllers = Array.from({ length: MAX_BULK_REQUESTS_PER_PEER }, () => new AbortController())
  const reads = controllers.map(async c => await client.fetchBulk(peer, 'held', 30_000, Number.POSITIVE_INFINITY, undefined, c.signal).then(() => 'read', (e: Error) => e.message))
  await eventually(async () => heldCalls === MAX_BULK_REQUESTS_PER_PEER, CONNECT_TIMEOUT_MS, 'every place served')
  controllers[0]!.abort()
  t.match(await reads[0], /aborted/, 'its caller is answered at once')
  const next = client.fetchBulk(peer, 'small', 30_000)
  release()
  t.ok(small.equals(await next), 'the next read is served, not refused busy')
  t.same((await Promise.all(reads.slice(1))), Array(MAX_BULK_REQUESTS_PER_PEER - 1).fill('read'))
  t.equal(most, MAX_BULK_REQUESTS_PER_PEER, 'never more than the bound at the server')
  t.equal(smallCalls, 1)
  t.equal(server.bulkDropped.get('busy') ?? 0, 0, 'nothing refused')
})
