// GET /transfers/{id}/events against a real devnet with a real `ws` client: the events of a real
// transfer arrive in order without gaps; a client that drops halfway and reconnects with ?after= gets
// the full sequence with no duplicate; refusals happen at the upgrade (401 problem+json, 404 for a
// transfer of another key) and never open a socket; a consumer that stops reading is closed with
// 1013 and the server's memory stays bounded while events keep coming.
import t from 'tap'
import type WebSocket from 'ws'
import { startTestDevnet, apiClient, sendChunks, testBytes } from '../helpers/devnet.ts'
import { eventually } from '../helpers/proc.ts'
import { connectWs } from '../helpers/ws.ts'
import { followTransferEvents, eventsUrl, FollowError } from '../../api/client/events.ts'
import type { TransferEventHub } from '../../actors/transfer/events.ts'
import type { TransferEvent } from '../../protocol/index.ts'

const MIB = 1024 * 1024
const SIZE = 40 * MIB // 3 chunks of the 16 MiB plan

const connect = async (url: string, opts: WebSocket.ClientOptions & { protocols?: string[] } = {}): Promise<{ events: TransferEvent[], closed: Promise<{ code: number, reason: string }>, ws: WebSocket }> => {
  const c = await connectWs<TransferEvent>(url, opts, opts.protocols)
  return { events: c.messages, closed: c.closed, ws: c.ws }
}

const checkSequence = (t: { same (a: unknown, b: unknown, m: string): void }, events: TransferEvent[], from = 1): void => {
  t.same(events.map(e => e.seq), events.map((_, i) => i + from), `seq ${from}..${from + events.length - 1}, no gap, no duplicate`)
}

t.test('transfer events over a real socket', async t => {
  const net = await startTestDevnet(t, { workers: 3 })
  const key = await net.clientKey('enterprise')
  const api = apiClient(net.file.baseUrl, key)
  const created = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: net.file.nodes[0]!.hotkey, total_size: SIZE, filename: 'events.bin', tier: 'STANDARD' } })
  t.equal(created.status, 201)
  const transfer = created.body
  const url = (after: number): string => eventsUrl(net.file.baseUrl, transfer.id, after)

  // A follower that stays, one that drops halfway (and resumes with ?after=), both before any chunk.
  const stayer = await connect(url(0), { headers: { authorization: `Bearer ${key}` } })
  const dropper = await connect(url(0), { headers: { 'x-api-key': key } })
  let firstHalf: TransferEvent[] = []
  const dropped = (async () => {
    await eventually(async () => dropper.events.length >= 4 ? true : undefined, 120_000, 'four events')
    dropper.ws.terminate() // the network drops
    await dropper.closed
    firstHalf = [...dropper.events]
  })()

  const data = testBytes(SIZE, 7)
  await sendChunks(api, transfer, data)
  t.equal((await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })).status, 202)
  await dropped
  // The typed follower resumes from the last seq it held.
  const rest: TransferEvent[] = []
  const followed = await followTransferEvents(net.file.baseUrl, key, transfer.id, { after: firstHalf.at(-1)!.seq, onEvent: (e) => rest.push(e) })

  const end = await stayer.closed
  t.equal(end.code, 1000, 'the stream ends with 1000 after the terminal status')
  const all = stayer.events
  checkSequence(t, all)
  t.match(all.at(-1), { type: 'status', status: 'completed', chunks: { received: 3, delivered: 3, verified: 3, total: 3 }, bytes: { delivered: SIZE, total: SIZE } })
  t.same(all.filter(e => e.type === 'status').map(e => e.status), ['pending', 'in_progress', 'completed'])
  for (const type of ['chunk_received', 'chunk_delivered', 'chunk_verified']) {
    t.same(all.filter(e => e.type === type).map(e => e.chunk_index).sort(), [0, 1, 2], `one ${type} per chunk`)
  }
  t.ok(all.every((e, i) => i === 0 || e.chunks.received >= all[i - 1]!.chunks.received), 'progress never goes back')

  t.same({ last: followed.last, status: followed.status }, { last: all.at(-1)!.seq, status: 'completed' }, 'the follower ends with the terminal status')
  t.same([...firstHalf, ...rest], all, 'first half + resumed half = the full sequence, no duplicate')

  // After the end: a late subscriber gets the stored log and the close; ?after=<last> gets only the close.
  const late = await connect(url(0), { headers: { authorization: `Bearer ${key}` } })
  t.equal((await late.closed).code, 1000)
  t.same(late.events, all, 'replayed from the store, identical')
  const caughtUp = await connect(url(all.length), { headers: { authorization: `Bearer ${key}` } })
  t.same(await caughtUp.closed, { code: 1000, reason: 'transfer completed' })
  t.same(caughtUp.events, [])

  // Refusals at the upgrade: never an open socket.
  const refused = await connect(url(0), { headers: { 'x-api-key': 'bwn_not_a_key' } }).then(() => null, (e) => e)
  t.equal(refused?.status, 401, 'wrong key: 401 before the upgrade')
  t.match(refused?.contentType, /application\/problem\+json/)
  t.match(JSON.parse(refused.body), { status: 401, code: 'BWN_ERR_KEY_INVALID' })
  const none = await connect(url(0)).then(() => null, (e) => e)
  t.equal(none?.status, 401, 'no key: 401')
  const accounts = net.devnet.orchestrator.accounts!
  const otherOrg = await accounts.createOrganization({ name: 'other' })
  const other = (await accounts.createKey(otherOrg.id, { role: 'client', plan: 'enterprise', name: 'other' })).key
  const foreign = await connect(url(0), { headers: { authorization: `Bearer ${other}` } }).then(() => null, (e) => e)
  t.equal(foreign?.status, 404, 'another organization\'s transfer: 404, as on GET /transfers/{id}')
  const bad = await followTransferEvents(net.file.baseUrl, 'bwn_wrong', transfer.id, { onEvent: () => {} }).then(() => null, (e: unknown) => e)
  t.ok(bad instanceof FollowError, 'the follower rejects a refusal (a caller falls back to polling)')
  t.equal((bad as FollowError).status, 401)

  // The browser form: key as a subprotocol, server answers bwnet.v1 (never the key).
  const browser = await connect(url(0), { protocols: ['bwnet.v1', `bwnet.key.${key}`] })
  t.equal(browser.ws.protocol, 'bwnet.v1')
  t.equal((await browser.closed).code, 1000)
  t.same(browser.events, all)
})

