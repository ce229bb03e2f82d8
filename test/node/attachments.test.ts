// Workers without a chain registration, admitted on a signed attachment by a registered orchestrator:
// one attached automatically moves a transfer's chunks; forged, expired, revoked, misdirected or
// non-orchestrator attachments are refused and change nothing; an orchestrator's max_workers holds.
import t from 'tap'
import { readFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { startTestDevnet, sinkFile, apiClient, upload, waitForStatus, sha256, testBytes } from '../helpers/devnet.ts'
import { eventually } from '../helpers/proc.ts'
import { capturingLogger } from '../helpers/logger.ts'
import { collect, prefixRange } from '../../actors/store.ts'
import { newHotkey, nodeIdOf, signAttachment, type Attachment, type KeyPair } from '../../protocol/index.ts'
import { loadOrCreateKeystore } from '../../node/keystore.ts'

const sessions = async (node: { store: any }): Promise<any[]> => (await collect(node.store.table('workers'), prefixRange('session/'))).map(([, w]) => w)

t.test('a worker with no chain registration, attached by the orchestrator, moves a transfer', async t => {
  const net = await startTestDevnet(t, { workers: 0 })
  const orch = net.devnet.orchestrator
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const free = await net.addNode('free-worker', { role: 'worker', slots: 4 }, { enroll: false })
  t.equal(await orch.devChain!.standing(free.key.address), null, 'the worker holds no registration on the chain')
  await eventually(async () => (await sessions(orch)).some(w => w.hotkey === free.key.address && w.status === 'active'), 20_000, 'the worker to attach')
  const att = orch.attachments!.current(free.key.address)!
  t.match(att, { worker: free.key.address, workerId: nodeIdOf(free.key.address), orchestrator: orch.key.address }, 'attached by a signed attachment')
  t.same(free.auth.own, att, 'the worker holds its attachment')
  t.match(await orch.auth.standing(free.key.address), { role: 'worker', uid: null, source: 'attachment' })

  const data = testBytes(48 * 1024 * 1024, 11)
  const transfer = await upload(api, data, { filename: 'attached.bin', hotkey: net.file.nodes[0]!.hotkey })
  await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 90_000)
  t.equal(done.status, 'completed', JSON.stringify(done.error))
  t.equal(sha256(await readFile(sinkFile(net.data, await net.orgId(), 'attached.bin'))), sha256(data), 'destination object intact')
  const results = (await collect(orch.store.table<any>('task_results'), prefixRange(`${transfer.id}/`))).map(([, r]) => r)
  t.ok(results.length > 0 && results.filter(r => r.outcome === 'accepted').every(r => r.worker_id === free.key.address), 'the unregistered worker delivered every accepted chunk')

  // The audit route finds the worker by its node UUID.
  const res = await fetch(`${net.file.baseUrl}/api/audit/worker/${nodeIdOf(free.key.address)}/transfers/${transfer.id}`, { headers: { 'x-api-key': net.file.keys.admin! } })
  t.equal(res.status, 200)
  const audit = await res.json() as any
  t.same(audit.participant, { role: 'worker', id: nodeIdOf(free.key.address), hotkey: free.key.address }, 'the worker, by its id')
  t.ok(audit.task_attempts.length > 0 && audit.task_attempts.every((a: any) => a.worker_id === free.key.address), 'the worker\'s attempts')

  // Its connection drops (the orchestrator releases its place): on the next one it attaches again, with
  // the attachment it still holds, which this orchestrator takes back under its limits.
  // Dropped from the orchestrator's side, so it sees the worker go; the worker reconnects at once, so
  // the sign is a new attach (a later attached_at), not an offline row a poll could miss.
  const before = (await sessions(orch)).find(w => w.hotkey === free.key.address)!.attached_at
  for (const c of (orch as any).transport.swarm.connections) if (c.remotePublicKey.toString('hex') === (free as any).transport.publicKey) c.destroy()
  await eventually(async () => (await sessions(orch)).some(w => w.hotkey === free.key.address && w.status === 'active' && w.attached_at !== before), 40_000, 'the worker to attach again after the drop')
  t.ok(orch.attachments!.current(free.key.address) !== undefined, 'held by its orchestrator again')

  // Revoked at its orchestrator: refused at once, its session ended, not attached again on contact.
  await orch.revokeWorker(free.key.address)
  await eventually(async () => (await sessions(orch)).some(w => w.hotkey === free.key.address && w.status === 'offline'), 10_000, 'the session to end')
  t.equal(await orch.auth.standing(free.key.address), null, 'no standing once revoked')
  t.same(orch.attachments!.issue(free.key.address), { ok: false, reason: 'revoked' }, 'not attached again')
})

