import t from 'tap'
import {
  computeEpochWeights, epochSummary, servedWeights, weightVector, toUint16, rawWeight, tierOfRank,
  EPOCH_WEIGHTS_FORMULA_VERSION, type WeightCandidate
} from '../../../actors/domain/index.ts'

const cand = (uid: number, mib: number, penalty = 1, score = 0.5): WeightCandidate => ({ uid, hotkey: `hk${String(uid).padStart(4, '0')}`, verifiedMib: mib, penaltyMultiplier: penalty, score })
const rankSum = (ws: number[]): number => ws.reduce((a, w) => a + w, 0)
const pct = (w: number): string => (w * 100).toFixed(4)

t.test('200 equal orchestrators: documented per-UID shares', async t => {
  const r = computeEpochWeights(Array.from({ length: 200 }, (_, i) => cand(i + 1, 1000)))
  t.equal(r.formulaVersion, EPOCH_WEIGHTS_FORMULA_VERSION)
  const byTier = (tier: string): string[] => [...new Set(r.rows.filter(x => x.tier === tier).map(x => pct(x.weight)))]
  t.same(byTier('A'), ['1.6667'])
  t.same(byTier('B'), ['1.1667'])
  t.same(byTier('C'), ['0.3333'])
  t.same(byTier('D'), ['0.1333'])
  t.same(byTier('E'), ['0.0125'])
  t.equal(r.rows.filter(x => x.tier === 'E').length, 80)
  t.equal(rankSum(r.rows.map(x => x.weight)), 1, 'Σ is exactly 1')
  t.same(r.rows.slice(0, 3).map(x => x.uid), [1, 2, 3], 'equal raw, score and MiB: uid asc')
  t.equal(r.rows[0].uint16Weight, Math.floor((0.5 / 30) * 65535))
})

t.test('empty and zero-raw tiers roll into A', async t => {
  // 40 candidates: A = 30, B = 10, C/D/E empty → A gets 50+10+4+1 = 65 %
  const r = computeEpochWeights(Array.from({ length: 40 }, (_, i) => cand(i + 1, 100)))
  t.same(r.effectiveBuckets, { A: 0.65, B: 0.35, C: 0, D: 0, E: 0 })
  t.equal(pct(r.rows[0].weight), (65 / 30).toFixed(4))
  t.equal(pct(r.rows[35].weight), (35 / 10).toFixed(4))
  t.equal(rankSum(r.rows.map(x => x.weight)), 1)
  // 45 candidates, the last 15 with 0 MiB: tier B exists but has zero raw → every bucket rolls into A
  const z = computeEpochWeights([...Array.from({ length: 30 }, (_, i) => cand(i + 1, 10)), ...Array.from({ length: 15 }, (_, i) => cand(100 + i, 0))])
  t.same(z.effectiveBuckets.A, 1)
  t.ok(z.rows.slice(30).every(x => x.weight === 0 && x.uint16Weight === 0), 'zero raw never gets weight')
  t.equal(rankSum(z.rows.map(x => x.weight)), 1)
})

t.test('weights within a tier follow raw; penalty scales raw; zero raw gets nothing', async t => {
  const r = computeEpochWeights([cand(1, 300), cand(2, 100), cand(3, 100, 0.5), cand(4, 500, 0), cand(5, Number.NaN)])
  t.same(r.rows.map(x => x.uid), [1, 2, 3, 4, 5])
  t.same(r.rows.map(x => x.rawWeight), [300, 100, 50, 0, 0])
  t.equal(r.rows[0].weight, 300 / 450)
  t.equal(r.rows[1].weight, 100 / 450)
  t.ok(Math.abs(r.rows[2].weight - 50 / 450) < 1e-15)
  t.equal(r.rows[3].weight, 0)
  t.equal(rankSum(r.rows.map(x => x.weight)), 1)
  t.equal(rawWeight(-5, 1), 0)
  t.equal(rawWeight(5, Infinity), 0)
})

