// A worker's own attachment: taken only from the orchestrator it attaches to (when it names one), and
// only as a renewal (none held, or the one held past half its life), so no registered orchestrator can
// make the worker re-announce on every connection at the pace it sends attachments. With a real
// Messenger and PeerAuth on a manual clock; node/node.ts re-announces on every connection per attachment
// taken, as onOwnAttachment does here.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { cryptoReady, newHotkey, encodeFrame, signAttachment, ATTACHMENT_TTL_MS, type KeyPair } from '../../../protocol/index.ts'
import { Messenger } from '../../../node/messenger.ts'
import { PeerAuth } from '../../../node/peer-auth.ts'
import type { Chain, Standing } from '../../../actors/chain/index.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { silentLogger } from '../../helpers/logger.ts'

await cryptoReady()

function worker (attach: 'named' | 'any') {
  const clock = new ManualClock(Date.now())
  const w = newHotkey(); const real = newHotkey(); const rogue = newHotkey()
  const m = new Messenger(w, clock, silentLogger(), { sliceMs: Infinity }, { admission: 'auth' })
  const self = randomBytes(32).toString('hex')
  const sent = new Map<string, number>()
  const open = new Set<string>()
  m.attach({ publicKey: self, send: (p) => { if (!open.has(p)) return false; sent.set(p, (sent.get(p) ?? 0) + 1); return true } }, { onConnect: () => {}, onDisconnect: () => {} })
  const validators = new Set<string>()
  const orchestrators = new Set([real.address, rogue.address])
  const chain = {
    standing: async (h: string): Promise<Standing | null> => orchestrators.has(h)
      ? { hotkey: h, uid: 2, role: 'orchestrator', registeredAtBlock: 1, stakeRao: 0n, validatorPermit: false }
      : validators.has(h) ? { hotkey: h, uid: 9, role: 'validator', registeredAtBlock: 1, stakeRao: 10n, validatorPermit: true } : null
  } as unknown as Chain
  const attachTo = attach === 'named' ? real.address : null
  const auth = new PeerAuth({ self: { hotkey: w.address, role: 'worker' }, clock, logger: silentLogger(), messenger: m, attachTo })
  auth.useChain(chain)
  auth.on('announce', 'registered', () => {})
  m.isRegistered = (h) => auth.wasRegistered(h)
  const facts: any = { role: 'worker', hotkey: w.address, software: 'x', capacity: { slots: 1, bandwidthMbps: 1 }, dataUrl: null, attachTo }
  const taken: string[] = []
  auth.onOwnAttachment = (a) => { taken.push(a.orchestrator); facts.attachment = a; for (const p of m.gate.connections()) m.announceTo(p, facts) }
  const conn = (k: KeyPair, role: string): string => {
    const p = randomBytes(32).toString('hex'); open.add(p); m.peerUp(p, '198.51.100.1')
    m.receive(p, encodeFrame(k, 'announce', { role, hotkey: k.address, software: 'x', capacity: { slots: 1, bandwidthMbps: 1 }, dataUrl: null, attachTo: null, noiseKey: p, peerNoiseKey: self, nonce: randomBytes(16).toString('hex') } as any, { ts: clock.now() }))
    return p
  }
  /** Connected registered validators: the peers a worker's re-announces would reach. */
  const validatorPeers = (n: number): string[] => Array.from({ length: n }, () => { const k = newHotkey(); validators.add(k.address); return conn(k, 'validator') })
  const settle = async (): Promise<void> => { for (let i = 0; i < 20; i++) { await m.settled(); await new Promise(setImmediate) } }
  const hand = (from: KeyPair, peer: string, n: number): void => {
    for (let i = 0; i < n; i++) m.receive(peer, encodeFrame(from, 'worker_attachment', { attachment: signAttachment(from, { worker: w.address, issuedAt: clock.now() }) }, { ts: clock.now(), to: w.address }))
  }
  return { clock, m, w, real, rogue, sent, taken, conn, settle, hand, validatorPeers }
}

t.test('attached to a named orchestrator: another\'s attachments are ignored; its own taken once, then again only as a renewal', async t => {
  const s = worker('named') // the worker names its orchestrator
  const rp = s.conn(s.rogue, 'orchestrator')
  const op = s.conn(s.real, 'orchestrator')
  const others = s.validatorPeers(3)
  await s.settle()
  s.sent.clear()
  s.hand(s.rogue, rp, 100)
  await s.settle()
  t.same(s.taken, [], 'an orchestrator the worker does not attach to hands it nothing')
  t.same(others.map(p => s.sent.get(p) ?? 0), [0, 0, 0], 'and makes it announce nothing')
  s.hand(s.real, op, 100)
  await s.settle()
  t.same(s.taken, [s.real.address], 'its own orchestrator\'s first attachment is taken; the 99 after it, while it is fresh, are not')
  t.same(others.map(p => s.sent.get(p) ?? 0), [1, 1, 1], 'one announce per connection')
  s.clock.advance(ATTACHMENT_TTL_MS / 2)
  s.hand(s.real, op, 5)
  await s.settle()
  t.same(s.taken, [s.real.address, s.real.address], 'past half its life: the renewal is taken, once')
})

t.test('attached to any orchestrator: a flood of attachments from one is taken once', async t => {
  const s = worker('any')
  const rp = s.conn(s.rogue, 'orchestrator')
  const others = s.validatorPeers(3)
  await s.settle()
  s.sent.clear()
  s.hand(s.rogue, rp, 100)
  await s.settle()
  t.same(s.taken, [s.rogue.address], 'one taken')
  t.same(others.map(p => s.sent.get(p) ?? 0), [1, 1, 1], 'one announce per connection, not a hundred')
})
