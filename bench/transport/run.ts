// Transport bench: throughput of the swarm bulk channel, plain HTTP and raw TCP between the same two
// processes, measured in one run with the paths interleaved in rounds so machine noise hits all alike.
// This process hosts a local DHT testnet and is the client; server.ts (a child process) serves the payload.
// Usage: npm run bench:transport -- [--chunk-mib 16] [--total-mib 512] [--rounds 8] [--timeout-s 600] [--out file]
import { spawn, type ChildProcess } from 'node:child_process'
import { parseArgs } from 'node:util'
import { once } from 'node:events'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { cpus } from 'node:os'
import { performance } from 'node:perf_hooks'
import { Agent, get as httpGet } from 'node:http'
import { connect as tcpConnect } from 'node:net'
import createTestnet, { type Testnet } from 'hyperdht/testnet.js'
import { pino } from 'pino'
import { SwarmTransport, BULK_FRAME_BYTES } from '../../node/adapters/swarm-transport.ts'
import { makePayload, sha256Hex, PAYLOAD_KEY } from './payload.ts'

const DEFAULT_CHUNK_MIB = 16 // bytes per transfer
const DEFAULT_TOTAL_MIB = 512 // measured bytes per path
const DEFAULT_ROUNDS = 8
const DEFAULT_TIMEOUT_S = 600 // 10 min for the whole run, then the child is killed and the run fails
const SERVER_READY_TIMEOUT_MS = 30_000 // 30 s for the child to listen and announce
const SWARM_CONNECT_TIMEOUT_MS = 30_000 // 30 s for the two swarms to meet on the testnet
const TRANSFER_TIMEOUT_MS = 60_000 // 1 min without completion fails a transfer
const MAX_TRANSFERS_PER_PATH = 4096 // bound on the loop whatever the options say
const TESTNET_SIZE = 3
const LOOPBACK = '127.0.0.1'
const MIB = 1024 * 1024
const REPO = join(import.meta.dirname, '..', '..')
const DEFAULT_OUT = join(REPO, 'bench', 'out', 'transport.json')

const PATHS = ['swarm', 'http', 'tcp'] as const
type PathName = typeof PATHS[number]

interface ServerReady { event: 'ready', swarmKey: string, httpPort: number, tcpPort: number, bytes: number, sha256: string }

function positiveNumber (name: string, raw: string): number {
  const n = Number(raw)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got ${raw}`)
  return n
}

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

const round2 = (x: number): number => Math.round(x * 100) / 100
const round3 = (x: number): number => Math.round(x * 1000) / 1000

/** Spawns server.ts and resolves with its `ready` line. `--cpu-prof*` flags given to this process are passed on, to profile both ends. */
function startServer (args: string[]): { child: ChildProcess, ready: Promise<ServerReady> } {
  const child = spawn(process.execPath, [...process.execArgv.filter(a => a.startsWith('--cpu-prof')), join(import.meta.dirname, 'server.ts'), ...args], {
    cwd: REPO, stdio: ['pipe', 'pipe', 'inherit']
  })
  const ready = new Promise<ServerReady>((resolve, reject) => {
    let buf = ''
    const timer = setTimeout(() => reject(new Error('server did not become ready in time')), SERVER_READY_TIMEOUT_MS)
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}) before ready`)) })
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      buf += d
      let i
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i); buf = buf.slice(i + 1)
        try {
          const msg = JSON.parse(line) as ServerReady
          if (msg.event === 'ready') { clearTimeout(timer); resolve(msg) }
        } catch { process.stderr.write(`server: ${line}\n`) }
      }
    })
  })
  return { child, ready }
}

