// The document as a contract: a devnet orchestrator (every route group, chain routes included) is
// called on every operation of its own /openapi.json, with valid inputs and a sample of invalid
// ones, and each answer is checked against the document (status, media type, body schema, the
// ETag / credit / Retry-After / Location headers). Every operation is exercised at least once.
import t from 'tap'
import { startTestDevnet } from '../helpers/devnet.ts'
import { OpenApiContract, type Exchange } from '../helpers/openapi-contract.ts'
import { connectWs } from '../helpers/ws.ts'
import { eventually } from '../helpers/proc.ts'

// Valid SS58 addresses (the well-known dev accounts Dave and Eve) that the devnet never registers.
const UNREGISTERED = '5DAAnrj7VHTznn2AWBemMuyBwZWs6FNFjdyVXUeYum3PTXFy'
const UNREGISTERED_2 = '5HGjWAeFDfFCWPsjFQdVV2Msvz2XtMktvgocEZcCj68kUMaw'
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000'

const net = await startTestDevnet(t, { workers: 1 })
const base = net.file.baseUrl
const keys = net.file.keys as { admin: string, console: string }
const client = await net.clientKey('enterprise')
const orchestrator = net.file.nodes.find(n => n.role === 'orchestrator')!
const spec = await (await fetch(`${base}/openapi.json`)).json() as Record<string, any>
const contract = new OpenApiContract(spec)

type Auth = { bearer: string } | { apiKey: string } | null
interface Call {
  auth?: Auth
  params?: Record<string, string | number>
  query?: Record<string, string | number>
  headers?: Record<string, string>
  json?: unknown
  body?: Uint8Array
}

const exchanges: Exchange[] = []

/** Calls `METHOD /template` and records the answer for the contract check. */
async function call (method: string, template: string, c: Call = {}): Promise<Exchange & { json: any }> {
  let path = template
  for (const [k, v] of Object.entries(c.params ?? {})) path = path.replace(`{${k}}`, encodeURIComponent(String(v)))
  const url = new URL(path, base)
  for (const [k, v] of Object.entries(c.query ?? {})) url.searchParams.set(k, String(v))
  const headers: Record<string, string> = { ...c.headers }
  if (c.auth !== undefined && c.auth !== null) {
    if ('bearer' in c.auth) headers.authorization = `Bearer ${c.auth.bearer}`
    else headers['x-api-key'] = c.auth.apiKey
  }
  let body: BodyInit | undefined
  if (c.json !== undefined) { headers['content-type'] = 'application/json'; body = JSON.stringify(c.json) }
  if (c.body !== undefined) body = c.body as unknown as BodyInit
  const res = await fetch(url, { method, headers, body })
  const text = await res.text()
  const request = { query: [...url.searchParams.keys()], headers: Object.keys(headers), ...(body !== undefined ? { contentType: headers['content-type'] } : {}) }
  const ex: Exchange = { method, path: template, status: res.status, headers: res.headers, body: text, request }
  exchanges.push(ex)
  let json: any = null
  try { json = text ? JSON.parse(text) : null } catch {}
  return { ...ex, json }
}

/**
 * Upgrades `GET /template` to a WebSocket and records its 101 with the first message as the body:
 * the document describes the messages as the 101's application/json content.
 */
async function upgrade (template: string, params: Record<string, string>, headers: Record<string, string>): Promise<void> {
  let path = template
  for (const [k, v] of Object.entries(params)) path = path.replace(`{${k}}`, encodeURIComponent(v))
  const socket = await connectWs(new URL(path, base.replace(/^http/, 'ws')), { headers }, ['bwnet.v1'])
  try {
    const first = await eventually(async () => socket.messages[0], 10_000, `a message on ${template}`, 20)
    exchanges.push({ method: 'GET', path: template, status: 101, headers: new Headers({ 'content-type': 'application/json' }), body: JSON.stringify(first), request: { query: [], headers: Object.keys(headers) } })
  } finally { socket.ws.close() }
}

const admin: Auth = { bearer: keys.admin }
const bearer: Auth = { bearer: client }
const xKey: Auth = { apiKey: client }
const console_: Auth = { apiKey: keys.console }

