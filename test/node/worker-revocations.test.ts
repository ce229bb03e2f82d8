// An orchestrator operator revokes a worker through /admin/workers (node/worker-revocations.ts): operator
// admin keys only, the worker's session ends and it is attached no more, the revocation is answered once
// on disk and outlives the process (a new issuer reading the same store refuses the worker), and lifting
// it lets the worker attach again.
import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { pino } from 'pino'
import { LevelStore } from '../../actors/store.ts'
import { AttachmentIssuer } from '../../node/attachments.ts'
import { WorkerRevocations, REGISTRATION_CHECK_MS } from '../../node/worker-revocations.ts'
import { cryptoReady, newHotkey, ATTACHMENT_TTL_MS, type Attachment } from '../../protocol/index.ts'
import { ManualClock } from '../helpers/clock.ts'
import { startTestDevnet } from '../helpers/devnet.ts'
import { capturingLogger } from '../helpers/logger.ts'
import { eventually, runCliOnce } from '../helpers/proc.ts'
import { collect, prefixRange } from '../../actors/store.ts'
import { NOTICE_KEPT_MS } from '../../node/revocation-notices.ts'
import { Rogue } from '../helpers/rogue.ts'

await cryptoReady()
const logger = pino({ level: 'silent' })

t.test('revocations are kept in the store: a new issuer on the same store refuses the worker; reinstated, it attaches again', async t => {
  const clock = new ManualClock(Date.UTC(2026, 10, 29, 12))
  const store = new LevelStore(new MemoryLevel() as never)
  const key = newHotkey()
  const [w1, w2] = [newHotkey().address, newHotkey().address]
  const issuer = new AttachmentIssuer({ key, clock, logger, maxWorkers: 10, deliver: () => {} })
  t.teardown(() => issuer.stop())
  const ended: string[] = []
  const revocations = new WorkerRevocations({ store, clock, issuer, end: (w) => { issuer.revoke(w); ended.push(w) } })
  t.equal(await revocations.load(), 0)
  t.match(issuer.issue(w1), { ok: true })
  t.match(issuer.issue(w2), { ok: true })
  t.same((await revocations.list()).map(v => [v.hotkey, v.attached, v.revoked]).sort(), [[w1, true, false], [w2, true, false]].sort())

  const view = await revocations.revoke(w1)
  t.same(view, { hotkey: w1, attached: false, expiresAt: null, revoked: true, revokedAt: new Date(clock.now()).toISOString() })
  t.same(ended, [w1], 'the worker\'s session is ended')
  t.same(issuer.issue(w1), { ok: false, reason: 'revoked' })
  t.same(issuer.notices(), [{ worker: w1, revokedAt: clock.now() }], 'peers are to be told')
  clock.advance(60_000)
  t.equal((await revocations.revoke(w1)).revokedAt, view.revokedAt, 'revoking again keeps the first time')
  t.equal((await collect(store.table('workers'), prefixRange('revocation/'))).length, 1, 'one row')

  // The process ends; the next one reads the store before attaching anyone.
  const next = new AttachmentIssuer({ key, clock, logger, maxWorkers: 10, deliver: () => {} })
  t.teardown(() => next.stop())
  const again = new WorkerRevocations({ store, clock, issuer: next, end: (w) => { next.revoke(w) } })
  t.equal(await again.load(), 1, 'one revocation restored')
  t.same(next.notices(), [{ worker: w1, revokedAt: clock.now() }], 'after a restart the notice covers everything issued before the start')
  clock.advance(NOTICE_KEPT_MS)
  t.same(next.notices(), [], 'no notice once whatever it covered has expired')
  // Restarted again, long after: the revocation still holds, and covers no valid attachment to tell of.
  const third = new AttachmentIssuer({ key, clock, logger, maxWorkers: 10, deliver: () => {} })
  t.teardown(() => third.stop())
  t.equal(await new WorkerRevocations({ store, clock, issuer: third, end: (w) => { third.revoke(w) } }).load(), 1)
  t.same(third.notices(), [], 'an old revocation is not told again after a restart')
  t.same(third.issue(w1), { ok: false, reason: 'revoked' })
  t.same(next.issue(w1), { ok: false, reason: 'revoked' }, 'still refused after the restart')
  t.match(next.issue(w2), { ok: true }, 'the other worker attaches')
  t.match((await again.list()).find(v => v.hotkey === w1), { revoked: true, revokedAt: view.revokedAt, attached: false })

  t.match(await again.reinstate(w1), { wasRevoked: true, view: { hotkey: w1, revoked: false, attached: false } })
  t.match(next.issue(w1), { ok: true }, 'reinstated: attached again')
  t.match(await again.reinstate(w1), { wasRevoked: false, view: { attached: true } }, 'nothing left to lift')
  t.equal((await collect(store.table('workers'), prefixRange('revocation/'))).length, 0, 'the row is gone')
})

