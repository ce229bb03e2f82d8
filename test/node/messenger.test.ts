// The messenger's peer defences, on messengers wired back to back: announces bound to their connection,
// frames accepted once, a frame budget checked before decoding, and a score that disconnects and bans.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { cryptoReady, newHotkey, encodeFrame } from '../../protocol/index.ts'
import { Messenger, MAX_BACKLOG_FRAMES } from '../../node/messenger.ts'
import { linkedMessengers } from '../helpers/linked-messengers.ts'
import { ManualClock } from '../helpers/clock.ts'
import { silentLogger } from '../helpers/logger.ts'

await cryptoReady()
const FACTS = { software: 'bwnet/test', capacity: { slots: 1, bandwidthMbps: 1 }, dataUrl: null, attachTo: null }

/** A messenger with a fake link whose own connection key is `self`; returns what it disconnected. */
function target (clock = new ManualClock(Date.now())) {
  const key = newHotkey()
  // Frames verified inline (no wall-clock time slices): the budget, not the machine's speed, decides
  // which frames get through before the disconnect.
  const m = new Messenger(key, clock, silentLogger(), { sliceMs: Infinity })
  const self = randomBytes(32).toString('hex')
  const cut: Array<{ peer: string, banMs: number }> = []
  m.attach({ publicKey: self, send: () => true, disconnect: (peer, banMs) => { cut.push({ peer, banMs }) } }, { onConnect: () => {}, onDisconnect: () => {} })
  return { m, self, cut, clock, key }
}

t.test('an announce binds only the connection it names; a replay elsewhere binds nothing', async t => {
  const { m, self, clock } = target()
  const alice = newHotkey()
  const connA = randomBytes(32).toString('hex'); const connEve = randomBytes(32).toString('hex')
  const announce = encodeFrame(alice, 'announce', { ...FACTS, role: 'worker', hotkey: alice.address, noiseKey: connA, peerNoiseKey: self, nonce: 'a'.repeat(32) }, { ts: clock.now() })
  m.receive(connEve, announce)
  await m.settled()
  t.equal(m.dropped.get('announce_unbound'), 1, 'made for another connection: refused')
  t.equal(m.peerOf(alice.address), undefined)
  m.receive(connA, announce)
  await m.settled()
  t.equal(m.peerOf(alice.address), connA, 'bound on its own connection')
  m.receive(connA, announce)
  await m.settled()
  t.equal(m.dropped.get('duplicate'), 1, 'the same frame twice: a repeat')
  const forOther = encodeFrame(alice, 'announce', { ...FACTS, role: 'worker', hotkey: alice.address, noiseKey: connEve, peerNoiseKey: randomBytes(32).toString('hex'), nonce: 'b'.repeat(32) }, { ts: clock.now() })
  m.receive(connEve, forOther)
  await m.settled()
  t.equal(m.dropped.get('announce_unbound'), 2, 'made for another recipient: refused')
  t.equal(m.peerOf(alice.address), connA, 'still bound to its own connection')
})

t.test('one session per hotkey: an announce on a newer connection closes the older one (no ban), whose frames are no longer read', async t => {
  const { m, self, cut, clock } = target()
  m.isRegistered = () => true
  const mallory = newHotkey()
  const got: string[] = []
  m.on('heartbeat', (msg) => got.push(msg.id))
  const conns = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex'), randomBytes(32).toString('hex')]
  const heartbeat = (seq: number): Uint8Array => encodeFrame(mallory, 'heartbeat', { role: 'worker', seq, capacity: { slots: 1, bandwidthMbps: 1 }, load: 0, workers: 0 }, { ts: clock.now() })
  for (const [i, conn] of conns.entries()) {
    m.peerUp(conn)
    m.receive(conn, encodeFrame(mallory, 'announce', { ...FACTS, role: 'worker', hotkey: mallory.address, noiseKey: conn, peerNoiseKey: self, nonce: String(i).repeat(32) }, { ts: clock.now() }))
    await m.settled()
    t.equal(m.peerOf(mallory.address), conn, `bound to connection ${i + 1}`)
  }
  t.same(cut.map(c => c.peer), conns.slice(0, 2), 'each older connection closed as a newer one announced')
  t.same(cut.map(c => c.banMs), [0, 0], 'without a ban: a node that reconnects is not punished')
  t.equal(m.disconnects.get('superseded'), 2)
  // The older connections' frames are not read: one hotkey has one frame budget, not one per connection.
  m.receive(conns[0]!, heartbeat(1)); m.receive(conns[1]!, heartbeat(2)); m.receive(conns[2]!, heartbeat(3))
  await m.settled()
  t.equal(got.length, 1, 'only the newest connection\'s frame delivered')
  // The older connections going down does not take the hotkey's session with them.
  m.peerDown(conns[0]!); m.peerDown(conns[1]!)
  t.equal(m.peerOf(mallory.address), conns[2], 'still bound to the newest connection')
})

