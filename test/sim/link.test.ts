// A worker's link in the simulator (sim/world.ts SimLink): moves in flight share it equally, a capped
// move leaves the rest to the others, and a move ending or cancelled hands its share on.
import t from 'tap'
import { VirtualClock } from '../../sim/clock.ts'
import { SimLink } from '../../sim/world.ts'

const MB = 1_000_000 // bytes; 8 Mbit
/** Runs every event due, instant by instant, until none is left. */
function run (clock: VirtualClock): void { while (clock.step(Infinity) > 0) { /* next instant */ } }

t.test('one flow alone moves at the link rate', async t => {
  const clock = new VirtualClock(0)
  const link = new SimLink(clock, 80) // 80 Mbit/s = 10 MB/s
  let ended = -1
  const f = link.add(10 * MB, Infinity, () => { ended = clock.now() })
  run(clock)
  t.equal(ended, 1000, '10 MB at 10 MB/s: 1 s')
  t.equal(f.through(), 10 * MB)
})

t.test('four flows share it: each takes four times as long, all end together, none is faster', async t => {
  const clock = new VirtualClock(0)
  const link = new SimLink(clock, 80)
  const ends: number[] = []
  const flows = [0, 1, 2, 3].map(() => link.add(10 * MB, Infinity, () => ends.push(clock.now())))
  clock.step(500) // nothing due yet: look half a second in
  clock.advanceTo(500)
  t.same(flows.map(f => f.through()), [1.25 * MB, 1.25 * MB, 1.25 * MB, 1.25 * MB], 'a quarter of 10 MB/s each')
  run(clock)
  t.same(ends, [4000, 4000, 4000, 4000])
})

t.test('a flow that ends hands its share to the rest', async t => {
  const clock = new VirtualClock(0)
  const link = new SimLink(clock, 80)
  const ends: Record<string, number> = {}
  link.add(5 * MB, Infinity, () => { ends.short = clock.now() })
  link.add(10 * MB, Infinity, () => { ends.long = clock.now() })
  run(clock)
  t.equal(ends.short, 1000, 'both at 5 MB/s until the short one is through')
  t.equal(ends.long, 1500, 'then the long one at 10 MB/s: every byte at the link rate, the link never idles')
})

t.test('a capped flow (a slow destination stream) leaves the rest of the link to the others', async t => {
  const clock = new VirtualClock(0)
  const link = new SimLink(clock, 80)
  const ends: Record<string, number> = {}
  link.add(2 * MB, 16, () => { ends.capped = clock.now() }) // 2 MB/s at most
  link.add(8 * MB, Infinity, () => { ends.free = clock.now() })
  run(clock)
  t.equal(ends.capped, 1000, 'the capped flow at its 2 MB/s')
  t.equal(ends.free, 1000, 'the other at the 8 MB/s left, not at half the link')
})

t.test('a cancelled flow stops and its share goes back', async t => {
  const clock = new VirtualClock(0)
  const link = new SimLink(clock, 80)
  let ended = -1
  let cancelledEnded = false
  const a = link.add(10 * MB, Infinity, () => { cancelledEnded = true })
  link.add(10 * MB, Infinity, () => { ended = clock.now() })
  clock.advanceTo(1000) // 5 MB each so far
  a.cancel()
  t.equal(a.through(), 5 * MB, 'what it moved before the cancel')
  run(clock)
  t.notOk(cancelledEnded, 'a cancelled flow never ends')
  t.equal(ended, 1500, 'the other: 5 MB at 5 MB/s, then 5 MB at 10 MB/s')
})
