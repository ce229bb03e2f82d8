import t from 'tap'
import {
  computeSellAllowance, sellAllowancePaidData, sellAllowanceFreeData, frequencyMultiplier, newHotkeyRamp,
  redistributeSellPressure, splitProRata, withheldRao, SELL_WINDOW_BLOCKS, SELL_ALLOWANCE_FORMULA_VERSION,
  type SaleEvent, type SellAllowanceInput
} from '../../../actors/domain/index.ts'

const ALPHA = 1_000_000_000n // rao
const EMISSION_EVERY = 504 // blocks → 100 emissions per 7-day window
const W = SELL_WINDOW_BLOCKS
const S = 2 * W // first sale after two weeks of steady emission
const REF = { block: 0, atMs: 1_700_000_000_000 }

/** Base 100 α per week: 1 α every 504 blocks from block 0. */
function input (sales: SaleEvent[], atBlock: number, over: Partial<SellAllowanceInput> = {}): SellAllowanceInput {
  const emissions = []
  for (let b = 0; b <= atBlock; b += EMISSION_EVERY) emissions.push({ block: b, baseAlphaRao: ALPHA })
  return { hotkey: 'hk', uid: 7, epoch: Math.floor(atBlock / 360), atBlock, emissions, sales, baseWeight: 0.02, blockReference: REF, computedAtMs: 1_700_000_000_000, ...over }
}
const at = (sales: SaleEvent[], atBlock: number) => computeSellAllowance(input(sales, atBlock))
const sale = (block: number, alpha: number): SaleEvent => ({ block, alphaRao: BigInt(alpha) * ALPHA })

t.test('frequency multiplier table', async t => {
  t.same([0, 1, 2, 3, 4, 5, 6, 7, 20].map(n => Math.round(frequencyMultiplier(n) * 100) / 100), [1, 1, 0.4, 0.25, 0.18, 0.14, 0.12, 0.1, 0.1])
})

t.test('80 α every 7 days keeps 1.00', async t => {
  const sales = [sale(S, 80), sale(S + W, 80), sale(S + 2 * W, 80)]
  for (const b of [S, S + W - 1, S + W, S + 2 * W + 100]) {
    const r = at(sales, b)
    t.equal(r.sellAllowanceMultiplier, 1, `block ${b}`)
    t.equal(r.sellDebtAlphaRao, 0n)
    t.equal(r.sales7d, 1)
  }
  t.equal(at(sales, S).baseAlpha7dRao, 100n * ALPHA)
})

t.test('90 α once: 0.80 for 7 days, debt 20 α repaid by then', async t => {
  const sales = [sale(S, 90)]
  const r = at(sales, S)
  t.equal(r.excessAlpha7dRao, 10n * ALPHA)
  t.equal(r.sellDebtAlphaRao, 20n * ALPHA)
  t.equal(r.sellMultiplier, 0.8)
  t.equal(r.sellAllowanceMultiplier, 0.8)
  t.equal(at(sales, S + W / 2).sellMultiplier, 0.8)
  t.equal(at(sales, S + W / 2).sellDebtAlphaRao, 10n * ALPHA)
  t.equal(at(sales, S + W - 1).sellAllowanceMultiplier, 0.8)
  const after = at(sales, S + W)
  t.equal(after.sellDebtAlphaRao, 0n)
  t.equal(after.sellAllowanceMultiplier, 1)
})

t.test('100 α: 0.60 for 7 days', async t => {
  const sales = [sale(S, 100)]
  t.equal(at(sales, S + 1).sellAllowanceMultiplier, 0.6)
  t.equal(at(sales, S + W - 1).sellAllowanceMultiplier, 0.6)
  t.equal(at(sales, S + W).sellAllowanceMultiplier, 1)
})

