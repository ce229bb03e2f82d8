// Memory denial of service through oversized chunk bodies: four concurrent ~1 GiB bodies sent to a
// chunk whose planned length is 16 MiB are each refused with 413 as soon as the excess byte arrives
// (the sender gets no further than the chunk plus what the sockets buffer), the process's RSS stays
// bounded, /healthz keeps answering; a rate-limited or unknown key's body is never read before its
// 429/401. docs/transfers.md#chunk-ingest.
import t from 'tap'
import { startTestDevnet, apiClient } from '../../helpers/devnet.ts'
import { floodChunk } from '../../../bench/ingest/flood.ts'
import { runCli } from '../../helpers/proc.ts'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const MIB = 1024 * 1024
const FLOODS = 4
const FLOOD_BYTES = 1023 * MIB
// The sender may be ahead of the server by what loopback sockets buffer (a few MiB each way); a
// server that read the body before refusing it lets the whole 1023 MiB through.
const SLACK_BYTES = 48 * MIB
const RSS_GROWTH_LIMIT = 256 * MIB

/** A workerless devnet, a client key of `plan` and a transfer of `size` bytes (nothing moves its chunks). */
async function setup (t: { equal (a: unknown, b: unknown): void, teardown (fn: () => unknown): void }, plan: 'free' | 'enterprise', size: number, filename: string) {
  const net = await startTestDevnet(t, { workers: 0 })
  const key = await net.clientKey(plan)
  const api = apiClient(net.file.baseUrl, key)
  const created = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: net.file.nodes[0]!.hotkey, total_size: size, filename, tier: 'STANDARD' } })
  t.equal(created.status, 201)
  return { net, key, api, transfer: created.body }
}

t.test('four 1 GiB bodies at a 16 MiB chunk: 413 at the excess byte, RSS bounded, /healthz answers', async t => {
  const { net, key, api, transfer } = await setup(t, 'enterprise', 64 * MIB, 'flood.bin')
  t.equal(transfer.chunk_size, 16 * MIB, 'the plan cuts 16 MiB chunks')

  const rssBefore = process.memoryUsage().rss
  let rssPeak = rssBefore
  let flooding = true
  const sampler = setInterval(() => { rssPeak = Math.max(rssPeak, process.memoryUsage().rss) }, 50)
  const health: number[] = []
  const healthLoop = (async () => {
    for (let i = 0; i < 600 && flooding; i++) {
      const r = await fetch(`${net.file.baseUrl}/healthz`, { signal: AbortSignal.timeout(30_000) })
      health.push(r.status)
      await r.arrayBuffer()
    }
  })()
  const results = await Promise.all(Array.from({ length: FLOODS }, () => floodChunk({
    baseUrl: net.file.baseUrl, key, transferId: transfer.id, index: 0, expectedBytes: transfer.chunk_size, maxBytes: FLOOD_BYTES, timeoutMs: 120_000
  })))
  flooding = false
  await healthLoop
  clearInterval(sampler)
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss)

  for (const [i, r] of results.entries()) {
    t.equal(r.status, 413, `flood ${i}: 413 (${r.error ?? 'answered'})`)
    t.equal(r.code, 'BWN_ERR_CHUNK_TOO_LARGE', `flood ${i}: code`)
    t.ok(r.excessSent, `flood ${i}: the excess byte was sent`)
    t.ok(r.bytesSent <= transfer.chunk_size + SLACK_BYTES, `flood ${i}: refused at the excess byte (${(r.bytesSent / MIB).toFixed(1)} MiB sent of ${FLOOD_BYTES / MIB})`)
    t.ok(r.closed, `flood ${i}: connection closed after the answer`)
    t.comment(`flood ${i}: 413 ${r.msFromExcessToAnswer?.toFixed(0)} ms after the excess byte was written`)
  }
  const growth = rssPeak - rssBefore
  t.ok(growth < RSS_GROWTH_LIMIT, `RSS grew ${(growth / MIB).toFixed(0)} MiB (limit ${RSS_GROWTH_LIMIT / MIB}); before ${(rssBefore / MIB).toFixed(0)} MiB, peak ${(rssPeak / MIB).toFixed(0)} MiB`)
  t.ok(health.length >= 1, `/healthz answered during the flood (${health.length} times)`)
  t.ok(health.every(s => s === 200), '/healthz always 200')

  // Nothing was staged, and the chunk still takes its real bytes.
  const after = await api(`/transfers/${transfer.id}`)
  t.equal(after.body.chunks.received, 0, 'no chunk recorded')
  const good = Buffer.alloc(16 * MIB, 7)
  const ok = await api(`/transfers/${transfer.id}/chunks`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-chunk-index': '0' }, body: good as unknown as BodyInit })
  t.equal(ok.status, 201, 'the right body is then accepted')
})

