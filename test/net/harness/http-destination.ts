// An `http` destination for the multi-host lab: `PUT /objects/<name>` with Content-Range writes the body
// at its offset into <dir>/<name>; `GET` with Range reads back (validators); DELETE removes it.
// Usage: node --import tsx http-destination.ts HOST PORT DIR. Logs one JSON line when listening.
import { createServer } from 'node:http'
import { open, rm } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import { join } from 'node:path'

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
    const parts: Buffer[] = []
    req.on('data', (c: Buffer) => parts.push(c))
    req.on('end', () => {
      const body = Buffer.concat(parts)
      if (body.byteLength !== end - start + 1) { res.writeHead(400).end('length does not match Content-Range'); return }
      void (async () => {
        const fh = await open(file, 'a+').then(async (h) => { await h.close(); return open(file, 'r+') })
        try { await fh.write(body, 0, body.byteLength, start) } finally { await fh.close() }
        res.writeHead(200, { etag: `"${createHash('md5').update(body).digest('hex')}"` }).end()
      })().catch(fail)
    })
    return
  }
  if (req.method === 'GET') {
    const r = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')
    void (async () => {
      const fh = await open(file, 'r')
      try {
        if (r === null) { res.writeHead(200).end(await fh.readFile()); return }
        const start = Number(r[1]); const len = Number(r[2]) - start + 1
        const buf = Buffer.alloc(len)
        const { bytesRead } = await fh.read(buf, 0, len, start)
        res.writeHead(206).end(buf.subarray(0, bytesRead))
      } finally { await fh.close() }
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