t.test('a revocation covers every attachment the worker may hold, also after it is lifted; a registered hotkey is refused', async t => {
  const clock = new ManualClock(Date.UTC(2026, 10, 29, 12))
  const store = new LevelStore(new MemoryLevel() as never)
  const issuer = new AttachmentIssuer({ key: newHotkey(), clock, logger, maxWorkers: 10, deliver: () => {} })
  t.teardown(() => issuer.stop())
  const w = newHotkey().address
  const registered = newHotkey().address
  const revocations = new WorkerRevocations({ store, clock, issuer, end: (x) => { issuer.revoke(x) }, registered: async (h) => h === registered })
  const first = issuer.issue(w)
  clock.advance(ATTACHMENT_TTL_MS / 2 + 1000)
  const renewed = issuer.issue(w)
  if (!first.ok || !renewed.ok) throw new Error('not issued')
  t.ok(renewed.renewed && first.attachment.expiresAt > clock.now(), 'two live attachments: the first has not expired')
  await revocations.revoke(w)
  t.ok(issuer.isRevoked(first.attachment) && issuer.isRevoked(renewed.attachment), 'both refused')
  await revocations.reinstate(w)
  t.ok(issuer.isRevoked(first.attachment) && issuer.isRevoked(renewed.attachment), 'both still refused once the revocation is lifted')
  const fresh = issuer.issue(w)
  t.ok(fresh.ok && !issuer.isRevoked(fresh.attachment), 'a new one is good')
  await t.rejects(revocations.revoke(registered), { code: 'BWN_ERR_WORKER_REGISTERED', statusCode: 409 })
  t.equal(await store.table('workers').get(`revocation/${registered}`), undefined, 'nothing stored for it')
  t.notOk(issuer.revoked(registered))
})

t.test('a chain that fails or does not answer does not stop a revocation', async t => {
  const clock = new ManualClock(Date.UTC(2026, 10, 29, 12))
  const store = new LevelStore(new MemoryLevel() as never)
  const issuer = new AttachmentIssuer({ key: newHotkey(), clock, logger, maxWorkers: 10, deliver: () => {} })
  t.teardown(() => issuer.stop())
  const [silent, failing] = [newHotkey().address, newHotkey().address]
  const { logger: captured, lines } = capturingLogger('info')
  let failLate: (err: Error) => void = () => {}
  const revocations = new WorkerRevocations({
    store, clock, issuer, end: (x) => { issuer.revoke(x) }, logger: captured,
    registered: async (h) => { if (h === failing) throw new Error('chain unavailable'); return await new Promise<boolean>((_resolve, reject) => { failLate = reject }) }
  })
  t.match(await revocations.revoke(failing), { revoked: true }, 'a failing chain: revoked')
  t.match(lines.filter(l => l.event === 'worker_registration_unchecked'), [{ worker: failing, why: 'chain unavailable' }], 'and said so')
  const pending = revocations.revoke(silent)
  let done = false
  void pending.then(() => { done = true })
  await new Promise(resolve => setImmediate(resolve))
  t.notOk(done, 'waiting for the chain')
  clock.advance(REGISTRATION_CHECK_MS)
  t.match(await pending, { revoked: true }, `a silent chain: revoked after ${REGISTRATION_CHECK_MS} ms`)
  t.match(lines.filter(l => l.event === 'worker_registration_unchecked').at(-1), { worker: silent, why: 'no answer' })
  // A chain that fails only after the time ran out: said once for the revocation, not twice.
  failLate(new Error('late failure'))
  await new Promise(resolve => setImmediate(resolve))
  t.equal(lines.filter(l => l.event === 'worker_registration_unchecked' && l.worker === silent).length, 1, 'one warning for it')
  t.ok(issuer.revoked(silent) && issuer.revoked(failing))
})

