import t from 'tap'
import { allocateChunks, allocateRotated, hamiltonCounts, allocateRecovery, eligibleCandidates, hashSeed, rotatedOrder, scoreOrder, seedUnit } from '../../../actors/domain/index.ts'

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

t.test('allocateRotated: every count within one of its quota, contiguous slices in the rotated order, the same for the same seed', async t => {
  // A small seeded generator: scores with ties, zeros and float noise; candidates in and out of key order.
  let s = 12345
  const rnd = (): number => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return s / 2 ** 32 }
  const pick = (): number => { const r = rnd(); return r < 0.25 ? 1 : r < 0.32 ? 2 : r < 0.39 ? 3 : r < 0.45 ? 0 : r < 0.5 ? 0.1 + 0.2 : Math.round(rnd() * 1000) / 1000 }
  let checked = 0
  for (let round = 0; round < 400; round++) {
    const n = 1 + Math.floor(rnd() * (round % 2 === 0 ? 120 : 6))
    const cands = Array.from({ length: n }, (_, i) => ({ id: `orch-${String(i).padStart(3, '0')}`, score: pick() }))
    if (round % 3 === 0) cands.reverse()
    const T = Math.floor(rnd() * (round % 5 === 0 ? 300 : 9))
    const seed = `t${round}/${round % 7}`
    const slices = allocateRotated(T, cands, seed)
    const sum = cands.reduce((a, c) => a + c.score, 0)
    const quota = new Map(cands.map(c => [c.id, sum > 0 ? c.score / sum * T : T / n]))
    const bad = slices.filter(sl => sl.count < Math.floor(quota.get(sl.id)! - 1e-9) || sl.count > Math.ceil(quota.get(sl.id)! + 1e-9))
    t.same(bad, [], `round ${round}: n ${n}, T ${T}: counts within one of the quotas`)
    const missing = cands.filter(c => quota.get(c.id)! >= 1 + 1e-9 && !slices.some(sl => sl.id === c.id))
    t.same(missing, [], `round ${round}: every quota of 1 or more gets chunks`)
    let next = 0
    for (const sl of slices) {
      if (sl.chunkStart !== next || sl.chunkEnd !== next + sl.count - 1 || sl.count < 1) t.fail(`round ${round}: slice ${JSON.stringify(sl)} after ${next}`)
      next += sl.count
    }
    t.equal(next, T, `round ${round}: the slices cover 0..T-1`)
    const order = rotatedOrder(cands, seed).map(c => c.id)
    const positions = slices.map(sl => order.indexOf(sl.id))
    t.same(positions, [...positions].sort((x, y) => x - y), `round ${round}: slices in the rotated order`)
    t.same(allocateRotated(T, [...cands].reverse(), seed), slices, `round ${round}: the input order does not matter`)
    checked++
  }
  t.equal(checked, 400)
  t.throws(() => allocateRotated(3, [], 's'), RangeError)
  t.throws(() => allocateRotated(3, [{ id: 'a', score: 1 }, { id: 'a', score: 2 }], 's'), RangeError)
  t.same(allocateRotated(0, [], 's'), [])
})

t.test('allocateRotated shares by routing score in expectation, whatever the size: one-chunk transfers do not all go to the top score', async t => {
  const cands = [{ id: 'a', score: 0.5 }, { id: 'b', score: 0.3 }, { id: 'c', score: 0.2 }]
  // The share of all chunks each took over 10,000 transfers, as far off its score share as it is.
  const offBy = (T: number): Record<string, number> => {
    const chunks: Record<string, number> = { a: 0, b: 0, c: 0 }
    for (let k = 0; k < 10_000; k++) for (const sl of allocateRotated(T, cands, `transfer-${k}/0`)) chunks[sl.id]! += sl.count
    return Object.fromEntries(cands.map(c => [c.id, Math.abs(chunks[c.id]! / (10_000 * T) - c.score)]))
  }
  // Largest remainders would give every one-chunk transfer to a (off by 0.5, 0.3, 0.2) and every
  // seven-chunk one 4/2/1 (off by 0.07, 0.01, 0.06). Three standard deviations at 10,000 draws: 0.015.
  for (const T of [1, 2, 7]) {
    const off = offBy(T)
    t.ok(Object.values(off).every(d => d <= 0.015), `${T} chunk(s): each orchestrator within 0.015 of its share (${JSON.stringify(off)})`)
  }
  // Two orchestrators at 3 : 1, one chunk each time: the small one takes a quarter.
  let low = 0
  for (let k = 0; k < 4000; k++) if (allocateRotated(1, [{ id: 'hi', score: 3 }, { id: 'lo', score: 1 }], `t-${k}/0`)[0]!.id === 'lo') low++
  t.ok(low > 4000 * 0.23 && low < 4000 * 0.27, `the 1-in-4 orchestrator took ${low} of 4000`)
})

t.test('seedUnit: in [0, 1), spread evenly, and not the rotation', async t => {
  const buckets = new Array<number>(10).fill(0)
  let sameAsRotation = 0
  for (let k = 0; k < 10_000; k++) {
    const seed = `transfer-${k}/0`
    const u = seedUnit(seed)
    if (!(u >= 0 && u < 1)) t.fail(`${seed}: ${u}`)
    buckets[Math.floor(u * 10)]!++
    if (Math.floor(u * 3) === hashSeed(seed) % 3) sameAsRotation++
  }
  t.ok(buckets.every(b => b > 900 && b < 1100), `tenths: ${buckets.join(' ')}`)
  t.ok(sameAsRotation > 3000 && sameAsRotation < 3700, `u's third agrees with the rotation's start ${sameAsRotation} times in 10,000 (a third: independent)`)
  t.equal(seedUnit(''), seedUnit(''), 'deterministic')
})
