// Validators on the devnet. Acceptance (validators 3): after transfers finish an epoch closes, weights
// land on the dev chain, and the epoch snapshot and PRISM scores are readable by the orchestrator.
// Acceptance (validators 4): a corrupting worker is caught by verification and penalized on its own
// hotkey/UID (peer trust: never its orchestrator); its orchestrator earns nothing for the lies (zero
// weight, no verified bytes) while the transfer still completes correctly.
import t from 'tap'
// Two devnets of their own that mostly wait for epochs: side by side.
t.jobs = 2
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startTestDevnet, sinkFile, apiClient, upload, waitForStatus, sha256, testBytes } from '../../helpers/devnet.ts'
import { eventually } from '../../helpers/proc.ts'
import { collect, prefixRange } from '../../../actors/store.ts'
import { listEpochSnapshots, epochSummaryRecord, weightsProof } from '../../../actors/validator/snapshots.ts'

t.test('transfers are verified; an epoch closes; weights land on the dev chain; snapshot and PRISM readable', async t => {
  const net = await startTestDevnet(t, { workers: 2 })
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const data = testBytes(48 * 1024 * 1024, 31)
  const transfer = await upload(api, data, { filename: 'epoch.bin', hotkey: net.file.nodes[0]!.hotkey })
  await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'])
  t.equal(done.status, 'completed')
  t.same(done.chunks, { received: 3, delivered: 3, verified: 3, total: 3 }, 'every chunk verified by the validator')

  const consoleKey = { 'x-api-key': net.file.keys.console! }
  const epochs = await eventually(async () => {
    const r = await (await fetch(`${net.file.telemetryUrl}/v1/telemetry/epochs`, { headers: consoleKey })).json() as any
    return r.items.find((i: any) => i.data.contributingOrchestratorCount >= 1)
  }, 60_000, 'an epoch snapshot with a contributing orchestrator at the orchestrator', 500)
  t.match(epochs.data, { formulaVersion: 'tiered_weight_verified_uploaded_mib_x_penalty_v3', sumFinalShare: 1, revision: 1 })

  const onChain = await eventually(async () => {
    const w = await (await fetch(`${net.file.baseUrl}/chain/weights?epoch=${epochs.sourceEpoch}`)).json() as any
    return w.weights?.length > 0 ? w : undefined
  }, 60_000, 'weights for that epoch on the dev chain', 500)
  t.ok(onChain.weights[0].weights.some((x: number) => x > 0), 'a non-zero weight vector on chain')

  const prism = await eventually(async () => {
    const p = await (await fetch(`${net.file.baseUrl}/chain/prism`)).json() as any
    return p.scores.length > 0 ? p : undefined
  }, 60_000, 'PRISM scores at the orchestrator', 500)
  const orch = prism.scores.find((s: any) => s.hotkey === net.file.nodes[0]!.hotkey)
  t.ok(orch.finalScore > 0, `the orchestrator has a PRISM score (${orch.finalScore})`)
  t.equal(orch.penaltyMultiplier, 1)
})

t.test('a corrupting worker is caught by verification and penalized itself; its orchestrator earns nothing for it', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const a = net.devnet.orchestrator
  const validator = net.devnet.nodes.find(n => n.node.config.role === 'validator')!.node
  const b = await net.addNode('orchestrator-b', { role: 'orchestrator', chainHost: a.key.address })
  const liar = await net.addNode('liar', { role: 'worker', attachTo: b.key.address, testFaults: ['corrupt'] })
  await eventually(async () => (await a.membership.view()).peers.some(p => p.hotkey === b.key.address && p.workers === 1), 20_000, 'orchestrator B with its worker')
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const data = testBytes(128 * 1024 * 1024, 41)
  const transfer = await upload(api, data, { filename: 'caught.bin', hotkey: net.file.nodes[0]!.hotkey })
  await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 120_000)
  t.equal(done.status, 'completed', JSON.stringify(done.error))
  t.equal(sha256(await readFile(sinkFile(net.data, await net.orgId(), 'caught.bin'))), sha256(data), 'the transfer completed correctly')

  const results = (await collect(a.store.table<any>('task_results'), prefixRange(`${transfer.id}/`))).map(([, r]) => r)
  t.ok(results.some(r => r.worker_id === liar.key.address && r.outcome === 'integrity_mismatch'), 'the liar\'s delivery was caught')
  t.notOk(results.some(r => r.worker_id === liar.key.address && r.outcome === 'accepted'), 'none of its deliveries was accepted')

  // The validator's published epoch: B contributed nothing verified and is penalized; A holds the weight.
  const summary = await eventually(async () => {
    for (const snap of await listEpochSnapshots(validator.store, { latestOnly: true })) {
      const rec = await epochSummaryRecord(validator.store, snap.sourceEpoch)
      const rowB = rec?.summary.orchestrators.find(r => r.hotkey === b.key.address)
      const rowA = rec?.summary.orchestrators.find(r => r.hotkey === a.key.address)
      if (rowA !== undefined && rowB !== undefined && rowA.weight > 0) return { rec: rec!, rowA, rowB }
    }
    return undefined
  }, 90_000, 'an epoch where A holds weight', 500)
  t.equal(summary.rowB.weight, 0, 'the corrupting worker\'s orchestrator has zero weight')
  t.equal(summary.rowB.penaltyMultiplier, 1, 'but no penalty: the orchestrator did not write the bytes')
  const penalties = (await collect(validator.store.table<any>('epochs'), { gte: 'pen/', lt: 'pen/\xff' })).map(([, p]) => p)
  const liarUid = (await a.devChain!.standing(liar.key.address))!.uid
  t.ok(penalties.length > 0 && penalties.every(p => p.workerHotkey === liar.key.address && p.workerUid === liarUid && p.orchestratorHotkey === b.key.address), 'every mismatch penalty is on the liar\'s own hotkey and UID')
  t.equal(summary.rowB.uint16Weight, 0)
  t.ok(summary.rowA.weight > 0)
  const proof = (await eventually(async () => weightsProof(validator.store, summary.rec.epoch), 60_000, 'the weights on chain', 500))!
  const uidB = summary.rowB.uid
  t.ok(uidB !== null)
  const idx = proof.uids.indexOf(uidB as number)
  t.ok(idx < 0 || proof.uint16Weights[idx] === 0, 'zero weight for B on chain')

  // B is scored (the validator tracks orchestrators whose deliveries it read back: its worker's lies), and
  // its score carries no penalty: the lies are its worker's.
  const scoreB = await eventually(async () => {
    const prism = await (await fetch(`${net.file.baseUrl}/chain/prism`)).json() as any
    return prism.scores.find((s: any) => s.hotkey === b.key.address)
  }, 60_000, 'a PRISM score for B', 500)
  t.equal(scoreB.penaltyMultiplier, 1, 'B\'s PRISM carries no penalty for its worker\'s lies')
})
