// IPv6 forms that embed an IPv4 address are judged by the embedded address: at create (POST
// /destinations under the strict policy), in the lookup guard, and at connect for IP literals.
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { cryptoReady } from '../../../../protocol/index.ts'
import { addressClass, embeddedIPv4, guardedFetch, guardedRequest, checkDestinationUrl, PUBLIC_ONLY } from '../../../../node/adapters/destinations/url-policy.ts'
import { destinationsApi } from '../../../helpers/api.ts'

await cryptoReady()

// [what, URL host, refused class]: every one reaches a refused IPv4 address.
const REFUSED: Array<[string, string, string]> = [
  ['IPv4-compatible loopback, dotted', '[::127.0.0.1]', 'loopback'],
  ['IPv4-compatible loopback, hex', '[::7f00:1]', 'loopback'],
  ['IPv4-compatible private', '[::10.0.0.1]', 'private'],
  ['IPv4-compatible metadata', '[::169.254.169.254]', 'link_local'],
  ['IPv4-mapped loopback', '[::ffff:127.0.0.1]', 'loopback'],
  ['IPv4-mapped loopback, hex', '[::ffff:7f00:1]', 'loopback'],
  ['IPv4-mapped, long form', '[0:0:0:0:0:ffff:7f00:1]', 'loopback'],
  ['IPv4-mapped private', '[::ffff:192.168.1.1]', 'private'],
  ['SIIT (RFC 6145) loopback', '[::ffff:0:7f00:1]', 'loopback'],
  ['6to4 loopback', '[2002:7f00:1::]', 'loopback'],
  ['6to4 private', '[2002:a00:1::1]', 'private'],
  ['6to4 metadata', '[2002:a9fe:a9fe::]', 'link_local'],
  ['NAT64 loopback', '[64:ff9b::127.0.0.1]', 'loopback'],
  ['NAT64 private, hex', '[64:ff9b::a00:1]', 'private'],
  ['NAT64 local-use prefix', '[64:ff9b:1::a00:1]', 'private'],
  ['Teredo, client loopback', '[2001:0:5db8:a0a:0:0:80ff:fffe]', 'loopback'],
  ['Teredo, server private', '[2001:0:a00:1::5db8:a0a]', 'private'],
  ['Teredo, client metadata', '[2001:0:5db8:a0a::5601:5601]', 'link_local']
]
// Public IPv6, and the same forms around public IPv4 addresses.
const ALLOWED: Array<[string, string]> = [
  ['a public IPv6 address', '[2606:4700:4700::1111]'],
  ['another public IPv6 address', '[2a00:1450:4001:80b::200e]'],
  ['IPv4-mapped public', '[::ffff:93.184.216.34]'],
  ['6to4 public', '[2002:5db8:d822::1]'],
  ['NAT64 public', '[64:ff9b::93.184.216.34]'],
  ['Teredo with public server and client', '[2001:0:5db8:d822::a247:27dd]']
]

t.test('the embedded address is read out of each form', async t => {
  t.same(embeddedIPv4('::7f00:1'), ['127.0.0.1'])
  t.same(embeddedIPv4('2002:7f00:1::'), ['127.0.0.1'])
  t.same(embeddedIPv4('64:ff9b::a00:1'), ['10.0.0.1'])
  t.same(embeddedIPv4('2001:0:5db8:a0a:0:0:80ff:fffe'), ['93.184.10.10', '127.0.0.1'], 'Teredo: server, then the client (inverted)')
  t.equal(embeddedIPv4('2606:4700:4700::1111'), null)
  t.equal(embeddedIPv4('::1'), null, '::1 is loopback itself, not an IPv4-compatible address')
  t.equal(addressClass('::1'), 'loopback')
  t.equal(addressClass('::'), 'unspecified')
})

t.test('addressClass refuses each form by its embedded address; public ones pass', async t => {
  for (const [what, host, cls] of REFUSED) t.equal(addressClass(host), cls, `${what} ${host}`)
  for (const [what, host] of ALLOWED) t.equal(addressClass(host), null, `${what} ${host}`)
})