t.test('every operation answers as the document says', async t => {
  // Health.
  await call('GET', '/health')
  await call('GET', '/healthz')
  await call('GET', '/readyz')

  // Administration.
  const orgs = await call('GET', '/admin/organizations', { auth: admin })
  const orgId = (orgs.json.items ?? orgs.json)[0].id as string
  await call('POST', '/admin/organizations', { auth: admin, json: { name: 'contract' } })
  await call('GET', '/admin/organizations/{organizationId}', { auth: admin, params: { organizationId: orgId } })
  const project = await call('POST', '/admin/organizations/{organizationId}/projects', { auth: admin, params: { organizationId: orgId }, json: { name: 'contract' } })
  await call('GET', '/admin/organizations/{organizationId}/projects', { auth: admin, params: { organizationId: orgId } })
  await call('POST', '/admin/projects/{projectId}/environments', { auth: admin, params: { projectId: project.json.id }, json: { name: 'contract' } })
  await call('GET', '/admin/projects/{projectId}/environments', { auth: admin, params: { projectId: project.json.id } })
  const minted = await call('POST', '/admin/organizations/{organizationId}/keys', { auth: admin, params: { organizationId: orgId }, json: { role: 'client', plan: 'free', name: 'contract' } })
  await call('GET', '/admin/organizations/{organizationId}/keys', { auth: admin, params: { organizationId: orgId } })
  await call('GET', '/admin/keys/{keyId}', { auth: admin, params: { keyId: minted.json.apiKey.id } })
  await call('DELETE', '/admin/keys/{keyId}', { auth: admin, params: { keyId: minted.json.apiKey.id } })
  await call('POST', '/admin/organizations/{organizationId}/credits', { auth: admin, params: { organizationId: orgId }, json: { amount: 10, memo: 'contract' } })
  await call('GET', '/admin/organizations/{organizationId}/credits', { auth: admin, params: { organizationId: orgId } })
  t.equal((await call('GET', '/admin/organizations/{organizationId}/credits/ledger', { auth: admin, params: { organizationId: orgId } })).status, 200, 'the ledger without ?limit=')

  // Transfers, with a one-chunk upload.
  await call('GET', '/transfers/tiers', { auth: bearer })
  const data = new Uint8Array(4096).fill(7)
  const created = await call('POST', '/transfers/create', { auth: bearer, json: { sender_hotkey: orchestrator.hotkey, total_size: data.byteLength, filename: 'contract.bin', tier: 'STANDARD' } })
  t.equal(created.status, 201)
  const id = created.json.id as string
  t.equal((await call('POST', '/transfers/{id}/chunks', { auth: bearer, params: { id }, headers: { 'content-type': 'application/octet-stream', 'x-chunk-index': '0' }, body: data })).status, 201)
  await call('POST', '/transfers/{id}/finalize', { auth: bearer, params: { id } })
  await call('GET', '/transfers/{id}', { auth: bearer, params: { id } })
  const held = await call('GET', '/transfers/{id}/chunks', { auth: bearer, params: { id } })
  t.match(held.json, { transfer_id: id, total_chunks: 1, items: [{ index: 0, bytes: data.byteLength }] }, 'the received chunk and its sha256')
  const list = await call('GET', '/transfers', { auth: bearer })
  t.equal(list.status, 200, 'the list without ?limit= or ?offset=')
  t.match(list.json, { limit: 50, offset: 0 }, 'the server fills in the defaults the document names')
  await call('GET', '/api/audit/orchestrator/{orchestratorId}/transfers/{transferId}', { auth: admin, params: { orchestratorId: orchestrator.hotkey, transferId: id } })
  await call('GET', '/api/audit/worker/{workerId}/transfers/{transferId}', { auth: admin, params: { workerId: net.file.nodes.find(n => n.role === 'worker')!.hotkey, transferId: id } })
  await call('GET', '/transfers/{id}/events', { auth: bearer, params: { id } }) // no upgrade: 426
  await upgrade('/transfers/{id}/events', { id }, { authorization: `Bearer ${client}` })
  const second = await call('POST', '/transfers/create', { auth: bearer, json: { sender_hotkey: orchestrator.hotkey, total_size: 10, filename: 'contract-2.bin', tier: 'STANDARD' } })
  await call('DELETE', '/transfers/{id}', { auth: bearer, params: { id: second.json.id } })

  // Destinations (X-Api-Key only).
  const dest = await call('POST', '/destinations', { auth: xKey, json: { name: 'contract', kind: 'node', config: { baseUrl: 'http://127.0.0.1:9/' } } })
  t.equal(dest.status, 201)
  await call('GET', '/destinations', { auth: xKey })
  await call('GET', '/destinations/{destination_id}', { auth: xKey, params: { destination_id: dest.json.id } })
  t.equal((await call('DELETE', '/destinations/{destination_id}', { auth: xKey, params: { destination_id: dest.json.id } })).status, 204)

  // Telemetry: every paid read (GET only), and a conditional re-read.
  const reads = ['/v1/telemetry/network', '/v1/telemetry/realtime/network', '/v1/telemetry/network/history', '/v1/telemetry/realtime/network/history',
    '/v1/telemetry/tasks', '/v1/telemetry/realtime/tasks', '/v1/telemetry/epochs', '/v1/telemetry/realtime/epochs']
  for (const path of reads) {
    const got = await call('GET', path, { auth: console_ })
    // A conditional re-read is a 304 while the version holds, and a 200 with another ETag once it moved on
    // (a realtime read moves with every event; a snapshot read when the devnet publishes an epoch between
    // the two calls, every few seconds).
    const etag = got.headers.get('etag')
    if (etag !== null) {
      const again = await call('GET', path, { auth: console_, headers: { 'if-none-match': etag } })
      if (again.status === 304) t.pass(`${path} re-read is a 304`)
      else t.ok(again.status === 200 && again.headers.get('etag') !== null && again.headers.get('etag') !== etag, `${path} re-read: 304, or 200 with a new ETag (got ${again.status}, ${again.headers.get('etag')})`)
    }
  }
  await call('GET', '/v1/telemetry/sell-allowance/{hotkey}', { auth: console_, params: { hotkey: orchestrator.hotkey } })
  await call('GET', '/v1/audit/sell-allowance/{hotkey}', { params: { hotkey: orchestrator.hotkey } })
  await call('GET', '/v1/telemetry/realtime/stream', { auth: console_ }) // no upgrade: 426
  await upgrade('/v1/telemetry/realtime/stream', {}, { 'x-api-key': keys.console })

  // Chain.
  await call('GET', '/chain/head')
  await call('GET', '/chain/weights')
  await call('GET', '/chain/prism')
  t.equal((await call('GET', '/chain/registrations/{hotkey}', { params: { hotkey: orchestrator.hotkey } })).status, 200)
  t.equal((await call('POST', '/chain/registrations', { auth: admin, json: { hotkey: UNREGISTERED_2, role: 'worker' } })).status, 201)
  const sale = await call('POST', '/chain/sales', { auth: admin, json: { hotkey: orchestrator.hotkey, alphaRao: '1' } })
  t.ok([201, 409].includes(sale.status), `a small sale is recorded or refused for want of alpha (${sale.status})`)

  // The operator's workers: a hotkey no worker holds, revoked and reinstated (nothing else changes).
  t.equal((await call('GET', '/admin/workers', { auth: admin })).status, 200)
  t.equal((await call('PUT', '/admin/workers/{hotkey}/revocation', { auth: admin, params: { hotkey: UNREGISTERED } })).status, 200)
  t.equal((await call('DELETE', '/admin/workers/{hotkey}/revocation', { auth: admin, params: { hotkey: UNREGISTERED } })).status, 200)
})

