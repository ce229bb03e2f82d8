// One log line per key per period, whatever a peer provokes (node/log-every.ts).
import t from 'tap'
import { logEvery } from '../../node/log-every.ts'

t.test('once per key per period; other keys apart; bounded', async t => {
  const log = logEvery(60_000, 2)
  t.same([log('a', 0), log('a', 59_999), log('b', 1), log('b', 2)], [true, false, true, false])
  t.ok(log('a', 60_000), 'a period later: again')
  t.notOk(log('a', 60_001))
  // Two keys remembered at most: a third clears the memory instead of growing it, so a forgotten key may
  // log again early (a line more, never unbounded memory).
  t.ok(log('c', 60_002))
  t.ok(log('d', 60_003), 'a third key')
  t.ok(log('a', 60_004), 'a and c forgotten')
})
