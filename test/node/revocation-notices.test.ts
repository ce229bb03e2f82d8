// Orchestrators' notices of what they revoked (`attachments_revoked`): kept per issuer and worker, for
// attachments of that issuer only, while one they cover could be valid, and bounded; and PeerAuth acting on
// them: a worker standing on a covered attachment loses it and its connection, whoever else sends a notice
// changes nothing, and a later attachment from the same issuer stands.
import t from 'tap'
import { pino } from 'pino'
import { RevocationNotices, NOTICE_KEPT_MS, NOTICES_PER_ISSUER_MAX, NOTICE_ISSUERS_MAX, NOTICES_MAX } from '../../node/revocation-notices.ts'
import { PeerAuth } from '../../node/peer-auth.ts'
import { cryptoReady, newHotkey, signAttachment, MAX_CLOCK_SKEW_MS, type Attachment } from '../../protocol/index.ts'
import { ManualClock } from '../helpers/clock.ts'
import { capturingLogger } from '../helpers/logger.ts'
import type { Chain, Standing } from '../../actors/chain/index.ts'
import type { Messenger } from '../../node/messenger.ts'

await cryptoReady()
const NOW = Date.UTC(2026, 10, 29, 12)
const at = (orchestrator: string, worker: string, issuedAt: number): Attachment => ({ orchestrator, worker, issuedAt } as Attachment)

t.test('a notice covers its issuer\'s attachments of that worker issued at or before it, and nothing else', async t => {
  const n = new RevocationNotices()
  t.equal(n.record('O1', 'W', NOW, NOW), 'recorded')
  t.ok(n.covers(at('O1', 'W', NOW)), 'issued at the revocation')
  t.ok(n.covers(at('O1', 'W', NOW - 60_000)), 'issued before it')
  t.notOk(n.covers(at('O1', 'W', NOW + 1)), 'issued after it (reinstated)')
  t.notOk(n.covers(at('O2', 'W', NOW - 60_000)), 'another issuer\'s attachment of the same worker')
  t.notOk(n.covers(at('O1', 'W2', NOW - 60_000)), 'another worker')
  t.equal(n.record('O1', 'W', NOW - 5_000, NOW), 'recorded')
  t.ok(n.covers(at('O1', 'W', NOW)), 'an older notice does not narrow a newer one')
})

t.test('a notice from the future is refused; one older than any valid attachment is not kept; they lapse', async t => {
  const n = new RevocationNotices()
  t.equal(n.record('O', 'W', NOW + MAX_CLOCK_SKEW_MS + 1, NOW), 'future')
  t.equal(n.record('O', 'W', NOW - NOTICE_KEPT_MS, NOW), 'stale')
  t.equal(n.size, 0)
  t.equal(n.record('O', 'W', NOW + MAX_CLOCK_SKEW_MS, NOW), 'recorded', 'within the allowed skew')
  n.sweep(NOW + MAX_CLOCK_SKEW_MS + NOTICE_KEPT_MS - 1)
  t.equal(n.size, 1, 'kept while an attachment it covers could be valid')
  n.sweep(NOW + MAX_CLOCK_SKEW_MS + NOTICE_KEPT_MS)
  t.equal(n.size, 0, 'then forgotten')
})

