// The allocation's edges, pinned with exact outputs: bad chunk counts and their messages, the rule
// identifier, zero scores in and out of the pool, the tie-breaks of the orderings after equal keys, and
// allocateRotated's fraction ties under different scores, in both orders (docs/formulas.md#allocation).
import t from 'tap'
import { allocateChunks, allocateRotated, allocateRecovery, eligibleCandidates, hamiltonCounts, rotatedOrder, scoreOrder, hashSeed } from '../../../actors/domain/index.ts'

const ids = (cs: Array<{ id: string }>): string[] => cs.map(c => c.id)

t.test('the rule identifier of every allocation', async t => {
  t.equal(allocateChunks(1, [{ id: 'a', score: 1 }]).rule, 'hamilton_largest_remainder_score_desc_key_asc_v1')
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

t.test('equal fractions under different scores: the higher score takes the leftover, in either position', async t => {
  // 2 chunks, scores 1 and 3: quotas ½ and 1½, equal fractional parts, one leftover.
  t.same(hamiltonCounts(2, [{ id: 'a', score: 1 }, { id: 'b', score: 3 }]), [{ id: 'a', count: 0 }, { id: 'b', count: 2 }])
  t.same(hamiltonCounts(2, [{ id: 'a', score: 3 }, { id: 'b', score: 1 }]), [{ id: 'a', count: 2 }, { id: 'b', count: 0 }])
  t.same(allocateRotated(2, [{ id: 'a', score: 1 }, { id: 'b', score: 3 }], ''), [{ id: 'b', chunkStart: 0, chunkEnd: 1, count: 2 }])
  t.same(allocateRotated(2, [{ id: 'a', score: 3 }, { id: 'b', score: 1 }], ''), [{ id: 'a', chunkStart: 0, chunkEnd: 1, count: 2 }])
  // Rotated by one ('a' hashes odd): b comes first, and still the higher score wins.
  t.same(allocateRotated(2, [{ id: 'a', score: 1 }, { id: 'b', score: 3 }], 'a'), [{ id: 'b', chunkStart: 0, chunkEnd: 1, count: 2 }])
  t.same(allocateRotated(2, [{ id: 'a', score: 3 }, { id: 'b', score: 1 }], 'a'), [{ id: 'a', chunkStart: 0, chunkEnd: 1, count: 2 }])
  // 4 chunks over scores 1, 1, 2 (quotas 1, 1, 2): no leftover, exact.
  t.same(allocateRotated(4, [{ id: 'a', score: 1 }, { id: 'b', score: 1 }, { id: 'c', score: 2 }], ''), [
    { id: 'a', chunkStart: 0, chunkEnd: 0, count: 1 }, { id: 'b', chunkStart: 1, chunkEnd: 1, count: 1 }, { id: 'c', chunkStart: 2, chunkEnd: 3, count: 2 }
  ])
  // 3 chunks over 1, 3, 1, 3 (quotas ⅜, 1⅛, ⅜, 1⅛): the leftover goes to a larger fraction (⅜), a lower
  // score, not to a higher score; of the two equal ones, to the first position.
  t.same(allocateRotated(3, [{ id: 'a', score: 1 }, { id: 'b', score: 3 }, { id: 'c', score: 1 }, { id: 'd', score: 3 }], ''), [
    { id: 'a', chunkStart: 0, chunkEnd: 0, count: 1 }, { id: 'b', chunkStart: 1, chunkEnd: 1, count: 1 }, { id: 'd', chunkStart: 2, chunkEnd: 2, count: 1 }
  ])
})

t.test('allocateRotated with every score zero: an equal split, the remainder to the first positions', async t => {
  const zero = [{ id: 'a', score: 0 }, { id: 'b', score: 0 }, { id: 'c', score: -2 }]
  t.same(allocateRotated(5, zero, ''), [
    { id: 'a', chunkStart: 0, chunkEnd: 1, count: 2 }, { id: 'b', chunkStart: 2, chunkEnd: 3, count: 2 }, { id: 'c', chunkStart: 4, chunkEnd: 4, count: 1 }
  ])
  // Rotated by 97 mod 3 = 1: b, c, a.
  t.same(allocateRotated(5, zero, 'a'), [
    { id: 'b', chunkStart: 0, chunkEnd: 1, count: 2 }, { id: 'c', chunkStart: 2, chunkEnd: 3, count: 2 }, { id: 'a', chunkStart: 4, chunkEnd: 4, count: 1 }
  ])
  t.same(allocateRotated(6, zero, ''), [
    { id: 'a', chunkStart: 0, chunkEnd: 1, count: 2 }, { id: 'b', chunkStart: 2, chunkEnd: 3, count: 2 }, { id: 'c', chunkStart: 4, chunkEnd: 5, count: 2 }
  ])
})
