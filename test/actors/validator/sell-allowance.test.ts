// Sell-allowance proofs from the chain's emissions and sales, published with the epoch, and the
// retention of every published version (epochs 30 days, paid proofs 7 days, free proofs 30 days).
import t from 'tap'
import { epochFixture } from '../../helpers/epoch-fixture.ts'
import { isoFromMs } from '../../../actors/domain/chain-time.ts'
import { sellAllowanceSnapshot, snapshotById, listEpochSnapshots, epochSnapshot } from '../../../actors/validator/snapshots.ts'

const HOUR = 3_600_000

t.test('proofs per miner hotkey per epoch; paid kept 7 days, free and epochs 30 days', async t => {
  // 6 h blocks, 2 blocks per epoch: an epoch is 12 h of chain time, so 30 days is 60 epochs.
  const f = await epochFixture({ validators: 1, blockTimeMs: 6 * HOUR, blocksPerEpoch: 2 })
  const [v] = f.validators
  const [o1, o2] = f.orchestrators as [string, string]
  await v!.machine.addEvidence([f.evidence(o1, 64, f.clock.now() + 1)])
  await f.closeEpoch(2) // weights for epoch 0 set at block 3; epoch 2 (blocks 4-5) pays o1
  t.same((await f.chain.emissionsFor(o1, 0, 100)).map(e => [e.block, e.alphaRao]), [[5, 1_000_000n]])
  await f.advance(1) // block 6
  const sale = await f.chain.recordSale(o1, 900_000n)
  t.equal(sale.block, 6)
  await f.closeEpoch(4) // publishes epoch 3 (blocks 6-7)

  const paid = (await sellAllowanceSnapshot(v!.store, o1, 'paid'))!
  const free = (await sellAllowanceSnapshot(v!.store, o1, 'free'))!
  const close3 = (await f.chain.epochClose(3))!
  const close4 = (await f.chain.epochClose(4))!
  t.match(paid, {
    version: 'sell-allowance-3', sourceEpoch: 3, observedAt: isoFromMs(close3.endAtMs), publishedAt: isoFromMs(close4.endAtMs),
    formulaReference: 'urn:bwnet:docs:formulas.md#sell-allowance', evidenceSequence: '3'
  })
  t.match(paid.data, { hotkey: o1, uid: await f.chain.uidOf(o1), epoch: 3, formulaVersion: 'sell_allowance_7d_80pct_debt2x_freq_ramp_v1' })
  // Emissions at blocks 5 and 7 (1 α-million rao each); the sale at block 6 found an allowance of 800,000.
  t.match(paid.data.sellAllowance, {
    baseAlpha7dRao: '2000000', soldAlpha7dRao: '900000', excessAlpha7dRao: '100000', baseAlphaRao: '1000000',
    sales7d: 1, lastSaleBlock: 6, transferableAlphaRao: '0', windowEndBlock: 7, nextPenaltyFreeSaleBlock: 6 + 50_400,
    frequencyMultiplier: 1, baseWeight: 1, computedAt: isoFromMs(close4.endAtMs)
  })
  t.ok(Number(paid.data.sellAllowance.sellDebtAlphaRao) > 0, 'selling above the allowance left debt')
  t.ok(paid.data.sellAllowance.sellMultiplier < 1)
  t.notOk('allowanceRemainingAlphaRao' in paid.data.sellAllowance)
  t.equal(free.data.sellAllowance.allowanceRemainingAlphaRao, '700000')
  t.notOk('transferableAlphaRao' in free.data.sellAllowance)
  t.notOk('nextPenaltyFreeSaleEstimatedAt' in free.data.sellAllowance)
  t.not(paid.snapshotId, free.snapshotId)
  t.same(await snapshotById(v!.store, paid.snapshotId), paid)
  t.match((await sellAllowanceSnapshot(v!.store, o2, 'free'))!.data.sellAllowance, { baseAlpha7dRao: '0', holding: 1, sales7d: 0 }, 'a miner without emission has a proof too')
  t.same(await sellAllowanceSnapshot(v!.store, o1, 'paid', 3), paid, 'by epoch')
  t.equal(await sellAllowanceSnapshot(v!.store, o1, 'paid', 4), null, 'epoch 4 is not published yet')
  const e0 = (await epochSnapshot(v!.store, 0))!

  // 7 days later (chain time): the paid proof of epoch 3 is gone, the free one stays.
  await f.closeEpoch(3 + 15)
  t.equal(await sellAllowanceSnapshot(v!.store, o1, 'paid', 3), null)
  t.equal(await snapshotById(v!.store, paid.snapshotId), null)
  t.same(await sellAllowanceSnapshot(v!.store, o1, 'free', 3), free)
  t.equal((await sellAllowanceSnapshot(v!.store, o1, 'paid'))!.sourceEpoch, 17, 'latest paid proof')
  t.same(await epochSnapshot(v!.store, 0), e0, 'epochs stay 30 days')

  // 30 days after epoch 3: its free proof and the early epochs are gone.
  await f.closeEpoch(3 + 61)
  t.equal(await sellAllowanceSnapshot(v!.store, o1, 'free', 3), null)
  t.equal(await snapshotById(v!.store, free.snapshotId), null)
  t.equal(await epochSnapshot(v!.store, 0), null)
  t.equal(await snapshotById(v!.store, e0.snapshotId), null)
  const kept = await listEpochSnapshots(v!.store, { latestOnly: true })
  const newestEnd = (await f.chain.epochClose(64))!.endAtMs
  t.ok(kept.length > 50 && kept.length <= 61, `about 30 days of epochs kept (${kept.length})`)
  for (const s of kept) t.ok(Date.parse(s.observedAt) >= newestEnd - 30 * 24 * HOUR, `epoch ${s.sourceEpoch} within 30 days`)
  await f.chain.stop()
})
