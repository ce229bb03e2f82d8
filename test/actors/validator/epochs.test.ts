import t from 'tap'
import canonicalize from 'canonicalize'
import { epochFixture } from '../../helpers/epoch-fixture.ts'
import { EpochMachine } from '../../../actors/validator/epochs.ts'
import { silentLogger } from '../../helpers/logger.ts'
import { isoFromMs } from '../../../actors/domain/chain-time.ts'
import { canonicalContent, snapshotIdOf } from '../../../actors/validator/envelope.ts'
import {
  epochSnapshot, latestEpochSnapshot, listEpochSnapshots, snapshotById, epochSummaryRecord, weightsProof, CORRECTION_REASON
} from '../../../actors/validator/snapshots.ts'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('two validators fed the same evidence publish byte-identical snapshots; late evidence yields revision 2 pointing at revision 1', async t => {
  const f = await epochFixture()
  const [a, b] = f.validators as [typeof f.validators[0], typeof f.validators[0]]
  const [o1, o2, o3] = f.orchestrators as [string, string, string]
  const t0 = f.clock.now()
  const batch = [
    f.evidence(o1, 300, t0 + 2_000), f.evidence(o2, 100, t0 + 3_000), f.evidence(o2, 0.5, t0 + 4_000),
    f.evidence(o3, 100, t0 + 5_000, { verdict: 'mismatch' })
  ]
  t.match(await a.machine.addEvidence(batch), { accepted: 4, duplicates: 0, correcting: [] })
  // The other validator hears the same evidence in another order and twice.
  t.match(await b.machine.addEvidence([...batch].reverse()), { accepted: 4 })
  t.match(await b.machine.addEvidence(batch.slice(0, 2)), { accepted: 0, duplicates: 2 })

  await f.closeEpoch(0)
  t.same(a.outcomes.at(-1)!.published, [], 'epoch 0 is not published at its own close')
  t.equal(await latestEpochSnapshot(a.store), null)
  await f.closeEpoch(1)
  const close0 = (await f.chain.epochClose(0))!
  const close1 = (await f.chain.epochClose(1))!
  const [pa] = a.outcomes.at(-1)!.published
  const [pb] = b.outcomes.at(-1)!.published
  t.ok(pa && pb)
  t.equal(JSON.stringify(pa), JSON.stringify(pb), 'byte-identical envelopes')
  t.equal(pa!.snapshotId, pb!.snapshotId)
  t.match(pa!.snapshotId, UUID)
  const { snapshotId, ...content } = pa!
  t.equal(snapshotIdOf(content), snapshotId, 'the id is derived from the content')
  t.equal(canonicalContent(content), canonicalize(content))
  t.same(pa, {
    snapshotId,
    version: 'epoch-0-r1',
    observedAt: isoFromMs(close0.endAtMs),
    sourceEpoch: 0,
    formulaReference: 'urn:bwnet:docs:formulas.md#epoch-weights',
    publishedAt: isoFromMs(close1.endAtMs),
    evidenceSequence: '4',
    data: {
      epoch: 0,
      formulaVersion: 'tiered_weight_verified_uploaded_mib_x_penalty_v3',
      epochSummaryVersion: isoFromMs(close1.endAtMs),
      expectedOrchestratorCount: 3,
      contributingOrchestratorCount: 2,
      sumFinalShare: 1,
      computedAt: isoFromMs(close1.endAtMs),
      previousSnapshotId: null,
      correctionReason: null,
      revision: 1
    }
  })
  const rec = (await epochSummaryRecord(a.store, 0))!
  t.same(rec.summary.orchestrators.map(r => [r.hotkey, r.verifiedMib, r.weight]), [[o1, 300, 0.75], [o2, 100, 0.25], [o3, 0, 0]],
    'verified MiB floors the byte sum; a mismatch verdict counts nothing')

  // Evidence for epoch 0 verified after its publication.
  const late = f.evidence(o3, 200, close0.endAtMs - 1)
  t.match(await a.machine.addEvidence([late]), { accepted: 1, correcting: [0] })
  t.match(await b.machine.addEvidence([late]), { accepted: 1, correcting: [0] })
  await f.closeEpoch(2)
  const close2 = (await f.chain.epochClose(2))!
  const pubA = a.outcomes.at(-1)!.published
  const pubB = b.outcomes.at(-1)!.published
  t.same(pubA.map(s => s.version), ['epoch-1-r1', 'epoch-0-r2'])
  t.equal(JSON.stringify(pubA), JSON.stringify(pubB), 'corrections are byte-identical too')
  const r2 = pubA[1]!
  t.match(r2, { sourceEpoch: 0, publishedAt: isoFromMs(close2.endAtMs), observedAt: isoFromMs(close0.endAtMs), evidenceSequence: '5' })
  t.match(r2.data, { epoch: 0, revision: 2, previousSnapshotId: snapshotId, correctionReason: CORRECTION_REASON, contributingOrchestratorCount: 3, sumFinalShare: 1 })
  t.not(r2.snapshotId, snapshotId)

  // Reads: versions stay immutable and listable.
  t.same(await snapshotById(a.store, snapshotId), pa, 'revision 1 is still readable by id')
  t.same(await epochSnapshot(a.store, 0), r2, 'latest revision by default')
  t.same(await epochSnapshot(a.store, 0, 1), pa)
  t.same((await listEpochSnapshots(a.store)).map(s => s.version), ['epoch-0-r1', 'epoch-0-r2', 'epoch-1-r1'])
  t.same((await listEpochSnapshots(a.store, { latestOnly: true })).map(s => s.version), ['epoch-0-r2', 'epoch-1-r1'])
  t.same((await listEpochSnapshots(a.store, { fromEpoch: 1 })).map(s => s.version), ['epoch-1-r1'])
  t.same((await listEpochSnapshots(a.store, { after: { epoch: 0, revision: 1 }, limit: 1 })).map(s => s.version), ['epoch-0-r2'])
  t.same((await listEpochSnapshots(a.store, { reverse: true, limit: 2 })).map(s => s.version), ['epoch-1-r1', 'epoch-0-r2'])
  t.equal((await latestEpochSnapshot(a.store))!.version, 'epoch-1-r1')

  // Re-delivering the late record, or a close already handled, changes nothing.
  t.match(await a.machine.addEvidence([late]), { accepted: 0, duplicates: 1, correcting: [] })
  t.same((await a.machine.epochClosed(close2)).published, [])
  await f.closeEpoch(3)
  t.same(a.outcomes.at(-1)!.published.map(s => s.version), ['epoch-2-r1'], 'no further correction without new evidence')
  await f.chain.stop()
})

