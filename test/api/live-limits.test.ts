// The live routes' limits on a real listening app (no devnet): one socket too many for an organization is
// refused with 429 before the upgrade (and the slot comes back once a socket closes); a plain GET is
// 426; a frame from the client closes its socket with 1003; a silent socket is closed 4408 (idle); a
// peer that stops answering pings is dropped; the key never comes back in the handshake.
import t from 'tap'
import type WebSocket from 'ws'
import { connectWs } from '../helpers/ws.ts'
import { buildApp } from '../../api/app.ts'
import { testDeps } from '../helpers/api.ts'
import { eventually } from '../helpers/proc.ts'
import { TransferEventHub } from '../../actors/transfer/events.ts'
import type { TransferService } from '../../api/transfers.ts'

const ID = '0b7e2f6c-6a77-4b55-9d3e-2f1f1c9d1a11'

async function setup (t: { teardown (fn: () => unknown): void }, live: Record<string, number>) {
  const env = testDeps()
  const org = await env.accounts.createOrganization({ name: 'o' })
  const key = (await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise', name: 'k' })).key
  const sameOrg = (await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise', name: 'k2' })).key
  const otherOrg = (await env.accounts.createKey((await env.accounts.createOrganization({ name: 'p' })).id, { role: 'client', plan: 'enterprise', name: 'k3' })).key
  const record = { id: ID, status: 'in_progress' } as never
  const transfers = { get: async () => record } as unknown as TransferService
  const app = await buildApp({ ...env.deps, transfers, transferEvents: new TransferEventHub(env.store), live })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  return { key, sameOrg, otherOrg, url: url.replace(/^http/, 'ws') + `/transfers/${ID}/events`, http: url, logs: env.logLines }
}

const open = (url: string, opts: WebSocket.ClientOptions, protocols: string[] = []): ReturnType<typeof connectWs> => connectWs(url, opts, protocols)

t.test('per-organization socket limit, 426, 1003 and the handshake', async t => {
  const { key, sameOrg, otherOrg, url, http, logs } = await setup(t, { maxSocketsPerOrganization: 2 })
  const auth = { headers: { authorization: `Bearer ${key}` } }
  const a = await open(url, auth)
  const b = await open(url, {}, ['bwnet.v1', `bwnet.key.${key}`])
  t.equal(b.ws.protocol, 'bwnet.v1', 'the server picks bwnet.v1, never echoes the key')
  const third = await open(url, auth).then(() => null, (e) => e)
  t.equal(third?.status, 429, 'a third socket for the key: 429 before the upgrade')
  t.match(third?.headers['content-type'], /problem\+json/)
  const minted = await open(url, { headers: { authorization: `Bearer ${sameOrg}` } }).then(() => null, (e) => e)
  t.equal(minted?.status, 429, 'another key of the organization shares its sockets')
  const elsewhere = await open(url, { headers: { authorization: `Bearer ${otherOrg}` } })
  elsewhere.ws.close()
  await elsewhere.closed
  t.pass('another organization has its own')
  a.ws.close()
  await a.closed
  const again = await open(url, auth)
  t.pass('a closed socket gives its slot back')

  b.ws.send('hello')
  t.same(await b.closed, { code: 1003, reason: 'this route only sends' }, 'a client frame: 1003')

  for (let i = 0; i < 3; i++) {
    const plain = await fetch(http + `/transfers/${ID}/events`, { headers: { authorization: `Bearer ${key}` } })
    t.equal(plain.status, 426, 'a plain GET: 426')
    t.equal(plain.headers.get('upgrade'), 'websocket')
    t.match(await plain.json(), { code: 'BWN_ERR_UPGRADE_REQUIRED' })
  }
  // Plain GETs held no slot: two sockets open again (again + one), a third is refused.
  const second = await open(url, auth)
  t.equal((await open(url, auth).then(() => null, (e) => e))?.status, 429, 'the limit still counts open sockets only')
  second.ws.close()
  await second.closed
  again.ws.close()
  await again.closed
  t.notMatch(logs.join('\n'), key, 'the key (headers or subprotocol) never reaches the logs')
  // Each socket that opened has its access lines: opened, and closed with how long it stayed.
  const lines = logs.map(l => JSON.parse(l))
  const opened = lines.filter(l => l.event === 'websocket_opened')
  t.equal(opened.length, 5, 'five sockets opened')
  t.ok(opened.every(l => l.req?.url === `/transfers/${ID}/events` && typeof l.req?.remotePort === 'number'), 'with the URL and the peer')
  const closedLines = (): Array<Record<string, unknown>> => logs.filter(l => l.includes('websocket_closed')).map(l => JSON.parse(l))
  await eventually(async () => closedLines().length >= 5, 10_000, 'five websocket_closed lines', 10)
  t.equal(closedLines().length, 5, 'five closed')
  t.ok(closedLines().every(l => typeof l.openMs === 'number'), 'with how long each stayed open')
})

t.test('idle sockets are closed 4408; a peer that stops answering pings is dropped', async t => {
  // Pings far apart: the idle close is judged alone, not a pong that a loaded machine answers late.
  const { key, url } = await setup(t, { idleMs: 300, pingMs: 60_000 })
  const idle = await open(url, { headers: { authorization: `Bearer ${key}` } })
  t.equal((await idle.closed).code, 4408, 'no message for idleMs: 4408')

  const { url: url2, key: key2 } = await setup(t, { idleMs: 60_000, pingMs: 100 })
  const mute = await open(url2, { headers: { authorization: `Bearer ${key2}` }, autoPong: false } as WebSocket.ClientOptions)
  t.equal((await mute.closed).code, 1006, 'no pong: dropped without a close frame')
})

t.test('a key revoked or expired after its socket opened closes the socket with 4401', async t => {
  const env = testDeps()
  const org = await env.accounts.createOrganization({ name: 'o' })
  const revoked = await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise', name: 'to revoke' })
  const expiring = await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise', name: 'expiring', expiresAt: new Date(env.clock.now() + 60_000).toISOString() })
  const kept = await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise', name: 'kept' })
  const record = { id: ID, status: 'in_progress' } as never
  const transfers = { get: async () => record } as unknown as TransferService
  const app = await buildApp({ ...env.deps, transfers, transferEvents: new TransferEventHub(env.store) })
  const url = (await app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws') + `/transfers/${ID}/events`
  t.teardown(() => app.close())
  const as = (key: string) => open(url, { headers: { authorization: `Bearer ${key}` } })
  const [r, e, k] = [await as(revoked.key), await as(expiring.key), await as(kept.key)]
  await env.accounts.revokeKey(revoked.apiKey.id)
  t.same(await r.closed, { code: 4401, reason: 'the key was revoked' }, 'the revoked key\'s socket is closed')
  env.clock.advance(60_000)
  t.same(await e.closed, { code: 4401, reason: 'the key has expired' }, 'so is the expired key\'s, once it expires')
  t.equal(k.ws.readyState, k.ws.OPEN, 'another key\'s socket stays open')
  k.ws.close()
  await k.closed
})
