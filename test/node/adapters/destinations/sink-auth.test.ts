// The node sink's signed routes (uploads and the name check) share one count of failed signature checks
// per remote address: an address that keeps sending signatures that do not verify gets no more full
// checks (429 with Retry-After) on any of them, while URLs the node minted and other addresses are served.
import t from 'tap'
import Fastify from 'fastify'
import http from 'node:http'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cryptoReady, newHotkey, signUrl, authorityOf } from '../../../../protocol/index.ts'
import { SIGNATURE_PARAM, mintedUrls } from '../../../../protocol/signed-url.ts'
import { sinkRoutes } from '../../../../node/adapters/destinations/node-sink.ts'
import { sinkNameRoutes } from '../../../../node/adapters/destinations/sink-names.ts'
import { BadSignatures, BAD_SIGNATURES_PER_WINDOW } from '../../../../node/adapters/bad-signatures.ts'

await cryptoReady()
const coordinator = newHotkey()

function request (url: string, method: string, localAddress: string): Promise<{ status: number, headers: http.IncomingHttpHeaders, body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, localAddress }, res => {
      let body = ''
      res.setEncoding('utf8').on('data', (p: string) => { body += p }).once('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body }) })
    })
    req.once('error', reject)
    req.end()
  })
}

t.test('forged signatures on the sink count per address across its routes; past the limit it is refused unchecked', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-sink-auth-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const app = Fastify({ logger: false })
  let baseUrl = ''
  let now = Date.now()
  const badSignatures = new BadSignatures({ now: () => now })
  const auth = { trustedSigners: new Set([coordinator.address]), authority: () => authorityOf(baseUrl), now: () => now, badSignatures }
  await app.register(sinkRoutes, { dir, ...auth })
  await app.register(sinkNameRoutes, { dir, ...auth })
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())

  const names = (): string => signUrl({ method: 'GET', url: new URL('/sink/names?filename=a.bin', baseUrl), audience: 'bwnet-sink', expiresAt: now + 600_000, key: coordinator })
  const forge = (url: string): string => {
    const u = new URL(url)
    u.searchParams.set(SIGNATURE_PARAM, randomBytes(64).toString('base64url').slice(0, 85) + 'A')
    return u.toString()
  }
  const good = names()
  t.equal((await request(good, 'GET', '127.0.0.1')).status, 200, 'a good URL is served')
  // Half the failures on the name check, half on an upload route (an abort: DELETE of an upload).
  const upload = signUrl({ method: 'DELETE', url: new URL('/sink/uploads/u-1', baseUrl), audience: 'bwnet-sink', expiresAt: now + 600_000, key: coordinator })
  for (let i = 0; i < BAD_SIGNATURES_PER_WINDOW; i++) {
    const r = await request(forge(i % 2 === 0 ? good : upload), i % 2 === 0 ? 'GET' : 'DELETE', '127.0.0.1')
    t.equal(r.status, 403, `forged signature ${i + 1} is checked and refused`)
  }
  const more = await request(forge(good), 'GET', '127.0.0.1')
  t.equal(more.status, 429, 'then a signature from that address is refused unchecked')
  t.ok(Number(more.headers['retry-after']) > 0, 'with Retry-After')
  t.match(JSON.parse(more.body), { code: 'BWN_ERR_RATE_LIMITED', status: 429 }, 'as problem+json')
  t.equal((await request(good, 'GET', '127.0.0.1')).status, 200, 'a URL this process minted needs no full check: served')
  // As after a restart: the URLs take the full check, which that address no longer gets.
  mintedUrls.clear()
  for (const [url, method] of [[good, 'GET'], [upload, 'DELETE']] as const) {
    const r = await request(url, method, '127.0.0.1')
    t.equal(r.status, 429, `${method}: a good URL that needs a full check is refused from that address`)
    t.ok(Number(r.headers['retry-after']) > 0, 'with Retry-After')
  }
  t.equal(badSignatures.refused, 3)
  t.equal((await request(good, 'GET', '127.0.0.2')).status, 200, 'another address is served')
  now += 60_000
  t.equal((await request(names(), 'GET', '127.0.0.1')).status, 200, 'the address is served again in a new window')
})
