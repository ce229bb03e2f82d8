// The e2e bench's baseline receiver, a child process like the devnet: `PUT /files/{name}` streams the
// body into `<dir>/.baseline-<name>` while hashing it (sha256, as the sink verifies every chunk),
// fsyncs, renames it to `<dir>/<name>` and fsyncs the directory, then answers 201 with the digest.
// Prints one JSON line when ready; SIGTERM stops it.
import { createServer } from 'node:http'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { open, rename, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { AddressInfo } from 'node:net'
import { fsyncDir } from '../../node/adapters/blob-store.ts'

const { values } = parseArgs({ options: { dir: { type: 'string' } } })
const dir = values.dir!
await mkdir(dir, { recursive: true })

const server = createServer((req, res) => {
  const name = /^\/files\/([A-Za-z0-9_.-]{1,128})$/.exec(req.url ?? '')?.[1]
  if (req.method !== 'PUT' || name === undefined || name.startsWith('.')) { res.writeHead(404).end(); return }
  void (async () => {
    const tmp = join(dir, `.baseline-${name}`)
    const fh = await open(tmp, 'w')
    const hash = createHash('sha256')
    let bytes = 0
    try {
      for await (const piece of req) {
        hash.update(piece as Buffer)
        await fh.write(piece as Buffer)
        bytes += (piece as Buffer).length
      }
      await fh.sync()
    } finally { await fh.close() }
    await rename(tmp, join(dir, name))
    await fsyncDir(dir)
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ bytes, sha256: hash.digest('hex') }))
  })().catch((err: Error) => { res.writeHead(500).end(err.message) })
})
server.requestTimeout = 0 // a 1 GiB body on a slow disk may take minutes; the bench bounds the run
server.listen(0, '127.0.0.1')
await once(server, 'listening')
process.once('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)) })
process.stdout.write(JSON.stringify({ ready: true, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }) + '\n')