t.test('the URL check refuses each form under the strict policy (as the URL parser writes it)', async t => {
  for (const [what, host, cls] of REFUSED) {
    await t.rejects(checkDestinationUrl(`http://${host}:8000/x`, 'url', { policy: PUBLIC_ONLY }), { kind: 'url', reason: cls } as unknown as Error, `${what} ${host}`)
  }
  for (const [what, host] of ALLOWED) t.ok(await checkDestinationUrl(`http://${host}/x`, 'url', { policy: PUBLIC_ONLY }), what)
  t.ok(await checkDestinationUrl('http://[::127.0.0.1]/x', 'url', { policy: { allowPrivate: true } }), 'allowed when the operator allows private destinations')
})

t.test('POST /destinations answers 400 BWN_ERR_DESTINATION_URL_REFUSED with the reason', async t => {
  const api = await destinationsApi(t, { allowPrivate: false }, async () => ['93.184.216.34'])
  const create = async (url: string) => await api.create({ kind: 'http', config: { url } })
  for (const host of ['[::127.0.0.1]', '[2002:7f00:1::]', '[64:ff9b::7f00:1]', '[2001:0:5db8:a0a:0:0:80ff:fffe]']) {
    const res = await create(`http://${host}/x`)
    t.equal(res.statusCode, 400, host)
    t.equal(res.json().code, 'BWN_ERR_DESTINATION_URL_REFUSED')
    t.equal(res.json().reason, 'loopback')
  }
  t.equal((await create('http://[2606:4700:4700::1111]/x')).statusCode, 201, 'a public IPv6 destination is created')
})

t.test('at connect: literals of each form are refused before any connection', async t => {
  let hits = 0
  const server = createServer((_req, res) => { hits++; res.end('ok') })
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  const port = (server.address() as AddressInfo).port
  const strictFetch = guardedFetch(PUBLIC_ONLY)
  const strictRequest = guardedRequest(PUBLIC_ONLY)
  for (const [what, host] of REFUSED) {
    await t.rejects(strictFetch(`http://${host}:${port}/`), { cause: { code: 'BWN_ERR_ADDRESS_REFUSED' } }, `fetch: ${what}`)
    t.throws(() => strictRequest(new URL(`http://${host}:${port}/`), { method: 'GET' }), { code: 'BWN_ERR_ADDRESS_REFUSED' }, `request: ${what}`)
  }
  t.equal(hits, 0)
})

t.test('name lookups: at most LOOKUPS_AT_ONCE on the thread pool at once, the rest wait in order, a full queue fails at once', async t => {
  const held: Array<() => void> = []
  const asked: string[] = []
  const dns = await import('node:dns')
  const policy = await t.mockImport<typeof import('../../../../node/adapters/destinations/url-policy.ts')>('../../../../node/adapters/destinations/url-policy.ts', {
    'node:dns': {
      ...dns,
      lookup: (host: string, _opts: unknown, cb: (err: null, addresses: Array<{ address: string, family: number }>) => void) => {
        asked.push(host)
        held.push(() => cb(null, [{ address: '93.184.216.34', family: 4 }]))
      }
    }
  })
  const names = Array.from({ length: 5 }, (_, i) => `slow-${i}.example`)
  const answers = names.map(async n => await policy.systemResolve(n))
  t.same(policy.lookupLoad(), { running: policy.LOOKUPS_AT_ONCE, waiting: names.length - policy.LOOKUPS_AT_ONCE }, 'two on the pool, three waiting')
  t.same(asked, names.slice(0, policy.LOOKUPS_AT_ONCE))
  held.shift()!()
  t.same(asked, names.slice(0, policy.LOOKUPS_AT_ONCE + 1), 'one ended: the next waiting one starts, in order')
  const waiting = Array.from({ length: 256 - (names.length - policy.LOOKUPS_AT_ONCE - 1) }, async (_, i) => await policy.systemResolve(`queued-${i}.example`))
  await t.rejects(policy.systemResolve('one-too-many.example'), { code: 'EAI_AGAIN' }, 'past the queue: refused at once')
  while (held.length > 0) held.shift()!()
  t.same(await Promise.all(answers), names.map(() => ['93.184.216.34']), 'every waiting lookup is answered')
  // Drain the rest: each answered lookup starts the next waiting one.
  await new Promise<void>(resolve => {
    const step = (): void => { while (held.length > 0) held.shift()!(); if (policy.lookupLoad().running === 0 && policy.lookupLoad().waiting === 0) resolve(); else setImmediate(step) }
    step()
  })
  t.equal((await Promise.all(waiting)).length, waiting.length)
  t.same(policy.lookupLoad(), { running: 0, waiting: 0 })
})