t.test('a consumer that never reads is closed with 1013; server memory stays bounded', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const key = await net.clientKey('enterprise')
  const api = apiClient(net.file.baseUrl, key)
  const created = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: net.file.nodes[0]!.hotkey, total_size: SIZE, filename: 'slow.bin', tier: 'STANDARD' } })
  const id: string = created.body.id
  const hub = net.devnet.orchestrator.apiDeps!.transferEvents as TransferEventHub
  const slow = await connect(eventsUrl(net.file.baseUrl, id, 0), { headers: { authorization: `Bearer ${key}` } })
  await eventually(async () => slow.events.length >= 1 ? true : undefined, 10_000, 'the replayed first event')
  ;(slow.ws as any)._socket.pause() // stops reading: the kernel buffers fill, then the server's queue
  await eventually(async () => hub.subscribers === 1 ? true : undefined, 10_000, 'subscribed')

  // Events keep coming (synthetic ones through the same hub the coordinator publishes to): 200 MiB worth.
  const template = slow.events[0]!
  const padding = 'x'.repeat(300)
  const perBatch = 2_000
  const rssBefore = process.memoryUsage().rss
  let published = 0
  let publishedBytes = 0
  let closedAfter = -1
  let peakRss = rssBefore
  for (let batch = 0; publishedBytes < 200 * MIB && batch < 1_000; batch++) {
    const events = Array.from({ length: perBatch }, (_, i) => ({ ...template, seq: 1_000 + published + i, type: 'chunk_received' as const, error: { code: 'PAD', message: padding } }))
    hub.publish(events)
    published += perBatch
    publishedBytes += perBatch * JSON.stringify(events[0]).length
    if (closedAfter < 0 && hub.subscribers === 0) closedAfter = publishedBytes
    peakRss = Math.max(peakRss, process.memoryUsage().rss)
    await new Promise(resolve => setImmediate(resolve))
  }
  t.ok(closedAfter > 0, `the server dropped the slow consumer (after ${(closedAfter / MIB).toFixed(1)} MiB published)`)
  t.ok(closedAfter < 64 * MIB, 'long before the published volume could matter')
  t.ok(publishedBytes >= 200 * MIB, `${(publishedBytes / MIB).toFixed(0)} MiB published in all`)
  const growth = (peakRss - rssBefore) / MIB
  t.ok(growth < 100, `server RSS grew ${growth.toFixed(1)} MiB at most while ${(publishedBytes / MIB).toFixed(0)} MiB of events were published`)

  ;(slow.ws as any)._socket.resume()
  const end = await slow.closed
  t.equal(end.code, 1013, 'closed with 1013')
  t.match(end.reason, /too slow/)
})