t.test('a body is not read before the 401 of an unknown key or the 429 of a rate-limited one', async t => {
  const { net, key, api, transfer } = await setup(t, 'free', 64 * MIB, 'limited.bin')

  const unknown = await floodChunk({ baseUrl: net.file.baseUrl, key: 'bwn_sk_unknown0000000000000000000000', transferId: transfer.id, index: 0, expectedBytes: transfer.chunk_size, maxBytes: 512 * MIB, timeoutMs: 120_000 })
  t.equal(unknown.status, 401, 'unknown key: 401')
  t.ok(unknown.bytesSent <= SLACK_BYTES, `unknown key: answered before its body was read (${(unknown.bytesSent / MIB).toFixed(1)} MiB sent)`)

  // Spend the Free plan's requests per minute, then send 512 MiB.
  let limited = false
  for (let i = 0; i < 1000 && !limited; i++) limited = (await api('/transfers/tiers')).status === 429
  t.ok(limited, 'the Free key is rate limited')
  const flood = await floodChunk({ baseUrl: net.file.baseUrl, key, transferId: transfer.id, index: 0, expectedBytes: transfer.chunk_size, maxBytes: 512 * MIB, timeoutMs: 120_000 })
  t.equal(flood.status, 429, 'rate-limited key: 429')
  t.equal(flood.code, 'BWN_ERR_RATE_LIMITED')
  t.ok(flood.bytesSent <= SLACK_BYTES, `rate-limited key: answered before its body was read (${(flood.bytesSent / MIB).toFixed(1)} MiB sent of 512)`)
})

t.test('a body cut off by the client leaves no temp file and no chunk; the index then takes its bytes', async t => {
  const { request } = await import('node:http')
  const { readdir } = await import('node:fs/promises')
  const { join } = await import('node:path')
  const { eventually } = await import('../../helpers/proc.ts')
  const { net, key, api, transfer: created } = await setup(t, 'enterprise', 16 * MIB, 'cut.bin')
  const tmp = join(net.data, 'orchestrator', 'blobs', 'tmp')
  // Half the body, then the connection goes away.
  const req = request(new URL(`/transfers/${created.id}/chunks`, net.file.baseUrl), {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream', 'x-chunk-index': '0', 'content-length': String(16 * MIB) }
  })
  req.on('error', () => {})
  await new Promise<void>(resolve => req.write(Buffer.alloc(8 * MIB, 3), () => resolve()))
  const T0 = performance.now()
  await eventually(async () => (await readdir(tmp)).length === 1, 30_000, 'the body to be streaming into a temp file')
  t.comment(`streaming after ${performance.now() - T0} ms`)
  req.destroy()
  await eventually(async () => (await readdir(tmp)).length === 0, 30_000, 'the temp file of the cut-off body to go')
  t.comment(`gone after ${performance.now() - T0} ms`)
  t.equal((await api(`/transfers/${created.id}`)).body.chunks.received, 0, 'no chunk recorded')
  const ok = await api(`/transfers/${created.id}/chunks`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-chunk-index': '0' }, body: Buffer.alloc(16 * MIB, 3) as unknown as BodyInit })
  t.equal(ok.status, 201, 'the whole body is then accepted')
})

t.test('a client still sending when it is refused reads the 413, not a reset', async t => {
  // The server answers at the excess byte and closes, but first keeps reading and dropping what is still
  // on the way (api/routes/transfers.ts, lingerBeforeClose): closing on unread bytes makes the kernel reset
  // the connection, and a client still writing then fails (EPIPE) before it reads the answer. Seen with
  // the server in another process (in one process the client's writes and the close never interleave so).
  const data = await mkdtemp(join(tmpdir(), 'bwnet-linger-'))
  t.teardown(() => rm(data, { recursive: true, force: true }))
  const proc = runCli(['devnet', '--port', '0', '--data', data, '--workers', '1'])
  t.teardown(() => proc.stop('SIGKILL'))
  await proc.waitFor(l => l.event === 'devnet_ready', 120_000, 'devnet_ready')
  const file = JSON.parse(await readFile(join(data, 'devnet.json'), 'utf8'))
  const admin = apiClient(file.baseUrl, file.keys.admin)
  const orgs = await admin('/admin/organizations')
  const created = await admin(`/admin/organizations/${(orgs.body.items ?? orgs.body)[0].id}/keys`, { method: 'POST', json: { role: 'client', plan: 'enterprise', name: 'linger' } })
  const key = created.body.key as string
  const transfer = (await apiClient(file.baseUrl, key)('/transfers/create', { method: 'POST', json: { sender_hotkey: file.nodes[0].hotkey, total_size: 64 * MIB, filename: 'linger.bin', tier: 'STANDARD' } })).body
  for (let round = 0; round < 6; round++) {
    const results = await Promise.all(Array.from({ length: FLOODS }, () => floodChunk({
      baseUrl: file.baseUrl, key, transferId: transfer.id, index: 0, expectedBytes: transfer.chunk_size, maxBytes: 512 * MIB, timeoutMs: 60_000, contentLength: true
    })))
    for (const [i, r] of results.entries()) {
      t.same({ status: r.status, code: r.code, error: r.error }, { status: 413, code: 'BWN_ERR_CHUNK_TOO_LARGE', error: null }, `round ${round}, body ${i}: ${(r.bytesSent / MIB).toFixed(0)} MiB sent`)
    }
  }
})
