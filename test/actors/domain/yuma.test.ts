// Yuma-style consensus (actors/domain/yuma.ts), against the worked examples of docs/formulas.md#yuma and
// each step's edges: normalization, the stake-weighted κ-quantile, clipping, ranks, zero stakes and
// zero vectors. Exact bigint arithmetic, so every expectation is exact.
import t from 'tap'
import { yumaConsensus, kappaQuantile, kappaHolds, YUMA_SCALE, YUMA_KAPPA_PARTS } from '../../../actors/domain/yuma.ts'

const ONE = YUMA_SCALE
const byUid = (rows: ReturnType<typeof yumaConsensus>): Record<number, { consensus: bigint, rank: bigint }> =>
  Object.fromEntries(rows.map(r => [r.uid, { consensus: r.consensus, rank: r.rank }]))

t.test('kappaHolds: at least κ of the stake, exactly; nothing of no stake', async t => {
  t.equal(kappaHolds(50n, 100n), true, 'exactly half holds')
  t.equal(kappaHolds(49n, 100n), false)
  t.equal(kappaHolds(100n, 100n), true)
  t.equal(kappaHolds(0n, 0n), false, 'no stake at all: nothing holds')
  t.equal(kappaHolds(1n, 3n, ONE / 3n), true, 'another κ')
  t.equal(YUMA_KAPPA_PARTS, ONE / 2n)
})

t.test('kappaQuantile: the largest value whose supporters hold κ of the stake', async t => {
  const cmp = (a: number, b: number): number => a - b
  t.equal(kappaQuantile([{ value: 3, stake: 40n }, { value: 2, stake: 20n }, { value: 1, stake: 40n }], 100n, cmp), 2, '3 has 40 %, 3 or 2 has 60 %')
  t.equal(kappaQuantile([{ value: 1, stake: 40n }, { value: 3, stake: 40n }, { value: 2, stake: 20n }], 100n, cmp), 2, 'the order of the entries does not matter')
  t.equal(kappaQuantile([{ value: 5, stake: 50n }, { value: 1, stake: 50n }], 100n, cmp), 5, 'exactly half supports the higher value')
  t.equal(kappaQuantile([{ value: 5, stake: 30n }], 100n, cmp), undefined, 'the entries together do not reach κ of the total')
  t.equal(kappaQuantile([{ value: 9, stake: 0n }, { value: 1, stake: 60n }], 100n, cmp), 1, 'an entry of no stake supports nothing')
  t.equal(kappaQuantile([], 100n, cmp), undefined)
})

t.test('the worked example: 90 % of the stake on UID 1, 10 % on UID 2', async t => {
  const r = byUid(yumaConsensus([{ stake: 900n, uids: [1], weights: [65535] }, { stake: 100n, uids: [2], weights: [65535] }]))
  t.same(r, { 1: { consensus: ONE, rank: ONE * 9n / 10n }, 2: { consensus: 0n, rank: 0n } }, 'UID 1 keeps 90 %, UID 2 is clipped to nothing: 10 % is burned')
})

t.test('normalization, clipping and ranks on three validators', async t => {
  // A (50): UID 1 ¾, UID 2 ¼. B (30): UID 1 ½, UID 2 ½. C (20): UID 2 only.
  const rows = yumaConsensus([
    { stake: 50n, uids: [1, 2], weights: [3, 1] },
    { stake: 30n, uids: [2, 1], weights: [500, 500] },
    { stake: 20n, uids: [2], weights: [7] }
  ])
  t.same(rows.map(r => r.uid), [1, 2], 'UIDs ascending')
  const r = byUid(rows)
  // UID 1: A ¾ (50), B ½ (30), C 0 (20). ≥ ¾: 50 % → holds; so C₁ = ¾.
  t.equal(r[1]!.consensus, ONE * 3n / 4n)
  // Clipped: A ¾, B ½, C 0 → (50·¾ + 30·½) / 100 = 0.525.
  t.equal(r[1]!.rank, ONE * 525n / 1000n)
  // UID 2: C 1 (20), B ½ (30), A ¼ (50). ≥ 1: 20 %; ≥ ½: 50 % → C₂ = ½.
  t.equal(r[2]!.consensus, ONE / 2n)
  // Clipped: A ¼, B ½, C ½ (from 1) → (50·¼ + 30·½ + 20·½) / 100 = 0.375.
  t.equal(r[2]!.rank, ONE * 375n / 1000n)
  t.ok(r[1]!.rank + r[2]!.rank <= ONE, 'ranks sum to at most 1 (here 0.9: C\'s weight above consensus is burned)')
})