t.test('bounded per issuer and in issuers: the oldest go first', async t => {
  const n = new RevocationNotices()
  for (let i = 0; i <= NOTICES_PER_ISSUER_MAX; i++) n.record('O', `W${i}`, NOW, NOW)
  t.equal(n.size, NOTICES_PER_ISSUER_MAX)
  t.notOk(n.covers(at('O', 'W0', NOW)), 'the first worker went')
  t.ok(n.covers(at('O', `W${NOTICES_PER_ISSUER_MAX}`, NOW)))
  const m = new RevocationNotices()
  for (let i = 0; i <= NOTICE_ISSUERS_MAX; i++) m.record(`O${i}`, 'W', NOW, NOW)
  t.equal(m.size, NOTICE_ISSUERS_MAX)
  t.notOk(m.covers(at('O0', 'W', NOW)), 'the first issuer went')
  // In all: a hostile issuer at its own cap, and many others, take from the largest share first.
  const all = new RevocationNotices()
  for (let i = 0; i < NOTICES_PER_ISSUER_MAX; i++) all.record('hostile', `W${i}`, NOW, NOW)
  const others = Math.ceil((NOTICES_MAX - NOTICES_PER_ISSUER_MAX) / 64) + 1
  for (let o = 0; o < others; o++) for (let i = 0; i < 64; i++) all.record(`O${o}`, `W${i}`, NOW, NOW)
  t.equal(all.size, NOTICES_MAX, 'never more than the total')
  t.ok(all.covers(at('O0', 'W0', NOW)) && all.covers(at(`O${others - 1}`, 'W63', NOW)), 'every honest issuer\'s notices kept')
  t.notOk(all.covers(at('hostile', 'W0', NOW)), 'the largest share gave up its oldest')
})

t.test('PeerAuth: the issuer\'s notice ends the worker\'s standing here; anyone else\'s changes nothing', async t => {
  const clock = new ManualClock(NOW)
  const [issuer, other, validator] = [newHotkey(), newHotkey(), newHotkey()]
  const worker = newHotkey().address
  const orch = (h: string): Standing => ({ hotkey: h, uid: 1, role: 'orchestrator', registeredAtBlock: 1, stakeRao: 0n, validatorPermit: false })
  const standings = new Map<string, Standing>([
    [issuer.address, orch(issuer.address)], [other.address, orch(other.address)],
    [validator.address, { hotkey: validator.address, uid: 3, role: 'validator', registeredAtBlock: 1, stakeRao: 10n ** 12n, validatorPermit: true }]
  ])
  const chain = { standing: async (h: string) => standings.get(h) ?? null } as unknown as Chain
  const handlers = new Map<string, Array<(msg: any, peer: string) => void>>()
  const withdrawn: string[] = []
  const penalized: string[] = []
  const messenger = {
    on (type: string, h: (msg: any, peer: string) => void) { handlers.set(type, [...handlers.get(type) ?? [], h]) },
    admit () {}, refuse () {}, penalize (from: string) { penalized.push(from) }, send () { return true },
    withdraw (hotkey: string) { withdrawn.push(hotkey) }
  } as unknown as Messenger
  const log = capturingLogger()
  const auth = new PeerAuth({ self: { hotkey: newHotkey().address, role: 'validator' }, clock, logger: log.logger, messenger })
  auth.useChain(chain)
  const settle = async (): Promise<void> => { for (let i = 0; i < 10; i++) await new Promise(setImmediate) }
  const notice = (from: string, revokedAt: number): void => {
    for (const h of handlers.get('attachments_revoked') ?? []) h({ type: 'attachments_revoked', from, body: { revocations: [{ worker, revokedAt }] } }, 'peer')
  }

  const first = signAttachment(issuer, { worker, issuedAt: clock.now() })
  t.ok((await auth.present(first, worker)).ok)
  t.match(await auth.standing(worker), { source: 'attachment' })

  // Another orchestrator, and a validator, name the worker: the attachment is not theirs to revoke.
  notice(other.address, clock.now())
  notice(validator.address, clock.now())
  await settle()
  t.equal(auth.attachmentOf(worker), first, 'still held')
  t.same(withdrawn, [])
  t.ok((await auth.present(first, worker)).ok, 'still valid here')
  t.equal(auth.notices.size, 1, 'the other orchestrator\'s notice is kept for its own attachments only; the validator\'s is refused')
  t.same(penalized, [validator.address], 'a notice from a validator costs it score')

  // The issuer's own notice, for a time in the future beyond the skew: ignored.
  notice(issuer.address, clock.now() + MAX_CLOCK_SKEW_MS + 60_000)
  await settle()
  t.match(log.lines.filter(l => l.event === 'revocation_notice_ignored'), [{ peer: issuer.address, worker, reason: 'future' }], 'taken and ignored')
  t.equal(auth.attachmentOf(worker), first)

  clock.advance(1_000)
  const second = signAttachment(issuer, { worker, issuedAt: clock.now() }) // a renewal: the worker holds two
  t.ok((await auth.present(second, worker)).ok)
  notice(issuer.address, clock.now())
  await settle()
  t.equal(auth.attachmentOf(worker), undefined, 'the held attachment is dropped')
  t.same(withdrawn, [worker], 'the worker\'s connection is ended')
  t.equal(await auth.standing(worker), null, 'no standing')
  t.match(await auth.present(first, worker), { ok: false, reason: 'revoked' }, 'the older one is refused')
  t.match(await auth.present(second, worker), { ok: false, reason: 'revoked' }, 'and the newer')
  clock.advance(1)
  const reinstated = signAttachment(issuer, { worker, issuedAt: clock.now() })
  t.ok((await auth.present(reinstated, worker)).ok, 'one issued after the revocation stands')
  t.match(await auth.standing(worker), { source: 'attachment' })
})

