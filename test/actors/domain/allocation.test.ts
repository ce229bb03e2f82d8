import t from 'tap'
import { allocateChunks, allocateRotated, hamiltonCounts, allocateRecovery, eligibleCandidates, hashSeed, rotatedOrder, scoreOrder } from '../../../actors/domain/index.ts'

const counts = (r: Array<{ count: number }>): number[] => r.map(c => c.count)

t.test('Hamilton: quotas, floors, largest remainders', async t => {
  // quotas 5.0, 3.0, 2.0 exactly
  t.same(counts(hamiltonCounts(10, [{ id: 'a', score: 0.5 }, { id: 'b', score: 0.3 }, { id: 'c', score: 0.2 }])), [5, 3, 2])
  // T=7: quotas 3.5, 2.1, 1.4 → floors 3,2,1, one leftover to a (0.5)
  t.same(counts(hamiltonCounts(7, [{ id: 'a', score: 0.5 }, { id: 'b', score: 0.3 }, { id: 'c', score: 0.2 }])), [4, 2, 1])
  // equal fractions: score desc decides, then key asc
  t.same(counts(hamiltonCounts(2, [{ id: 'x', score: 1 }, { id: 'y', score: 1 }, { id: 'z', score: 1 }])), [1, 1, 0])
  t.same(counts(hamiltonCounts(2, [{ id: 'x', score: 1, key: 'k3' }, { id: 'y', score: 1, key: 'k1' }, { id: 'z', score: 1, key: 'k2' }])), [0, 1, 1])
  // float noise: 0.1 + 0.1 + 0.1 is not 0.3 but the split is still exact
  t.same(counts(hamiltonCounts(3, [{ id: 'a', score: 0.1 }, { id: 'b', score: 0.1 }, { id: 'c', score: 0.1 }])), [1, 1, 1])
})

t.test('zero total score: equal split, remainder to lowest keys; bad scores count as zero', async t => {
  t.same(counts(hamiltonCounts(5, [{ id: 'c', score: 0 }, { id: 'a', score: 0 }, { id: 'b', score: -1 }])), [1, 2, 2])
  t.same(counts(hamiltonCounts(4, [{ id: 'a', score: Number.NaN }, { id: 'b', score: 2 }])), [0, 4])
})

t.test('contiguous slices in candidate order; totals always match', async t => {
  const a = allocateChunks(10, [{ id: 'a', score: 1 }, { id: 'b', score: 0 }, { id: 'c', score: 3 }])
  // quotas 2.5 / 0 / 7.5: equal fractions, the leftover goes to the higher score
  t.same(a.slices, [{ id: 'a', chunkStart: 0, chunkEnd: 1, count: 2 }, { id: 'c', chunkStart: 2, chunkEnd: 9, count: 8 }])
  for (let T = 0; T < 60; T++) {
    const r = allocateChunks(T, [{ id: 'a', score: 0.37 }, { id: 'b', score: 0.21 }, { id: 'c', score: 0.42 }, { id: 'd', score: 1e-12 }])
    t.equal(r.counts.reduce((s, c) => s + c.count, 0), T)
  }
  t.same(allocateChunks(0, []).slices, [])
  t.throws(() => allocateChunks(3, []), RangeError)
  t.throws(() => allocateChunks(3, [{ id: 'a', score: 1 }, { id: 'a', score: 2 }]), RangeError)
})

t.test('recovery excludes given ids and splits the listed chunks', async t => {
  const cands = [{ id: 'a', score: 1 }, { id: 'b', score: 1 }, { id: 'c', score: 2 }]
  t.same(eligibleCandidates(cands, ['a']).map(c => c.id), ['b', 'c'])
  t.same(allocateRecovery([9, 3, 5, 3, 7], cands, ['c']), [{ id: 'a', chunkIndices: [3, 5] }, { id: 'b', chunkIndices: [7, 9] }])
  t.same(allocateRecovery([1], cands, ['a', 'b', 'c']), [])
})

t.test('seeded orders are deterministic', async t => {
  t.equal(hashSeed(''), 0)
  t.equal(hashSeed('ab'), (97 * 31 + 98) >>> 0)
  const cands = [{ id: 'c', score: 1 }, { id: 'a', score: 3 }, { id: 'b', score: 3 }]
  const start = hashSeed('transfer-1') % 3
  t.same(rotatedOrder(cands, 'transfer-1').map(c => c.id), ['a', 'b', 'c', 'a', 'b', 'c'].slice(start, start + 3))
  t.same(scoreOrder(cands).map(c => c.id), ['a', 'b', 'c'])
})

t.test('allocateRotated gives the slices of allocateChunks over rotatedOrder with positional keys', async t => {
  // A small seeded generator: scores with ties, zeros and float noise; candidates in and out of key order.
  let s = 12345
  const rnd = (): number => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return s / 2 ** 32 }
  // Small integers make equal fractional parts under different scores (1 and 3 of 4 over 2 chunks: ½ and
  // 1½), so the score tie-break is exercised, not only the positional one.
  const pick = (): number => { const r = rnd(); return r < 0.25 ? 1 : r < 0.32 ? 2 : r < 0.39 ? 3 : r < 0.45 ? 0 : r < 0.5 ? 0.1 + 0.2 : Math.round(rnd() * 1000) / 1000 }
  let compared = 0
  for (let round = 0; round < 400; round++) {
    const n = 1 + Math.floor(rnd() * (round % 2 === 0 ? 120 : 6))
    const cands = Array.from({ length: n }, (_, i) => ({ id: `orch-${String(i).padStart(3, '0')}`, score: pick() }))
    if (round % 3 === 0) cands.reverse()
    const T = Math.floor(rnd() * (round % 5 === 0 ? 300 : 9))
    const seed = `t${round}/${round % 7}`
    const expected = allocateChunks(T, rotatedOrder(cands, seed).map((c, i) => ({ ...c, key: String(i).padStart(6, '0') }))).slices
    t.same(allocateRotated(T, cands, seed), expected, `round ${round}: n ${n}, T ${T}`)
    compared++
  }
  t.equal(compared, 400)
  t.throws(() => allocateRotated(3, [], 's'), RangeError)
  t.throws(() => allocateRotated(3, [{ id: 'a', score: 1 }, { id: 'a', score: 2 }], 's'), RangeError)
  t.same(allocateRotated(0, [], 's'), [])
})
