// The data-plane heap settings (node/heap.ts): BWN_HEAP_GROWING_PERCENT and BWN_YOUNG_GENERATION_GROWTH
// are read strictly, a bad value is a configuration error (exit 2 from the CLI), and an empty or missing
// one means the default; releaseStartupHeap gives back the young generation that loading grew.
import t from 'tap'
import { getHeapSpaceStatistics } from 'node:v8'
import { heapGrowingPercent, HEAP_GROWING_PERCENT, youngGenerationGrowth, YOUNG_GENERATION_GROWTH, releaseStartupHeap } from '../../node/heap.ts'

t.test('default, override, off', async (t) => {
  t.equal(heapGrowingPercent({}), HEAP_GROWING_PERCENT)
  t.equal(heapGrowingPercent({ BWN_HEAP_GROWING_PERCENT: '' }), HEAP_GROWING_PERCENT)
  t.equal(heapGrowingPercent({ BWN_HEAP_GROWING_PERCENT: '100' }), 100)
  t.equal(heapGrowingPercent({ BWN_HEAP_GROWING_PERCENT: '0' }), 0, '0 keeps V8\'s own growth')
  t.equal(youngGenerationGrowth({}), YOUNG_GENERATION_GROWTH)
  t.equal(YOUNG_GENERATION_GROWTH, 1, 'the young generation keeps its start size by default')
  t.equal(youngGenerationGrowth({ BWN_YOUNG_GENERATION_GROWTH: ' ' }), YOUNG_GENERATION_GROWTH)
  t.equal(youngGenerationGrowth({ BWN_YOUNG_GENERATION_GROWTH: '2' }), 2)
  t.equal(youngGenerationGrowth({ BWN_YOUNG_GENERATION_GROWTH: '0' }), 0, '0 keeps V8\'s own growth')
})

t.test('bad values are configuration errors', async (t) => {
  for (const bad of ['-1', '1001', '1.5', 'lots', '1e9']) {
    t.throws(() => heapGrowingPercent({ BWN_HEAP_GROWING_PERCENT: bad }), { code: 'BWN_ERR_CONFIG' }, bad)
  }
  for (const bad of ['-1', '5', '1.5', 'big']) {
    t.throws(() => youngGenerationGrowth({ BWN_YOUNG_GENERATION_GROWTH: bad }), { code: 'BWN_ERR_CONFIG', message: /BWN_YOUNG_GENERATION_GROWTH must be an integer 0\.\.4/ }, bad)
  }
})

t.test('releaseStartupHeap shrinks a young generation that survivors grew', async (t) => {
  const youngMiB = (): number => getHeapSpaceStatistics().find(s => s.space_name === 'new_space')!.space_size / 1024 / 1024
  // This process runs with V8's own growth: objects that survive scavenges (as a node's modules and
  // start-up do) grow the young generation. Bounded: a few million small objects, at most 200,000 alive.
  let alive: Array<{ i: number, s: string }> = []
  for (let i = 0; i < 3_000_000 && youngMiB() < 16; i++) {
    alive.push({ i, s: `x${i}` })
    if (alive.length > 200_000) alive = []
  }
  alive = []
  const before = youngMiB()
  t.ok(before >= 8, `the young generation grew (${before} MiB)`)
  await releaseStartupHeap()
  const after = youngMiB()
  t.ok(after <= before / 4, `and shrank once released: ${before} → ${after} MiB`)
})