t.test('an attachment issued on a clock stepped back is still after the one before it: a revocation covers both', async t => {
  let now = Date.UTC(2026, 10, 29, 12)
  const clock = new ManualClock(now)
  const stepped = { ...clock, now: () => now, setTimer: clock.setTimer.bind(clock), setInterval: (clock as any).setInterval?.bind(clock) } as unknown as ManualClock
  const issuer = new AttachmentIssuer({ key: newHotkey(), clock: stepped, logger, maxWorkers: 10, deliver: () => {} })
  t.teardown(() => issuer.stop())
  const w = newHotkey().address
  const a1 = issuer.issue(w)
  now -= 100 // the host's clock is stepped back
  const a2 = issuer.issue(w)
  if (!a1.ok || !a2.ok) throw new Error('not issued')
  t.ok(a2.attachment.issuedAt < a1.attachment.issuedAt && a2.attachment.issuedAt === now, 'issued at the clock\'s time, not ahead of it')
  now += 5
  issuer.revoke(w)
  issuer.reinstate(w)
  t.ok(issuer.isRevoked(a1.attachment) && issuer.isRevoked(a2.attachment), 'both stay refused once the revocation is lifted')
})

t.test('a revoke and a reinstate asked together land in the order asked', async t => {
  const clock = new ManualClock(Date.UTC(2026, 10, 29, 12))
  const store = new LevelStore(new MemoryLevel() as never)
  const issuer = new AttachmentIssuer({ key: newHotkey(), clock, logger, maxWorkers: 10, deliver: () => {} })
  t.teardown(() => issuer.stop())
  const revocations = new WorkerRevocations({ store, clock, issuer, end: (w) => { issuer.revoke(w) } })
  const w = newHotkey().address
  await Promise.all([revocations.revoke(w), revocations.reinstate(w)])
  t.notOk(issuer.revoked(w), 'reinstated last')
  t.equal(await store.table('workers').get(`revocation/${w}`), undefined)
  await Promise.all([revocations.reinstate(w), revocations.revoke(w)])
  t.ok(issuer.revoked(w), 'revoked last')
  t.ok(await store.table('workers').get(`revocation/${w}`) !== undefined)
})