t.test('180 α: 0.60 for 5 weeks while the 200 α debt is repaid', async t => {
  const sales = [sale(S, 180)]
  t.equal(at(sales, S).sellDebtAlphaRao, 200n * ALPHA)
  t.equal(at(sales, S + W).sellDebtAlphaRao, 160n * ALPHA)
  t.equal(at(sales, S + W).sellMultiplier, 0.6, 'sale aged out, debt keeps 0.60')
  t.equal(at(sales, S + 5 * W - 1).sellMultiplier, 0.6)
  t.equal(at(sales, S + 5 * W).sellDebtAlphaRao, 0n)
  t.equal(at(sales, S + 5 * W).sellAllowanceMultiplier, 1)
})

t.test('40 + 40 α within 7 days: 0.40 until the first ages out', async t => {
  const sales = [sale(S, 40), sale(S + 7200, 40)]
  const r = at(sales, S + 7200)
  t.equal(r.sales7d, 2)
  t.equal(r.sellMultiplier, 1)
  t.equal(r.frequencyMultiplier, 0.4)
  t.equal(r.sellAllowanceMultiplier, 0.4)
  t.equal(r.allowanceRemainingAlphaRao, 0n)
  t.equal(at(sales, S + W - 1).sellAllowanceMultiplier, 0.4)
  t.equal(at(sales, S + W).sellAllowanceMultiplier, 1)
})

t.test('40 then 60 α: 0.24, then 0.60, then 1.00', async t => {
  const sales = [sale(S, 40), sale(S + 7200, 60)]
  const r = at(sales, S + 7200)
  t.equal(r.excessAlpha7dRao, 20n * ALPHA)
  t.equal(r.sellMultiplier, 0.6)
  t.ok(Math.abs(r.sellAllowanceMultiplier - 0.24) < 1e-12)
  t.equal(at(sales, S + W).sellAllowanceMultiplier, 0.6)
  t.equal(at(sales, S + 7200 + W).sellAllowanceMultiplier, 1)
})

t.test('selling everything daily: 0.10', async t => {
  const sales = Array.from({ length: 8 }, (_, i) => sale(S + i * 7200, 14) /* a day's emission */)
  const r = at(sales, S + 7 * 7200)
  t.equal(r.sales7d, 7)
  t.equal(r.sellAllowanceMultiplier, 0.1)
})

t.test('new-hotkey ramp: 0.10 → 0.55 at 3.5 days → 1.00, restarts after a 7-day gap', async t => {
  t.equal(newHotkeyRamp([1000], 1000), 0.1)
  t.ok(Math.abs(newHotkeyRamp([1000, 2000], 1000 + W / 2) - 0.55) < 1e-12)
  t.equal(newHotkeyRamp([1000, 30000, 50000], 1000 + W), 1)
  t.equal(newHotkeyRamp([], 5), 0.1)
  t.equal(newHotkeyRamp([0], W), 0.1, 'no emission for 7 days')
  t.equal(newHotkeyRamp([0, W + 10], W + 10), 0.1, 'new streak')
  // a ramping hotkey is capped by its ramp; with debt it stays ≤ 0.60
  const young = computeSellAllowance({ ...input([], W / 2), emissions: [{ block: 0, baseAlphaRao: ALPHA }], debtTransfers: [{ block: 0, alphaRao: 50n * ALPHA }] })
  t.ok(Math.abs(young.newHotkeyRamp - 0.55) < 1e-12)
  t.equal(young.sellMultiplier, 0.6)
  t.ok(Math.abs(young.sellAllowanceMultiplier - 0.55) < 1e-12)
})