t.test('a worker told by its issuer that its attachment is revoked takes the new one handed right after it', async t => {
  const clock = new ManualClock(NOW)
  const issuer = newHotkey()
  const self = newHotkey().address
  const chain = { standing: async (h: string) => h === issuer.address ? { hotkey: h, uid: 1, role: 'orchestrator', registeredAtBlock: 1, stakeRao: 0n, validatorPermit: false } : null } as unknown as Chain
  const handlers = new Map<string, Array<(msg: any, peer: string) => void>>()
  const messenger = {
    on (type: string, h: (msg: any, peer: string) => void) { handlers.set(type, [...handlers.get(type) ?? [], h]) },
    admit () {}, refuse () {}, penalize () {}, send () { return true }, withdraw () {}
  } as unknown as Messenger
  const log = capturingLogger()
  const auth = new PeerAuth({ self: { hotkey: self, role: 'worker' }, clock, logger: log.logger, messenger })
  auth.useChain(chain)
  const taken: Attachment[] = []
  auth.onOwnAttachment = (a) => { taken.push(a) }
  const deliver = (type: string, from: string, body: unknown): void => { for (const h of handlers.get(type) ?? []) h({ type, from, body }, 'peer') }
  await new Promise<void>(resolve => { auth.onOwnAttachment = (a) => { taken.push(a); resolve() }; deliver('worker_attachment', issuer.address, { attachment: signAttachment(issuer, { worker: self, issuedAt: clock.now() }) }) })
  t.equal(auth.own, taken[0])

  // Well within its life, a fresh attachment is no renewal: not taken.
  clock.advance(60_000)
  deliver('worker_attachment', issuer.address, { attachment: signAttachment(issuer, { worker: self, issuedAt: clock.now() }) })
  t.equal(auth.own, taken[0], 'not a renewal: kept the one held')
  // Revoked, then reinstated: the notice, then the new attachment, in that order on the connection.
  deliver('attachments_revoked', newHotkey().address, { revocations: [{ worker: self, revokedAt: clock.now() }] })
  t.equal(auth.own, taken[0], 'another orchestrator\'s notice does not touch it')
  deliver('attachments_revoked', issuer.address, { revocations: [{ worker: self, revokedAt: clock.now() }] })
  t.equal(auth.own, null, 'dropped at once')
  t.match(log.lines.filter(l => l.event === 'own_attachment_revoked'), [{ orchestrator: issuer.address }])
  clock.advance(1)
  const fresh = signAttachment(issuer, { worker: self, issuedAt: clock.now() })
  await new Promise<void>(resolve => { auth.onOwnAttachment = (a) => { taken.push(a); resolve() }; deliver('worker_attachment', issuer.address, { attachment: fresh }) })
  t.equal(auth.own?.signature, fresh.signature, 'the new one is taken')
})

