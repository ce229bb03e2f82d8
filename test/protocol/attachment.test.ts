// Worker attachments: signed by an orchestrator's hotkey, checked for signature, worker, times, the
// issuer's standing and its revocations.
import t from 'tap'
import { cryptoReady, newHotkey, nodeIdOf, signAttachment, checkAttachment, verifiedAttachments, ATTACHMENT_MAX_LIFETIME_MS, type Attachment } from '../../protocol/index.ts'

await cryptoReady()
const orch = newHotkey()
const worker = newHotkey()
const other = newHotkey()
const NOW = 1_800_000_000_000
const registered = { role: 'orchestrator' as const, uid: 7, source: 'chain' }
const check = (a: unknown, o: Partial<Parameters<typeof checkAttachment>[1]> = {}) =>
  checkAttachment(a, { worker: worker.address, now: NOW, issuer: registered, ...o })

t.test('signed by a registered orchestrator, for its worker, in time: valid', async t => {
  const a = signAttachment(orch, { worker: worker.address, issuedAt: NOW, slots: 4 })
  t.equal(a.orchestrator, orch.address)
  t.equal(a.workerId, nodeIdOf(worker.address), 'names the worker by its node UUID')
  t.same(check(a), { ok: true, attachment: a })
})

t.test('expired, or not yet valid, or too long-lived: refused', async t => {
  const a = signAttachment(orch, { worker: worker.address, issuedAt: NOW - 20 * 60_000 })
  t.same(check(a), { ok: false, reason: 'expired' })
  t.same(check(a, { now: a.expiresAt }), { ok: false, reason: 'expired' }, 'at its expiry')
  t.same(check(a, { now: a.expiresAt - 1 }).ok, true, 'a millisecond before')
  const future = signAttachment(orch, { worker: worker.address, issuedAt: NOW + 60 * 60_000 })
  t.same(check(future), { ok: false, reason: 'not_yet_valid' })
  const long = signAttachment(orch, { worker: worker.address, issuedAt: NOW, ttlMs: ATTACHMENT_MAX_LIFETIME_MS + 1 })
  t.same(check(long), { ok: false, reason: 'too_long' })
})

t.test('revoked by its issuer: refused', async t => {
  const a = signAttachment(orch, { worker: worker.address, issuedAt: NOW })
  t.same(check(a, { revoked: (x) => x.serial === a.serial }), { ok: false, reason: 'revoked' })
  t.same(check(a, { revoked: () => false }).ok, true)
})

t.test('issuer not registered, or a validator, or a chain standing without UID: refused', async t => {
  const a = signAttachment(orch, { worker: worker.address, issuedAt: NOW })
  t.same(check(a, { issuer: null }), { ok: false, reason: 'issuer_unregistered' })
  t.same(check(a, { issuer: { role: 'validator', uid: 3, source: 'chain' } }), { ok: false, reason: 'issuer_not_orchestrator' })
  t.same(check(a, { issuer: { role: 'worker', uid: null, source: 'attachment' } }), { ok: false, reason: 'issuer_not_orchestrator' })
  t.same(check(a, { issuer: { role: 'orchestrator', uid: null, source: 'chain' } }), { ok: false, reason: 'issuer_unregistered' }, 'lost its UID')
})

t.test('replayed for another worker, or presented by another sender: refused', async t => {
  const a = signAttachment(orch, { worker: worker.address, issuedAt: NOW })
  t.same(check(a, { worker: other.address }), { ok: false, reason: 'wrong_worker' }, 'the frame sender is not the attachment\'s worker')
  t.same(check({ ...a, worker: other.address }, { worker: other.address }), { ok: false, reason: 'wrong_worker_id' }, 'worker field swapped')
  t.same(check({ ...a, worker: other.address, workerId: nodeIdOf(other.address) }, { worker: other.address }), { ok: false, reason: 'bad_signature' }, 'worker and id swapped')
})

t.test('any tampered field breaks the signature', async t => {
  const a = signAttachment(orch, { worker: worker.address, issuedAt: NOW, slots: 4 })
  const tampered: Array<[string, Attachment]> = [
    ['expiresAt', { ...a, expiresAt: a.expiresAt + 1 }],
    ['issuedAt', { ...a, issuedAt: a.issuedAt - 1 }],
    ['slots', { ...a, limits: { slots: 8 } }],
    ['slots removed', { ...a, limits: {} }],
    ['serial', { ...a, serial: 'f'.repeat(32) }],
    ['orchestrator', { ...a, orchestrator: other.address }],
    ['signature', { ...a, signature: (a.signature[0] === '0' ? '1' : '0') + a.signature.slice(1) }]
  ]
  for (const [field, x] of tampered) t.same(check(x), { ok: false, reason: 'bad_signature' }, field)
  const selfSigned = signAttachment(other, { worker: worker.address, issuedAt: NOW })
  t.same(check({ ...selfSigned, orchestrator: orch.address }), { ok: false, reason: 'bad_signature' }, 'signed by another key, naming the orchestrator')
  t.same(check({ ...a, extra: 1 }), { ok: false, reason: 'malformed' })
  t.same(check(null), { ok: false, reason: 'malformed' })
})

t.test('a signature verified once is not verified again; nothing else is remembered', async t => {
  verifiedAttachments.clear()
  const a = signAttachment(orch, { worker: worker.address, issuedAt: NOW, slots: 4 })
  const hits = verifiedAttachments.hits
  t.ok(check(a).ok)
  t.equal(verifiedAttachments.size, 1)
  t.ok(check(structuredClone(a)).ok, 'the same attachment again (a copy, as a new frame carries it)')
  t.equal(verifiedAttachments.hits, hits + 1, 'answered without sr25519')

  // The remembered signature vouches for nothing but the exact text it was verified over.
  t.same(check({ ...a, limits: { slots: 40 } }), { ok: false, reason: 'bad_signature' }, 'another limit')
  t.same(check({ ...a, expiresAt: a.expiresAt + 1 }), { ok: false, reason: 'bad_signature' }, 'another expiry')
  t.same(check({ ...a, serial: 'f'.repeat(32) }), { ok: false, reason: 'bad_signature' }, 'another serial')
  t.same(check({ ...a, orchestrator: other.address }), { ok: false, reason: 'bad_signature' }, 'another issuer named')
  t.equal(verifiedAttachments.hits, hits + 1)

  // Every other check still runs on a remembered one.
  t.same(check(a, { now: a.expiresAt }), { ok: false, reason: 'expired' })
  t.same(check(a, { worker: other.address }), { ok: false, reason: 'wrong_worker' })
  t.same(check(a, { issuer: null }), { ok: false, reason: 'issuer_unregistered' })
  t.same(check(a, { revoked: () => true }), { ok: false, reason: 'revoked' })

  const forged = { ...signAttachment(other, { worker: worker.address, issuedAt: NOW }), orchestrator: orch.address }
  t.same(check(forged), { ok: false, reason: 'bad_signature' })
  t.equal(verifiedAttachments.size, 1, 'a failed verification is not remembered')

  for (let i = 0; i < verifiedAttachments.max + 5; i++) check(signAttachment(orch, { worker: worker.address, issuedAt: NOW, serial: i.toString(16).padStart(32, '0') }))
  t.equal(verifiedAttachments.size, verifiedAttachments.max, 'bounded')
  verifiedAttachments.clear()
})