t.test('attachments that are missing, expired, revoked, for another worker or not signed by a registered orchestrator: refused, no state', async t => {
  const { logger, lines } = capturingLogger('info')
  const net = await startTestDevnet(t, { workers: 0, logger })
  const a = net.devnet.orchestrator
  const validator = net.devnet.nodes.find(n => n.name === 'validator')!.node
  // An orchestrator that attaches only an allowlisted worker: what a rogue presents is all it has.
  const allowed = newHotkey().address
  const b = await net.addNode('orchestrator-b', { role: 'orchestrator', chainHost: a.key.address, workerAllowlist: [allowed] })
  const refusedAt = (node: { key: { address: string } }, w: string, reason: string): boolean =>
    lines.some(l => l.event === 'attachment_refused' && l.peer === w && l.reason === reason && l.hotkey === node.key.address)

  // Each rogue worker's identity exists before it starts, so its attachment can be made (and revoked) first.
  const now = Date.now()
  const cases: Array<[string, (w: KeyPair) => unknown, string]> = [
    ['expired', (w) => signAttachment(b.key, { worker: w.address, issuedAt: now - 20 * 60_000 }), 'expired'],
    ['revoked', (w) => { const att = signAttachment(b.key, { worker: w.address, issuedAt: now }); b.attachments!.revoke(w.address); return att }, 'revoked'],
    ['signed by a validator', (w) => signAttachment(validator.key, { worker: w.address, issuedAt: now }), 'issuer_not_orchestrator'],
    ['signed by an unregistered hotkey', (w) => signAttachment(newHotkey(), { worker: w.address, issuedAt: now }), 'issuer_unregistered'],
    ['tampered (longer)', (w) => ({ ...signAttachment(b.key, { worker: w.address, issuedAt: now }), expiresAt: now + 11 * 60_000 }), 'bad_signature'],
    ['replayed: b\'s attachment of another worker', () => signAttachment(b.key, { worker: newHotkey().address, issuedAt: now }), 'wrong_worker']
  ]
  const rogues: string[] = []
  // Revocation is known at the issuer only; elsewhere a revoked attachment lapses at its expiry (docs/security.md#peers).
  let revokedRogue = ''
  for (const [i, [name, make, reason]] of cases.entries()) {
    const dir = join(net.data, `rogue-${i}`)
    await mkdir(dir, { recursive: true })
    const { key } = await loadOrCreateKeystore(join(dir, 'hotkey.json'))
    const att = make(key)
    const rogue = await net.addNode(`rogue-${i}`, { role: 'worker', attachTo: b.key.address }, { enroll: false })
    t.equal(rogue.key.address, key.address)
    // It presents the attachment in every announce (and again on connections already open).
    rogue.auth.onOwnAttachment(att as Attachment)
    rogues.push(key.address)
    await eventually(async () => refusedAt(b, key.address, reason), 30_000, `b to refuse the ${name} attachment`)
    if (reason === 'revoked') { revokedRogue = key.address; t.pass(`${name}: refused by b (${reason})`); continue }
    await eventually(async () => refusedAt(a, key.address, reason), 30_000, `a to refuse the ${name} attachment`)
    t.pass(`${name}: refused by b and a (${reason})`)
  }
  // And one that presents none: b does not attach it (allowlist), nor does anyone else admit it.
  const bare = await net.addNode('rogue-bare', { role: 'worker', attachTo: b.key.address }, { enroll: false })
  await eventually(async () => lines.some(l => l.event === 'worker_attach_refused' && l.worker === bare.key.address && l.reason === 'not_allowed'), 30_000, 'b to refuse attaching the bare rogue')
  rogues.push(bare.key.address)

  // A valid attachment from another orchestrator (a) gives a standing at b, but does not attach the
  // worker to b: b's allowlist (and revocations, --max-workers) still decide who works for b.
  {
    const dir = join(net.data, 'roaming')
    await mkdir(dir, { recursive: true })
    const { key } = await loadOrCreateKeystore(join(dir, 'hotkey.json'))
    const fromA = signAttachment(a.key, { worker: key.address, issuedAt: Date.now() })
    const roaming = await net.addNode('roaming', { role: 'worker', attachTo: b.key.address }, { enroll: false })
    roaming.auth.onOwnAttachment(fromA)
    await eventually(async () => lines.some(l => l.event === 'worker_attach_refused' && l.worker === key.address && l.hotkey === b.key.address && l.reason === 'not_allowed'), 30_000, 'b to refuse the attach of a worker a attached')
    t.match(await b.auth.standing(key.address), { source: 'attachment' }, 'it has a standing at b, on a\'s attachment')
    t.notOk((await sessions(b)).some(s => s.hotkey === key.address), 'but no session at b')
    t.equal(b.workersAttached(), 0)
  }

  for (const w of rogues) {
    t.equal(await b.auth.standing(w), null, 'no standing at b')
    if (w !== revokedRogue) {
      t.equal(await a.auth.standing(w), null, 'no standing at the chain host')
      t.equal(await validator.auth.standing(w), null, 'no standing at the validator')
    }
    t.notOk((await sessions(b)).some(s => s.hotkey === w), 'no session row at b')
    t.notOk((await sessions(a)).some(s => s.hotkey === w), 'no session row at a')
  }
  t.equal(b.workersAttached(), 0, 'b attached no worker')
  t.equal(b.attachments!.count(), 0, 'b issued no attachment')
  const attempts = (await collect(b.store.table<any>('task_attempts'))).filter(([, x]) => rogues.includes(x.worker_id))
  t.equal(attempts.length, 0, 'no attempts')
})

t.test('max_workers reached: the next worker is refused, with the reason logged', async t => {
  const { logger, lines } = capturingLogger('info')
  const net = await startTestDevnet(t, { workers: 0, logger })
  const a = net.devnet.orchestrator
  const b = await net.addNode('orchestrator-b', { role: 'orchestrator', chainHost: a.key.address, maxWorkers: 1 })
  const first = await net.addNode('first', { role: 'worker', attachTo: b.key.address }, { enroll: false })
  await eventually(async () => (await sessions(b)).some(w => w.hotkey === first.key.address && w.status === 'active'), 20_000, 'the first worker to attach')
  const second = await net.addNode('second', { role: 'worker', attachTo: b.key.address }, { enroll: false })
  await eventually(async () => lines.some(l => l.event === 'worker_attach_refused' && l.worker === second.key.address && l.reason === 'max_workers'), 20_000, 'the second to be refused for max_workers')
  t.equal(b.attachments!.count(), 1)
  t.notOk((await sessions(b)).some(w => w.hotkey === second.key.address), 'no session row for the second')
  t.equal(await b.auth.standing(second.key.address), null)
  t.equal(b.workersAttached(), 1)
})