t.test('over budget: dropped before decoding, scored, disconnected and banned with back-off', async t => {
  const { m, self, cut, clock } = target()
  const mallory = newHotkey()
  const conn = randomBytes(32).toString('hex')
  const got: string[] = []
  m.on('heartbeat', (msg) => got.push(msg.id))
  m.receive(conn, encodeFrame(mallory, 'announce', { ...FACTS, role: 'validator', hotkey: mallory.address, noiseKey: conn, peerNoiseKey: self, nonce: 'c'.repeat(32) }, { ts: clock.now() }))
  const hb = encodeFrame(mallory, 'heartbeat', { role: 'validator', seq: 1, capacity: { slots: 1, bandwidthMbps: 1 }, load: 0, workers: 0 }, { ts: clock.now() })
  await m.settled()
  m.receive(conn, hb)
  await m.settled()
  // Unregistered (isRegistered says no): a small budget; what exceeds it is never decoded.
  m.isRegistered = () => false
  const valid = Array.from({ length: 30 }, (_, i) => encodeFrame(mallory, 'heartbeat', { role: 'validator', seq: 2 + i, capacity: { slots: 1, bandwidthMbps: 1 }, load: 0, workers: 0 }, { ts: clock.now() }))
  for (let i = 0; i < 400 && cut.length === 0; i++) m.receive(conn, valid[i] ?? new Uint8Array([0x92, i & 0x7f]))
  await m.settled()
  t.ok(got.length >= 2 && got.length <= 21, `valid heartbeats within the budget were delivered (${got.length})`)
  t.ok((m.dropped.get('rate_limited') ?? 0) > 0, 'frames beyond the budget were dropped as rate_limited')
  t.equal(cut.length, 1, 'the peer was disconnected')
  t.equal(cut[0]!.peer, conn)
  t.equal(cut[0]!.banMs, 60_000)
  t.ok(m.isBanned(conn) && m.isBanned('other-connection', mallory.address), 'its connection and its hotkey are banned')
  m.receive(conn, hb)
  await m.settled()
  t.ok((m.dropped.get('banned') ?? 0) >= 1, 'a banned connection is ignored')
  clock.advance(61_000)
  t.notOk(m.isBanned(conn), 'the ban expires')
})

t.test('honest peers exchange messages through the budget and the binding', async t => {
  const clock = new ManualClock(Date.now())
  const pair = linkedMessengers(clock, { a: 'orchestrator', b: 'worker' })
  const got: number[] = []
  pair.b.on('heartbeat', (msg) => got.push((msg.body as { seq: number }).seq))
  await pair.settle()
  for (let i = 0; i < 50; i++) pair.a.send(pair.keyB.address, 'heartbeat', { role: 'orchestrator', seq: i, capacity: { slots: 1, bandwidthMbps: 1 }, load: 0, workers: 0 })
  await pair.settle()
  t.same(got, Array.from({ length: 50 }, (_, i) => i), 'every frame delivered once, in order')
  t.equal(pair.b.dropped.size, 0, 'nothing dropped')
})

