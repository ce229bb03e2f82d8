// An `http` destination for the multi-host lab: `PUT /objects/<name>` with Content-Range writes the body
// at its offset into <dir>/<name>; `GET` with Range reads back (validators); DELETE removes it.
// Usage: node http-destination.ts HOST PORT DIR. Logs one JSON line when listening.
import { createServer } from 'node:http'
import { constants, createReadStream } from 'node:fs'
import { open, rm, stat } from 'node:fs/promises'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { join } from 'node:path'

const WRITE_BYTES = 1024 * 1024
const [host, port, dir] = process.argv.slice(2)
if (host === undefined || port === undefined || dir === undefined) throw new Error('usage: http-destination.ts HOST PORT DIR')

const server = createServer((req, res) => {
  const m = /^\/objects\/([A-Za-z0-9._-]{1,128})$/.exec((req.url ?? '').split('?')[0]!)
  if (m === null) { res.writeHead(404).end(); return }
  const file = join(dir, m[1]!)
  const fail = (err: Error): void => { if (!res.headersSent) res.writeHead(500).end(err.message); else res.destroy() }
  if (req.method === 'PUT') {
    const r = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(req.headers['content-range'] ?? '')
    if (r === null) { res.writeHead(400).end('Content-Range needed'); return }
    const start = Number(r[1]); const end = Number(r[2])
    // Streamed to its offset as it arrives (created if missing, never truncated): the lab's hosts share
    // the machine's cores, so the destination holds no whole body and computes no content hash. The
    // ETag is opaque to bwnet (passed through to the completion call), so it names the range.
    // Pieces are gathered into 1 MiB writes (a capped link delivers a few kilobytes at a time).
    let bytes = 0
    let pending: Buffer[] = []
    let pendingBytes = 0
    const take = (): Buffer => { const b = Buffer.concat(pending, pendingBytes); pending = []; pendingBytes = 0; return b }
    const batch = new Transform({
      transform (piece: Buffer, _enc, done) {
        bytes += piece.length
        pending.push(piece); pendingBytes += piece.length
        if (pendingBytes >= WRITE_BYTES) done(null, take()); else done()
      },
      flush (done) { done(null, pendingBytes > 0 ? take() : undefined) }
    })
    open(file, constants.O_WRONLY | constants.O_CREAT).then(fh => pipeline(req, batch, fh.createWriteStream({ start }))).then(() => {
      if (bytes !== end - start + 1) { res.writeHead(400).end('length does not match Content-Range'); return }
      res.writeHead(200, { etag: `"${start}-${end}"` }).end()
    }, fail)
    return
  }
  if (req.method === 'GET') {
    const r = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')
    void (async () => {
      const size = (await stat(file)).size
      const start = r === null ? 0 : Number(r[1])
      const last = r === null ? size - 1 : Math.min(Number(r[2]), size - 1)
      res.writeHead(r === null ? 200 : 206, { 'content-length': String(Math.max(0, last - start + 1)) })
      if (last < start) { res.end(); return }
      await pipeline(createReadStream(file, { start, end: last, highWaterMark: 1024 * 1024 }), res)
    })().catch((err: NodeJS.ErrnoException) => { if (err.code === 'ENOENT') res.writeHead(404).end(); else fail(err) })
    return
  }
  if (req.method === 'DELETE') { void rm(file, { force: true }).then(() => res.writeHead(204).end(), fail); return }
  res.writeHead(405).end()
})
server.listen(Number(port), host, () => {
  process.stdout.write(JSON.stringify({ event: 'listening', url: `http://${host}:${port}` }) + '\n')
})
process.once('SIGTERM', () => { server.close(); server.closeAllConnections(); process.exit(0) })
