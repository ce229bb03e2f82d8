// The orchestrator's issuer (limits, revocation, renewal) and PeerAuth's standing of a worker on its
// attachment, re-checked against the issuer's standing: on a manual clock, with a chain the test sets.
import t from 'tap'
import { pino } from 'pino'
import { AttachmentIssuer, RENEW_CHECK_MS, REFUSAL_LOG_EVERY_MS } from '../../node/attachments.ts'
import { capturingLogger } from '../helpers/logger.ts'
import { PeerAuth, STANDING_TTL_MS } from '../../node/peer-auth.ts'
import { ManualClock } from '../helpers/clock.ts'
import { cryptoReady, newHotkey, signAttachment, ATTACHMENT_TTL_MS, type Attachment } from '../../protocol/index.ts'
import type { Chain, Standing } from '../../actors/chain/index.ts'
import type { Messenger } from '../../node/messenger.ts'

await cryptoReady()
const logger = pino({ level: 'silent' })

t.test('issuer: max_workers, allowlist, revocation, release and renewal', async t => {
  const clock = new ManualClock()
  const key = newHotkey()
  const delivered: Attachment[] = []
  const [w1, w2, w3] = [newHotkey().address, newHotkey().address, newHotkey().address]
  const issuer = new AttachmentIssuer({ key, clock, logger, maxWorkers: 2, deliver: (a) => delivered.push(a) })
  const a1 = issuer.issue(w1)
  t.match(a1, { ok: true, renewed: false, attachment: { worker: w1, orchestrator: key.address } })
  t.match(issuer.issue(w2), { ok: true })
  t.same(issuer.issue(w3), { ok: false, reason: 'max_workers' }, 'the third is refused')
  t.match(issuer.issue(w1), { ok: true, renewed: true }, 'an attached worker may be issued again')
  // A worker that leaves keeps its place while the attachment it left with is valid (honoured everywhere):
  // connecting, announcing and leaving with one fresh hotkey after another collects no more than maxWorkers.
  issuer.release(w2)
  t.same(issuer.issue(w3), { ok: false, reason: 'max_workers' }, 'a worker that left keeps its place while its attachment is valid')
  t.equal(issuer.current(w2), undefined, 'it is not attached now')
  t.match(issuer.issue(w2), { ok: true, renewed: true }, 'back: its own place again')
  issuer.release(w2)
  clock.advance(ATTACHMENT_TTL_MS)
  t.notOk(delivered.some(a => a.worker === w2), 'a worker that left is not renewed')
  t.ok(delivered.some(a => a.worker === w1), 'one attached is')
  t.equal(issuer.count(), 1, 'its attachment expired: its place is free')
  t.match(issuer.issue(w3), { ok: true }, 'and given to the next')
  t.equal(issuer.count(), 2)

  const current = issuer.current(w1)!
  t.notOk(issuer.isRevoked(current))
  t.equal(issuer.revoke(w1), true)
  t.ok(issuer.isRevoked(current), 'its attachment is revoked')
  t.same(issuer.issue(w1), { ok: false, reason: 'revoked' }, 'and it is not attached again')
  t.notOk(issuer.isRevoked(signAttachment(newHotkey(), { worker: w1, issuedAt: clock.now() })), 'another issuer\'s attachment is not ours to judge')
  issuer.reinstate(w1)
  t.ok(issuer.isRevoked(current), 'reinstated: what it held before the revocation stays refused')
  const after = issuer.issue(w1)
  t.ok(after.ok && !issuer.isRevoked(after.attachment) && after.attachment.issuedAt > current.issuedAt, 'a new attachment is good, issued after the revocation even within its millisecond')

  // Renewal: re-issued and delivered once less than half the lifetime is left.
  const before = issuer.current(w3)!
  clock.advance(ATTACHMENT_TTL_MS / 2 - RENEW_CHECK_MS)
  t.notOk(delivered.some(a => a.worker === w3), 'not renewed early')
  clock.advance(2 * RENEW_CHECK_MS)
  const renewed = delivered.find(a => a.worker === w3)
  t.ok(renewed !== undefined && renewed.expiresAt > before.expiresAt && renewed.serial !== before.serial, 'renewed with a later expiry')
  issuer.stop()

  const allow = new AttachmentIssuer({ key, clock, logger, maxWorkers: 10, allowlist: new Set([w2]), deliver: () => {} })
  t.same(allow.issue(w1), { ok: false, reason: 'not_allowed' })
  t.match(allow.issue(w2), { ok: true })
  allow.stop()
})