t.test('a minority that agrees with nobody moves nothing; the same weights from a majority do', async t => {
  const honest = { stake: 1000n, uids: [1, 2], weights: [1, 1] }
  const small = { stake: 1n, uids: [2], weights: [1] }
  const before = byUid(yumaConsensus([honest, { ...honest, stake: 1000n }]))
  const withSmall = byUid(yumaConsensus([honest, { ...honest, stake: 1000n }, small]))
  t.equal(withSmall[1]!.consensus, before[1]!.consensus, 'UID 1\'s consensus is unmoved by 1 of 2001 stake')
  t.equal(withSmall[2]!.consensus, before[2]!.consensus)
  const majority = byUid(yumaConsensus([honest, { stake: 1000n, uids: [2], weights: [1] }, { stake: 1000n, uids: [2], weights: [1] }]))
  t.equal(majority[2]!.consensus, ONE, 'two of three equal stakes all on UID 2: its consensus is 1')
  t.equal(majority[1]!.consensus, 0n, 'and UID 1, supported by a third, is clipped to 0')
})

t.test('zero stakes and zero vectors', async t => {
  t.same(yumaConsensus([]), [], 'no vectors: no ranks')
  t.same(yumaConsensus([{ stake: 10n, uids: [1], weights: [0] }]), [], 'a vector summing to 0 is ignored')
  // Every stake 0 (a chain without stake): each vector counts as one equal stake.
  const equal = byUid(yumaConsensus([{ stake: 0n, uids: [1], weights: [1] }, { stake: 0n, uids: [1, 2], weights: [1, 1] }]))
  // UID 1: 1 and ½; exactly half the votes give it 1, so C₁ = 1 and R₁ = (1 + ½) / 2. UID 2: 0 and ½.
  t.same(equal, { 1: { consensus: ONE, rank: ONE * 3n / 4n }, 2: { consensus: ONE / 2n, rank: ONE / 4n } }, 'two votes of equal weight')
  // Some stake: a vector with none counts for nothing, and does not make the others equal.
  const mixed = byUid(yumaConsensus([{ stake: 0n, uids: [2], weights: [1] }, { stake: 5n, uids: [1], weights: [1] }]))
  t.same(mixed, { 1: { consensus: ONE, rank: ONE } }, 'the staked vector alone decides; UID 2 is not even listed')
  t.same(byUid(yumaConsensus([{ stake: -3n, uids: [1], weights: [1] }, { stake: 4n, uids: [2], weights: [1] }])), { 2: { consensus: ONE, rank: ONE } }, 'a negative stake counts as none')
  t.same(yumaConsensus([{ stake: 1n, uids: [1, 2], weights: [1, 0] }]).map(r => r.uid), [1], 'a UID given 0 is not listed')
})

t.test('κ as a parameter: a stricter κ clips more', async t => {
  const vectors = [{ stake: 60n, uids: [1], weights: [1] }, { stake: 40n, uids: [2], weights: [1] }]
  t.equal(byUid(yumaConsensus(vectors))[1]!.consensus, ONE, '60 % ≥ ½')
  t.same(yumaConsensus(vectors, ONE * 7n / 10n).find(r => r.uid === 1), { uid: 1, consensus: 0n, rank: 0n }, '60 % < 70 %: clipped to 0')
})
