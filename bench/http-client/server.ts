// The sending side of bench:http-client, in its own process so that only the receiver's CPU is counted
// in the bench's: answers every GET with --size-mib of bytes (one reused 1 MiB piece), as fast as the
// socket takes them. Prints its port on stdout.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

const total = Number(process.argv[2]) * 1024 * 1024
const piece = Buffer.alloc(1024 * 1024, 7)
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) })
  let sent = 0
  const pump = (): void => {
    while (sent < total) {
      const n = Math.min(piece.length, total - sent)
      sent += n
      if (!res.write(n === piece.length ? piece : piece.subarray(0, n))) { res.once('drain', pump); return }
    }
    res.end()
  }
  pump()
})
server.keepAliveTimeout = 10 * 60_000 // idle between rounds
server.listen(0, '127.0.0.1', () => { process.stdout.write(`${(server.address() as AddressInfo).port}\n`) })
