// Connection admission (node/peer-gate.ts through the Messenger, node/peer-auth.ts deciding): pending
// connections capped per address and in total, oldest closed first; admitted peers exempt, so a
// registered peer connecting while the cap is full still gets in; a connection that does not announce
// within the deadline is closed; a refused announce closes the connection and bans the hotkey for
// REFUSED_BAN_MS, after which it may come back; broadcasts reach admitted peers only. On a manual clock,
// with a fake link that records what it sends and closes.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { cryptoReady, newHotkey, encodeFrame, type KeyPair } from '../../protocol/index.ts'
import { Messenger } from '../../node/messenger.ts'
import { PeerAuth, ATTACHMENT_WAIT_MS } from '../../node/peer-auth.ts'
import { PeerGate, ANNOUNCE_DEADLINE_MS, ADMISSION_DEADLINE_MS, REFUSED_BAN_MS, MAX_PENDING_TOTAL, MAX_PENDING_PER_ADDRESS, isLoopback, addressGroup, type GateLimits } from '../../node/peer-gate.ts'
import type { Chain, Standing } from '../../actors/chain/index.ts'
import { ManualClock } from '../helpers/clock.ts'
import { silentLogger } from '../helpers/logger.ts'

await cryptoReady()
const FACTS = { software: 'bwnet/test', capacity: { slots: 1, bandwidthMbps: 1 }, dataUrl: null, attachTo: null }

/** A node's messenger with PeerAuth on a chain where `registered` hotkeys are workers. */
function node (gate: Partial<GateLimits> = {}) {
  const clock = new ManualClock(Date.now())
  const key = newHotkey()
  const m = new Messenger(key, clock, silentLogger(), { sliceMs: Infinity }, { admission: 'auth', gate })
  const self = randomBytes(32).toString('hex')
  const closed: Array<{ peer: string, banMs: number }> = []
  const sent = new Map<string, number>()
  const open = new Set<string>()
  m.attach({
    publicKey: self,
    send: (peer) => { if (!open.has(peer)) return false; sent.set(peer, (sent.get(peer) ?? 0) + 1); return true },
    disconnect: (peer, banMs) => { closed.push({ peer, banMs }); if (open.delete(peer)) queueMicrotask(() => m.peerDown(peer)) }
  }, { onConnect: () => {}, onDisconnect: () => {} })
  const registered = new Set<string>()
  const chain = { standing: async (h: string): Promise<Standing | null> => registered.has(h) ? { hotkey: h, uid: 1, role: 'worker', registeredAtBlock: 1, stakeRao: 0n, validatorPermit: false } : null } as unknown as Chain
  const auth = new PeerAuth({ self: { hotkey: key.address, role: 'orchestrator' }, clock, logger: silentLogger(), messenger: m })
  auth.useChain(chain)
  auth.on('announce', 'registered', () => {})
  m.isRegistered = (h) => auth.wasRegistered(h)
  const connect = (address: string | null = '203.0.113.7'): string => {
    const peer = randomBytes(32).toString('hex')
    open.add(peer)
    m.peerUp(peer, address)
    return peer
  }
  const announce = (peer: string, k: KeyPair, role: 'worker' | 'orchestrator' | 'validator' = 'worker'): void => {
    m.receive(peer, encodeFrame(k, 'announce', { ...FACTS, role, hotkey: k.address, noiseKey: peer, peerNoiseKey: self, nonce: randomBytes(16).toString('hex') }, { ts: clock.now() }))
  }
  const settle = async (): Promise<void> => { for (let i = 0; i < 10; i++) { await m.settled(); await new Promise(setImmediate) } }
  return { m, clock, closed, sent, open, registered, connect, announce, settle, auth, self }
}

t.test('per-address cap: the oldest pending connection of that address is closed; other addresses and admitted peers untouched', async t => {
  const n = node({ maxPendingPerAddress: 3 })
  const worker = newHotkey(); n.registered.add(worker.address)
  const admitted = n.connect('198.51.100.1')
  n.announce(admitted, worker)
  await n.settle()
  t.ok(n.m.gate.isAdmitted(admitted), 'the registered peer is admitted')
  const mine = [n.connect('198.51.100.1'), n.connect('198.51.100.1'), n.connect('198.51.100.1')]
  const elsewhere = n.connect('192.0.2.9')
  t.same(n.closed, [], 'three pending from one address: at the cap, nothing closed (the admitted one does not count)')
  const fourth = n.connect('198.51.100.1')
  t.same(n.closed.map(c => c.peer), [mine[0]], 'a fourth: the oldest pending of that address closed')
  t.equal(n.m.disconnects.get('cap_address'), 1)
  t.ok(n.open.has(fourth) && n.open.has(elsewhere) && n.open.has(admitted), 'the newest, the other address and the admitted peer stay')
  t.equal(n.m.gate.pendingCount(), 4, 'pending: two + the fourth from one address, one from the other')
})

