// Acceptance: every bad input of the transfer and destination routes answers its 4xx problem+json;
// none answers 5xx. Plan limits: 413 for size, 429 with Retry-After for concurrency.
import t from 'tap'
import { startTestDevnet, apiClient, sha256, testBytes } from '../../helpers/devnet.ts'

const UNKNOWN = '00000000-0000-4000-8000-000000000000'

t.test('bad input matrix', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const key = await net.clientKey('enterprise')
  const api = apiClient(net.file.baseUrl, key)
  const free = apiClient(net.file.baseUrl, await net.clientKey('free'))
  const hotkey = net.file.nodes[0]!.hotkey
  const badChecksum = hotkey.slice(0, -1) + (hotkey.endsWith('a') ? 'b' : 'a')
  const size = 20 * 1024 * 1024 + 5 // two chunks: 16 MiB + 4 MiB + 5
  const data = testBytes(size, 2)
  const create = (body: unknown, client = api) => client('/transfers/create', { method: 'POST', json: body })
  const good = { sender_hotkey: hotkey, total_size: size, filename: 'matrix.bin', tier: 'STANDARD' }
  const made = await create(good)
  t.equal(made.status, 201)
  const id = made.body.id
  const c0 = data.subarray(0, made.body.chunk_size)
  const chunk = (i: number | string | null, body: Uint8Array, headers: Record<string, string> = {}, target = id) =>
    api(`/transfers/${target}/chunks`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', ...(i === null ? {} : { 'x-chunk-index': String(i) }), ...headers }, body: body as unknown as BodyInit })
  t.equal((await chunk(0, c0)).status, 201)

  const rows: Array<[string, () => Promise<{ status: number, headers: Headers, body: any }>, number, string]> = [
    ['no key', () => fetch(`${net.file.baseUrl}/transfers/tiers`).then(async r => ({ status: r.status, headers: r.headers, body: await r.json() })), 401, 'BWN_ERR_KEY_MISSING'],
    ['create: missing fields', () => create({ total_size: 5 }), 400, 'BWN_ERR_VALIDATION'],
    ['create: extra field', () => create({ ...good, colour: 'red' }), 400, 'BWN_ERR_VALIDATION'],
    ['create: hotkey checksum', () => create({ ...good, sender_hotkey: badChecksum }), 400, 'BWN_ERR_INVALID_HOTKEY'],
    ['create: hotkey garbage', () => create({ ...good, sender_hotkey: 'not-a-key' }), 400, 'BWN_ERR_INVALID_HOTKEY'],
    ['create: unknown tier', () => create({ ...good, tier: 'GOLD' }), 400, 'BWN_ERR_UNKNOWN_TIER'],
    ['create: zero size', () => create({ ...good, total_size: 0 }), 400, 'BWN_ERR_VALIDATION'],
    ['create: fractional size', () => create({ ...good, total_size: 1.5 }), 400, 'BWN_ERR_VALIDATION'],
    ['create: size as string', () => create({ ...good, total_size: 'big' }), 400, 'BWN_ERR_VALIDATION'],
    ['create: too large for the plan', () => create({ ...good, total_size: 6_000_000_000 }, free), 413, 'BWN_ERR_FILE_TOO_LARGE'],
    ['create: too large for any transfer', () => create({ ...good, total_size: 6 * 1024 ** 4 }), 413, 'BWN_ERR_FILE_TOO_LARGE'],
    ['create: path in filename', () => create({ ...good, filename: '../etc/passwd' }), 400, 'BWN_ERR_BAD_FILENAME'],
    ['create: unknown destination', () => create({ ...good, destination_id: 'nope' }), 404, 'BWN_ERR_DESTINATION_NOT_FOUND'],
    ['create: not JSON', () => api('/transfers/create', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{oops' }), 400, 'BWN_ERR_BAD_REQUEST'],
    ['chunk: unknown transfer', () => chunk(0, c0, {}, UNKNOWN), 404, 'BWN_ERR_TRANSFER_NOT_FOUND'],
    ['chunk: id not a uuid', () => chunk(0, c0, {}, 'xyz'), 400, 'BWN_ERR_VALIDATION'],
    ['chunk: no index', () => chunk(null, c0), 400, 'BWN_ERR_CHUNK_INDEX'],
    ['chunk: index not a number', () => chunk('one', c0), 400, 'BWN_ERR_VALIDATION'],
    ['chunk: index out of range', () => chunk(2, c0), 400, 'BWN_ERR_CHUNK_INDEX'],
    ['chunk: body longer than the chunk', () => chunk(1, c0), 413, 'BWN_ERR_CHUNK_TOO_LARGE'],
    ['chunk: body shorter than the chunk', () => chunk(1, data.subarray(made.body.chunk_size + 1)), 400, 'BWN_ERR_CHUNK_SIZE'],
    ['chunk: digest mismatch', () => chunk(1, data.subarray(made.body.chunk_size), { 'x-chunk-sha256': '0'.repeat(64) }), 400, 'BWN_ERR_CHUNK_DIGEST'],
    ['chunk: digest malformed', () => chunk(1, data.subarray(made.body.chunk_size), { 'x-chunk-sha256': 'xyz' }), 400, 'BWN_ERR_VALIDATION'],
    ['chunk: other bytes for a received index', () => chunk(0, Buffer.alloc(c0.byteLength, 1)), 409, 'BWN_ERR_CHUNK_CONFLICT'],
    ['chunk: wrong content type', () => api(`/transfers/${id}/chunks`, { method: 'POST', headers: { 'content-type': 'text/plain', 'x-chunk-index': '1' }, body: 'hello' }), 415, 'BWN_ERR_UNSUPPORTED_MEDIA_TYPE'],
    ['finalize: chunks missing', () => api(`/transfers/${id}/finalize`, { method: 'POST' }), 409, 'BWN_ERR_CHUNKS_MISSING'],
    ['finalize: unknown', () => api(`/transfers/${UNKNOWN}/finalize`, { method: 'POST' }), 404, 'BWN_ERR_TRANSFER_NOT_FOUND'],
    ['get: unknown', () => api(`/transfers/${UNKNOWN}`), 404, 'BWN_ERR_TRANSFER_NOT_FOUND'],
    ['get: another organization cannot see it', async () => {
      const accounts = net.devnet.orchestrator.accounts!
      const org = await accounts.createOrganization({ name: 'other' })
      const other = await accounts.createKey(org.id, { role: 'client', plan: 'enterprise', name: 'other' })
      return apiClient(net.file.baseUrl, other.key)(`/transfers/${id}`)
    }, 404, 'BWN_ERR_TRANSFER_NOT_FOUND'],
    ['delete: unknown', () => api(`/transfers/${UNKNOWN}`, { method: 'DELETE' }), 404, 'BWN_ERR_TRANSFER_NOT_FOUND'],
    ['list: limit too big', () => api('/transfers?limit=1000'), 400, 'BWN_ERR_VALIDATION'],
    ['list: unknown status', () => api('/transfers?status=lost'), 400, 'BWN_ERR_VALIDATION'],
    ['destinations: bad kind', () => api('/destinations', { method: 'POST', headers: { 'x-api-key': key, authorization: '' }, json: { name: 'x', kind: 'ftp', config: {} } }), 400, 'BWN_ERR_VALIDATION'],
    ['destinations: s3 without secret', () => api('/destinations', { method: 'POST', headers: { 'x-api-key': key, authorization: '' }, json: { name: 'x', kind: 's3', config: { endpoint: 'http://127.0.0.1:1', region: 'r', bucket: 'bkt', accessKeyId: 'a' } } }), 400, 'BWN_ERR_VALIDATION'],
    ['destinations: bearer not accepted', () => api('/destinations'), 401, 'BWN_ERR_KEY_MISSING'],
    ['destinations: unknown', () => api('/destinations/nope', { headers: { 'x-api-key': key, authorization: '' } }), 404, 'BWN_ERR_DESTINATION_NOT_FOUND'],
    ['destinations: delete unknown', () => api('/destinations/nope', { method: 'DELETE', headers: { 'x-api-key': key, authorization: '' } }), 404, 'BWN_ERR_DESTINATION_NOT_FOUND'],
    ['destinations: delete the built-in', () => api(`/destinations/${made.body.destination_id}`, { method: 'DELETE', headers: { 'x-api-key': key, authorization: '' } }), 409, 'BWN_ERR_DESTINATION_BUILTIN']
  ]
  for (const [name, call, status, code] of rows) {
    const res = await call()
    t.equal(res.status, status, `${name}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`)
    t.equal(res.body?.code, code, `${name}: code`)
    t.match(res.headers.get('content-type') ?? '', /application\/problem\+json/, `${name}: problem+json`)
    t.ok(res.status < 500, `${name}: never 5xx`)
  }

  // Keys on the real transfer and destination routes: unknown, revoked, wrong role.
  const accounts = net.devnet.orchestrator.accounts!
  const orgId = (await accounts.listOrganizations())[0]!.id
  const revoked = await accounts.createKey(orgId, { role: 'client', plan: 'enterprise', name: 'revoked' })
  await accounts.revokeKey(revoked.apiKey.id)
  const probes: Array<[string, string, RequestInit]> = [
    ['GET /transfers/tiers', '/transfers/tiers', {}],
    ['POST /transfers/create', '/transfers/create', { method: 'POST', body: JSON.stringify(good), headers: { 'content-type': 'application/json' } }],
    [`GET /transfers/{id}`, `/transfers/${id}`, {}],
    ['GET /transfers', '/transfers', {}],
    ['GET /destinations', '/destinations', {}]
  ]
  const keyCases: Array<[string, string, number, string]> = [
    ['unknown key', 'bwn_0000000000000000_' + 'A'.repeat(43), 401, 'BWN_ERR_KEY_INVALID'],
    ['revoked key', revoked.key, 401, 'BWN_ERR_KEY_REVOKED'],
    ['console key (wrong role)', net.file.keys.console!, 403, 'BWN_ERR_ROLE_FORBIDDEN'],
    ['admin key (wrong role)', net.file.keys.admin!, 403, 'BWN_ERR_ROLE_FORBIDDEN']
  ]
  for (const [route, path, init] of probes) {
    for (const [what, k, status, code] of keyCases) {
      const res = await fetch(net.file.baseUrl + path, { ...init, headers: { ...(init.headers as Record<string, string> ?? {}), 'x-api-key': k } })
      const body = await res.json() as any
      t.equal(res.status, status, `${route}, ${what}: ${res.status} ${body.code}`)
      t.equal(body.code, code, `${route}, ${what}: code`)
    }
  }

  // Idempotent re-send of the same bytes.
  const again = await chunk(0, c0, { 'x-chunk-sha256': sha256(c0) })
  t.equal(again.status, 200)
  t.equal(again.body.duplicate, true)

  // Free plan: three transfers in progress at most; the fourth is a 429 with Retry-After.
  for (let i = 0; i < 3; i++) t.equal((await create({ ...good, filename: `f${i}.bin` }, free)).status, 201)
  const fourth = await create({ ...good, filename: 'f3.bin' }, free)
  t.equal(fourth.status, 429)
  t.equal(fourth.body.code, 'BWN_ERR_CONCURRENT_TRANSFERS')
  t.ok(Number(fourth.headers.get('retry-after')) > 0, 'Retry-After')

  const tiers = await api('/transfers/tiers')
  t.equal(tiers.status, 200)
  t.same(tiers.body.tiers.map((x: any) => x.name), ['STANDARD'])
  t.match(tiers.body.plans, [{ plan: 'free', requests_per_minute: 60, concurrent_transfers: 3, max_file_size_bytes: 5_000_000_000 }, { plan: 'pro', requests_per_minute: 300, concurrent_transfers: 10 }, { plan: 'enterprise', requests_per_minute: null, concurrent_transfers: null }])

  // Lists redact display names.
  const list = await api('/transfers?limit=5')
  t.equal(list.status, 200)
  t.ok(list.body.items.length >= 1)
  for (const item of list.body.items) { t.equal(item.transfer_name, null); t.notOk('name' in item.metadata) }
  const own = await api(`/transfers/${id}`)
  t.equal(own.body.transfer_name, 'matrix.bin', 'the owner\'s own read shows the name')

  // Cancel, then the closed transfer refuses chunks and finalize; a cancelled one cannot be "un-cancelled".
  t.equal((await api(`/transfers/${id}`, { method: 'DELETE' })).status, 200)
  const closed = await chunk(1, data.subarray(made.body.chunk_size))
  t.equal(closed.status, 409)
  t.equal(closed.body.code, 'BWN_ERR_TRANSFER_CLOSED')
})