t.test('seed §2.5 fields, paid and free', async t => {
  const r = at([sale(S, 30)], S + 360)
  const paid = sellAllowancePaidData(r)
  t.equal(paid.formulaVersion, SELL_ALLOWANCE_FORMULA_VERSION)
  t.same(Object.keys(paid.sellAllowance).sort(), ['baseAlpha7dRao', 'baseAlphaRao', 'baseWeight', 'computedAt', 'excessAlpha7dRao', 'frequencyMultiplier', 'holding', 'lastSaleBlock', 'newHotkeyRamp', 'nextPenaltyFreeSaleBlock', 'nextPenaltyFreeSaleEstimatedAt', 'receivedWeight', 'sales7d', 'sellAllowanceMultiplier', 'sellDebtAlphaRao', 'sellMultiplier', 'soldAlpha7dRao', 'transferableAlphaRao', 'windowEndBlock'])
  t.equal(paid.sellAllowance.soldAlpha7dRao, '30000000000')
  t.equal(paid.sellAllowance.transferableAlphaRao, '0', 'a sale is in the window')
  t.equal(paid.sellAllowance.windowEndBlock, S + 360)
  t.equal(paid.sellAllowance.nextPenaltyFreeSaleBlock, S + W)
  t.equal(paid.sellAllowance.nextPenaltyFreeSaleEstimatedAt, new Date(REF.atMs + (S + W) * 12_000).toISOString())
  t.equal(paid.sellAllowance.computedAt, '2023-11-14T22:13:20.000Z')
  t.equal(paid.sellAllowance.holding, 0.7)
  t.equal(paid.sellAllowance.receivedWeight, 0.02)
  t.equal(paid.sellAllowance.lastSaleBlock, S)
  const free = sellAllowanceFreeData(r)
  t.equal(free.sellAllowance.allowanceRemainingAlphaRao, String(50n * ALPHA))
  t.notOk('transferableAlphaRao' in free.sellAllowance)
  t.notOk('windowEndBlock' in free.sellAllowance)
  const clean = at([], S)
  t.equal(clean.transferableAlphaRao, 80n * ALPHA)
  t.equal(clean.nextPenaltyFreeSaleBlock, S)
  t.equal(clean.lastSaleBlock, null)
  t.equal(clean.baseAlphaRao, ALPHA, 'epoch 280 starts at S and holds one emission')
  t.equal(at([], S + 503).baseAlphaRao, 0n, 'epoch 281 (S+360..) has none up to S+503')
})

t.test('redistribution goes to other coldkeys at 1.00 by holding; nothing burned', async t => {
  const out = redistributeSellPressure([
    { hotkey: 'seller', coldkey: 'c1', baseWeight: 0.5, multiplier: 0.6, holding: 0 },
    { hotkey: 'sibling', coldkey: 'c1', baseWeight: 0.1, multiplier: 1, holding: 1 },
    { hotkey: 'holder', coldkey: 'c2', baseWeight: 0.2, multiplier: 1, holding: 1 },
    { hotkey: 'half', coldkey: 'c3', baseWeight: 0.2, multiplier: 1, holding: 0.5 }
  ])
  const by = Object.fromEntries(out.map(o => [o.hotkey, o]))
  t.ok(Math.abs(by.seller.receivedWeight - 0.3) < 1e-12)
  t.equal(by.sibling.redistributedWeight, 0)
  t.ok(Math.abs(by.holder.redistributedWeight - 0.2 * 2 / 3) < 1e-12)
  t.ok(Math.abs(by.half.redistributedWeight - 0.2 / 3) < 1e-12)
  t.ok(Math.abs(out.reduce((a, o) => a + o.receivedWeight, 0) - 1) < 1e-12)
  const alone = redistributeSellPressure([{ hotkey: 'a', coldkey: 'c', baseWeight: 1, multiplier: 0.5, holding: 0 }])
  t.equal(alone[0].receivedWeight, 1)
})

t.test('pro-rata split and withheld rao are exact in rao', async t => {
  t.same(splitProRata(10n, [{ id: 'a', weightRao: 1n }, { id: 'b', weightRao: 1n }, { id: 'c', weightRao: 1n }]), [{ id: 'a', amountRao: 4n }, { id: 'b', amountRao: 3n }, { id: 'c', amountRao: 3n }])
  t.same(splitProRata(7n, [{ id: 'a', weightRao: 0n }, { id: 'b', weightRao: 0n }]).map(x => x.amountRao), [4n, 3n])
  t.same(splitProRata(100n, [{ id: 'a', weightRao: 3n }, { id: 'b', weightRao: 1n }]).map(x => x.amountRao), [75n, 25n])
  t.throws(() => splitProRata(-1n, []), RangeError)
  t.equal(withheldRao(ALPHA, 0.8), 200_000_000n)
  t.equal(withheldRao(3n, 0.5), 2n, 'rounds the withheld part up')
  // docs/formulas.md: m̂ = round(2/3 · 10⁶) = 666,667; kept ⌊10⁹ · 666,667 / 10⁶⌋ = 666,667,000 → 333,333,000
  t.equal(withheldRao(ALPHA, 2 / 3), 333_333_000n, 'the multiplier is rounded to the nearest ppm first')
  t.equal(withheldRao(ALPHA, 1), 0n)
})

