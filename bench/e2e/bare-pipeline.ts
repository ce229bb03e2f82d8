// The e2e bench's third path: bwnet's data path with nothing else. One child process (like the devnet)
// runs the stages a bwnet transfer puts every byte through, written with plain node:http and node:fs:
//
//   ingest    POST /chunks/{i}: streamed into a temp file while hashing (sha256), fsynced, renamed,
//             directory fsynced, checked against the sender's sha256, answered 201
//   workers   as soon as a chunk is acknowledged: GET it from the data endpoint (a file stream), hash it
//             on the way and PUT it into the sink; the hash must match before the result counts
//   sink      PUT /chunks/{i}?offset=: positional writes into the partial file while hashing, datasync,
//             answered 201 with the sha256
//   validator GET each delivered chunk back from the sink and hash it (every chunk, as in the devnet)
//   complete  POST /finalize answers once every chunk is delivered: the partial file is fsynced, renamed
//             into the sink directory and the directory fsynced
//
// No authentication, signed URLs, actors, database, telemetry or retries: what is left is the work per
// byte (four loopback hops, four sha256 passes, two durable writes, two file reads) that the design asks
// for, on one event loop like the devnet's, so its time against the baseline's is what those stages cost
// on this machine. Files are sent the way bwnet sends them (node/adapters/file-response.ts).
// Prints one JSON line when ready; SIGTERM stops it.
import { Agent, createServer, request, type IncomingMessage, type ServerResponse, type Server } from 'node:http'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { open, rename, mkdir, rm, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { AddressInfo } from 'node:net'
import { fsyncDir } from '../../node/adapters/blob-store.ts'
import { sendFileRange } from '../../node/adapters/file-response.ts'

const { values } = parseArgs({ options: { dir: { type: 'string' }, sink: { type: 'string' }, moves: { type: 'string', default: '8' } } })
const blobs = join(values.dir!, 'blobs')
const sinkDir = values.sink!
const maxMoves = Number(values.moves) // deliveries in flight: the devnet's 2 workers × 4 slots
await mkdir(blobs, { recursive: true })
await mkdir(sinkDir, { recursive: true })

const agent = new Agent({ keepAlive: true, maxSockets: 64 })

interface Transfer {
  name: string
  size: number
  chunk: number
  total: number
  partial: string
  fh: FileHandle
  delivered: number
  /** Deliveries that ended, delivered or failed: the transfer ends when all have. */
  ended: number
  verified: number
  failures: string[]
  finalized: boolean
  verifications: Array<Promise<void>>
  completed: Promise<void>
  complete: () => void
}
let current: Transfer | null = null

async function listen (server: Server): Promise<number> {
  server.requestTimeout = 0
  // Idle keep-alive sockets stay open for the run: at the default 5 s a server could close one just as
  // a busy client reused it, and the move failed with "socket hang up" (once, 2026-11-26).
  server.keepAliveTimeout = 10 * 60_000
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return (server.address() as AddressInfo).port
}

function answer (res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

/** Streams a request body to a file at `position` (or appending), hashing it; returns bytes and sha256. */
async function bodyToFile (req: IncomingMessage, fh: FileHandle, position: number | null): Promise<{ bytes: number, sha256: string }> {
  const hash = createHash('sha256')
  let bytes = 0
  for await (const piece of req) {
    hash.update(piece as Buffer)
    for (let done = 0; done < (piece as Buffer).length;) {
      done += (await fh.write(piece as Buffer, done, (piece as Buffer).length - done, position === null ? null : position + bytes + done)).bytesWritten
    }
    bytes += (piece as Buffer).length
  }
  return { bytes, sha256: hash.digest('hex') }
}

// The data endpoint: a blob file, streamed.
const data = createServer((req, res) => {
  const sha = /^\/blobs\/([0-9a-f]{64})$/.exec(req.url ?? '')?.[1]
  if (sha === undefined) { res.writeHead(404).end(); return }
  void (async () => {
    const fh = await open(join(blobs, sha), 'r')
    try {
      const { size } = await fh.stat()
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) })
      await sendFileRange(res, fh, 0, size)
    } finally { await fh.close() }
  })().catch(() => { if (!res.headersSent) res.writeHead(404).end(); else res.destroy() })
})

// The sink: positional chunk writes into the partial file, and read-backs for the validator.
const sink = createServer((req, res) => {
  const m = /^\/chunks\/(\d+)\?offset=(\d+)(?:&length=(\d+))?$/.exec(req.url ?? '')
  const t = current
  if (m === null || t === null) { res.writeHead(404).end(); return }
  const offset = Number(m[2])
  if (req.method === 'GET') {
    // Through the open handle: it stays open (and valid across the final rename) until every read-back is done.
    const length = Number(m[3])
    res.writeHead(206, { 'content-length': String(length) })
    sendFileRange(res, t.fh, offset, length).catch(() => {})
    return
  }
  void (async () => {
    const got = await bodyToFile(req, t.fh, offset)
    await t.fh.datasync()
    answer(res, 201, got)
  })().catch((err: Error) => answer(res, 500, { error: err.message }))
})

/** GETs `path`, passing each piece of the body to `onPiece`; resolves once the body has ended. */
function get (port: number, path: string, onPiece: (piece: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.on('data', onPiece).once('end', resolve).once('error', reject)
    }).once('error', reject).end()
  })
}

let dataPort = 0
let sinkPort = 0

