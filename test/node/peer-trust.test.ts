// Peer trust (issue: roles come from the chain, identities are bound to connections). Rogue nodes join a
// devnet's swarm and try every attack of the threat model (docs/security.md#peers). One with a fresh,
// unregistered hotkey is disconnected at its refused announce by every node, and what it pipelines
// behind it (a worker attach, a free registration, weights) changes nothing. One registered as a worker
// claims the validator and orchestrator roles: forged scores, snapshots, verify requests, task offers,
// a validator registration and weights, and replayed announces. Each is refused, and the state it aimed
// at is unchanged.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { startTestDevnet, apiClient, upload, waitForStatus, testBytes } from '../helpers/devnet.ts'
import { eventually } from '../helpers/proc.ts'
import { Rogue } from '../helpers/rogue.ts'
import { collect } from '../../actors/store.ts'
import { listEpochSnapshots, KEYS } from '../../actors/validator/snapshots.ts'
import { sealEnvelope } from '../../actors/validator/envelope.ts'
import type { BwnetNode } from '../../node/node.ts'

const SHA = 'ab'.repeat(32)

t.test('a rogue node with an unregistered hotkey changes no state; replayed announces bind nothing', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const node = (name: string): BwnetNode => net.devnet.nodes.find(n => n.name === name)!.node
  const orch = node('orchestrator'); const worker = node('worker-1'); const validator = node('validator')
  const api = async (path: string): Promise<any> => await (await fetch(`${net.file.baseUrl}${path}`)).json()

  // Honest state worth attacking: a verified transfer, an epoch snapshot and PRISM scores.
  const client = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const transfer = await upload(client, testBytes(8 * 1024 * 1024, 5), { filename: 'honest.bin', hotkey: orch.key.address })
  await client(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  t.equal((await waitForStatus(client, transfer.id, ['completed', 'failed'])).status, 'completed')
  const honestSnap = await eventually(async () => (await listEpochSnapshots(orch.store, { latestOnly: true }))[0], 60_000, 'an epoch snapshot at the orchestrator', 250)
  await eventually(async () => (await api('/chain/prism')).validator === validator.key.address, 60_000, 'PRISM scores from the validator', 250)

  // 0. An unregistered rogue: its announce is refused by every node, which disconnects it at once; what it
  // pipelines behind the announce (an attach, a free registration, weights) is refused or dropped unread.
  const refused = (n: BwnetNode, type: string): number => n.auth.refused.get(type) ?? 0
  const registrationsBefore = await orch.devChain!.registrations()
  const O = orch.transport.publicKey; const W = worker.transport.publicKey; const V = validator.transport.publicKey
  const sybil = await Rogue.join(net.devnet.testnet.createNode(), net.devnet.network)
  t.teardown(() => sybil.stop())
  await sybil.until(() => [O, W, V].every(p => sybil.up.has(p)), 30_000, 'the unregistered rogue connected to every devnet node')
  const refusedAnnounces = refused(orch, 'announce')
  for (const [peer, role] of [[O, 'validator'], [V, 'orchestrator'], [W, 'orchestrator']] as const) t.ok(sybil.announce(peer, role))
  sybil.send(O, 'worker_attach', { session: randomUUID(), slots: 8 }, orch.key.address)
  sybil.send(O, 'chain_request', { requestId: 'reg-0', request: { op: 'register', hotkey: sybil.hotkey, role: 'validator' } }, orch.key.address)
  sybil.send(O, 'chain_request', { requestId: 'w-0', request: { op: 'set_weights', validatorHotkey: sybil.hotkey, epoch: 0, uids: [1], weights: [65535] } }, orch.key.address)
  await sybil.until(() => [O, W, V].every(p => sybil.down.has(p)), 10_000, 'the unregistered rogue disconnected by every node')
  t.ok(refused(orch, 'announce') > refusedAnnounces, 'its announce was refused')
  t.same(sybil.captured.filter(c => c.msg.type !== 'announce').map(c => c.msg.type), [], 'it was told nothing but the nodes\' announces')
  t.ok(orch.messenger.isBanned(sybil.publicKey, sybil.hotkey), 'its connection key and hotkey are banned for a while')
  t.equal(await orch.store.table('workers').get(`session/${sybil.hotkey}`), undefined, 'no worker session for it')
  t.same(await orch.devChain!.registrations(), registrationsBefore, 'no registration for it')

  // A registered worker posing as a validator or an orchestrator: admitted in its registered role only.
  const rogue = await Rogue.join(net.devnet.testnet.createNode(), net.devnet.network)
  t.teardown(() => rogue.stop())
  await orch.devChain!.enroll(rogue.hotkey, 'worker')
  await rogue.until(() => [O, W, V].every(p => rogue.up.has(p)), 30_000, 'connections to every devnet node')
  await rogue.until(() => rogue.got('announce', validator.key.address).length > 0 && rogue.got('announce', worker.key.address).length > 0, 15_000, 'honest announces')

  const healthBefore = (await api('/health')).nodes
  const validatorTables = async (): Promise<string[]> => (await collect(validator.store.table('epochs'), { gte: 'ev/', lt: 'pen/\xff' })).map(([k]) => k).filter(k => k.startsWith('ev/') || k.startsWith('pen/'))
  const evidenceBefore = await validatorTables()

  // 1. Self-declared validator: its announce makes it no validator; its scores and snapshot are refused.
  t.ok(rogue.announce(O, 'validator')); t.ok(rogue.announce(V, 'orchestrator')); t.ok(rogue.announce(W, 'orchestrator'))
  await eventually(async () => orch.messenger.peerOf(rogue.hotkey) !== undefined && validator.messenger.peerOf(rogue.hotkey) !== undefined && worker.messenger.peerOf(rogue.hotkey) !== undefined, 10_000, 'the rogue bound to its own connections')
  rogue.send(O, 'prism_scores', { epoch: 999, computedAt: Date.now(), scores: [{ hotkey: orch.key.address, pool: 'qualified', routingScore: 0, finalScore: 0, penaltyMultiplier: 0, readinessMultiplier: 1, activeTimeRatio: 1 }, { hotkey: rogue.hotkey, pool: 'qualified', routingScore: 1, finalScore: 1, penaltyMultiplier: 1, readinessMultiplier: 1, activeTimeRatio: 1 }] })
  const { snapshotId: _id, ...content } = honestSnap as any
  const forged = sealEnvelope({ ...content, data: { ...content.data, revision: 8, contributingOrchestratorCount: 999 } })
  rogue.send(O, 'snapshot_published', { kind: 'epoch', epoch: honestSnap.sourceEpoch, revision: 8, hotkey: null, snapshot: forged as never })
  await eventually(async () => refused(orch, 'prism_scores') >= 1 && refused(orch, 'snapshot_published') >= 1, 10_000, 'scores and snapshot refused')
  const prism = await api('/chain/prism')
  t.equal(prism.validator, validator.key.address, 'the served routing scores are still the validator\'s')
  t.notOk(prism.scores.some((s: any) => s.hotkey === rogue.hotkey), 'the rogue is not scored')
  const routing = (p: any): number => p.scores.find((s: any) => s.hotkey === orch.key.address).routingScore
  // Whatever epoch the validator has reached meanwhile, the served score is its own latest, never the rogue's 0.
  const honestVector = prism.validators.find((v: any) => v.hotkey === validator.key.address)
  t.not(prism.epoch, 999, 'the rogue\'s epoch is not served')
  t.ok(routing(prism) > 0, `the orchestrator's routing score is not 0 (${routing(prism)})`)
  t.equal(routing(prism), honestVector.scores.find((s: any) => s.hotkey === orch.key.address).routingScore, 'the orchestrator\'s routing score is the honest validator\'s')
  t.equal(await orch.store.table('snapshots').get(KEYS.snapshotId(forged.snapshotId)), undefined, 'the forged snapshot is not stored')
  t.notOk((await listEpochSnapshots(orch.store, {})).some(s => s.data.revision === 8), 'no revision 8 served')
  const epochs = await (await fetch(`${net.file.telemetryUrl}/v1/telemetry/epochs`, { headers: { 'x-api-key': net.file.keys.console! } })).json() as any
  t.notOk(epochs.items.some((i: any) => i.snapshotId === forged.snapshotId), '/v1/telemetry/epochs does not serve it')

  // 2. Self-declared orchestrator: counted in its registered role, not routed to or believed by the validator or the worker.
  const health = await eventually(async () => { const n = (await api('/health')).nodes; return n.worker === healthBefore.worker + 1 ? n : undefined }, 10_000, 'the rogue counted in /health')
  t.same({ ...health, worker: health.worker - 1 }, healthBefore, '/health counts it once, as the worker it is registered as, never as an orchestrator or validator')
  t.equal((await orch.membership.view()).peers.find(p => p.hotkey === rogue.hotkey)?.role, 'worker', 'a worker in the orchestrator\'s membership')
  const transferId = randomUUID(); const attemptId = randomUUID()
  rogue.send(V, 'verify_request', {
    transferId, taskId: randomUUID(), attemptId, chunkIndex: 0, orchestrator: orch.key.address, worker: worker.key.address,
    length: 1024, sha256: SHA, trustedDurationMs: 1, read: { method: 'GET', url: 'http://127.0.0.1:9/rogue', headers: {}, expiresAt: Date.now() + 60_000 }
  }, validator.key.address)
  const offer = {
    taskId: randomUUID(), attemptId: randomUUID(), transferId, chunkIndex: 0, length: 1024, sha256: SHA,
    source: { url: 'http://127.0.0.1:9/x', path: '/x', coordinator: rogue.hotkey }, target: { method: 'PUT' as const, url: 'http://127.0.0.1:9/y', headers: {}, expiresAt: Date.now() + 60_000 },
    expiresAt: Date.now() + 60_000, excludeWorkers: []
  }
  rogue.send(O, 'task_offer_batch', { batchId: randomUUID(), transferId, waveKind: 'initial', offers: [offer] }, orch.key.address)
  rogue.send(W, 'task_offer', { batchId: randomUUID(), offer }, worker.key.address)
  await eventually(async () => refused(validator, 'verify_request') >= 1 && refused(orch, 'task_offer_batch') >= 1 && refused(worker, 'task_offer') >= 1, 10_000, 'verify request and offers refused')
  t.same(await validatorTables(), evidenceBefore, 'no evidence or penalty recorded at the validator')
  t.equal(orch.workersAttached(), 1, 'the orchestrator still has exactly its own worker')

  // 4. A validator registration and weights on the chain, from a registered worker: refused.
  const responses = (): any[] => rogue.got('chain_response', orch.key.address).map(c => c.msg.body)
  const registrationsOfRogue = await orch.devChain!.registrations()
  rogue.send(O, 'chain_request', { requestId: 'reg-1', request: { op: 'register', hotkey: rogue.hotkey, role: 'validator' } }, orch.key.address)
  rogue.send(O, 'chain_request', { requestId: 'w-1', request: { op: 'set_weights', validatorHotkey: rogue.hotkey, epoch: 0, uids: [1], weights: [65535] } }, orch.key.address)
  await rogue.until(() => responses().length >= 2, 10_000, 'chain answers')
  t.match(responses().find(r => r.requestId === 'w-1'), { ok: false, error: { code: 'BWN_ERR_CHAIN_NOT_VALIDATOR' } }, 'no weights from a worker')
  t.same(await orch.devChain!.registrations(), registrationsOfRogue, 'chain registrations unchanged: still a worker')
  t.equal((await orch.devChain!.standing(rogue.hotkey))?.role, 'worker')
  const head = await orch.devChain!.head()
  for (let e = Math.max(0, head.epoch - 3); e <= head.epoch; e++) {
    t.notOk((await orch.devChain!.weightsOf(e)).some(w => w.validatorHotkey === rogue.hotkey || w.validatorHotkey === sybil.hotkey), `no rogue vector in epoch ${e}`)
  }

  // 5. Replayed announces: the validator's and the worker's, captured by the rogue, replayed on the
  // rogue's connections: on its bound one, and on a fresh one of a second rogue transport.
  const unbound = (): number => orch.messenger.dropped.get('announce_unbound') ?? 0
  const mismatch = (): number => orch.messenger.dropped.get('sender_mismatch') ?? 0
  const before = { unbound: unbound(), mismatch: mismatch() }
  const capturedV = rogue.got('announce', validator.key.address)[0]!.raw
  const capturedW = rogue.got('announce', worker.key.address)[0]!.raw
  rogue.sendRaw(O, capturedV)
  rogue.sendRaw(O, capturedW)
  const second = await Rogue.join(net.devnet.testnet.createNode(), net.devnet.network)
  t.teardown(() => second.stop())
  await second.until(() => second.up.has(O), 30_000, 'a second rogue connection')
  second.sendRaw(O, capturedV)
  second.sendRaw(O, capturedW)
  await eventually(async () => mismatch() >= before.mismatch + 2 && unbound() >= before.unbound + 2, 10_000, 'every replay refused')
  t.equal(orch.messenger.peerOf(validator.key.address), V, 'the validator is still bound to its own connection')
  t.equal(orch.messenger.peerOf(worker.key.address), W, 'the worker is still bound to its own connection')
  t.equal(orch.messenger.hotkeyOf(second.publicKey), undefined, 'the fresh connection is bound to nobody')
  await second.stop()
  // The rogue leaves: the honest nodes stay attached.
  await rogue.stop()
  await eventually(async () => orch.messenger.peerOf(rogue.hotkey) === undefined, 10_000, 'the rogue gone')
  const view = await orch.membership.view()
  t.ok(view.peers.some(p => p.hotkey === validator.key.address), 'validator still a member')
  t.ok(view.peers.some(p => p.hotkey === worker.key.address), 'worker still a member')
  t.equal(orch.workersAttached(), 1, 'worker still attached')
  t.same((await api('/health')).nodes, healthBefore, '/health counts as before the rogue')
})
