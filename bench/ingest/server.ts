// The server side of the ingest bench, run as a child process so both paths are served by the same
// kind of process: `--mode bwnet` starts a devnet with no workers (an orchestrator with the API, its
// blob store and coordinator, and a validator: chunks are staged and nothing moves them on), `--mode
// baseline` a bare node:http server that streams each POSTed body to its own file, hashing it
// (sha256) on the way, and fsyncs it before answering.
// Prints one JSON line when ready; SIGTERM stops it.
import { createServer } from 'node:http'
import { once } from 'node:events'
import { createHash } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { AddressInfo } from 'node:net'
import { Devnet } from '../../node/devnet.ts'
import { createLogger } from '../../node/logger.ts'
import { bootstrapDevnetKeys } from '../../api/accounts/devnet.ts'
import { WRITE_BATCH_BYTES } from '../../node/adapters/blob-store.ts'

const { values } = parseArgs({ options: { mode: { type: 'string' }, data: { type: 'string' } } })
const data = values.data!

if (values.mode === 'bwnet') {
  const devnet = new Devnet({ port: 0, data, workers: 0, logLevel: 'warn' }, createLogger({ level: 'warn' }), {
    bootstrapKeys: async (o) => ({ ...await bootstrapDevnetKeys(o.accounts!) })
  })
  const file = await devnet.start()
  process.once('SIGTERM', () => { void devnet.stop().then(() => process.exit(0), () => process.exit(1)) })
  process.stdout.write(JSON.stringify({ ready: true, url: file.baseUrl, admin: file.keys.admin, blobs: join(data, 'orchestrator', 'blobs') }) + '\n')
} else if (values.mode === 'baseline') {
  const dir = join(data, 'baseline')
  await mkdir(dir, { recursive: true })
  const server = createServer((req, res) => {
    const name = /^\/chunks\/([A-Za-z0-9_-]{1,64})$/.exec(req.url ?? '')?.[1]
    if (req.method !== 'POST' || name === undefined) { res.writeHead(404).end(); return }
    // Stream the body to its file while hashing it (sha256), fsync, then answer: the least any
    // durable, checked ingest has to do.
    const hash = createHash('sha256')
    let bytes = 0
    const tap = new Transform({ transform (piece: Buffer, _enc, cb) { hash.update(piece); bytes += piece.length; cb(null, piece) } })
    // Writes batched like the blob store's (1 MiB, one in flight), so neither side wins on syscalls.
    pipeline(req, tap, createWriteStream(join(dir, name), { flush: true, highWaterMark: WRITE_BATCH_BYTES })).then(
      () => { res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ bytes, sha256: hash.digest('hex') })) },
      (err: Error) => { res.writeHead(500).end(err.message) }
    )
  })
  server.keepAliveTimeout = 72_000 // as Fastify's default, so both paths reuse connections alike
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  process.once('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)) })
  process.stdout.write(JSON.stringify({ ready: true, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, dir }) + '\n')
} else {
  process.stderr.write('--mode bwnet|baseline\n')
  process.exit(2)
}