t.test('applySellPressure: the worked example of docs/formulas.md#sell-pressure', async t => {
  const { applySellPressure } = await import('../../../actors/domain/sell-allowance.ts')
  // UID 1 sold its whole 7-day emission (multiplier 0.60); UIDs 2 and 3 kept to their allowance
  // (multiplier 1), UID 2 holding everything, UID 3 half of it.
  const pressure = new Map([
    [1, { hotkey: 'A', coldkey: 'A', multiplier: 0.6, holding: 0 }],
    [2, { hotkey: 'B', coldkey: 'B', multiplier: 1, holding: 1 }],
    [3, { hotkey: 'C', coldkey: 'C', multiplier: 1, holding: 0.5 }]
  ])
  const out = applySellPressure({ uids: [1, 2, 3], weights: [0.5, 0.3, 0.2] }, pressure)
  t.same(out.uids, [1, 2, 3])
  // A loses 0.5 × 0.4 = 0.2; B gets 0.2 × 1/1.5, C 0.2 × 0.5/1.5.
  const want = [0.3, 0.3 + 0.2 / 1.5, 0.2 + 0.1 / 1.5]
  out.weights.forEach((w, i) => t.ok(Math.abs(w - want[i]!) < 1e-12, `uid ${i + 1}: ${w} ≈ ${want[i]}`))
  t.same(out.uint16Weights, [19660, 28398, 17476])
  t.ok(Math.abs(out.weights.reduce((a, b) => a + b, 0) - 1) < 1e-12, 'still normalized')
  t.same(out.outcomes.map(o => o.hotkey), ['A', 'B', 'C'])
})

t.test('applySellPressure: no recipient keeps the weight; unknown UIDs are unreduced; same coldkey never receives', async t => {
  const { applySellPressure } = await import('../../../actors/domain/sell-allowance.ts')
  const young = new Map([[1, { hotkey: 'A', coldkey: 'A', multiplier: 0.1, holding: 1 }], [2, { hotkey: 'B', coldkey: 'B', multiplier: 0.1, holding: 1 }]])
  t.same(applySellPressure({ uids: [1, 2], weights: [0.75, 0.25] }, young).weights, [0.75, 0.25], 'all reduced: nothing moves, nothing is burned')
  const sameColdkey = new Map([[1, { hotkey: 'A', coldkey: 'K', multiplier: 0.6, holding: 0 }], [2, { hotkey: 'B', coldkey: 'K', multiplier: 1, holding: 1 }]])
  t.same(applySellPressure({ uids: [1, 2], weights: [0.5, 0.5] }, sameColdkey).weights, [0.5, 0.5], 'a coldkey does not receive its own hotkey\'s cut')
  const partial = applySellPressure({ uids: [1, 9], weights: [0.5, 0.5] }, new Map([[1, { hotkey: 'A', coldkey: 'A', multiplier: 0.6, holding: 0 }]]))
  t.same(partial.weights, [0.3, 0.7], 'UID 9 (no proof) is unreduced and receives as holding 1')
  t.same(applySellPressure({ uids: [1], weights: [0] }, new Map()).weights, [0], 'all zero stays zero')
})

