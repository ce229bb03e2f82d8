// The in-flight budget: reservations within the capacity run, the rest wait first come first served;
// releasing is idempotent; an aborted wait leaves the queue; a reservation over the capacity takes all.
import t from 'tap'
import { InflightBudget } from '../../../node/adapters/inflight-budget.ts'

const tick = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }

t.test('reserves within the capacity, queues the rest in order', async t => {
  const b = new InflightBudget(10)
  const r1 = await b.acquire(6)
  const order: string[] = []
  const p2 = b.acquire(6).then(r => { order.push('second'); return r })
  const p3 = b.acquire(1).then(r => { order.push('third'); return r })
  await tick()
  t.same(order, [], 'a small reservation does not overtake a waiting one')
  t.equal(b.used, 6)
  t.equal(b.waiting, 2)
  r1(); r1() // idempotent
  const [r2, r3] = await Promise.all([p2, p3])
  t.same(order, ['second', 'third'])
  t.equal(b.used, 7)
  r2(); r3()
  t.equal(b.used, 0)
})

t.test('an aborted wait leaves the queue and lets the next one in', async t => {
  const b = new InflightBudget(4)
  const r1 = await b.acquire(3)
  const controller = new AbortController()
  const big = b.acquire(4, controller.signal)
  const small = b.acquire(1)
  controller.abort(new Error('gone'))
  await t.rejects(big, { message: 'gone' })
  const r3 = await small
  t.equal(b.used, 4)
  r1(); r3()
  t.equal(b.used, 0)
  t.equal(b.waiting, 0)
  await t.rejects(b.acquire(1, AbortSignal.abort(new Error('already'))), { message: 'already' })
})

t.test('a reservation larger than the budget takes all of it; bad capacities are refused', async t => {
  const b = new InflightBudget(8)
  const r = await b.acquire(100)
  t.equal(b.used, 8)
  r()
  t.equal(b.used, 0)
  t.throws(() => new InflightBudget(0), RangeError)
  t.throws(() => new InflightBudget(1.5), RangeError)
})