t.test('a sample of invalid requests answers as the document says', async t => {
  const expect = async (status: number, method: string, template: string, c: Call = {}): Promise<void> => {
    const res = await call(method, template, c)
    t.equal(res.status, status, `${method} ${template} ${JSON.stringify(c.params ?? c.query ?? c.json ?? '')} → ${status}`)
  }
  await expect(401, 'GET', '/transfers')
  await expect(400, 'GET', '/transfers', { auth: bearer, query: { limit: 0 } })
  await expect(404, 'GET', '/transfers/{id}', { auth: bearer, params: { id: UNKNOWN_ID } })
  await expect(400, 'POST', '/transfers/create', { auth: bearer, json: { total_size: 5 } })
  await expect(400, 'GET', '/admin/organizations/{organizationId}/credits/ledger', { auth: admin, params: { organizationId: 'x' }, query: { limit: 5000 } })
  await expect(401, 'GET', '/v1/telemetry/network')
  await expect(400, 'GET', '/chain/weights', { query: { epoch: 'abc' } })
  await expect(404, 'GET', '/chain/registrations/{hotkey}', { params: { hotkey: UNREGISTERED } })
  await expect(400, 'GET', '/chain/registrations/{hotkey}', { params: { hotkey: 'not-a-hotkey' } })
  await expect(404, 'POST', '/chain/sales', { auth: admin, json: { hotkey: UNREGISTERED, alphaRao: '1' } })
  await expect(409, 'POST', '/chain/sales', { auth: admin, json: { hotkey: orchestrator.hotkey, alphaRao: '9'.repeat(38) } })
  await expect(401, 'POST', '/chain/sales', { json: { hotkey: orchestrator.hotkey, alphaRao: '1' } })
  await expect(400, 'PUT', '/admin/workers/{hotkey}/revocation', { auth: admin, params: { hotkey: 'not-a-hotkey' } })
  await expect(401, 'GET', '/admin/workers')
})

