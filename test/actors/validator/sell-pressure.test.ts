// The weights a validator sets on chain carry the sell pressure: a miner that sold its whole 7-day
// emission is set lower than its served weight and the cut goes to a miner that held; the published
// proofs' receivedWeight is the weight set (before the final normalization).
import t from 'tap'
import { epochFixture } from '../../helpers/epoch-fixture.ts'
import { sellAllowanceSnapshot } from '../../../actors/validator/snapshots.ts'
import { applySellPressure } from '../../../actors/domain/sell-allowance.ts'

t.test('a seller is set lower, a holder higher, on chain', async t => {
  // 20,000 blocks an epoch: emission every epoch keeps a streak, and the new-hotkey ramp reaches 1.00
  // 50,400 blocks after the first emission (epoch 5's close is 70,000 blocks after epoch 2's).
  const f = await epochFixture({ validators: 1, orchestrators: 2, blockTimeMs: 10, blocksPerEpoch: 20_000 })
  const [v] = f.validators
  const [holder, seller] = f.orchestrators as [string, string]
  await v!.machine.addEvidence([f.evidence(holder, 30, f.clock.now() + 1), f.evidence(seller, 70, f.clock.now() + 1)])
  await f.closeEpoch(5)
  const before = v!.outcomes.at(-1)!.weights!
  t.ok(before !== null, 'weights were set')
  const uidH = (await f.chain.uidOf(holder))!
  const uidS = (await f.chain.uidOf(seller))!

  // The seller sells everything it earned in the last 7 days (50,400 blocks).
  const head = await f.chain.head()
  const earned = (await f.chain.emissionsFor(seller, head.block - 50_399, head.block)).reduce((a, e) => a + e.alphaRao, 0n)
  t.ok(earned > 0n, 'the seller has emission to sell')
  await f.chain.recordSale(seller, earned)
  await f.closeEpoch(6)
  const outcome = v!.outcomes.at(-1)!
  const set = outcome.weights!
  const proofS = (await sellAllowanceSnapshot(v!.store, seller, 'paid'))!
  const proofH = (await sellAllowanceSnapshot(v!.store, holder, 'paid'))!
  t.equal(proofH.data.sellAllowance.sellAllowanceMultiplier, 1, 'the holder is past its ramp, unreduced')
  t.ok(proofS.data.sellAllowance.sellAllowanceMultiplier < 1, `the seller's multiplier is ${proofS.data.sellAllowance.sellAllowanceMultiplier}`)
  const at = (uid: number, w: { uids: number[], uint16Weights: number[] }): number => w.uint16Weights[w.uids.indexOf(uid)]!
  t.ok(at(uidS, set) < at(uidS, before), `the seller is set lower (${at(uidS, before)} → ${at(uidS, set)})`)
  t.ok(at(uidH, set) > at(uidH, before), `the holder is set higher (${at(uidH, before)} → ${at(uidH, set)})`)
  // The vector set is the served one with the pressure applied (the served vector did not change).
  const served = { uids: before.uids, weights: before.uids.map(uid => (uid === uidH ? proofH.data.sellAllowance.baseWeight : proofS.data.sellAllowance.baseWeight)) }
  const expected = applySellPressure(served, new Map([
    [uidH, { hotkey: holder, coldkey: holder, multiplier: 1, holding: proofH.data.sellAllowance.holding }],
    [uidS, { hotkey: seller, coldkey: seller, multiplier: proofS.data.sellAllowance.sellAllowanceMultiplier, holding: proofS.data.sellAllowance.holding }]
  ]))
  t.same(set.uint16Weights, expected.uint16Weights)
  const receivedS = proofS.data.sellAllowance.receivedWeight
  t.ok(Math.abs(receivedS - proofS.data.sellAllowance.baseWeight * proofS.data.sellAllowance.sellAllowanceMultiplier) < 1e-12, 'the seller\'s proof shows the weight it keeps')
})
