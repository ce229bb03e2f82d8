// Server side of the transport bench, run as a child process by run.ts. Serves one payload three
// ways — the swarm bulk channel, plain HTTP GET, raw TCP (write the buffer, end) — reports one
// `ready` JSON line on stdout, and exits when its stdin closes (so it never outlives the parent).
import { parseArgs } from 'node:util'
import { createServer as createHttpServer } from 'node:http'
import { createServer as createTcpServer, type AddressInfo } from 'node:net'
import { once } from 'node:events'
import DHT from 'hyperdht'
import { pino } from 'pino'
import { SwarmTransport } from '../../node/adapters/swarm-transport.ts'
import { makePayload, sha256Hex, PAYLOAD_KEY } from './payload.ts'

const LOOPBACK = '127.0.0.1'

const { values } = parseArgs({
  options: {
    bootstrap: { type: 'string' }, // host:port,host:port — the parent's local testnet
    network: { type: 'string' },
    bytes: { type: 'string' },
    seed: { type: 'string' }
  }
})
if (values.bootstrap === undefined || values.network === undefined || values.bytes === undefined || values.seed === undefined) {
  throw new Error('server needs --bootstrap, --network, --bytes and --seed')
}
const bootstrap = values.bootstrap.split(',').map(hp => {
  const [host, port] = hp.split(':')
  if (host !== LOOPBACK) throw new Error(`bench runs on loopback only, got bootstrap ${hp}`)
  return { host, port: Number(port) }
})
const payload = makePayload(values.seed, Number(values.bytes))
const logger = pino({ level: process.env.LOG_LEVEL ?? 'warn' }, pino.destination(2))

const http = createHttpServer((req, res) => {
  if (req.method !== 'GET' || req.url !== `/${PAYLOAD_KEY}`) { res.writeHead(404).end(); return }
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': payload.byteLength })
  res.end(payload)
})
http.listen(0, LOOPBACK)
await once(http, 'listening')

const tcp = createTcpServer(socket => {
  socket.on('error', (err) => logger.warn({ err: err.message }, 'tcp socket error'))
  socket.end(payload)
})
tcp.listen(0, LOOPBACK)
await once(tcp, 'listening')

const dht = new DHT({ bootstrap, host: LOOPBACK, ephemeral: true })
const transport = new SwarmTransport({
  dht,
  networkId: values.network,
  logger,
  events: { onFrame: () => {}, onPeerUp: () => {}, onPeerDown: () => {} }
})
// The bench's client is no node: nothing admits it, so every peer is served.
transport.serveBulk(async (_peer, key) => key === PAYLOAD_KEY ? payload : null, { admitted: () => true })
await transport.start()

process.stdout.write(JSON.stringify({
  event: 'ready',
  swarmKey: transport.publicKey,
  httpPort: (http.address() as AddressInfo).port,
  tcpPort: (tcp.address() as AddressInfo).port,
  bytes: payload.byteLength,
  sha256: sha256Hex(payload)
}) + '\n')

let stopping = false
async function stop (): Promise<void> {
  if (stopping) return
  stopping = true
  http.closeAllConnections()
  http.close()
  tcp.close()
  await transport.stop() // destroys the swarm and its DHT node
  process.exit(0)
}
process.stdin.on('end', () => { void stop() })
process.stdin.on('close', () => { void stop() })
process.stdin.resume()
process.on('SIGTERM', () => { void stop() })