t.test('/admin/workers on a devnet: the operator lists, revokes and reinstates a worker; no other key may', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const orch = net.devnet.orchestrator
  const worker = net.devnet.nodes.find(n => n.node.config.role === 'worker')!.node.key.address
  const admin = net.file.keys.admin!
  const call = async (method: string, path: string, key = admin): Promise<{ status: number, body: any }> => {
    const res = await fetch(`${net.file.baseUrl}/admin/workers${path}`, { method, headers: { authorization: `Bearer ${key}` } })
    return { status: res.status, body: await res.json() }
  }
  const workersAttached = async (): Promise<number> => (await (await fetch(`${net.file.baseUrl}/health`)).json() as any).nodes.worker

  const listed = await call('GET', '')
  t.equal(listed.status, 200)
  t.match(listed.body.items, [{ hotkey: worker, attached: true, revoked: false, revokedAt: null, expiresAt: String }])

  const orgAdmin = (await orch.accounts!.createKey(await net.orgId(), { role: 'admin', name: 'org admin' })).key
  t.match(await call('GET', '', orgAdmin), { status: 403, body: { code: 'BWN_ERR_OPERATOR_ONLY' } }, 'an organization admin may not')
  t.match(await call('PUT', `/${worker}/revocation`, orgAdmin), { status: 403, body: { code: 'BWN_ERR_OPERATOR_ONLY' } })
  t.match(await call('PUT', `/${worker}/revocation`, await net.clientKey()), { status: 403 }, 'nor a client key')
  t.match(await call('PUT', '/not-a-hotkey/revocation'), { status: 400, body: { code: 'BWN_ERR_VALIDATION' } })
  // One character changed: the shape of a hotkey, not its checksum (a typo would revoke no one).
  const typo = worker.slice(0, -1) + (worker.endsWith('a') ? 'b' : 'a')
  t.match(await call('PUT', `/${typo}/revocation`), { status: 400, body: { code: 'BWN_ERR_INVALID_HOTKEY' } }, 'a mistyped hotkey is refused')
  t.match(await call('DELETE', `/${typo}/revocation`), { status: 400, body: { code: 'BWN_ERR_INVALID_HOTKEY' } })
  t.equal(await workersAttached(), 1, 'nothing changed by the refused calls')

  // The validator holds the worker's attachment (the worker presents it to every peer).
  const validator = net.devnet.nodes.find(n => n.node.config.role === 'validator')!.node
  const held = await eventually(async () => validator.auth.attachmentOf(worker), 15_000, 'the worker\'s attachment at the validator')
  // A registered orchestrator that did not issue it names the worker in a notice: nothing changes.
  const rogue = await Rogue.join(net.devnet.testnet.createNode(), net.devnet.network)
  t.teardown(() => rogue.stop())
  await orch.devChain!.enroll(rogue.hotkey, 'orchestrator')
  const V = validator.transport.publicKey
  const W = net.devnet.nodes.find(n => n.node.config.role === 'worker')!.node.transport.publicKey
  await rogue.until(() => rogue.up.has(V) && rogue.up.has(W), 30_000, 'the rogue orchestrator connected to the validator and the worker')
  t.ok(rogue.announce(V, 'orchestrator'))
  t.ok(rogue.announce(W, 'orchestrator'))
  await eventually(async () => validator.messenger.peerOf(rogue.hotkey) !== undefined, 10_000, 'the rogue bound to its connection')
  rogue.send(V, 'attachments_revoked', { revocations: [{ worker, revokedAt: Date.now() }] })
  await eventually(async () => validator.auth.notices.size === 1, 10_000, 'the rogue\'s notice taken, for its own attachments')
  t.equal(validator.auth.attachmentOf(worker), held, 'another orchestrator\'s notice leaves the attachment standing')
  t.ok((await validator.auth.present(held, worker)).ok)

  const revoked = await call('PUT', `/${worker}/revocation`)
  t.match(revoked, { status: 200, body: { hotkey: worker, revoked: true, attached: false, revokedAt: String } })
  await eventually(async () => (await workersAttached()) === 0, 15_000, 'the revoked worker to leave the orchestrator\'s view')
  // The worker is told too: it stops presenting the revoked attachment (and could take another's): it
  // announces again without it, here to the rogue orchestrator it is connected to.
  const workerNode = net.devnet.nodes.find(n => n.node.config.role === 'worker')!.node
  await eventually(async () => workerNode.auth.own === null, 15_000, 'the worker told that its attachment is revoked')
  await rogue.until(() => rogue.got('announce', worker).some(c => (c.msg.body as { attachment?: unknown }).attachment === undefined), 15_000, 'the worker announcing without the revoked attachment')
  // Its issuer tells its peers: the validator drops the attachment at once, not at its expiry.
  await eventually(async () => validator.auth.attachmentOf(worker) === undefined, 15_000, 'the validator to drop the revoked attachment')
  t.match(await validator.auth.present(held, worker), { ok: false, reason: 'revoked' }, 'refused at the validator')
  // A peer that connects later is told when it announces.
  const late = await Rogue.join(net.devnet.testnet.createNode(), net.devnet.network)
  t.teardown(() => late.stop())
  await orch.devChain!.enroll(late.hotkey, 'validator')
  const O = orch.transport.publicKey
  await late.until(() => late.up.has(O), 30_000, 'a validator joining later connected to the orchestrator')
  t.ok(late.announce(O, 'validator'))
  await late.until(() => late.got('attachments_revoked', orch.key.address).length > 0, 15_000, 'the revocation told to the later peer')
  t.match(late.got('attachments_revoked', orch.key.address)[0]!.msg.body, { revocations: [{ worker, revokedAt: Number }] })
  // A worker that announces is not told other workers' revocations (it has no use for them).
  const lateWorker = await Rogue.join(net.devnet.testnet.createNode(), net.devnet.network)
  t.teardown(() => lateWorker.stop())
  await orch.devChain!.enroll(lateWorker.hotkey, 'worker')
  await lateWorker.until(() => lateWorker.up.has(O), 30_000, 'a worker joining later connected to the orchestrator')
  t.ok(lateWorker.announce(O, 'worker'))
  // Two heartbeats after its announce was taken (it is admitted): a notice would have come before them.
  await lateWorker.until(() => lateWorker.got('heartbeat', orch.key.address).length >= 2, 30_000, 'heartbeats to the later worker')
  t.same(lateWorker.got('attachments_revoked', orch.key.address), [], 'no notice to a worker')
  t.equal(await orch.auth.standing(worker), null, 'no standing at the orchestrator')
  t.same(orch.attachments!.issue(worker), { ok: false, reason: 'revoked' })
  t.match((await call('GET', '')).body.items, [{ hotkey: worker, revoked: true, attached: false }])

  // Lifted from a terminal, as an operator would (`bwnet admin worker reinstate`).
  const cli = async (...args: string[]): Promise<{ code: number | null, json: any, stderr: string }> => {
    const run = await runCliOnce(['admin', 'worker', ...args, '--api', net.file.baseUrl, '--key', admin], { CI: 'true' })
    return { code: run.code, json: run.stdout.trim() === '' ? null : JSON.parse(run.stdout), stderr: run.stderr }
  }
  const lifted = await cli('reinstate', worker)
  t.match(lifted, { code: 0, json: { wasRevoked: true, worker: { hotkey: worker, revoked: false } } }, `bwnet admin worker reinstate; stderr: ${lifted.stderr}`)
  // The worker keeps trying (its announce was refused and banned briefly): it attaches again.
  await eventually(async () => (await workersAttached()) === 1, 60_000, 'the reinstated worker to attach again')
  // Its new attachment, issued after the revocation, stands at the validator.
  await eventually(async () => validator.auth.attachmentOf(worker) !== undefined, 30_000, 'the reinstated worker\'s new attachment at the validator')
  t.ok(validator.auth.attachmentOf(worker)!.issuedAt > held.issuedAt)
  t.match(await call('DELETE', `/${worker}/revocation`), { status: 200, body: { wasRevoked: false } }, 'lifting it again changes nothing')
  t.match(await cli('list'), { code: 0, json: { items: [{ hotkey: worker, attached: true, revoked: false }] } }, 'bwnet admin worker list')
  const refused = await runCliOnce(['admin', 'worker', 'revoke', worker, '--api', net.file.baseUrl, '--key', orgAdmin], { CI: 'true' })
  t.equal(refused.code, 1, 'an organization admin\'s revoke fails from the terminal too')
  t.match(refused.stderr, /BWN_ERR_OPERATOR_ONLY/)
})

