// A delivery is held against a worker only on the worker's own signature (docs/security.md#peers). A
// registered orchestrator acting as a coordinator asks the validator to read back "its" transfer's chunk
// from a server it controls, serving other bytes, and names an honest worker as the one that delivered
// them, vouching for it with an attachment it signs itself. Before, the validator read the garbage and
// recorded an `integrity_chunk_mismatch` penalty on that worker's hotkey; the orchestrator needed nothing
// from the worker (and, presented at the validator, its attachment replaced the worker's own). Now the request must carry the
// worker's own signed result, addressed to the orchestrator that relayed it: without one, or with one the
// orchestrator forged, nothing is read and nothing lands on the worker. A worker that did sign its lie
// (the rogue's own) still pays: the check asks for the worker's word, not for trust in it.
import t from 'tap'
import { createHash, randomUUID } from 'node:crypto'
import { startTestDevnet } from '../../helpers/devnet.ts'
import { eventually } from '../../helpers/proc.ts'
import { capturingLogger } from '../../helpers/logger.ts'
import { Rogue } from '../../helpers/rogue.ts'
import { rogueCoordinator } from '../../helpers/rogue-coordinator.ts'
import { collect } from '../../../actors/store.ts'
import { encodeFrame, newHotkey, signOffer, type KeyPair, type MessageBody } from '../../../protocol/index.ts'
import { signAttachment } from '../../../protocol/attachment.ts'
import { EVIDENCE_MAX_AGE_MS } from '../../../node/verify-evidence.ts'
import type { BwnetNode } from '../../../node/node.ts'

const LENGTH = 64 * 1024
const staged = Buffer.alloc(LENGTH, 1) // what the coordinator says was staged
const served = Buffer.alloc(LENGTH, 2) // what the rogue's "destination" serves
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex')

t.test('an orchestrator cannot get a worker penalized for a delivery the worker never signed', async t => {
  const { logger, lines } = capturingLogger('warn')
  const net = await startTestDevnet(t, { workers: 1, logger })
  const node = (name: string): BwnetNode => net.devnet.nodes.find(n => n.name === name)!.node
  const orch = node('orchestrator'); const validator = node('validator'); const victim = node('worker-1')
  const V = validator.transport.publicKey

  // The rogue's destination serves garbage, every read of it counted; `accomplice`, a worker it holds the key of.
  const { rogue, worker: accomplice, url, reads } = await rogueCoordinator(t, net, validator, served)

  const penaltiesOn = async (worker: string): Promise<any[]> =>
    (await collect(validator.store.table<any>('epochs'), { gte: 'pen/', lt: 'pen/\xff' })).map(([, p]) => p).filter(p => p.workerHotkey === worker)
  /** The rogue, as coordinator and orchestrator at once, asks for a read-back of its garbage naming `worker`. */
  // The devnet's worker holds no chain UID: the rogue vouches for it with an attachment it signs itself.
  const ask = (worker: string, claimBy: KeyPair | null, claimTo = rogue.hotkey, claimAgeMs = 0): MessageBody<'verify_request'> => {
    const ids = { transferId: randomUUID(), taskId: randomUUID(), attemptId: randomUUID() }
    const said = { ...ids, worker, success: true, bytes: LENGTH, durationMs: 5, sha256: sha256(staged), etag: null, error: null, via: 'http' as const, coordinator: rogue.hotkey }
    const workerClaim = claimBy === null ? undefined : Buffer.from(encodeFrame(claimBy, 'task_result', said, { ts: Date.now() - claimAgeMs, to: claimTo })).toString('base64')
    const result = { ...said, ...(workerClaim !== undefined ? { workerClaim } : {}) }
    const evidence = Buffer.from(rogue.frame('task_result', result, rogue.hotkey)).toString('base64')
    const body: MessageBody<'verify_request'> = {
      ...ids, chunkIndex: 0, orchestrator: rogue.hotkey, worker, length: LENGTH, sha256: sha256(staged), trustedDurationMs: 5,
      // The rogue says the bytes are the worker's alone (its own sink): a coordinator's word, as its read target is.
      read: { method: 'GET', url, headers: {}, expiresAt: Date.now() + 60_000 }, evidence, attributable: true,
      ...(worker === victim.key.address ? { attachment: signAttachment(rogue.key, { worker, issuedAt: Date.now() }) } : {})
    }
    t.ok(rogue.send(V, 'verify_request', body, validator.key.address))
    return body
  }
  const refusals = (): number => lines.filter(l => l.event === 'verify_request_refused' && l.peer === rogue.hotkey).length

  // 1. The honest worker named on the rogue's word alone, then with a claim the rogue signed for it, then
  // with one the worker "sent" to another orchestrator: refused, never read, no penalty.
  ask(victim.key.address, null)
  await eventually(async () => refusals() >= 1, 15_000, 'the request without a worker claim refused', 50)
  ask(victim.key.address, rogue.key)
  await eventually(async () => refusals() >= 2, 15_000, 'the request with a claim the rogue signed refused', 50)
  ask(accomplice.address, accomplice, orch.key.address)
  await eventually(async () => refusals() >= 3, 15_000, 'the request with a claim addressed to another orchestrator refused', 50)
  // A claim the worker really sent the rogue, but long ago (an old delivery's, wrapped in fresh evidence).
  ask(accomplice.address, accomplice, rogue.hotkey, EVIDENCE_MAX_AGE_MS + 60_000)
  await eventually(async () => refusals() >= 4, 15_000, 'the request with an old claim refused', 50)
  t.match(lines.filter(l => l.event === 'verify_request_refused' && l.peer === rogue.hotkey).map(l => l.reason),
    ['worker claim: none', 'worker claim: not signed by the named worker', 'worker claim: sent to another orchestrator', /^worker claim: signed \d+ ms before its relay$/])

  // 2. A worker that signed its delivery to the rogue answers for it: read back, a mismatch, its penalty.
  // (It also shows the refusals above were not for anything else the rogue sent.)
  ask(accomplice.address, accomplice)
  const own = await eventually(async () => { const p = await penaltiesOn(accomplice.address); return p.length > 0 ? p : undefined }, 30_000, 'the signed lie penalized', 100)
  t.match(own, [{ kind: 'integrity_chunk_mismatch', workerHotkey: accomplice.address, orchestratorHotkey: rogue.hotkey }])
  t.equal(reads(), 1, 'only the signed delivery was read back')
  t.same(await penaltiesOn(victim.key.address), [], 'no penalty on the honest worker')
})