t.test('a mismatch verdict replaces a verified one and corrects the published epoch', async t => {
  const f = await epochFixture({ validators: 1 })
  const [v] = f.validators
  const [o1, o2] = f.orchestrators as [string, string]
  const t0 = f.clock.now()
  const good = f.evidence(o1, 10, t0 + 1_000)
  await v!.machine.addEvidence([good, f.evidence(o2, 10, t0 + 1_000)])
  await f.closeEpoch(1)
  t.match((await epochSnapshot(v!.store, 0))!.data, { contributingOrchestratorCount: 2, revision: 1 })
  t.match(await v!.machine.addEvidence([{ ...good, verdict: 'mismatch', verifiedAt: t0 + 1_500 }]), { accepted: 1, correcting: [0] })
  t.match(await v!.machine.addEvidence([good]), { accepted: 0, duplicates: 1 }, 'verified never overrides a mismatch')
  await f.closeEpoch(2)
  t.match((await epochSnapshot(v!.store, 0))!.data, { contributingOrchestratorCount: 1, revision: 2 })
  await f.chain.stop()
})

t.test('weights go on chain each epoch with a proof; with no transfers the last non-zero vector is served, else UID 0 burns', async t => {
  const f = await epochFixture({ validators: 1 })
  const [v] = f.validators
  const [o1, o2] = f.orchestrators as [string, string]
  const uid1 = (await f.chain.uidOf(o1))!
  const uid2 = (await f.chain.uidOf(o2))!
  // Epoch 0: no evidence, no history → burn.
  await f.closeEpoch(1)
  const burn = (await weightsProof(v!.store, 0))!
  t.match(burn, { epoch: 0, sourceEpoch: 0, source: 'burn', allWeightsZero: true, uids: [0], uint16Weights: [65535], validatorHotkey: v!.hotkey, txId: /^0x/ })
  t.match((await epochSnapshot(v!.store, 0))!.data, { sumFinalShare: 0, contributingOrchestratorCount: 0, expectedOrchestratorCount: 3 })
  const onChain = await f.chain.weightsOf(0)
  t.same(onChain.map(w => [w.txId, w.block, w.uids, w.weights]), [[burn.txId, burn.block, [0], [65535]]])
  // Epoch 1 has work → its own vector.
  const close1Start = (await f.chain.epochClose(0))!.endAtMs
  await v!.machine.addEvidence([f.evidence(o1, 30, close1Start + 1_000), f.evidence(o2, 10, close1Start + 2_000)])
  await f.closeEpoch(2)
  const own = (await weightsProof(v!.store, 1))!
  t.match(own, { epoch: 1, sourceEpoch: 1, source: 'epoch_summary', allWeightsZero: false })
  const third = Math.floor(65535 / 4)
  t.same(own.uids, [uid1, uid2, (await f.chain.uidOf(f.orchestrators[2]!))!])
  t.same(own.uint16Weights, [Math.floor(0.75 * 65535), third, 0])
  // Epoch 2 without transfers → epoch 1's vector again, labelled for epoch 2.
  await f.closeEpoch(3)
  t.match(await weightsProof(v!.store, 2), { epoch: 2, sourceEpoch: 1, source: 'last_valid_nonzero', allWeightsZero: true, uids: own.uids, uint16Weights: own.uint16Weights })
  // Weights for epoch E go on chain at E+1's close, after that close's emission: epoch 2's emission
  // still followed the burn vector; epoch 3's follows epoch 1's vector, in whole rao of the uint16 split.
  t.match((await f.chain.epochClose(2))!, { burnedRao: 1_000_000n })
  t.same((await f.chain.emissionsFor(o1, 0, 1_000)).map(e => [e.epoch, e.alphaRao]), [[3, 750_008n]])
  t.same((await f.chain.emissionsFor(o2, 0, 1_000)).map(e => [e.epoch, e.alphaRao]), [[3, 249_992n]])
  t.match((await f.chain.epochClose(3))!, { burnedRao: 0n })
  await f.chain.stop()
})