/** One worker move: pull from the data endpoint, hash on the way, PUT into the sink; then the validator's read-back. */
async function deliver (t: Transfer, index: number, sha: string): Promise<void> {
  const offset = index * t.chunk
  const length = Math.min(t.chunk, t.size - offset)
  const pulled = createHash('sha256')
  let sinkAnswer = ''
  await new Promise<void>((resolve, reject) => {
    const put = request({ host: '127.0.0.1', port: sinkPort, method: 'PUT', path: `/chunks/${index}?offset=${offset}`, agent, headers: { 'content-length': String(length) } }, (res) => {
      res.setEncoding('utf8').on('data', (d: string) => { sinkAnswer += d }).once('end', resolve).once('error', reject)
    })
    put.once('error', reject)
    const pull = request({ host: '127.0.0.1', port: dataPort, path: `/blobs/${sha}`, agent }, (res) => {
      res.on('data', (piece: Buffer) => { pulled.update(piece); if (!put.write(piece)) res.pause() })
      put.on('drain', () => res.resume())
      res.once('end', () => put.end()).once('error', reject)
    })
    pull.once('error', reject).end()
  })
  const stored = JSON.parse(sinkAnswer) as { bytes: number, sha256: string }
  if (pulled.digest('hex') !== sha || stored.sha256 !== sha || stored.bytes !== length) throw new Error(`chunk ${index} arrived damaged`)
  t.delivered++
  t.ended++
  // The validator re-reads every delivered chunk (devnet: 100 %), off the delivery's critical path.
  t.verifications.push((async () => {
    const back = createHash('sha256')
    await get(sinkPort, `/chunks/${index}?offset=${offset}&length=${length}`, (piece) => { back.update(piece) })
    if (back.digest('hex') !== sha) t.failures.push(`chunk ${index}: read-back differs`)
    else t.verified++
  })())
}

// Deliveries in flight, at most maxMoves; chunks wait in acknowledgement order.
const waiting: Array<() => Promise<void>> = []
let moving = 0
function pump (): void {
  while (moving < maxMoves && waiting.length > 0) {
    moving++
    void waiting.shift()!().finally(() => { moving--; pump() })
  }
}
function schedule (move: () => Promise<void>): void { waiting.push(move); pump() }

async function completeIfDone (t: Transfer): Promise<void> {
  if (!t.finalized || t.ended < t.total) return
  if (t.failures.length > 0) { t.complete(); return } // answered with the failures; nothing is linked
  await t.fh.sync()
  await rename(t.partial, join(sinkDir, t.name))
  await fsyncDir(sinkDir)
  t.complete()
}

const api = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://bare.invalid')
  void (async () => {
    if (req.method === 'POST' && url.pathname === '/begin') {
      const size = Number(url.searchParams.get('size')); const chunk = Number(url.searchParams.get('chunk'))
      const name = url.searchParams.get('name')!
      const partial = join(sinkDir, `.bare-${name}.partial`)
      const fh = await open(partial, 'w+')
      await fh.truncate(size)
      let complete!: () => void
      const completed = new Promise<void>(resolve => { complete = resolve })
      current = { name, size, chunk, total: Math.ceil(size / chunk), partial, fh, delivered: 0, ended: 0, verified: 0, failures: [], finalized: false, verifications: [], completed, complete }
      answer(res, 201, { total: current.total }); return
    }
    const t = current
    if (t === null) { answer(res, 404, {}); return }
    const chunk = /^\/chunks\/(\d+)$/.exec(url.pathname)
    if (req.method === 'POST' && chunk !== null) {
      const index = Number(chunk[1])
      const tmp = join(blobs, `.tmp-${index}-${Math.random().toString(36).slice(2)}`)
      const fh = await open(tmp, 'w')
      let got: { bytes: number, sha256: string }
      try { got = await bodyToFile(req, fh, null); await fh.sync() } finally { await fh.close() }
      if (got.sha256 !== req.headers['x-chunk-sha256']) { answer(res, 400, { error: 'sha256 mismatch' }); return }
      await rename(tmp, join(blobs, got.sha256))
      await fsyncDir(blobs)
      answer(res, 201, got)
      schedule(async () => {
        try { await deliver(t, index, got.sha256) } catch (err) { t.ended++; t.failures.push((err as Error).message) }
        await completeIfDone(t)
      })
      return
    }
    if (req.method === 'POST' && url.pathname === '/finalize') {
      t.finalized = true
      await completeIfDone(t)
      await t.completed
      answer(res, 200, { delivered: t.delivered, failures: t.failures }); return
    }
    if (req.method === 'GET' && url.pathname === '/verified') {
      await Promise.all(t.verifications)
      await t.fh.close()
      // Untimed clean-up, like the orchestrator's staging clean-up after a transfer ends.
      await rm(blobs, { recursive: true, force: true }); await mkdir(blobs, { recursive: true })
      answer(res, 200, { verified: t.verified, failures: t.failures }); return
    }
    answer(res, 404, {})
  })().catch((err: Error) => answer(res, 500, { error: err.message }))
})

dataPort = await listen(data)
sinkPort = await listen(sink)
const apiPort = await listen(api)
process.once('SIGTERM', () => { for (const s of [api, data, sink]) s.closeAllConnections(); process.exit(0) })
process.stdout.write(JSON.stringify({ ready: true, url: `http://127.0.0.1:${apiPort}` }) + '\n')
