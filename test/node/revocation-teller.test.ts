// The issuer's side of revocation notices: every admitted peer told at once and the revoked worker cut a
// moment later (not at all once stopped); a validator or orchestrator told once per connection, in frames of
// at most MAX_REVOCATIONS_PER_MESSAGE; a worker never told on its announce.
import t from 'tap'
import { RevocationTeller, REVOKED_NOTICE_GRACE_MS } from '../../node/revocation-teller.ts'
import { MAX_REVOCATIONS_PER_MESSAGE } from '../../protocol/index.ts'
import { ManualClock } from '../helpers/clock.ts'

function setup (notices: Array<{ worker: string, revokedAt: number }>, connected = new Set<string>(['W'])) {
  const clock = new ManualClock(1_000_000)
  const sent: Array<{ to: string | '*', body: any }> = []
  const withdrawn: string[] = []
  const messenger = {
    broadcast: (_type: string, body: unknown) => { sent.push({ to: '*', body }); return 1 },
    send: (to: string, _type: string, body: unknown) => { sent.push({ to, body }); return true },
    peerOf: (h: string) => (connected.has(h) ? `peer-${h}` : undefined),
    withdraw: (h: string) => { withdrawn.push(h) }
  }
  const issuer = { notices: () => notices, notice: (w: string) => notices.find(n => n.worker === w) }
  const teller = new RevocationTeller({ clock, issuer, messenger: messenger as never, self: 'O' })
  return { clock, sent, withdrawn, teller }
}

t.test('a revocation is broadcast at once; the connected worker is cut after the grace', async t => {
  const s = setup([{ worker: 'W', revokedAt: 5 }])
  s.teller.revoked('W')
  t.same(s.sent, [{ to: '*', body: { revocations: [{ worker: 'W', revokedAt: 5 }] } }])
  t.same(s.withdrawn, [], 'still connected while the notice goes out')
  s.clock.advance(REVOKED_NOTICE_GRACE_MS - 1)
  t.same(s.withdrawn, [])
  s.clock.advance(1)
  t.same(s.withdrawn, ['W'], 'then cut')
})

t.test('a worker not connected is cut at once; a stop cancels a pending cut', async t => {
  const gone = setup([{ worker: 'W', revokedAt: 5 }], new Set())
  gone.teller.revoked('W')
  t.same(gone.withdrawn, ['W'])
  const s = setup([{ worker: 'W', revokedAt: 5 }])
  s.teller.revoked('W')
  s.teller.stop()
  s.clock.advance(REVOKED_NOTICE_GRACE_MS * 2)
  t.same(s.withdrawn, [], 'nothing after the stop')
})

t.test('told once per connection, in bounded frames; again on a new connection; never a worker', async t => {
  const many = Array.from({ length: MAX_REVOCATIONS_PER_MESSAGE + 1 }, (_, i) => ({ worker: `W${i}`, revokedAt: i }))
  const s = setup(many)
  s.teller.announced('V', 'conn-1', 'validator')
  t.same(s.sent.map(m => [m.to, m.body.revocations.length]), [['V', MAX_REVOCATIONS_PER_MESSAGE], ['V', 1]], 'two frames')
  s.teller.announced('V', 'conn-1', 'validator')
  t.equal(s.sent.length, 2, 'an announce again on the same connection: nothing more')
  s.teller.announced('V', 'conn-2', 'validator')
  t.equal(s.sent.length, 4, 'a new connection (the peer restarted): told again')
  s.teller.down('V')
  s.teller.announced('V', 'conn-2', 'validator')
  t.equal(s.sent.length, 6, 'after its connection went down, told again')
  s.teller.announced('W9', 'conn-3', 'worker')
  s.teller.announced('O', 'conn-4', 'orchestrator')
  t.equal(s.sent.length, 6, 'neither a worker nor itself')
  s.teller.announced('O2', 'conn-5', 'orchestrator')
  t.equal(s.sent.length, 8, 'another orchestrator is')
})
