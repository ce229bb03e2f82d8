// Epoch weights past their usual inputs, pinned with exact outputs: the rank order's every tie-break
// (MiB over uid, uid before null, hotkey, then input order), the rank field, the all-zero summary, and
// which vectors the served weights accept (docs/formulas.md#epoch-weights).
import t from 'tap'
import { computeEpochWeights, servedWeights, weightVector, type WeightCandidate, type WeightVector } from '../../../actors/domain/index.ts'

const c = (uid: number | null, hotkey: string, verifiedMib = 100, penaltyMultiplier = 1, score = 0.5): WeightCandidate => ({ uid, hotkey, verifiedMib, penaltyMultiplier, score })
const order = (cands: WeightCandidate[]): string[] => computeEpochWeights(cands).rows.map(r => r.hotkey)

t.test('raw desc whatever the input order; ranks count from 1', async t => {
  const r = computeEpochWeights([c(1, 'low', 10), c(2, 'high', 30), c(3, 'mid', 20)])
  t.same(r.rows.map(x => x.hotkey), ['high', 'mid', 'low'])
  t.same(r.rows.map(x => x.rank), [1, 2, 3])
  // The last positive weight is the residual, 1 − (½ + ⅓), not 10/60.
  t.same(r.rows.map(x => x.weight), [0.5, 20 / 60, 1 - (0.5 + 20 / 60)])
})

t.test('equal raw and score: more MiB first, even with a larger uid', async t => {
  // 200 MiB × ½ and 100 MiB × 1 are both raw 100.
  t.same(order([c(1, 'small'), c(9, 'big', 200, 0.5)]), ['big', 'small'])
  t.same(order([c(9, 'big', 200, 0.5), c(1, 'small')]), ['big', 'small'])
})

t.test('equal raw, score and MiB: a uid before none, in either input order', async t => {
  t.same(order([c(null, 'n'), c(5, 'u')]), ['u', 'n'])
  t.same(order([c(5, 'u'), c(null, 'n')]), ['u', 'n'])
})

t.test('no uid on either side: hotkey asc, in either input order', async t => {
  t.same(order([c(null, 'b'), c(null, 'a')]), ['a', 'b'])
  t.same(order([c(null, 'a'), c(null, 'b')]), ['a', 'b'])
  t.same(order([c(null, 'c'), c(null, 'a'), c(null, 'b')]), ['a', 'b', 'c'])
  // The same uid twice orders by hotkey too.
  t.same(order([c(4, 'b'), c(4, 'a')]), ['a', 'b'])
})

t.test('everything equal but the input: input order (scores that clean to the same 0 tell them apart)', async t => {
  const rows = (cands: WeightCandidate[]): number[] => computeEpochWeights(cands).rows.map(r => r.score)
  t.same(rows([c(null, 'h', 100, 1, -1), c(null, 'h', 100, 1, 0)]), [-1, 0])
  t.same(rows([c(null, 'h', 100, 1, 0), c(null, 'h', 100, 1, -1)]), [0, -1])
  t.same(rows([c(null, 'h', 100, 1, 0), c(null, 'h', 100, 1, -1), c(null, 'h', 100, 1, Number.NaN)]), [0, -1, Number.NaN])
})

t.test('all weights zero: every bucket 0', async t => {
  const r = computeEpochWeights([c(1, 'a', 0), c(2, 'b', 10, 0)])
  t.ok(r.allWeightsZero)
  t.same(r.effectiveBuckets, { A: 0, B: 0, C: 0, D: 0, E: 0 })
  t.same(r.rows.map(x => x.rank), [1, 2])
})

t.test('served weights: which vectors count and the allWeightsZero of each source', async t => {
  const good = weightVector(10, computeEpochWeights([c(1, 'a', 10), c(2, 'b', 20)]))
  const empty = weightVector(12, computeEpochWeights([c(1, 'a', 0)]))
  const current = servedWeights(good, [])
  t.same({ source: current.source, allWeightsZero: current.allWeightsZero, epoch: current.epoch, currentEpoch: current.currentEpoch }, { source: 'epoch_summary', allWeightsZero: false, epoch: 10, currentEpoch: 10 })
  const previous = servedWeights(empty, [good])
  t.same({ source: previous.source, allWeightsZero: previous.allWeightsZero, epoch: previous.epoch }, { source: 'last_valid_nonzero', allWeightsZero: false, epoch: 10 })
  const burn = servedWeights(empty, [])
  t.equal(burn.allWeightsZero, true)
  // A vector of the current epoch in the history is not a previous one.
  const sameEpoch: WeightVector = { ...good, epoch: 12 }
  t.equal(servedWeights(empty, [sameEpoch]).source, 'burn')
  t.equal(servedWeights(empty, [good, sameEpoch]).epoch, 10)
  // As many uids as weights, and at least one uid: otherwise the vector is not valid.
  const mismatched: WeightVector = { epoch: 11, uids: [1], weights: [0.5, 0.5], uint16Weights: [32767, 32767], formulaVersion: good.formulaVersion }
  t.equal(servedWeights(mismatched, []).source, 'burn')
  t.equal(servedWeights({ ...mismatched, epoch: 12 }, [mismatched]).source, 'burn')
  const noUids: WeightVector = { epoch: 12, uids: [], weights: [1], uint16Weights: [65535], formulaVersion: good.formulaVersion }
  t.equal(servedWeights(noUids, []).source, 'burn')
})
