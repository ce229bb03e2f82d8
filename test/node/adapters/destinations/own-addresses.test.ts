// A tenant's destination may not name the orchestrator's own host (docs/security.md#destination-policy-ssrf):
// its public address is public, but reaches services bound there. Refused at create, at lookup and at
// connect, under the tenants' policy only; the operator's allowPrivateDestinations lifts it too.
import t from 'tap'
import { createServer } from 'node:http'
import { networkInterfaces } from 'node:os'
import type { AddressInfo } from 'node:net'
import { cryptoReady } from '../../../../protocol/index.ts'
import { checkDestinationUrl, guardedFetch, guardedRequest, guardedAgents, hostAddresses, liveAddresses, refusedClass, reportedAddresses, type AddressPolicy } from '../../../../node/adapters/destinations/url-policy.ts'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import createTestnet from 'hyperdht/testnet.js'
import { BwnetNode } from '../../../../node/node.ts'
import { NODE_DEFAULTS, type NodeConfig } from '../../../../node/config.ts'
import { silentLogger } from '../../../helpers/logger.ts'
import { destinationsApi } from '../../../helpers/api.ts'

await cryptoReady()

// Documentation stands in for a public address of this host: nothing here connects to it.
const OWN = '93.184.216.34'
const tenants: AddressPolicy = { allowPrivate: false, own: [OWN, '2606:4700:4700::1111'] }

t.test('refusedClass: own addresses, and the IPv6 forms that embed one', async t => {
  t.equal(refusedClass(OWN, tenants), 'own')
  t.equal(refusedClass('::ffff:93.184.216.34', tenants), 'own', 'IPv4-mapped')
  t.equal(refusedClass('2002:5db8:d822::1', tenants), 'own', '6to4 embedding it')
  t.equal(refusedClass('2606:4700:4700:0:0:0:0:1111', tenants), 'own', 'an IPv6 address in another spelling')
  t.equal(refusedClass('93.184.216.35', tenants), null, 'another public address passes')
  t.equal(refusedClass('127.0.0.1', tenants), 'loopback', 'the other ranges keep their reason')
  t.equal(refusedClass(OWN, { allowPrivate: false }), null, 'no own list: not refused')
  t.equal(refusedClass(OWN, { allowPrivate: true, own: [OWN] }), null, 'the operator allows every address')
  t.equal(refusedClass('10.0.0.1', { allowPrivate: false, ranges: false }), null, 'ranges off: only own addresses')
  t.equal(refusedClass('10.0.0.1', { allowPrivate: false, ranges: ['loopback'] }), null, 'some ranges: the others pass')
  t.equal(refusedClass('::1', { allowPrivate: false, ranges: ['loopback'] }), 'loopback')
})

t.test('hostAddresses: the interfaces\' public addresses, and the public URL\'s when it is one', async t => {
  const interfaces = Object.values(networkInterfaces()).flat().map(i => i!.address)
  t.ok(interfaces.includes('127.0.0.1'), 'this host has a loopback interface')
  const found = hostAddresses('http://93.184.216.34:8000')
  t.ok(found.includes(OWN), 'a literal public URL host')
  t.ok(hostAddresses('http://[2606:4700:4700::1111]:8000').includes('2606:4700:4700::1111'), 'an IPv6 one')
  t.notOk(found.includes('127.0.0.1'), 'loopback is refused as loopback, not listed')
  t.ok(found.every(a => refusedClass(a, { allowPrivate: false }) === null), 'only public addresses')
  t.same(hostAddresses('https://node.example:8443'), hostAddresses(null), 'a name is not resolved (behind a CDN its addresses are shared)')
})

t.test('a live own list: the host\'s addresses read again once its time is up, the same list while unchanged', async t => {
  let now = 1_000
  let addrs = [OWN]
  let reads = 0
  const own = liveAddresses(() => { reads++; return [...addrs] }, 60_000, () => now)
  const policy: AddressPolicy = { allowPrivate: false, own }
  t.equal(refusedClass(OWN, policy), 'own')
  const first = own()
  addrs = [OWN] // read again, equal: the same array (its lookup structure kept)
  now += 60_000
  t.equal(own(), first, 'unchanged: the same list')
  addrs = ['93.184.216.99'] // renumbered (or a temporary IPv6 address rotated)
  now += 30_000
  t.equal(refusedClass('93.184.216.99', policy), null, 'within the minute the old list holds')
  now += 30_000
  t.equal(refusedClass('93.184.216.99', policy), 'own', 'then the new address is refused')
  t.equal(refusedClass(OWN, policy), null, 'and the one given up is not')
  t.equal(reads, 3, 'read at start and once per minute asked')
  // A read that fails (out of file descriptors) keeps the last list: it runs inside connection checks.
  const failing = liveAddresses(() => { if (reads++ > 3) throw Object.assign(new Error('EMFILE'), { code: 'EMFILE' }); return [OWN] }, 60_000, () => now)
  now += 60_000
  t.same(failing(), [OWN], 'kept when the read throws')
  t.equal(refusedClass(OWN, { allowPrivate: false, own: failing }), 'own')
})