t.test('bad evidence is refused with a reason; nothing is stored', async t => {
  const f = await epochFixture({ validators: 1 })
  const [v] = f.validators
  const ok = f.evidence(f.orchestrators[0]!, 1, f.clock.now())
  await t.rejects(v!.machine.addEvidence([ok, { ...ok, attemptId: 'x2', bytes: -1 }]), /evidence\[1\]/)
  await t.rejects(v!.machine.addEvidence([{ ...ok, verdict: 'maybe' as never }]), /evidence\[0\]/)
  await t.rejects(v!.machine.addEvidence([{ ...ok, orchestratorHotkey: 'nope' }]), /evidence\[0\]/)
  t.match(await v!.machine.addEvidence([ok]), { accepted: 1 }, 'the valid record was not half-applied before')
  await t.rejects(v!.machine.addPenalties([{ id: 'p', orchestratorHotkey: f.orchestrators[0]!, kind: 'bribery' as never, createdAtMs: 1 }]), /penalty\[0\]/)
  await f.chain.stop()
})

t.test('penalty rows scale an orchestrator\'s raw weight', async t => {
  const f = await epochFixture({ validators: 1 })
  const [v] = f.validators
  const [o1, o2] = f.orchestrators as [string, string]
  const t0 = f.clock.now()
  await v!.machine.addEvidence([f.evidence(o1, 100, t0 + 1_000), f.evidence(o2, 100, t0 + 1_000)])
  await v!.machine.addPenalties(Array.from({ length: 5 }, (_, i) => ({ id: `fraud-${i}`, orchestratorHotkey: o2, kind: 'fraud' as const, createdAtMs: t0 })))
  await f.closeEpoch(1)
  const rows = (await epochSummaryRecord(v!.store, 0))!.summary.orchestrators
  t.same(rows.slice(0, 2).map(r => [r.hotkey, r.penaltyMultiplier, r.weight]), [[o1, 1, 100 / 150], [o2, 0.5, 1 - 100 / 150]])
  await f.chain.stop()
})

t.test('a restarted validator continues from its store: late evidence still corrects, closes are not redone', async t => {
  const f = await epochFixture({ validators: 1 })
  const [v] = f.validators
  const [o1] = f.orchestrators as [string]
  await v!.machine.addEvidence([f.evidence(o1, 5, f.clock.now() + 1)])
  await f.closeEpoch(1)
  const r1 = (await epochSnapshot(v!.store, 0))!
  const restarted = new EpochMachine({ store: v!.store, chain: f.chain, hotkey: v!.hotkey, logger: silentLogger() })
  await restarted.start()
  v!.machine = restarted
  t.same((await restarted.epochClosed((await f.chain.epochClose(1))!)).published, [], 'a close already handled')
  const close0 = (await f.chain.epochClose(0))!
  t.match(await restarted.addEvidence([f.evidence(o1, 5, close0.endAtMs)]), { correcting: [0] })
  await f.closeEpoch(2)
  t.match((await epochSnapshot(v!.store, 0))!.data, { revision: 2, previousSnapshotId: r1.snapshotId })
  await f.chain.stop()
})