t.test('PeerAuth: an attachment carried by a verify request never displaces the worker\'s own, and its issuer\'s notice drops it without ending the worker\'s connection', async t => {
  const clock = new ManualClock(NOW)
  const [own, planter] = [newHotkey(), newHotkey()]
  const worker = newHotkey().address
  const orch = (h: string): Standing => ({ hotkey: h, uid: 1, role: 'orchestrator', registeredAtBlock: 1, stakeRao: 0n, validatorPermit: false })
  const chain = { standing: async (h: string) => (h === own.address || h === planter.address ? orch(h) : null) } as unknown as Chain
  const handlers = new Map<string, Array<(msg: any, peer: string) => void>>()
  const withdrawn: string[] = []
  const messenger = {
    on (type: string, h: (msg: any, peer: string) => void) { handlers.set(type, [...handlers.get(type) ?? [], h]) },
    admit () {}, refuse () {}, penalize () {}, send () { return true }, withdraw (hotkey: string) { withdrawn.push(hotkey) }
  } as unknown as Messenger
  const log = capturingLogger()
  const auth = new PeerAuth({ self: { hotkey: newHotkey().address, role: 'validator' }, clock, logger: log.logger, messenger })
  auth.useChain(chain)
  const notice = (from: string, workers = [worker]): void => {
    for (const h of handlers.get('attachments_revoked') ?? []) h({ type: 'attachments_revoked', from, body: { revocations: workers.map(w => ({ worker: w, revokedAt: clock.now() })) } }, 'peer')
  }
  const dropped = async (n: number): Promise<void> => {
    for (let i = 0; i < 100 && log.lines.filter(l => l.event === 'attachment_revoked_by_issuer').length < n; i++) await new Promise(setImmediate)
  }

  // Nothing held yet: a carried attachment fills in; its issuer's notice drops it, and nobody is disconnected.
  const planted = signAttachment(planter, { worker, issuedAt: clock.now(), ttlMs: 15 * 60_000 })
  t.ok((await auth.present(planted, worker, { carried: true })).ok)
  t.equal(auth.attachmentOf(worker), planted)
  notice(planter.address)
  await dropped(1)
  t.equal(auth.attachmentOf(worker), undefined, 'the carried one is dropped')
  await auth.standing(worker) // after any lookup the notice began (shared), and what it decided
  t.same(withdrawn, [], 'the worker, which never presented it, keeps its connection')

  // The worker presents its own; a carried one, from another issuer and lasting longer, does not displace it.
  clock.advance(1_000)
  const mine = signAttachment(own, { worker, issuedAt: clock.now() })
  t.ok((await auth.present(mine, worker)).ok)
  const planted2 = signAttachment(planter, { worker, issuedAt: clock.now(), ttlMs: 15 * 60_000 })
  t.ok((await auth.present(planted2, worker, { carried: true })).ok, 'the carried one checks out')
  t.equal(auth.attachmentOf(worker), mine, 'but the worker\'s own stays held')
  // The planter's notice names the worker and a control whose carried attachment from it is held: the
  // control's drop shows the notice was taken.
  const control = newHotkey().address
  t.ok((await auth.present(signAttachment(planter, { worker: control, issuedAt: clock.now() }), control, { carried: true })).ok)
  notice(planter.address, [worker, control])
  await dropped(2)
  t.equal(auth.attachmentOf(control), undefined, 'the notice was taken')
  t.equal(auth.attachmentOf(worker), mine, 'the planter\'s notice does not cover the worker\'s own')
  t.match(await auth.standing(worker), { source: 'attachment' }, 'the worker stands')
  t.same(withdrawn, [])

  // A carried one held gives way to the worker's own, whatever their expiries.
  const other = newHotkey().address
  t.ok((await auth.present(signAttachment(planter, { worker: other, issuedAt: clock.now(), ttlMs: 15 * 60_000 }), other, { carried: true })).ok)
  const others = signAttachment(own, { worker: other, issuedAt: clock.now() })
  t.ok((await auth.present(others, other)).ok)
  t.equal(auth.attachmentOf(other), others)
})
