// Memory denial of service through oversized chunk bodies: four concurrent ~1 GiB bodies sent to a
// chunk whose planned length is 16 MiB are each refused with 413 as soon as the excess byte arrives
// (the sender gets no further than the chunk plus what the sockets buffer), the process's RSS stays
// bounded, /healthz keeps answering; a rate-limited or unknown key's body is never read before its
// 429/401. docs/transfers.md#chunk-ingest.
import t from 'tap'
import { startTestDevnet, apiClient, startDevnetProcess, mintClientKey } from '../../helpers/devnet.ts'
import { floodChunk } from '../../../bench/ingest/flood.ts'
import { mkdtemp, rm } from 'node:fs/promises'
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
  const { file } = await startDevnetProcess(t, data, { workers: 1, waitForWorkers: false })
  const key = await mintClientKey(file.baseUrl, file.keys.admin, 'linger')
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

/**
 * A raw client that sends a chunk body with `Content-Length: 1 GiB` and never stops on its own: `pace`
 * null writes as fast as the socket drains, else one 64 KiB piece per `pace` ms. Bounded: it gives up
 * after `limitBytes` or `limitMs`. Reports when the answer's head arrived and when the server ended the
 * connection, and what was written after the answer.
 */
async function sendForever (baseUrl: string, key: string, transferId: string, opts: { pace: number | null, limitBytes: number, limitMs: number }): Promise<{ status: number | null, closedAfterMs: number | null, bytesAfterAnswer: number, reason: string }> {
  const { connect } = await import('node:net')
  const url = new URL(baseUrl)
  const socket = connect({ host: url.hostname, port: Number(url.port), allowHalfOpen: true }) // the server ends its side first and still reads
  const piece = Buffer.alloc(64 * 1024, 0x5a)
  let written = 0
  let writtenAtAnswer: number | null = null
  let answeredAt: number | null = null
  let head = ''
  return await new Promise((resolve) => {
    let settled = false
    let timer: NodeJS.Timeout | null = null
    const finish = (reason: string): void => {
      if (settled) return
      settled = true
      if (timer !== null) clearInterval(timer)
      clearTimeout(limit)
      socket.destroy()
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head)
      resolve({ status: status === null ? null : Number(status[1]), closedAfterMs: answeredAt === null ? null : performance.now() - answeredAt, bytesAfterAnswer: writtenAtAnswer === null ? 0 : written - writtenAtAnswer, reason })
    }
    const limit = setTimeout(() => finish('client limit'), opts.limitMs)
    socket.on('data', (d: Buffer) => {
      if (answeredAt === null) { answeredAt = performance.now(); writtenAtAnswer = written }
      head += d.toString('latin1')
    })
    // The server ends its side after the answer (we keep writing); its close then shows as a reset or a failed write.
    socket.on('close', () => finish('close'))
    socket.on('error', (err: NodeJS.ErrnoException) => finish(err.code ?? err.message))
    const write = (): boolean => {
      if (settled || written >= opts.limitBytes) return false
      written += piece.length
      return socket.write(piece)
    }
    socket.once('connect', () => {
      socket.write(`POST /transfers/${transferId}/chunks HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${key}\r\ncontent-type: application/octet-stream\r\nx-chunk-index: 0\r\ncontent-length: ${1024 * MIB}\r\n\r\n`)
      if (opts.pace === null) {
        const pump = (): void => { while (write()) { /* until the socket buffer is full */ } if (!settled && written < opts.limitBytes) socket.once('drain', pump) }
        pump()
      } else timer = setInterval(write, opts.pace)
    })
  })
}

// The bounds as docs/transfers.md#chunk-ingest states them (api/body-pace.ts, LINGER_BYTES and LINGER_MS).
const LINGER_BYTES = 64 * MIB
const LINGER_MS = 2_000

t.test('a refused body that never stops: the server reads at most 64 MiB or 2 s of it, then closes', async t => {
  const { net, key, transfer } = await setup(t, 'enterprise', 64 * MIB, 'forever.bin')
  // As fast as the socket takes it: closed once 64 MiB have been dropped (plus what the sockets buffer).
  const fast = await sendForever(net.file.baseUrl, key, transfer.id, { pace: null, limitBytes: 1024 * MIB, limitMs: 60_000 })
  t.equal(fast.status, 413, 'the answer came first')
  t.not(fast.reason, 'client limit', `the server closed the connection (${fast.reason})`)
  t.ok(fast.bytesAfterAnswer <= LINGER_BYTES + SLACK_BYTES, `${(fast.bytesAfterAnswer / MIB).toFixed(1)} MiB written after the answer`)
  t.ok(fast.bytesAfterAnswer >= 32 * MIB, 'the body was read and dropped for a while, not cut off at the answer')
  // The byte bound, not the timer, ended it: unless the machine could not even send LINGER_BYTES in LINGER_MS.
  if (fast.bytesAfterAnswer < LINGER_BYTES - SLACK_BYTES && (fast.closedAfterMs ?? 0) >= LINGER_MS - 300) t.comment(`too slow to tell the bounds apart: ${(fast.bytesAfterAnswer / MIB).toFixed(1)} MiB in ${fast.closedAfterMs?.toFixed(0)} ms`)
  else t.ok(fast.closedAfterMs !== null && fast.closedAfterMs < LINGER_MS - 300, `closed ${fast.closedAfterMs?.toFixed(0)} ms after the answer, before the ${LINGER_MS} ms were up`)
  // A trickle (~3 MiB/s) never reaches 64 MiB: closed when the 2 s are up.
  const slow = await sendForever(net.file.baseUrl, key, transfer.id, { pace: 20, limitBytes: 256 * MIB, limitMs: 60_000 })
  t.equal(slow.status, 413, 'the answer came first')
  t.not(slow.reason, 'client limit', `the server closed the connection (${slow.reason})`)
  t.ok(slow.closedAfterMs !== null && slow.closedAfterMs >= LINGER_MS - 500 && slow.closedAfterMs < 5 * LINGER_MS, `closed ${slow.closedAfterMs?.toFixed(0)} ms after the answer`)
  t.ok(slow.bytesAfterAnswer < LINGER_BYTES, `${(slow.bytesAfterAnswer / MIB).toFixed(1)} MiB written after the answer`)
})