t.test('a burst past the receiver\'s budget waits at the sender and arrives whole, in order; a dead connection drops what waits', async t => {
  const clock = new ManualClock(Date.now())
  const pair = linkedMessengers(clock, { a: 'orchestrator', b: 'validator' })
  const got: number[] = []
  pair.b.on('heartbeat', (msg) => got.push((msg.body as { seq: number }).seq))
  await pair.settle()
  const N = 300 // three times the receiver's burst (PEER_LIMITS: 100 frames, 100 a second)
  let accepted = 0
  for (let i = 0; i < N; i++) if (pair.a.send(pair.keyB.address, 'heartbeat', { role: 'orchestrator', seq: i, capacity: { slots: 1, bandwidthMbps: 1 }, load: 0, workers: 0 })) accepted++
  t.equal(accepted, N, 'every send taken')
  await pair.settle()
  const first = got.length
  t.ok(first > 0 && first < N, `the sender's share of the budget went at once (${first}), the rest waits (${pair.a.outboundQueued(pair.keyB.address)})`)
  t.equal(first + pair.a.outboundQueued(pair.keyB.address), N, 'nothing lost')
  // Time passes: the queue drains at the paced rate, and the receiver never sees more than its budget.
  for (let ms = 0; ms < 5_000 && got.length < N; ms += 50) { clock.advance(50); await pair.settle() }
  t.same(got, Array.from({ length: N }, (_, i) => i), 'every frame delivered once, in order')
  t.equal(pair.b.dropped.get('rate_limited') ?? 0, 0, 'the receiver dropped nothing for its budget')

  // Frames waiting when the connection goes are dropped with it, and no timer delivers them later.
  for (let i = 0; i < N; i++) pair.a.send(pair.keyB.address, 'heartbeat', { role: 'orchestrator', seq: N + i, capacity: { slots: 1, bandwidthMbps: 1 }, load: 0, workers: 0 })
  await pair.settle()
  const before = got.length
  t.ok(pair.a.outboundQueued() > 0, 'some wait')
  pair.cut()
  t.equal(pair.a.outboundQueued(), 0, 'dropped with the connection')
  clock.advance(10_000)
  await pair.settle()
  t.equal(got.length, before, 'nothing sent after the cut')
})

t.test('heartbeats go ahead of queued task frames; a send that would wait past the bound is refused', async t => {
  const clock = new ManualClock(Date.now())
  const pair = linkedMessengers(clock, { a: 'orchestrator', b: 'validator' })
  const got: string[] = []
  pair.b.on('prism_scores', (msg) => got.push(`bulk ${(msg.body as { epoch: number }).epoch}`))
  pair.b.on('heartbeat', (msg) => got.push(`hb ${(msg.body as { seq: number }).seq}`))
  await pair.settle()
  const bulk = (i: number): boolean => pair.a.send(pair.keyB.address, 'prism_scores', { epoch: i, computedAt: clock.now(), scores: [] })
  let accepted = 0
  for (let i = 0; i < 1_000; i++) if (bulk(i)) accepted++
  // 80 at once, and 400 more (5 s at 80 a second) wait; the rest is refused, as on a dead connection.
  t.equal(accepted, 480, 'a burst past the wait bound is refused, not queued without end')
  t.equal(pair.a.dropped.get('send_queue_full'), 520)
  t.equal(pair.a.send(pair.keyB.address, 'heartbeat', { role: 'orchestrator', seq: 1, capacity: { slots: 1, bandwidthMbps: 1 }, load: 0, workers: 0 }), true)
  await pair.settle()
  t.equal(got.length, 80)
  clock.advance(50) // room for a few frames: the heartbeat goes first
  await pair.settle()
  t.equal(got[80], 'hb 1', 'the heartbeat went before the 400 queued task frames')
  for (let ms = 0; ms < 10_000 && got.length < 481; ms += 100) { clock.advance(100); await pair.settle() }
  t.equal(got.length, 481, 'then every queued frame, none lost')
  t.same(got.filter(g => g.startsWith('bulk')), Array.from({ length: 480 }, (_, i) => `bulk ${i}`), 'task frames in order')
  t.equal(pair.b.dropped.get('rate_limited') ?? 0, 0, 'the receiver dropped nothing for its budget')
})