t.test('tie-breaks: score desc, MiB desc, uid asc with nulls last, hotkey', async t => {
  const rows = computeEpochWeights([
    { uid: 9, hotkey: 'z', verifiedMib: 100, penaltyMultiplier: 1, score: 0.1 },
    { uid: 1, hotkey: 'y', verifiedMib: 200, penaltyMultiplier: 0.5, score: 0.1 },
    { uid: null, hotkey: 'a', verifiedMib: 100, penaltyMultiplier: 1, score: 0.9 },
    { uid: null, hotkey: 'b', verifiedMib: 100, penaltyMultiplier: 1, score: 0.1 },
    { uid: 5, hotkey: 'c', verifiedMib: 100, penaltyMultiplier: 1, score: 0.1 }
  ]).rows
  t.same(rows.map(r => r.hotkey), ['a', 'y', 'c', 'z', 'b'])
})

t.test('Σ is exactly 1 for assorted fleets', async t => {
  let x = 12345
  const next = (): number => { x = (x * 1103515245 + 12345) % 2147483648; return x / 2147483648 }
  for (let trial = 0; trial < 200; trial++) {
    const n = 1 + Math.floor(next() * 250)
    const r = computeEpochWeights(Array.from({ length: n }, (_, i) => cand(i, Math.floor(next() * 5000), next() < 0.1 ? 0 : next(), next())))
    const sum = rankSum(r.rows.map(w => w.weight))
    if (r.allWeightsZero) t.equal(sum, 0)
    else t.equal(sum, 1, `trial ${trial}, n=${n}`)
    t.ok(r.rows.every(w => w.weight >= 0))
  }
})

t.test('all zero when Σraw is 0 or tier A has no raw', async t => {
  t.ok(computeEpochWeights([]).allWeightsZero)
  t.ok(computeEpochWeights([cand(1, 0), cand(2, 0)]).allWeightsZero)
  const r = computeEpochWeights([cand(1, 10, 0)])
  t.ok(r.allWeightsZero)
  t.same(r.rows.map(x => x.weight), [0])
})

t.test('uint16 conversion', async t => {
  t.equal(toUint16(1), 65535)
  t.equal(toUint16(0.5), 32767)
  t.equal(toUint16(2), 65535)
  t.equal(toUint16(-1), 0)
  t.equal(toUint16(Number.NaN), 0)
  const v = weightVector(7, computeEpochWeights([cand(3, 30), cand(1, 10), { uid: null, hotkey: 'x', verifiedMib: 5, penaltyMultiplier: 1, score: 0 }]))
  t.same(v.uids, [1, 3])
  t.same(v.uint16Weights, [toUint16(10 / 45), toUint16(30 / 45)])
  t.equal(tierOfRank(30), 'A')
  t.equal(tierOfRank(31), 'B')
  t.equal(tierOfRank(121), 'E')
})

t.test('served vector: current, else last valid non-zero, else burn to UID 0', async t => {
  const good = weightVector(10, computeEpochWeights([cand(1, 10), cand(2, 20)]))
  const empty = weightVector(12, computeEpochWeights([cand(1, 0)]))
  t.equal(servedWeights(good, []).source, 'epoch_summary')
  const s = servedWeights(empty, [weightVector(8, computeEpochWeights([cand(4, 1)])), good, weightVector(13, computeEpochWeights([cand(5, 1)]))])
  t.equal(s.source, 'last_valid_nonzero')
  t.equal(s.epoch, 10)
  t.equal(s.currentEpoch, 12)
  t.same(s.uids, [1, 2])
  const burn = servedWeights(empty, [])
  t.same({ source: burn.source, uids: burn.uids, weights: burn.weights, uint16: burn.uint16Weights }, { source: 'burn', uids: [0], weights: [1], uint16: [65535] })
})

t.test('epoch summary counts', async t => {
  const s = epochSummary(17925, [cand(1, 100), cand(2, 0), cand(3, 50, 0.5)])
  t.equal(s.epoch, 17925)
  t.equal(s.expectedOrchestratorCount, 3)
  t.equal(s.contributingOrchestratorCount, 2)
  t.equal(s.sumFinalShare, 1)
  t.equal(s.sumRawWeight, 125)
  t.equal(s.sumVerifiedMib, 150)
  t.equal(s.orchestrators[0].finalShare, 100 / 125)
  const zero = epochSummary(1, [cand(1, 0)])
  t.equal(zero.sumFinalShare, 0)
  t.equal(zero.contributingOrchestratorCount, 0)
  t.ok(zero.allWeightsZero)
})