t.test('the document and the server agree on every answer', async t => {
  const problems = exchanges.flatMap(ex => contract.check(ex))
  if (process.env.BWN_CONTRACT_LOG === '1') for (const ex of exchanges) t.comment(`${ex.method} ${ex.path} ${ex.status}`)
  t.same(problems, [], `${exchanges.length} answers checked`)
  const exercised = new Set(exchanges.map(ex => `${ex.method} ${ex.path}`))
  const operations = contract.operations()
  t.same(operations.filter(op => !exercised.has(op)), [], 'every operation of the document was called')
  t.ok(operations.length >= 45, `${operations.length} operations`)
  t.same(exchanges.filter(ex => ex.status === 101).map(ex => ex.path).sort(), ['/transfers/{id}/events', '/v1/telemetry/realtime/stream'], 'both sockets opened')
})

t.test('the node-to-node signed routes are left out of the document, all of them', async t => {
  const internal = Object.keys(spec.paths).filter(p => p.startsWith('/sink') || p.startsWith('/data'))
  t.same(internal, [])
  const unsigned = await fetch(`${base}/sink/uploads/${'a'.repeat(32)}`)
  t.equal(unsigned.status, 403, 'the sink is served, to signed URLs only')
})

t.test('the check does fail on a document that disagrees with the server', async t => {
  const find = (method: string, path: string, status: number): Exchange => exchanges.find(e => e.method === method && e.path === path && e.status === status)!
  const wrong = structuredClone(spec)
  delete wrong.paths['/chain/registrations/{hotkey}'].get.responses['404']
  delete wrong.paths['/v1/telemetry/network'].get.responses['200'].headers.ETag
  wrong.paths['/transfers'].get.responses['200'].content['application/json'].schema = { type: 'object', required: ['cursor'] }
  const strict = new OpenApiContract(wrong)
  t.match(strict.check(find('GET', '/chain/registrations/{hotkey}', 404)), [/answered 404/])
  t.match(strict.check(find('GET', '/v1/telemetry/network', 200)), [/sends etag, not declared/])
  t.match(strict.check(find('GET', '/transfers', 200)), [/does not match its schema/])
  wrong.paths['/transfers'].get.parameters.find((p: { name: string }) => p.name === 'limit').required = true
  t.match(new OpenApiContract(wrong).check(find('GET', '/transfers', 200)), [/accepted without query parameter limit/, /does not match its schema/])
  delete wrong.paths['/transfers/{id}/chunks'].post.requestBody
  t.match(new OpenApiContract(wrong).check(find('POST', '/transfers/{id}/chunks', 201)), [/accepted a application\/octet-stream body, the document declares none/])
  delete wrong.paths['/v1/telemetry/network'].get
  t.match(new OpenApiContract(wrong).check(find('GET', '/v1/telemetry/network', 200)), [/not in the document/])
})
