import t from 'tap'
import { BadSignatures, addressKey } from '../../../node/adapters/bad-signatures.ts'

t.test('addresses count one by one for IPv4, by /64 for IPv6', async t => {
  t.equal(addressKey('127.0.0.1'), '127.0.0.1')
  t.equal(addressKey('::ffff:10.1.2.3'), '10.1.2.3', 'an IPv4 address mapped into IPv6 is that address')
  t.equal(addressKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64')
  t.equal(addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64', 'the same /64, another host part')
  t.equal(addressKey('2001:0db8:0001:0002::9'), '2001:db8:1:2::/64', 'leading zeros do not make another key')
  t.equal(addressKey('2001:db8::1'), '2001:db8:0:0::/64', 'a compressed prefix')
  t.equal(addressKey('::1'), '0:0:0:0::/64')
  t.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64', 'a zone id is not part of the key')
  t.not(addressKey('2001:db8:1:3::1'), addressKey('2001:db8:1:2::1'), 'another /64')
})

t.test('past max failures in a window an address is refused, until the window ends', async t => {
  let now = 1_000
  const bad = new BadSignatures({ now: () => now, max: 3, windowMs: 10_000 })
  bad.admit('10.0.0.1') // nothing on record
  for (let i = 0; i < 3; i++) { bad.admit('10.0.0.1'); bad.failed('10.0.0.1') }
  t.throws(() => bad.admit('10.0.0.1'), { statusCode: 429, code: 'BWN_ERR_RATE_LIMITED', headers: { 'retry-after': '10' }, extensions: { bad_signatures: 3 } })
  t.doesNotThrow(() => bad.admit('10.0.0.2'), 'another address is not')
  now += 9_001
  t.throws(() => bad.admit('10.0.0.1'), { code: 'BWN_ERR_RATE_LIMITED', headers: { 'retry-after': '1' } }, 'Retry-After counts down to the window end')
  now += 999
  t.doesNotThrow(() => bad.admit('10.0.0.1'), 'a new window starts clean')
  t.equal(bad.size, 0, 'and the old one is forgotten')
  t.equal(bad.refused, 2)
  // Failures spread over windows never add up to a refusal.
  for (let i = 0; i < 10; i++) { bad.failed('10.0.0.3'); bad.failed('10.0.0.3'); now += 10_000 }
  t.doesNotThrow(() => bad.admit('10.0.0.3'))
})

t.test('the table is bounded: an address below its limit goes first, else the oldest', async t => {
  const bad = new BadSignatures({ now: () => 0, max: 2, maxAddresses: 3 })
  for (const a of ['10.0.0.1', '10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.3']) bad.failed(a)
  bad.failed('10.0.0.4')
  t.equal(bad.size, 3)
  t.throws(() => bad.admit('10.0.0.1'), 'a refused address is kept')
  t.doesNotThrow(() => bad.admit('10.0.0.2'), 'the one below its limit was forgotten')
  bad.failed('10.0.0.4')
  bad.failed('10.0.0.5') // all three at their limit now: the oldest goes
  t.doesNotThrow(() => bad.admit('10.0.0.1'), 'the oldest was forgotten')
  t.throws(() => bad.admit('10.0.0.3'))
})

t.test('node-wide, failed full checks are bounded per second whatever the number of addresses', async t => {
  let now = 5_000
  const bad = new BadSignatures({ now: () => now, max: 100, maxPerSecond: 10 })
  for (let i = 0; i < 10; i++) { bad.admit(`10.1.0.${i}`); bad.failed(`10.1.0.${i}`) }
  t.throws(() => bad.admit('10.2.0.1'), { code: 'BWN_ERR_RATE_LIMITED', headers: { 'retry-after': '1' } }, 'an eleventh address waits for the next second')
  now += 1000
  t.doesNotThrow(() => bad.admit('10.2.0.1'), 'the next second has room again')
})