t.test('the URL check and POST /destinations refuse the own host with reason own', async t => {
  await t.rejects(checkDestinationUrl(`http://${OWN}:9464/metrics`, 'config.url', { policy: tenants }), { kind: 'url', reason: 'own' } as unknown as Error)
  await t.rejects(checkDestinationUrl('http://node.example/x', 'config.url', { policy: tenants, resolve: async () => ['93.184.216.35', OWN] }), { reason: 'own' } as unknown as Error, 'any address a name resolves to')
  t.ok(await checkDestinationUrl(`http://${OWN}/x`, 'url', { policy: { ...tenants, allowPrivate: true } }), 'allowPrivateDestinations lifts it')

  const { create } = await destinationsApi(t, tenants, async host => host === 'self.example' ? [OWN] : ['93.184.216.35'])
  for (const body of [
    { kind: 'http', config: { url: 'http://self.example:9464/x' } },
    { kind: 'http', config: { url: 'https://other.example/x', completeUrl: `http://${OWN}/done` } },
    { kind: 's3', config: { endpoint: `http://[::ffff:${OWN}]:9000`, bucket: 'bucket', region: 'r', accessKeyId: 'a', secretAccessKey: 's' } },
    { kind: 'node', config: { baseUrl: 'http://self.example:8000' } }
  ]) {
    const res = await create(body)
    t.equal(res.statusCode, 400, JSON.stringify(body.config))
    t.match(res.json(), { code: 'BWN_ERR_DESTINATION_URL_REFUSED', reason: 'own', detail: /own host/ })
  }
  t.equal((await create({ kind: 'http', config: { url: 'https://other.example/x' } })).statusCode, 201, 'another host is fine')
})

t.test('at connect: an own address is refused before any connection, by name and by literal', async t => {
  let hits = 0
  const server = createServer((_req, res) => { hits++; res.end('ok') })
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  const port = (server.address() as AddressInfo).port
  // Loopback stands in for the host's public address here, so a guard that failed would reach only this server.
  const policy: AddressPolicy = { allowPrivate: false, own: ['127.0.0.1', '::1'] }
  const refusedOwn = { code: 'BWN_ERR_ADDRESS_REFUSED', message: /own host/ }
  await t.rejects(guardedFetch(policy)(`http://127.0.0.1:${port}/`), { cause: refusedOwn }, 'fetch, literal')
  await t.rejects(guardedFetch(policy)(`http://localhost:${port}/`), { cause: refusedOwn }, 'fetch, a name resolving to it')
  t.throws(() => guardedRequest(policy)(new URL(`http://127.0.0.1:${port}/`), { method: 'GET' }), refusedOwn, 'request, literal')
  const { httpAgent } = guardedAgents(policy)
  t.teardown(() => httpAgent.destroy())
  const err = await new Promise<Error>(resolve => {
    const req = guardedRequest(policy)(new URL(`http://localhost:${port}/`), { method: 'GET', agent: httpAgent })
    req.on('error', resolve).end()
  })
  t.match(err, refusedOwn, 'request, a name resolving to it')
  t.equal(hits, 0)
})

t.test('reportedAddresses: the address the DHT reports, when public; the same list while it is unchanged', async t => {
  let host: string | null = null
  let reads = 0
  const changes: Array<readonly string[]> = []
  const reported = reportedAddresses(() => { reads++; if (host === 'throw') throw new Error('gone'); return host }, (list) => { changes.push(list) })
  t.same(reported(), [], 'nothing reported yet')
  host = OWN
  const first = reported()
  t.same(first, [OWN])
  t.equal(reported(), first, 'unchanged: the same array (its lookup structure kept)')
  t.equal(refusedClass(OWN, { allowPrivate: false, own: reported }), 'own')
  host = '[2606:4700:4700::1111]'
  t.same(reported(), ['2606:4700:4700::1111'], 'an IPv6 one, brackets dropped')
  for (const local of ['127.0.0.1', '10.1.2.3', '192.168.1.1', 'fe80::1', 'not an address']) {
    host = local
    t.same(reported(), [], `${local}: not a public address, not listed (refused by range, or not at all)`)
  }
  host = OWN
  reported()
  host = 'throw'
  t.same(reported(), [OWN], 'a read that throws keeps the last list')
  t.ok(reads >= 10)
  t.same(changes, [[OWN], ['2606:4700:4700::1111'], [], [OWN]], 'told of each change of the list, not of each read')
})

t.test('an orchestrator refuses the address its DHT reports for it: a 1:1 NAT\'s, on none of its interfaces', async t => {
  await cryptoReady()
  const testnet = await createTestnet(3, { host: '127.0.0.1' })
  t.teardown(() => testnet.destroy())
  const data = await mkdtemp(join(tmpdir(), 'bwnet-own-reported-'))
  t.teardown(() => rm(data, { recursive: true, force: true }))
  // On loopback the DHT nodes report 127.0.0.1; behind a cloud provider's NAT they report its public address.
  const dht = testnet.createNode()
  let reported: string | null = null
  Object.defineProperty(dht, 'host', { get: () => reported })
  const node = new BwnetNode({
    config: { ...NODE_DEFAULTS, role: 'orchestrator', data, bootstrap: testnet.bootstrap.map(b => `${b.host}:${b.port}`), dhtHost: '127.0.0.1', port: 0, metricsPort: 0, network: `own-reported-${process.pid}`, allowPrivateDestinations: false } as NodeConfig,
    logger: silentLogger(), dht
  })
  t.teardown(() => node.stop())
  await node.start()
  const org = await node.accounts!.createOrganization({ name: 'o' })
  const key = (await node.accounts!.createKey(org.id, { role: 'client' })).key
  const create = async (url: string): Promise<{ statusCode: number, json (): any }> => await node.app!.inject({ method: 'POST', url: '/destinations', headers: { 'x-api-key': key }, payload: { name: `d-${Math.random()}`, kind: 'http', config: { url } } })
  t.equal((await create(`http://${OWN}/x`)).statusCode, 201, 'before the DHT reports it: an address like any other')
  reported = OWN
  const refused = await create(`http://${OWN}:9464/metrics`)
  t.equal(refused.statusCode, 400)
  t.match(refused.json(), { code: 'BWN_ERR_DESTINATION_URL_REFUSED', reason: 'own' })
  t.equal((await create('http://93.184.216.35/x')).statusCode, 201, 'another public address passes')
})
