// The key a client address counts under wherever limits are kept per address (the free audit route,
// failed signature checks): IPv4 addresses one by one (also when mapped into IPv6), IPv6 ones by their
// /64, which one host usually holds whole (counting them one by one would give it 2^64 addresses).
import { isIPv6 } from 'node:net'

/** The key an address counts under: IPv4 as is (also when mapped into IPv6), IPv6 by its /64. */
export function addressKey (address: string): string {
  const bare = address.replace(/%.*$/, '') // an IPv6 zone id
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)
  if (mapped !== null) return mapped[1]!
  if (!isIPv6(bare)) return bare
  const [head = '', tail] = bare.split('::')
  const front = head === '' ? [] : head.split(':')
  const back = tail === undefined || tail === '' ? [] : tail.split(':')
  // An IPv4 tail (::1.2.3.4) counts as two groups; only the first four groups matter here anyway.
  const backGroups = back.flatMap(g => g.includes('.') ? ['0', '0'] : [g])
  const groups = tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - backGroups.length)).fill('0'), ...backGroups]
  return groups.slice(0, 4).map(g => parseInt(g, 16).toString(16)).join(':') + '::/64'
}