/** Collects a readable body into one buffer, as fetchBulk hands its caller one buffer. */
function fetchHttp (agent: Agent, port: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = httpGet({ host: LOOPBACK, port, path: `/${PAYLOAD_KEY}`, agent, timeout: TRANSFER_TIMEOUT_MS }, res => {
      if (res.statusCode !== 200) { res.resume(); reject(new Error(`http status ${res.statusCode}`)); return }
      const parts: Buffer[] = []
      let bytes = 0
      res.on('data', (b: Buffer) => { parts.push(b); bytes += b.byteLength })
      res.on('end', () => resolve(Buffer.concat(parts, bytes)))
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error('http transfer timed out')))
    req.on('error', reject)
  })
}

function fetchTcp (port: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect({ host: LOOPBACK, port })
    socket.setTimeout(TRANSFER_TIMEOUT_MS, () => socket.destroy(new Error('tcp transfer timed out')))
    const parts: Buffer[] = []
    let bytes = 0
    socket.on('data', (b: Buffer) => { parts.push(b); bytes += b.byteLength })
    socket.on('end', () => resolve(Buffer.concat(parts, bytes)))
    socket.on('error', reject)
  })
}

async function main (): Promise<void> {
  const { values } = parseArgs({
    options: {
      'chunk-mib': { type: 'string', default: String(DEFAULT_CHUNK_MIB) },
      'total-mib': { type: 'string', default: String(DEFAULT_TOTAL_MIB) },
      rounds: { type: 'string', default: String(DEFAULT_ROUNDS) },
      'timeout-s': { type: 'string', default: String(DEFAULT_TIMEOUT_S) },
      out: { type: 'string', default: DEFAULT_OUT }
    }
  })
  const chunkMiB = positiveNumber('chunk-mib', values['chunk-mib'])
  const totalMiB = positiveNumber('total-mib', values['total-mib'])
  const rounds = Math.floor(positiveNumber('rounds', values.rounds))
  const timeoutS = positiveNumber('timeout-s', values['timeout-s'])
  const chunkBytes = Math.round(chunkMiB * MIB)
  const perRound = Math.max(1, Math.floor(totalMiB / chunkMiB / rounds))
  if (perRound * rounds > MAX_TRANSFERS_PER_PATH) throw new Error(`at most ${MAX_TRANSFERS_PER_PATH} transfers per path`)

  let child: ChildProcess | null = null
  let testnet: Testnet | null = null
  const killChild = (): void => { if (child !== null && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') }
  process.once('exit', killChild)
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => { killChild(); process.exit(130) })
  const deadline = setTimeout(() => {
    process.stderr.write(`transport bench: over the ${timeoutS} s limit, giving up\n`)
    killChild()
    process.exit(1)
  }, timeoutS * 1000)

  const seed = randomBytes(32).toString('hex')
  const network = `bench-transport-${process.pid}-${seed.slice(0, 8)}`
  const expected = makePayload(seed, chunkBytes)
  const expectedSha = sha256Hex(expected)

  testnet = await createTestnet(TESTNET_SIZE, { host: LOOPBACK })
  const bootstrap = testnet.bootstrap.map(b => `${b.host}:${b.port}`).join(',')
  const server = startServer(['--bootstrap', bootstrap, '--network', network, '--bytes', String(chunkBytes), '--seed', seed])
  child = server.child
  const ready = await server.ready
  if (ready.bytes !== chunkBytes || ready.sha256 !== expectedSha) throw new Error('server payload differs from the expected one')

  // The client joins the same topic and waits for the server's peer-up event.
  let peerUp: () => void = () => {}
  const connected = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('swarm peers did not connect in time')), SWARM_CONNECT_TIMEOUT_MS)
    peerUp = () => { clearTimeout(timer); resolve() }
  })
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'warn' }, pino.destination(2))
  const transport = new SwarmTransport({
    dht: testnet.createNode(),
    networkId: network,
    logger,
    events: { onFrame: () => {}, onPeerUp: (peer) => { if (peer === ready.swarmKey) peerUp() }, onPeerDown: () => {} }
  })
  await transport.start()
  await connected
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })

  const fetchers: Record<PathName, () => Promise<Uint8Array>> = {
    swarm: () => transport.fetchBulk(ready.swarmKey, PAYLOAD_KEY, TRANSFER_TIMEOUT_MS),
    http: () => fetchHttp(agent, ready.httpPort),
    tcp: () => fetchTcp(ready.tcpPort)
  }
  // Every transfer is compared byte for byte with the expected payload, outside the timed span.
  const check = (path: PathName, got: Uint8Array): void => {
    if (got.byteLength !== chunkBytes) throw new Error(`${path}: got ${got.byteLength} bytes, expected ${chunkBytes}`)
    if (!expected.equals(got)) throw new Error(`${path}: bytes differ from the payload`)
  }

  // Warm-up: one transfer per path (JIT, socket windows); its sha256 is recorded as proof of content.
  const firstSha = {} as Record<PathName, string>
  for (const path of PATHS) {
    const got = await fetchers[path]()
    check(path, got)
    firstSha[path] = sha256Hex(got)
    if (firstSha[path] !== expectedSha) throw new Error(`${path}: sha256 of the first transfer differs`)
  }

  const perRoundMiBps: Record<PathName, number[]> = { swarm: [], http: [], tcp: [] }
  for (let r = 0; r < rounds; r++) {
    // Rotate the order each round so no path always runs first (or right after another).
    const order = PATHS.map((_, i) => PATHS[(i + r) % PATHS.length]!)
    for (const path of order) {
      let seconds = 0
      for (let k = 0; k < perRound; k++) {
        const t0 = performance.now()
        const got = await fetchers[path]()
        seconds += (performance.now() - t0) / 1000
        check(path, got)
      }
      perRoundMiBps[path].push((perRound * chunkBytes / MIB) / seconds)
    }
  }

  const mibps = Object.fromEntries(PATHS.map(p => [p, round2(median(perRoundMiBps[p]))])) as Record<PathName, number>
  const result = {
    bench: 'transport',
    mibPerSec: mibps,
    ratio: {
      swarmOverHttp: round3(mibps.swarm / mibps.http),
      swarmOverTcp: round3(mibps.swarm / mibps.tcp),
      httpOverTcp: round3(mibps.http / mibps.tcp)
    },
    perRoundMiBPerSec: Object.fromEntries(PATHS.map(p => [p, perRoundMiBps[p].map(round2)])),
    chunkMiB,
    transfersPerPath: perRound * rounds,
    measuredMiBPerPath: round2(perRound * rounds * chunkBytes / MIB),
    rounds,
    sha256: expectedSha,
    firstTransferSha256: firstSha,
    bulkFrameBytes: BULK_FRAME_BYTES,
    node: process.version,
    cpus: cpus().length,
    at: new Date().toISOString()
  }

  const lines = [
    `transport bench: ${perRound * rounds} × ${chunkMiB} MiB per path in ${rounds} round(s), loopback, ${cpus().length} cpus, node ${process.version}`,
    'path     MiB/s (median)    min        max',
    ...PATHS.map(p => `${p.padEnd(8)} ${mibps[p].toFixed(1).padStart(14)} ${Math.min(...perRoundMiBps[p]).toFixed(1).padStart(10)} ${Math.max(...perRoundMiBps[p]).toFixed(1).padStart(10)}`),
    `swarm/http ${result.ratio.swarmOverHttp}   swarm/tcp ${result.ratio.swarmOverTcp}   http/tcp ${result.ratio.httpOverTcp}`
  ]
  process.stdout.write(lines.join('\n') + '\n' + JSON.stringify(result) + '\n')
  await mkdir(dirname(values.out), { recursive: true })
  await writeFile(values.out, JSON.stringify(result, null, 2) + '\n')

  agent.destroy()
  await transport.stop()
  child.stdin!.end() // the server exits when its stdin closes
  const exited = child.exitCode !== null ? Promise.resolve() : once(child, 'exit')
  await exited
  await testnet.destroy()
  clearTimeout(deadline)
}

main().catch((err: Error) => {
  process.stderr.write(`transport bench failed: ${err.stack ?? err.message}\n`)
  process.exit(1)
})
