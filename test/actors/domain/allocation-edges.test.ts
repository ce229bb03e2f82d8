// The allocation's edges, pinned with exact outputs: bad chunk counts and their messages, the rule
// identifier, zero scores in and out of the pool, the tie-breaks of the orderings after equal keys, and
// allocateRotated's worked examples (docs/formulas.md#allocation).
import t from 'tap'
import { allocateChunks, allocateRotated, allocateRecovery, eligibleCandidates, hamiltonCounts, rotatedOrder, scoreOrder, hashSeed, seedUnit, ROUTED_ALLOCATION_RULE } from '../../../actors/domain/index.ts'

const ids = (cs: Array<{ id: string }>): string[] => cs.map(c => c.id)

t.test('the rule identifier of every allocation', async t => {
  t.equal(allocateChunks(1, [{ id: 'a', score: 1 }]).rule, 'hamilton_largest_remainder_score_desc_key_asc_v1')
  t.equal(ROUTED_ALLOCATION_RULE, 'quota_floor_sampled_remainder_by_routing_score_v2', 'the coordinator\'s, in every stored plan')
})

t.test('bad chunk counts throw a RangeError naming the count', async t => {
  const one = [{ id: 'a', score: 1 }]
  for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
    t.throws(() => hamiltonCounts(bad, one), { name: 'RangeError', message: `bad chunk count ${bad}` }, `hamiltonCounts(${bad})`)
    t.throws(() => allocateChunks(bad, one), { name: 'RangeError', message: `bad chunk count ${bad}` }, `allocateChunks(${bad})`)
    t.throws(() => allocateRotated(bad, one, 's'), { name: 'RangeError', message: `bad chunk count ${bad}` }, `allocateRotated(${bad})`)
  }
  // 0 chunks is a count, not an error: every candidate gets none.
  t.same(hamiltonCounts(0, one), [{ id: 'a', count: 0 }])
  t.same(allocateRotated(0, one, 's'), [])
})

t.test('no candidates and duplicate ids: the messages', async t => {
  t.throws(() => hamiltonCounts(1, []), { name: 'RangeError', message: 'no candidates to allocate chunks to' })
  t.throws(() => allocateRotated(1, [], 's'), { name: 'RangeError', message: 'no candidates to allocate chunks to' })
  t.throws(() => hamiltonCounts(2, [{ id: 'b', score: 1 }, { id: 'a', score: 1 }, { id: 'b', score: 2 }]), { name: 'RangeError', message: 'duplicate candidate id b' })
  // In key order and out of it (the second is sorted first).
  t.throws(() => allocateRotated(2, [{ id: 'a', score: 1 }, { id: 'b', score: 1 }, { id: 'b', score: 2 }], 's'), { name: 'RangeError', message: 'duplicate candidate id b' })
  t.throws(() => allocateRotated(2, [{ id: 'c', score: 1 }, { id: 'a', score: 1 }, { id: 'c', score: 2 }], 's'), { name: 'RangeError', message: 'duplicate candidate id c' })
})

t.test('eligibility: zero, negative and non-finite scores leave the pool unless kept', async t => {
  const cands = [{ id: 'z', score: 0 }, { id: 'p', score: 2 }, { id: 'n', score: -1 }, { id: 'x', score: Number.NaN }, { id: 'q', score: 1e-300 }, { id: 'i', score: Number.POSITIVE_INFINITY }]
  t.same(ids(eligibleCandidates(cands, [])), ['p', 'q'])
  t.same(ids(eligibleCandidates(cands, [], {})), ['p', 'q'])
  t.same(ids(eligibleCandidates(cands, [], { keepZeroScores: false })), ['p', 'q'])
  t.same(ids(eligibleCandidates(cands, ['p'], { keepZeroScores: true })), ['z', 'n', 'x', 'q', 'i'])
})

t.test('recovery keeps zero-score candidates: an equal split, the remainder to the lowest keys', async t => {
  // 5 chunks over 3 candidates scoring 0: quotas 5/3, floors 1, two leftovers to a and b.
  const cands = [{ id: 'a', score: 0 }, { id: 'b', score: 0 }, { id: 'c', score: -1 }]
  t.same(allocateRecovery([10, 4, 2, 8, 6], cands, []), [
    { id: 'a', chunkIndices: [2, 4] }, { id: 'b', chunkIndices: [6, 8] }, { id: 'c', chunkIndices: [10] }
  ])
  t.same(allocateRecovery([3], cands, ['a', 'b']), [{ id: 'c', chunkIndices: [3] }])
  t.same(allocateRecovery([], cands, []), [])
})

