// The data-plane heap setting (node/heap.ts): BWN_HEAP_GROWING_PERCENT is read strictly, a bad value
// is a configuration error (exit 2 from the CLI), and an empty or missing one means the default.
import t from 'tap'
import { heapGrowingPercent, HEAP_GROWING_PERCENT } from '../../node/heap.ts'

t.test('default, override, off', async (t) => {
  t.equal(heapGrowingPercent({}), HEAP_GROWING_PERCENT)
  t.equal(heapGrowingPercent({ BWN_HEAP_GROWING_PERCENT: '' }), HEAP_GROWING_PERCENT)
  t.equal(heapGrowingPercent({ BWN_HEAP_GROWING_PERCENT: '100' }), 100)
  t.equal(heapGrowingPercent({ BWN_HEAP_GROWING_PERCENT: '0' }), 0, '0 keeps V8\'s own growth')
})

t.test('bad values are configuration errors', async (t) => {
  for (const bad of ['-1', '1001', '1.5', 'lots', '1e9']) {
    t.throws(() => heapGrowingPercent({ BWN_HEAP_GROWING_PERCENT: bad }), { code: 'BWN_ERR_CONFIG' }, bad)
  }
})