t.test('issuer: at most maxPerAddress workers attached from one address (IPv6: one /64); loopback and unknown addresses exempt', async t => {
  const clock = new ManualClock()
  const issuer = new AttachmentIssuer({ key: newHotkey(), clock, logger, maxWorkers: 100, maxPerAddress: 2, deliver: () => {} })
  t.teardown(() => issuer.stop())
  const w = Array.from({ length: 11 }, () => newHotkey().address)
  t.match(issuer.issue(w[0]!, '198.51.100.1'), { ok: true })
  t.match(issuer.issue(w[1]!, '::ffff:198.51.100.1'), { ok: true }, 'the same address, IPv4-mapped')
  t.same(issuer.issue(w[2]!, '198.51.100.1'), { ok: false, reason: 'max_per_address' }, 'a third from that address is refused')
  t.match(issuer.issue(w[2]!, '198.51.100.2'), { ok: true }, 'from another address it is attached')
  t.match(issuer.issue(w[3]!, '2001:db8:0:1::1'), { ok: true })
  t.match(issuer.issue(w[4]!, '2001:db8:0:1::2'), { ok: true })
  t.same(issuer.issue(w[5]!, '2001:db8:0:1:ffff:ffff:ffff:ffff'), { ok: false, reason: 'max_per_address' }, 'one /64 is one address')
  for (const i of [5, 6, 7]) t.match(issuer.issue(w[i]!, '127.0.0.1'), { ok: true }, 'loopback is exempt (a devnet)')
  t.match(issuer.issue(w[8]!, null), { ok: true }, 'an address the transport did not report is not capped')
  t.equal(issuer.countAt('198.51.100.1'), 2)
  // A renewal (the timer's, with no address) keeps the worker's place and address; a worker already
  // attached is renewed from wherever it is now.
  t.match(issuer.issue(w[0]!), { ok: true, renewed: true })
  t.match(issuer.issue(w[1]!, '198.51.100.1'), { ok: true, renewed: true }, 'renewed at a full address: it holds its place already')
  t.equal(issuer.countAt('198.51.100.1'), 2, 'still counted there')
  // Attach, leave, come back from another address and attach again: a place moves only where there is room.
  t.match(issuer.issue(w[10]!, '198.51.100.2'), { ok: true })
  t.match(issuer.issue(w[0]!, '198.51.100.2'), { ok: true, renewed: true }, 'back from a full address: renewed')
  t.equal(issuer.countAt('198.51.100.1'), 2, 'but still counted where it was attached')
  t.equal(issuer.countAt('198.51.100.2'), 2)
  t.match(issuer.issue(w[0]!, '198.51.100.3'), { ok: true, renewed: true })
  t.equal(issuer.countAt('198.51.100.3'), 1, 'moved to an address with room')
  t.equal(issuer.countAt('198.51.100.1'), 1, 'and freed its old place')
  t.match(issuer.issue(w[0]!, '198.51.100.1'), { ok: true, renewed: true }, 'and back again')
  t.equal(issuer.countAt('198.51.100.1'), 2)
  // One that leaves keeps its place, and its address's count, until its attachment expires.
  issuer.release(w[0]!)
  t.same(issuer.issue(w[9]!, '198.51.100.1'), { ok: false, reason: 'max_per_address' }, 'Sybils leaving do not free their address')
  t.equal(issuer.revoke(w[1]!), true)
  t.match(issuer.issue(w[9]!, '198.51.100.1'), { ok: true }, 'a revoked worker\'s place at its address is free')
  clock.advance(ATTACHMENT_TTL_MS)
  t.equal(issuer.countAt('198.51.100.1'), 1, 'the one that left expired and counts no more; the one attached there was renewed')
  issuer.release(w[9]!)
  clock.advance(ATTACHMENT_TTL_MS)
  t.equal(issuer.countAt('198.51.100.1'), 0, 'gone and expired: counted nowhere')
  const open = new AttachmentIssuer({ key: newHotkey(), clock, logger, maxWorkers: 100, maxPerAddress: 0, deliver: () => {} })
  for (let i = 0; i < 5; i++) t.match(open.issue(w[i]!, '198.51.100.1'), { ok: true }, `no cap with 0 (${i + 1})`)
  open.stop()
})

t.test('issuer: an expired attachment holds no place at its address, even before the renewal check forgets it', async t => {
  const clock = new ManualClock()
  const issuer = new AttachmentIssuer({ key: newHotkey(), clock, logger, maxWorkers: 10, maxPerAddress: 1, ttlMs: 45_000, deliver: () => {} })
  t.teardown(() => issuer.stop())
  const [w1, w2] = [newHotkey().address, newHotkey().address]
  t.match(issuer.issue(w1, '198.51.100.1'), { ok: true })
  issuer.release(w1)
  clock.advance(50_000) // expired at 45 s; the next check is at 60 s
  t.match(issuer.issue(w2, '198.51.100.1'), { ok: true }, 'the expired one frees the address')
  t.same(issuer.issue(w1, '198.51.100.1'), { ok: false, reason: 'max_per_address' }, 'and coming back it needs room like any new one')
})

t.test('issuer: a worker not connected at a renewal check is taken as gone, not renewed', async t => {
  const clock = new ManualClock()
  const online = new Set<string>()
  const delivered: Attachment[] = []
  const issuer = new AttachmentIssuer({ key: newHotkey(), clock, logger, maxWorkers: 1, connected: (w) => online.has(w), deliver: (a) => delivered.push(a) })
  t.teardown(() => issuer.stop())
  const [here, gone, next] = [newHotkey().address, newHotkey().address, newHotkey().address]
  online.add(here)
  t.match(issuer.issue(here), { ok: true })
  clock.advance(ATTACHMENT_TTL_MS)
  t.ok(delivered.some(a => a.worker === here), 'a connected worker is renewed')
  t.equal(issuer.revoke(here), true)
  // Attached while its connection was closing: release never came, as the role was not known yet.
  t.match(issuer.issue(gone), { ok: true })
  clock.advance(ATTACHMENT_TTL_MS)
  t.notOk(delivered.some(a => a.worker === gone), 'not renewed for nobody')
  t.equal(issuer.count(), 0, 'its place is free once the attachment it left with expired')
  t.match(issuer.issue(next), { ok: true })
})