t.test('rotatedOrder: keys first, ids after equal keys, whatever the input order', async t => {
  t.equal(hashSeed(''), 0, 'the empty seed does not rotate')
  t.same(ids(rotatedOrder([{ id: 'a', score: 1, key: '2' }, { id: 'b', score: 1, key: '1' }], '')), ['b', 'a'])
  t.same(ids(rotatedOrder([{ id: 'a', score: 1, key: 'k' }, { id: 'b', score: 1, key: 'k' }], '')), ['a', 'b'])
  t.same(ids(rotatedOrder([{ id: 'b', score: 1, key: 'k' }, { id: 'a', score: 1, key: 'k' }], '')), ['a', 'b'])
  const mixed = [{ id: 'd', score: 0, key: 'k1' }, { id: 'a', score: 0, key: 'k2' }, { id: 'c', score: 0, key: 'k1' }, { id: 'b', score: 0, key: 'k0' }]
  t.same(ids(rotatedOrder(mixed, '')), ['b', 'c', 'd', 'a'])
  // 'a' hashes to 97: a rotation by 97 mod 4 = 1.
  t.same(ids(rotatedOrder(mixed, 'a')), ['c', 'd', 'a', 'b'])
  t.same(rotatedOrder([], 'a'), [])
  // 150 ids in reverse order (beyond the runs a short sort sees) come out ascending.
  const many = Array.from({ length: 150 }, (_, i) => ({ id: `w${String(149 - i).padStart(3, '0')}`, score: 1 }))
  t.same(ids(rotatedOrder(many, '')), Array.from({ length: 150 }, (_, i) => `w${String(i).padStart(3, '0')}`))
})

t.test('scoreOrder: score desc, then key asc, then id asc', async t => {
  const cands = [
    { id: 'a', score: 1, key: 'k0' },
    { id: 'b', score: 2, key: 'k9' },
    { id: 'c', score: 2, key: 'k1' },
    { id: 'd', score: 2, key: 'k1' },
    { id: 'e', score: 0, key: 'k0' },
    { id: 'f', score: -3, key: 'a' },
    { id: 'g', score: 5 }
  ]
  t.same(ids(scoreOrder(cands)), ['g', 'c', 'd', 'b', 'a', 'f', 'e'])
  t.same(ids(scoreOrder([...cands].reverse())), ['g', 'c', 'd', 'b', 'a', 'f', 'e'])
  // Equal scores and keys: the id decides, in either input order.
  t.same(ids(scoreOrder([{ id: 'y', score: 1, key: 'k' }, { id: 'x', score: 1, key: 'k' }])), ['x', 'y'])
  t.same(ids(scoreOrder([{ id: 'x', score: 1, key: 'k' }, { id: 'y', score: 1, key: 'k' }])), ['x', 'y'])
  // A higher score ahead of a lower key and a lower id.
  t.same(ids(scoreOrder([{ id: 'a', score: 1, key: 'a' }, { id: 'b', score: 3, key: 'b' }])), ['b', 'a'])
  t.same(ids(scoreOrder([{ id: 'b', score: 3, key: 'b' }, { id: 'a', score: 1, key: 'a' }])), ['b', 'a'])
})

t.test('hamiltonCounts: equal fractions under different scores, the higher score takes the leftover, in either position', async t => {
  // 2 chunks, scores 1 and 3: quotas ½ and 1½, equal fractional parts, one leftover.
  t.same(hamiltonCounts(2, [{ id: 'a', score: 1 }, { id: 'b', score: 3 }]), [{ id: 'a', count: 0 }, { id: 'b', count: 2 }])
  t.same(hamiltonCounts(2, [{ id: 'a', score: 3 }, { id: 'b', score: 1 }]), [{ id: 'a', count: 2 }, { id: 'b', count: 0 }])
})