t.test('a worker takes an offer only as its coordinator signed it: one changed on the way is answered as refused, not taken on', async t => {
  const { logger, lines } = capturingLogger('warn')
  const net = await startTestDevnet(t, { workers: 1, logger })
  const node = (name: string): BwnetNode => net.devnet.nodes.find(n => n.name === name)!.node
  const orch = node('orchestrator'); const worker = node('worker-1')
  const rogue = await Rogue.join(net.devnet.testnet.createNode(), net.devnet.network, newHotkey(), { autoAnnounce: 'orchestrator' })
  t.teardown(() => rogue.stop())
  await orch.devChain!.enroll(rogue.hotkey, 'orchestrator')
  const W = worker.transport.publicKey
  await rogue.until(() => rogue.up.has(W) && rogue.got('announce', worker.key.address).length > 0, 30_000, 'a connection to the worker')
  await eventually(async () => worker.auth.allows(rogue.hotkey, 'orchestrator'), 30_000, 'the rogue admitted as an orchestrator', 100)

  // An honest coordinator's offer (the orchestrator's key), relayed by the rogue with another chunk's hash.
  const terms = {
    taskId: randomUUID(), attemptId: randomUUID(), transferId: randomUUID(), chunkIndex: 0, length: LENGTH, sha256: sha256(staged),
    source: { url: 'http://127.0.0.1:9/data/x', path: '/data/x', coordinator: orch.key.address },
    target: { method: 'PUT' as const, url: 'http://127.0.0.1:9/sink/x', headers: {}, expiresAt: Date.now() + 60_000 }, expiresAt: Date.now() + 60_000, excludeWorkers: []
  }
  const offer = { ...terms, sha256: sha256(served), signature: signOffer(orch.key, terms) }
  t.ok(rogue.send(W, 'task_offer', { batchId: randomUUID(), offer }, worker.key.address))
  const answer = await eventually(async () => rogue.got('task_result', worker.key.address)[0]?.msg.body as MessageBody<'task_result'> | undefined, 15_000, 'the worker\'s answer', 50)
  t.match(answer, { attemptId: offer.attemptId, worker: worker.key.address, success: false, error: 'offer_unsigned', coordinator: orch.key.address })
  t.ok(lines.some(l => l.event === 'offer_refused' && l.peer === rogue.hotkey), 'logged')
})