t.test('unreadSince: when the oldest frame still waiting to be read arrived', async t => {
  const clock = new ManualClock(1_800_000_000_000)
  // No time for frames in a turn: the first of a turn is read at once, the rest wait for later turns.
  const m = new Messenger(newHotkey(), clock, silentLogger(), { sliceMs: 0 })
  m.attach({ publicKey: randomBytes(32).toString('hex'), send: () => true, disconnect: () => {} }, { onConnect: () => {}, onDisconnect: () => {} })
  t.equal(m.unreadSince(), null, 'nothing received')
  const a = randomBytes(32).toString('hex'); const b = randomBytes(32).toString('hex')
  m.receive(a, randomBytes(40))
  t.equal(m.unreadSince(), null, 'read at once')
  for (const s = performance.now(); performance.now() === s;); // the turn has spent time on frames
  m.receive(a, randomBytes(40))
  clock.advance(100)
  m.receive(b, randomBytes(40))
  m.receive(a, randomBytes(40))
  t.equal(m.unreadSince(), 1_800_000_000_000, 'the oldest of every connection\'s waiting frames')
  await m.settled()
  t.equal(m.unreadSince(), null, 'all read')
})

t.test('frame ids are remembered while a frame could be fresh, a future timestamp included, and forgotten from the oldest after', async t => {
  const { m, self, clock } = target()
  m.isRegistered = () => true
  const alice = newHotkey()
  const conn = randomBytes(32).toString('hex')
  m.receive(conn, encodeFrame(alice, 'announce', { ...FACTS, role: 'worker', hotkey: alice.address, noiseKey: conn, peerNoiseKey: self, nonce: 'd'.repeat(32) }, { ts: clock.now() }))
  const hb = (seq: number, ts: number): Uint8Array => encodeFrame(alice, 'heartbeat', { role: 'worker', seq, capacity: { slots: 1, bandwidthMbps: 1 }, load: 0, workers: 0 }, { ts })
  const ahead = hb(1, clock.now() + 4 * 60_000) // stamped 4 min ahead: fresh until 9 min from now
  m.receive(conn, ahead)
  await m.settled()
  t.equal(m.seenIds, 2)
  clock.advance(8 * 60_000)
  m.receive(conn, ahead)
  await m.settled()
  t.equal(m.dropped.get('duplicate'), 1, 'replayed 8 min later, while its stamp is still fresh: refused as a repeat')
  clock.advance(2 * 60_000 + 1)
  m.receive(conn, hb(2, clock.now()))
  await m.settled()
  t.equal(m.seenIds, 1, 'the expired ids went as a new one came, from the head of the table')
  m.receive(conn, ahead)
  await m.settled()
  t.equal(m.dropped.get('stale'), 1, 'and a replay now is refused as stale')
})

t.test('what waits to be read per connection is bounded: past it a frame is dropped unread, with no score', async t => {
  const clock = new ManualClock(Date.now())
  // No time for frames in a turn, and a budget that lets every frame through: only the bound stops them.
  const cut: string[] = []
  const m = new Messenger(newHotkey(), clock, silentLogger(), { sliceMs: 0, unregisteredBurst: 10 * MAX_BACKLOG_FRAMES })
  m.attach({ publicKey: randomBytes(32).toString('hex'), send: () => true, disconnect: (peer) => { cut.push(peer) } }, { onConnect: () => {}, onDisconnect: () => {} })
  const conn = randomBytes(32).toString('hex')
  m.receive(conn, randomBytes(40)) // read at once
  for (const s = performance.now(); performance.now() === s;); // the turn has spent time on frames
  for (let i = 0; i < MAX_BACKLOG_FRAMES + 25; i++) m.receive(conn, randomBytes(40))
  t.equal(m.dropped.get('backlog_full'), 25, 'the frames past the bound were dropped unread')
  t.same(cut, [], 'the peer is not cut off for this node\'s own lag')
  await m.settled()
})