t.test('addressGroup: IPv4 itself, IPv6 by its /64', async t => {
  t.equal(addressGroup('198.51.100.7'), '198.51.100.7')
  t.equal(addressGroup('::ffff:198.51.100.7'), '198.51.100.7', 'IPv4-mapped: the IPv4 address')
  t.equal(addressGroup('2001:db8:0:1::a'), '2001:db8:0:1::/64')
  t.equal(addressGroup('2001:DB8:0000:0001:ffff:1:2:3'), '2001:db8:0:1::/64', 'another spelling, the same /64')
  t.equal(addressGroup('2001:db8::1'), '2001:db8:0:0::/64')
  t.equal(addressGroup('2001:db8:0:0:1::'), '2001:db8:0:0::/64')
  t.equal(addressGroup('::1'), '0:0:0:0::/64')
  t.equal(addressGroup('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64', 'a dotted quad at the end')
  t.equal(addressGroup('0:0:0:0:0:ffff:198.51.100.7'), '198.51.100.7', 'IPv4-mapped, spelled out')
  t.equal(addressGroup('::ffff:c633:6407'), '198.51.100.7', 'IPv4-mapped, in hex')
  t.equal(addressGroup('fe80::1%eth0'), 'fe80:0:0:0::/64', 'a zone id')
  t.equal(addressGroup('::'), '0:0:0:0::/64')
  t.equal(addressGroup('not-an-ip'), 'not-an-ip')
})

t.test('per-address cap on IPv6: one /64 counts as one address', async t => {
  const n = node({ maxPendingPerAddress: 2 })
  const first = n.connect('2001:db8:0:1::a')
  n.connect('2001:db8:0:1::b')
  const other = n.connect('2001:db8:0:2::a')
  t.same(n.closed, [], 'two in one /64, one in another: at the cap')
  n.connect('2001:db8:0:1:ffff::c')
  t.same(n.closed.map(c => c.peer), [first], 'a third from the first /64: its oldest closed')
  t.ok(n.open.has(other), 'the other /64 untouched')
})

t.test('the messenger knows a connected hotkey\'s remote address', async t => {
  const n = node()
  const worker = newHotkey(); n.registered.add(worker.address)
  const peer = n.connect('198.51.100.4')
  t.equal(n.m.addressOf(worker.address), null, 'not yet announced: no hotkey to look up')
  n.announce(peer, worker)
  await n.settle()
  t.equal(n.m.addressOf(worker.address), '198.51.100.4')
  t.equal(n.m.addressOf(newHotkey().address), null, 'a hotkey not connected')
})

t.test('loopback is exempt from the per-address cap unless configured otherwise', async t => {
  t.ok(isLoopback('127.0.0.1') && isLoopback('::1') && isLoopback('::ffff:127.0.0.1') && !isLoopback('10.0.0.1'))
  const exempt = node({ maxPendingPerAddress: 2 })
  for (let i = 0; i < 5; i++) exempt.connect('127.0.0.1')
  t.same(exempt.closed, [], 'five pending on loopback: none closed by default')
  const capped = node({ maxPendingPerAddress: 2, capLoopback: true })
  for (let i = 0; i < 5; i++) capped.connect('127.0.0.1')
  t.equal(capped.closed.length, 3, 'with capLoopback the cap applies to 127.0.0.1 too')
})

t.test('pending total cap: oldest closed first, never the newcomer; a registered peer connecting at the cap is admitted', async t => {
  t.ok(MAX_PENDING_TOTAL >= 16, 'the default total cap leaves room for a test network')
  const n = node({ maxPendingTotal: 4 })
  const silent = [n.connect('192.0.2.1'), n.connect('192.0.2.2'), n.connect('192.0.2.3'), n.connect('192.0.2.4')]
  t.equal(n.m.gate.pendingCount(), 4)
  const worker = newHotkey(); n.registered.add(worker.address)
  const honest = n.connect('198.51.100.20')
  t.same(n.closed.map(c => c.peer), [silent[0]], 'the cap is full: the oldest pending closed, not the newcomer')
  t.equal(n.m.disconnects.get('cap_pending'), 1)
  n.announce(honest, worker)
  await n.settle()
  t.ok(n.m.gate.isAdmitted(honest), 'the registered newcomer is admitted')
  t.equal(n.m.gate.pendingCount(), 3, 'and no longer pending')
  // More pending connections close only pending ones: the admitted peer is never evicted.
  for (let i = 0; i < 10; i++) n.connect(`192.0.2.${100 + i}`)
  t.ok(n.open.has(honest), 'the admitted peer stays connected through the churn')
  t.equal(n.m.gate.pendingCount(), 4, 'pending held at the cap')
  t.notOk(n.closed.some(c => c.peer === honest))
})

t.test('unregistered workers re-announcing to keep their checks held fill the cap no longer: each is closed at the admission deadline, and a registered peer connecting meanwhile is admitted', async t => {
  t.ok(ADMISSION_DEADLINE_MS > ATTACHMENT_WAIT_MS + ANNOUNCE_DEADLINE_MS, 'room for an honest worker to fetch its attachment')
  const n = node()
  const ips = MAX_PENDING_TOTAL / MAX_PENDING_PER_ADDRESS
  const sybils: Array<{ peer: string, k: KeyPair }> = []
  for (let i = 0; i < MAX_PENDING_TOTAL; i++) {
    // A worker announcing without an attachment, to attach elsewhere: its check waits ATTACHMENT_WAIT_MS.
    const k = newHotkey(); const peer = n.connect(`203.0.113.${i % ips}`)
    n.m.receive(peer, encodeFrame(k, 'announce', { ...FACTS, attachTo: newHotkey().address, role: 'worker', hotkey: k.address, noiseKey: peer, peerNoiseKey: n.self, nonce: randomBytes(16).toString('hex') }, { ts: n.clock.now() }))
    sybils.push({ peer, k })
  }
  await n.settle()
  t.equal(n.m.gate.pendingCount(), MAX_PENDING_TOTAL, 'the pending cap is full of announced, unadmitted connections')
  // A registered peer connecting now is not the one closed, though it alone has not announced yet.
  const worker = newHotkey(); n.registered.add(worker.address)
  const honest = n.connect('198.51.100.77')
  t.ok(n.open.has(honest), 'the newcomer stays open')
  t.equal(n.closed.length, 1, 'the oldest pending connection made room')
  n.announce(honest, worker)
  await n.settle()
  t.ok(n.m.gate.isAdmitted(honest), 'and is admitted')
  // The rest re-announce every 4 s (inside their checks' waits): closed all the same at the deadline.
  for (let elapsed = 0; elapsed + 4_000 < ADMISSION_DEADLINE_MS; elapsed += 4_000) {
    n.clock.advance(4_000)
    for (const { peer, k } of sybils) {
      if (!n.open.has(peer)) continue
      n.m.receive(peer, encodeFrame(k, 'announce', { ...FACTS, attachTo: newHotkey().address, role: 'worker', hotkey: k.address, noiseKey: peer, peerNoiseKey: n.self, nonce: randomBytes(16).toString('hex') }, { ts: n.clock.now() }))
    }
    await n.settle()
  }
  t.ok(sybils.filter(s => n.open.has(s.peer)).length > 0, 'before the admission deadline some are still open')
  n.clock.advance(ADMISSION_DEADLINE_MS)
  await n.settle()
  t.equal(sybils.filter(s => n.open.has(s.peer)).length, 0, 'none outlives the deadline from its first announce')
  t.ok((n.m.disconnects.get('admission_timeout') ?? 0) + (n.m.disconnects.get('refused') ?? 0) >= MAX_PENDING_TOTAL - 1, 'closed by the admission deadline or refused')
  t.ok(n.open.has(honest), 'the admitted peer stays')
})

t.test('a connection that does not announce within the deadline is closed; one that announced is not', async t => {
  const n = node()
  const worker = newHotkey(); n.registered.add(worker.address)
  const quiet = n.connect()
  const honest = n.connect('198.51.100.30')
  n.announce(honest, worker)
  await n.settle()
  n.clock.advance(ANNOUNCE_DEADLINE_MS - 1)
  t.same(n.closed, [], 'not before the deadline')
  n.clock.advance(1)
  t.same(n.closed.map(c => c.peer), [quiet], 'the silent connection closed at the deadline')
  t.equal(n.m.disconnects.get('announce_timeout'), 1)
  n.clock.advance(60_000)
  t.ok(n.open.has(honest), 'the announced peer stays')
})

t.test('a refused announce: disconnected at once, banned for REFUSED_BAN_MS, then let back in (and admitted once registered)', async t => {
  const n = node()
  const sybil = newHotkey()
  const first = n.connect()
  n.announce(first, sybil)
  await n.settle()
  // A hotkey claiming to be a worker may still present an attachment (node/peer-auth.ts): its announce
  // waits ATTACHMENT_WAIT_MS for one, unadmitted and told nothing, then is refused as any other.
  t.same(n.closed, [], 'held while it may present an attachment')
  t.notOk(n.m.gate.isAdmitted(first), 'not admitted meanwhile')
  n.clock.advance(ATTACHMENT_WAIT_MS)
  await n.settle()
  t.same(n.closed, [{ peer: first, banMs: REFUSED_BAN_MS }], 'closed, refused at the transport for the ban')
  t.equal(n.m.disconnects.get('refused'), 1)
  t.ok(n.m.isBanned(first, sybil.address), 'connection key and hotkey banned')
  t.equal(n.auth.refused.get('announce'), 1, 'the announce counted as refused')
  // Within the ban, the same hotkey on a fresh connection (a new Noise key) is closed at its announce.
  n.clock.advance(REFUSED_BAN_MS / 2)
  const second = n.connect()
  n.announce(second, sybil)
  await n.settle()
  t.equal(n.closed.at(-1)!.peer, second, 'the banned hotkey on a new connection: closed')
  t.equal(n.m.disconnects.get('banned'), 1)
  t.equal(n.m.peerOf(sybil.address), undefined, 'bound to no connection')
  // The ban expires; the hotkey registered meanwhile is admitted on its next connection.
  n.clock.advance(REFUSED_BAN_MS)
  t.notOk(n.m.isBanned(first, sybil.address), 'the ban expired')
  n.registered.add(sybil.address)
  const third = n.connect()
  n.announce(third, sybil)
  await n.settle()
  t.ok(n.m.gate.isAdmitted(third), 'registered now: admitted')
  t.equal(n.closed.length, 2, 'no further disconnect')
})

t.test('an unregistered announce claiming a role other than worker: disconnected at once', async t => {
  const n = node()
  for (const role of ['orchestrator', 'validator'] as const) {
    const sybil = newHotkey()
    const peer = n.connect()
    n.announce(peer, sybil, role)
    await n.settle()
    t.same(n.closed.at(-1), { peer, banMs: REFUSED_BAN_MS }, `${role}: closed at its announce`)
    t.ok(n.m.isBanned(peer, sybil.address))
  }
})

t.test('bans and standings long over are forgotten: refused Sybils do not stay in memory for ever', async t => {
  const n = node({ maxPendingTotal: 1_000 })
  const refuseMany = async (count: number): Promise<void> => {
    for (let i = 0; i < count; i++) { const peer = n.connect(`192.0.2.${i % 200}`); n.announce(peer, newHotkey(), 'validator') }
    await n.settle()
  }
  await refuseMany(300)
  t.equal(n.m.disconnected.size, 300, 'each refused connection remembered while its ban runs')
  // Past the ban and the escalation memory after it: the next sweep forgets them.
  n.clock.advance(REFUSED_BAN_MS + 3_600_000 + 1)
  await refuseMany(300)
  t.ok(n.m.disconnected.size <= 300, `only the recent ones are left (${n.m.disconnected.size})`)
  t.ok(n.m.disconnected.size >= 44, 'and the recent ones are kept')
  t.ok(n.auth.remembered.standings <= 300, `their "not registered" standings too (${n.auth.remembered.standings} left of 600)`)
})

t.test('broadcasts reach admitted peers only', async t => {
  const n = node()
  const worker = newHotkey(); n.registered.add(worker.address)
  const sybil = newHotkey()
  const honest = n.connect('198.51.100.40')
  const pending = n.connect('198.51.100.41')
  const refused = n.connect('198.51.100.42')
  n.announce(honest, worker)
  n.announce(refused, sybil)
  await n.settle()
  const sentTo = n.m.broadcast('heartbeat', { role: 'orchestrator', seq: 1, capacity: { slots: 1, bandwidthMbps: 1 }, load: 0, workers: 0 })
  t.equal(sentTo, 1, 'one recipient')
  t.equal(n.sent.get(honest), 1, 'the admitted peer got it')
  t.equal(n.sent.get(pending), undefined, 'the connection that has not announced got nothing')
  t.equal(n.sent.get(refused), undefined, 'the refused peer got nothing')
})

t.test('PeerGate alone: a reconnect replaces the old entry; closed connections are forgotten', async t => {
  const clock = new ManualClock()
  const closed: string[] = []
  const g = new PeerGate({ clock, limits: { maxPendingTotal: 2 }, close: (p) => closed.push(p) })
  g.open('a', '192.0.2.1'); g.open('a', '192.0.2.1'); g.open('b', '192.0.2.2')
  t.equal(g.pendingCount(), 2, 'a reconnect is one connection')
  t.same(closed, [])
  g.closed('a')
  clock.advance(ANNOUNCE_DEADLINE_MS)
  t.same(closed, ['b'], 'only the connection still open timed out')
  t.equal(g.pendingCount(), 0)
})
