import t from 'tap'
import { VirtualClock, settle, installQuiescence, busyActorCount } from '../../sim/index.ts'
import { startSystem, stopActor, spawnSupervised, tell } from '../../actors/runtime.ts'
import { CountingLogger } from '../../sim/logger.ts'

t.test('events run in time order, ties in scheduling order; same-instant events wait for the next step', async t => {
  const clock = new VirtualClock(1000)
  const seen: string[] = []
  clock.setTimer(5, () => seen.push('b'))
  clock.setTimer(0, () => { seen.push('a'); clock.setTimer(0, () => seen.push('a2')) })
  clock.setTimer(5, () => seen.push('c'))
  const cancelled = clock.setTimer(1, () => seen.push('never'))
  cancelled.cancel()
  t.equal(clock.step(Infinity), 1)
  t.same(seen, ['a'])
  t.equal(clock.step(Infinity), 1)
  t.same(seen, ['a', 'a2'])
  t.equal(clock.now(), 1000)
  t.equal(clock.step(Infinity), 2)
  t.same(seen, ['a', 'a2', 'b', 'c'])
  t.equal(clock.now(), 1005)
  let ticks = 0
  const every = clock.every(10, () => { ticks++ })
  while (clock.step(1040) > 0);
  t.equal(ticks, 3)
  every.cancel()
  t.equal(clock.step(Infinity), 0)
  t.equal(clock.step(1000), 0, 'nothing past the limit')
})

t.test('periodic timers of the same period and phase share one queued event (batched timers)', async t => {
  const clock = new VirtualClock(0)
  const seen: string[] = []
  const a = clock.every(1000, () => seen.push('a'))
  clock.every(1000, () => seen.push('b'))
  const c = clock.every(1000, () => seen.push('c'))
  clock.setTimer(500, () => { clock.every(1000, () => seen.push('late')) }) // another phase: its own event
  t.equal(clock.pending, 2, 'one event for the three in phase, one for the timer')
  t.equal(clock.step(Infinity), 1)
  t.equal(clock.step(Infinity), 1, 'the group fires once for its three members')
  t.same(seen, ['a', 'b', 'c'], 'in the order they joined')
  c.cancel()
  while (clock.step(2000) > 0);
  t.same(seen, ['a', 'b', 'c', 'late', 'a', 'b'], 'a cancelled member leaves; the late timer keeps its phase')
  a.cancel()
  while (clock.step(3000) > 0);
  t.same(seen.slice(6), ['late', 'b'])
})

t.test('settle waits until chained actor messages are all handled', async t => {
  installQuiescence()
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const env = { clock: new VirtualClock(0), logger: new CountingLogger() }
  let handled = 0
  type M = { n: number }
  const ref = spawnSupervised<null, M>(system, 'chain', env, () => null, async (s, msg) => {
    handled++
    await Promise.resolve()
    if (msg.n > 0) tell(ref, { n: msg.n - 1 })
    return s
  })
  tell(ref, { n: 50 })
  t.ok(busyActorCount() > 0)
  await settle()
  t.equal(handled, 51)
  t.equal(busyActorCount(), 0)
})