t.test('a worker\'s standing on its attachment: lost with its issuer\'s UID, never for another hotkey', async t => {
  const clock = new ManualClock()
  const orch = newHotkey(); const val = newHotkey(); const worker = newHotkey(); const other = newHotkey()
  const standings = new Map<string, Standing | null>([
    [orch.address, { hotkey: orch.address, uid: 4, role: 'orchestrator', registeredAtBlock: 1, stakeRao: 0n, validatorPermit: false }],
    [val.address, { hotkey: val.address, uid: 5, role: 'validator', registeredAtBlock: 1, stakeRao: 10n ** 12n, validatorPermit: true }]
  ])
  const chain = { standing: async (h: string) => standings.get(h) ?? null } as unknown as Chain
  const auth = new PeerAuth({ self: { hotkey: newHotkey().address, role: 'validator' }, clock, logger, messenger: { on () {} } as unknown as Messenger })
  auth.useChain(chain)
  const now = clock.now()

  t.equal(await auth.standing(worker.address), null, 'unattached: no standing')
  t.match(await auth.present(signAttachment(orch, { worker: worker.address, issuedAt: now }), other.address), { ok: false, reason: 'wrong_worker' }, 'presented for another hotkey')
  t.match(await auth.present(signAttachment(val, { worker: worker.address, issuedAt: now }), worker.address), { ok: false, reason: 'issuer_not_orchestrator' })
  t.match(await auth.present(signAttachment(worker, { worker: worker.address, issuedAt: now }), worker.address), { ok: false, reason: 'issuer_unregistered' }, 'self-issued')
  t.equal(await auth.standing(worker.address), null, 'none of those gave it a standing')

  t.match(await auth.present(signAttachment(orch, { worker: worker.address, issuedAt: now }), worker.address), { ok: true })
  t.match(await auth.standing(worker.address), { role: 'worker', uid: null, source: 'attachment' }, 'a worker on its attachment')
  t.equal(await auth.standing(other.address), null, 'another hotkey gains nothing from it')

  // The orchestrator is deregistered: within a standing TTL, its worker loses its standing too.
  standings.set(orch.address, null)
  clock.advance(STANDING_TTL_MS + 1)
  t.equal(await auth.standing(worker.address), null, 'the issuer lost its UID: the attachment vouches for nothing')
  t.equal(auth.attachmentOf(worker.address), undefined, 'and is dropped')
})

t.test('a worker\'s standing ends with its attachment\'s expiry', async t => {
  const clock = new ManualClock()
  const orch = newHotkey(); const worker = newHotkey()
  const chain = { standing: async (h: string) => h === orch.address ? { hotkey: h, uid: 4, role: 'orchestrator', registeredAtBlock: 1, stakeRao: 0n, validatorPermit: false } : null } as unknown as Chain
  const auth = new PeerAuth({ self: { hotkey: newHotkey().address, role: 'orchestrator' }, clock, logger, messenger: { on () {} } as unknown as Messenger })
  auth.useChain(chain)
  t.match(await auth.present(signAttachment(orch, { worker: worker.address, issuedAt: clock.now(), ttlMs: 20_000 }), worker.address), { ok: true })
  t.match(await auth.standing(worker.address), { role: 'worker' })
  clock.advance(20_000)
  t.equal(auth.cached(worker.address), undefined, 'cached no longer than the attachment lasts')
  t.equal(await auth.standing(worker.address), null, 'expired: no standing')
})

t.test('issuer: a refusal is logged once a minute per worker and reason (a refused worker retries every 10 s)', async t => {
  const clock = new ManualClock()
  const { logger: captured, lines } = capturingLogger('info')
  const issuer = new AttachmentIssuer({ key: newHotkey(), clock, logger: captured, maxWorkers: 10, deliver: () => {} })
  t.teardown(() => issuer.stop())
  const [w, other] = [newHotkey().address, newHotkey().address]
  issuer.revoke(w)
  issuer.revoke(other)
  const refusals = (worker: string): number => lines.filter(l => l.event === 'worker_attach_refused' && l.worker === worker).length
  for (let i = 0; i < 6; i++) { t.same(issuer.issue(w), { ok: false, reason: 'revoked' }); clock.advance(10_000) }
  t.equal(refusals(w), 1, 'six refusals in a minute: one line')
  t.same(issuer.issue(other), { ok: false, reason: 'revoked' })
  t.equal(refusals(other), 1, 'another worker has its own line')
  clock.advance(REFUSAL_LOG_EVERY_MS)
  issuer.issue(w)
  t.equal(refusals(w), 2, 'a minute on: logged again')
})