t.test('restored after the clock stepped back: the revocation still covers what was issued before it was made', async t => {
  const clock = new ManualClock(Date.UTC(2026, 10, 29, 12))
  const store = new LevelStore(new MemoryLevel() as never)
  const key = newHotkey()
  const w = newHotkey().address
  const issuer = new AttachmentIssuer({ key, clock, logger, maxWorkers: 10, deliver: () => {} })
  t.teardown(() => issuer.stop())
  const issued = issuer.issue(w)
  t.match(issued, { ok: true })
  const revocations = new WorkerRevocations({ store, clock, issuer, end: (x) => { issuer.revoke(x) } })
  const madeAt = clock.now()
  await revocations.revoke(w)
  clock.advance(-60_000) // the host's clock is set back, then the node restarts
  const next = new AttachmentIssuer({ key, clock, logger, maxWorkers: 10, deliver: () => {} })
  t.teardown(() => next.stop())
  await new WorkerRevocations({ store, clock, issuer: next, end: (x) => { next.revoke(x) } }).load()
  t.same(next.notices(), [{ worker: w, revokedAt: madeAt }], 'told as of when it was made, not the earlier clock')
  t.ok(next.isRevoked((issued as { attachment: Attachment }).attachment), 'the attachment issued before it stays refused')
})
