// The swarm bulk channel carries bytes exactly: payloads spanning many frames and not a multiple of
// the frame size, an empty payload, and an unknown key refused with BWN_ERR_BULK.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import createTestnet from 'hyperdht/testnet.js'
import { SwarmTransport, BULK_FRAME_BYTES } from '../../node/adapters/swarm-transport.ts'
import { silentLogger } from '../helpers/logger.ts'

const CONNECT_TIMEOUT_MS = 15_000

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
  server.serveBulk(async (_peer, key) => blobs.get(key) ?? null)
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
  // A peer that sends more than the reader expects cannot make it buffer without bound.
  await t.rejects(client.fetchBulk(peer, 'multi-frame', 30_000, 10), { code: 'BWN_ERR_BULK', message: /over its 10-byte limit/ }, 'over the limit refused')
  t.ok(Buffer.from(blobs.get('one-byte')!).equals(await client.fetchBulk(peer, 'one-byte', 30_000, 1)), 'the channel still serves reads after a refused one')
})