t.test('pro-rata split: leftovers by largest remainder, ties by id, whatever the input order', async t => {
  // 10 over 1:2:4 → 1.43, 2.86, 5.71: floors 1, 2, 5 and two leftovers to the remainders 6/7 (a) and 5/7 (b).
  t.same(splitProRata(10n, [{ id: 'c', weightRao: 1n }, { id: 'a', weightRao: 2n }, { id: 'b', weightRao: 4n }]), [{ id: 'c', amountRao: 1n }, { id: 'a', amountRao: 3n }, { id: 'b', amountRao: 6n }])
  t.same(splitProRata(2n, [{ id: 'z', weightRao: 1n }, { id: 'y', weightRao: 1n }, { id: 'x', weightRao: 1n }]).map(x => x.amountRao), [0n, 1n, 1n], 'equal remainders: the lowest ids first')
  t.same(splitProRata(5n, [{ id: 'a', weightRao: -3n }, { id: 'b', weightRao: 1n }]).map(x => x.amountRao), [0n, 5n], 'a negative weight counts as none')
  t.same(splitProRata(0n, [{ id: 'a', weightRao: 1n }]), [{ id: 'a', amountRao: 0n }])
  t.same(splitProRata(5n, []), [])
  t.same(splitProRata(0n, []), [], 'nothing to split: an empty split, not an error')
})

t.test('redistribution: what is not a base weight, a recipient or a holding receives nothing', async t => {
  const out = redistributeSellPressure([
    { hotkey: 'seller', coldkey: 'c1', baseWeight: 0.4, multiplier: 0.5, holding: 0 },
    { hotkey: 'nan', coldkey: 'c2', baseWeight: Number.NaN, multiplier: 1, holding: 1 },
    { hotkey: 'negative', coldkey: 'c3', baseWeight: -1, multiplier: 1, holding: 1 },
    { hotkey: 'no-holding', coldkey: 'c4', baseWeight: 0.2, multiplier: 1, holding: 0 },
    { hotkey: 'reduced', coldkey: 'c5', baseWeight: 0.2, multiplier: 0.99, holding: 1 },
    { hotkey: 'recipient', coldkey: 'c6', baseWeight: 0.2, multiplier: 1, holding: 3 }
  ])
  const by = Object.fromEntries(out.map(o => [o.hotkey, o]))
  t.same([by.nan.baseWeight, by.negative.baseWeight], [0, 0], 'a base weight that is not a positive number is 0')
  t.same([by.nan.redistributedWeight, by.negative.redistributedWeight, by['no-holding'].redistributedWeight], [0, 0, 0])
  t.ok(Math.abs(by.seller.keptWeight - 0.2) < 1e-12, 'the seller keeps half')
  // 'reduced' loses 0.002 itself; only 'recipient' (other coldkey, at 1.00, base and holding > 0) receives.
  t.ok(Math.abs(by.recipient.redistributedWeight - (0.2 + 0.002)) < 1e-12, 'one recipient takes what both lost')
  t.equal(by.reduced.redistributedWeight, 0, 'a reduced hotkey receives nothing')
  t.ok(Math.abs(out.reduce((a, o) => a + o.receivedWeight, 0) - 1.0) < 1e-12, 'nothing burned: 0.4 + 0.2 + 0.2 + 0.2')
  const unchanged = redistributeSellPressure([{ hotkey: 'a', coldkey: 'c1', baseWeight: 0.5, multiplier: 1, holding: 0 }, { hotkey: 'b', coldkey: 'c2', baseWeight: 0.5, multiplier: 1, holding: 1 }])
  t.same(unchanged.map(o => o.receivedWeight), [0.5, 0.5], 'no seller: nothing moves')
})

t.test('new-hotkey ramp: only emissions up to the block count, in any order; a gap of exactly 7 days restarts', async t => {
  const W = SELL_WINDOW_BLOCKS
  t.equal(newHotkeyRamp([W / 2, 0], W / 2), 0.1 + 0.9 * 0.5, 'out of order: the streak started at 0')
  t.equal(newHotkeyRamp([0, W / 2, W], W / 2), 0.1 + 0.9 * 0.5, 'an emission after the block does not count')
  t.equal(newHotkeyRamp([0, W, W + 10], W + 10), 0.1 + 0.9 * 10 / W, 'a gap of exactly 7 days starts a new streak')
  t.equal(newHotkeyRamp([0, W - 1], W - 1), 0.1 + 0.9 * (W - 1) / W, 'a gap just short of 7 days does not')
})
