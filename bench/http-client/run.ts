// bench:http-client: CPU the receiving side of one HTTP response spends per GiB, node:http's client
// against undici's `request` (what workers pull chunks with and validators read back through), each
// body consumed with `for await` and, with --hash, hashed with sha256 as a worker and a validator do.
// The sender is a child process; only this process's CPU is counted. Rounds alternate the clients.
// docs/benchmarks.md#e2e ("Pulls and read-backs through undici").
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { request as httpGet, Agent, type IncomingMessage } from 'node:http'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { createInterface } from 'node:readline'
import { request as undiciRequest } from 'undici'

const { values: args } = parseArgs({
  options: {
    'size-mib': { type: 'string', default: '1024' },
    rounds: { type: 'string', default: '3' },
    hash: { type: 'boolean', default: false },
    'timeout-s': { type: 'string', default: '300' },
    out: { type: 'string', default: join(import.meta.dirname, '..', 'out', 'http-client.json') }
  }
})
const sizeMib = Number(args['size-mib'])
const rounds = Number(args.rounds)
if (!Number.isInteger(sizeMib) || sizeMib < 1 || sizeMib > 16384) throw new RangeError('--size-mib: 1..16384')
if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new RangeError('--rounds: 1..20')
const bytes = sizeMib * 1024 * 1024
const deadline = setTimeout(() => { process.stderr.write('bench:http-client timed out\n'); process.exit(1) }, Number(args['timeout-s']) * 1000)

const server = spawn(process.execPath, [join(import.meta.dirname, 'server.ts'), String(sizeMib)], { stdio: ['ignore', 'pipe', 'inherit'] })
process.on('exit', () => { server.kill() }) // also on the timeout's exit or a throw
const port = await new Promise<number>((resolve, reject) => {
  createInterface({ input: server.stdout! }).once('line', line => resolve(Number(line)))
  server.once('exit', code => reject(new Error(`server exited ${code}`)))
})
const url = `http://127.0.0.1:${port}/`
const agent = new Agent({ keepAlive: true })

type Client = 'node:http' | 'undici'
async function body (client: Client): Promise<AsyncIterable<Uint8Array>> {
  if (client === 'undici') return (await undiciRequest(url)).body
  return await new Promise<IncomingMessage>((resolve, reject) => httpGet(url, { agent }, resolve).once('error', reject).end())
}

/** CPU ms (user + system) and wall ms to receive one body. */
async function receive (client: Client): Promise<{ cpuMs: number, wallMs: number }> {
  const cpu0 = process.cpuUsage(); const wall0 = performance.now()
  const hash = args.hash ? createHash('sha256') : null
  let n = 0
  for await (const piece of await body(client)) { n += piece.byteLength; hash?.update(piece) }
  hash?.digest()
  if (n !== bytes) throw new Error(`${client}: received ${n} of ${bytes} bytes`)
  const cpu = process.cpuUsage(cpu0)
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - wall0 }
}

const clients: Client[] = ['node:http', 'undici']
for (const c of clients) await receive(c) // warm-up: connections, undici's parser
const per: Record<Client, Array<{ cpuMs: number, wallMs: number }>> = { 'node:http': [], undici: [] }
for (let r = 0; r < rounds; r++) for (const c of r % 2 === 0 ? clients : [...clients].reverse()) per[c].push(await receive(c))
server.kill()
clearTimeout(deadline)

const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2 }
const gib = bytes / 1024 ** 3
const cpuPerGiB = (c: Client): number => +(median(per[c].map(x => x.cpuMs)) / 1000 / gib).toFixed(3)
const result = {
  bench: 'http-client', sizeBytes: bytes, rounds, hash: args.hash,
  cpuSecondsPerGiB: { 'node:http': cpuPerGiB('node:http'), undici: cpuPerGiB('undici') },
  ratio: { undiciOverNodeHttp: +(cpuPerGiB('undici') / cpuPerGiB('node:http')).toFixed(2) },
  perRound: per, node: process.version
}
console.log(`| client | CPU s per GiB received${args.hash ? ' (with sha256)' : ''} | per round (CPU ms) |\n|---|---:|---|`)
for (const c of clients) console.log(`| ${c} | ${result.cpuSecondsPerGiB[c]} | ${per[c].map(x => x.cpuMs.toFixed(0)).join(', ')} |`)
console.log(`undici/node:http = ${result.ratio.undiciOverNodeHttp} (CPU per byte received, ${sizeMib} MiB × ${rounds} rounds)`)
await mkdir(dirname(args.out!), { recursive: true })
await writeFile(args.out!, JSON.stringify(result, null, 2) + '\n')
console.log(JSON.stringify(result))