t.test('allocateRotated: the worked examples of docs/formulas.md#allocation', async t => {
  const abc = [{ id: 'a', score: 0.5 }, { id: 'b', score: 0.3 }, { id: 'c', score: 0.2 }]
  // T = 7: quotas 3.5, 2.1, 1.4, floors 3/2/1, one leftover over the fractions 0.5, 0.1, 0.4.
  // Seed '': no rotation (a, b, c: a [0, 0.5), b [0.5, 0.6), c [0.6, 1)), u = 0.5734: b.
  t.equal(seedUnit('').toFixed(4), '0.5734')
  t.same(allocateRotated(7, abc, ''), [
    { id: 'a', chunkStart: 0, chunkEnd: 2, count: 3 }, { id: 'b', chunkStart: 3, chunkEnd: 5, count: 3 }, { id: 'c', chunkStart: 6, chunkEnd: 6, count: 1 }
  ])
  // Seed 'b': rotated by 98 mod 3 = 2 (c [0, 0.4), a [0.4, 0.9), b [0.9, 1)), u = 0.3504: c.
  t.equal(seedUnit('b').toFixed(4), '0.3504')
  t.same(allocateRotated(7, abc, 'b'), [
    { id: 'c', chunkStart: 0, chunkEnd: 1, count: 2 }, { id: 'a', chunkStart: 2, chunkEnd: 4, count: 3 }, { id: 'b', chunkStart: 5, chunkEnd: 6, count: 2 }
  ])
  // One chunk, seed 'c' (no rotation), u = 0.1870: a; seed 'e' (c, a, b: c [0, 0.2), a [0.2, 0.7), b [0.7, 1)), u = 0.7880: b.
  t.same(allocateRotated(1, abc, 'c'), [{ id: 'a', chunkStart: 0, chunkEnd: 0, count: 1 }])
  t.same(allocateRotated(1, abc, 'e'), [{ id: 'b', chunkStart: 0, chunkEnd: 0, count: 1 }])
  // Two leftovers: 3 chunks over 1, 3, 1, 3 (quotas ⅜, 1⅛, ⅜, 1⅛; floors 0/1/0/1; fractions ⅜, ⅛, ⅜, ⅛),
  // seed '' (no rotation), points 0.5734 and 1.5734 over a [0, ⅜), b [⅜, ½), c [½, ⅞), d [⅞, 1).
  t.same(allocateRotated(3, [{ id: 'a', score: 1 }, { id: 'b', score: 3 }, { id: 'c', score: 1 }, { id: 'd', score: 3 }], ''), [
    { id: 'b', chunkStart: 0, chunkEnd: 0, count: 1 }, { id: 'c', chunkStart: 1, chunkEnd: 1, count: 1 }, { id: 'd', chunkStart: 2, chunkEnd: 2, count: 1 }
  ])
  // 4 chunks over scores 1, 1, 2 (quotas 1, 1, 2): no leftover, exact.
  t.same(allocateRotated(4, [{ id: 'a', score: 1 }, { id: 'b', score: 1 }, { id: 'c', score: 2 }], ''), [
    { id: 'a', chunkStart: 0, chunkEnd: 0, count: 1 }, { id: 'b', chunkStart: 1, chunkEnd: 1, count: 1 }, { id: 'c', chunkStart: 2, chunkEnd: 3, count: 2 }
  ])
})

t.test('allocateRotated with every score zero: an equal split, the remainder sampled like any other', async t => {
  const zero = [{ id: 'a', score: 0 }, { id: 'b', score: 0 }, { id: 'c', score: -2 }]
  // Quotas 5/3 each: floors 1, fractions ⅔ (a [0, ⅔), b [⅔, 1⅓), c [1⅓, 2)); points 0.5734 and 1.5734: a and c.
  t.same(allocateRotated(5, zero, ''), [
    { id: 'a', chunkStart: 0, chunkEnd: 1, count: 2 }, { id: 'b', chunkStart: 2, chunkEnd: 2, count: 1 }, { id: 'c', chunkStart: 3, chunkEnd: 4, count: 2 }
  ])
  // Rotated by 97 mod 3 = 1: b, c, a; points 0.6404 and 1.6404: b and a.
  t.same(allocateRotated(5, zero, 'a'), [
    { id: 'b', chunkStart: 0, chunkEnd: 1, count: 2 }, { id: 'c', chunkStart: 2, chunkEnd: 2, count: 1 }, { id: 'a', chunkStart: 3, chunkEnd: 4, count: 2 }
  ])
  t.same(allocateRotated(6, zero, ''), [
    { id: 'a', chunkStart: 0, chunkEnd: 1, count: 2 }, { id: 'b', chunkStart: 2, chunkEnd: 3, count: 2 }, { id: 'c', chunkStart: 4, chunkEnd: 5, count: 2 }
  ])
})
