// The Random port's sources: the seeded one replays, and both give version-4 UUIDs.
import t from 'tap'
import { randomFrom, systemRandom, randomOf } from '../../actors/random.ts'
import { Rng } from '../../sim/rng.ts'

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

t.test('a seeded source replays its ids and bytes; another seed differs', async t => {
  const draw = (seed: number): string[] => {
    const rng = new Rng(seed).stream('ids')
    const r = randomFrom(() => rng.next())
    return [r.uuid(), r.uuid(), Buffer.from(r.bytes(8)).toString('hex')]
  }
  const a = draw(1)
  t.same(draw(1), a)
  t.not(draw(2)[0], a[0])
  t.not(a[0], a[1], 'successive ids differ')
  t.match(a[0], V4)
  t.match(a[1], V4)
})

t.test('the system source gives v4 UUIDs and the requested number of bytes; it is the default', async t => {
  t.match(systemRandom.uuid(), V4)
  t.equal(systemRandom.bytes(32).length, 32)
  const x = systemRandom.next()
  t.ok(x >= 0 && x < 1)
  t.equal(randomOf({}), systemRandom)
  const seeded = randomFrom(() => 0.5)
  t.equal(randomOf({ random: seeded }), seeded)
  t.equal(seeded.uuid(), '80808080-8080-4080-8080-808080808080', 'every bit from the injected function')
})
