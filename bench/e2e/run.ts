// End-to-end bench: how long a file takes to land in the devnet's default destination (the node sink)
// through bwnet — `bwnet transfer put` creates, uploads, finalizes; workers move every chunk into the
// sink; completed — against one plain streaming HTTP PUT of the same file into the same directory
// (hashed, fsynced, renamed: the least a durable direct upload costs). Same run, rounds interleaved,
// both copies checked byte for byte. docs/benchmarks.md#e2e.
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { createReadStream, createWriteStream, existsSync } from 'node:fs'
import { mkdtemp, mkdir, open, readdir, readFile, rm, symlink, writeFile, unlink } from 'node:fs/promises'
import { Agent, request } from 'node:http'
import { availableParallelism, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { floodChunk } from '../ingest/flood.ts'
import { sinkFilePath } from '../../node/adapters/destinations/node-sink.ts'
import { cpuSecondsOf, stopChild, userSystemOf } from '../children.ts'

const MIB = 1024 * 1024
const MAX_SIZE_MIB = 16 * 1024
const MAX_ROUNDS = 10
const START_TIMEOUT_MS = 90_000 // devnet up and devnet.json written

const REPO = join(import.meta.dirname, '..', '..')
const { values: args } = parseArgs({
  options: {
    'size-mib': { type: 'string', default: '1024' },
    rounds: { type: 'string', default: '1' },
    workers: { type: 'string', default: '2' },
    // The CLI's default. (Before the overseer fix a 1 GiB transfer with 4 in flight could fail on a loaded devnet.)
    parallel: { type: 'string', default: '4' },
    'timeout-s': { type: 'string', default: '1800' },
    // Memory: sample the devnet process's RSS (/proc/<pid>/status) every --rss-every-ms while it works.
    'rss-every-ms': { type: 'string', default: '200' },
    // Skip the baseline PUT (the memory run times nothing against it).
    'skip-baseline': { type: 'boolean', default: false },
    // Extra devnet flags, e.g. '--inflight-mib 64' (split on spaces).
    'devnet-args': { type: 'string', default: '' },
    // Profile the devnet: --cpu-prof (and --heap-prof with --heap-prof) into this directory.
    profile: { type: 'string' },
    'heap-prof': { type: 'boolean', default: false },
    // Extra node flags for the devnet process, e.g. '--trace-gc' (split on spaces; its output goes to --devnet-log).
    'devnet-node-args': { type: 'string', default: '' },
    // Extra node flags for the CLI process, e.g. '--cpu-prof --cpu-prof-dir /tmp/cli' (split on spaces).
    'cli-node-args': { type: 'string', default: '' },
    // Fail (exit 1) when the devnet's peak RSS goes over this many MiB (0: no limit).
    'max-rss-mib': { type: 'string', default: '0' },
    // The idle devnet (workers attached, nothing moving) is sampled for this many seconds before the
    // first round (default: 1 s, or 5 samples if longer); fail when any idle sample goes over
    // --max-idle-rss-mib (0: no limit). docs/benchmarks.md#devnet-memory.
    'idle-s': { type: 'string' },
    'max-idle-rss-mib': { type: 'string', default: '0' },
    // Memory under abuse: after the rounds, send --oversize-count concurrent bodies of --oversize-mib MiB
    // to one chunk index of a fresh 16 MiB-chunk transfer (each must be refused with 413), RSS sampled.
    'oversize-mib': { type: 'string', default: '0' },
    'oversize-count': { type: 'string', default: '4' },
    // Keep the devnet's log (stderr, --log-level warn) in this file.
    'devnet-log': { type: 'string' },
    // Also time the bare pipeline (bench/e2e/bare-pipeline.ts): the same stages with plain node:http and nothing else.
    bare: { type: 'boolean', default: false },
    // Run bwnet (the devnet and the CLI) from dist/ (`npm run build`), as the published package and
    // `make run` once did, instead of from source (Node strips the types as it loads each file).
    compiled: { type: 'boolean', default: false },
    out: { type: 'string', default: join(import.meta.dirname, '..', 'out', 'e2e.json') }
  }
})
const sizeMib = Number(args['size-mib'])
const rounds = Number(args.rounds)
const workers = Number(args.workers)
const parallel = Number(args.parallel)
const timeoutS = Number(args['timeout-s'])
if (!(sizeMib > 0 && sizeMib <= MAX_SIZE_MIB) || !Number.isInteger(sizeMib * MIB)) throw new Error(`--size-mib in (0, ${MAX_SIZE_MIB}]`)
if (!Number.isInteger(rounds) || rounds < 1 || rounds > MAX_ROUNDS) throw new Error(`--rounds 1..${MAX_ROUNDS}`)
if (!Number.isInteger(workers) || workers < 1 || workers > 16) throw new Error('--workers 1..16')
const sizeBytes = sizeMib * MIB
if (args.bare === true && args['skip-baseline'] === true) throw new Error('--bare is timed against the baseline: drop --skip-baseline')
const rssEveryMs = Number(args['rss-every-ms'])
const maxRssMib = Number(args['max-rss-mib'])
if (!Number.isInteger(rssEveryMs) || rssEveryMs < 20 || rssEveryMs > 10_000) throw new Error('--rss-every-ms 20..10000')
if (!(maxRssMib >= 0)) throw new Error('--max-rss-mib ≥ 0')
const maxIdleRssMib = Number(args['max-idle-rss-mib'])
if (!(maxIdleRssMib >= 0)) throw new Error('--max-idle-rss-mib ≥ 0')
const idleMs = args['idle-s'] === undefined ? Math.max(1000, 5 * rssEveryMs) : Number(args['idle-s']) * 1000
if (!(idleMs >= rssEveryMs && idleMs <= 600_000)) throw new Error('--idle-s: at least one sampling period, at most 600')
const oversizeMib = Number(args['oversize-mib'])
const oversizeCount = Number(args['oversize-count'])
if (!Number.isInteger(oversizeMib) || oversizeMib < 0 || oversizeMib > 4096) throw new Error('--oversize-mib 0..4096')
if (!Number.isInteger(oversizeCount) || oversizeCount < 1 || oversizeCount > 16) throw new Error('--oversize-count 1..16')
const CHUNK_BYTES = 16 * MIB // the CLI's chunk size for files up to ~52 GiB: each chunk of the source differs

const children: ChildProcess[] = []
const killAll = (): void => { for (const c of children) if (c.exitCode === null) c.kill('SIGKILL') }
process.on('exit', killAll)
const overall = setTimeout(() => { process.stderr.write(`e2e bench: over --timeout-s ${timeoutS}; giving up\n`); killAll(); process.exit(1) }, timeoutS * 1000)
overall.unref()

/** A node child process of this bench (killed with it), stdout and stderr piped. */
function spawnNode (nodeArgv: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn(process.execPath, nodeArgv, { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  return child
}

function spawnTs (script: string, argv: string[], env: Record<string, string> = {}, nodeArgs: string[] = []): ChildProcess {
  return spawnNode([...nodeArgs, script, ...argv], env)
}

const COMPILED_CLI = join(REPO, 'dist', 'node', 'cli.js')
if (args.compiled === true && !existsSync(COMPILED_CLI)) throw new Error(`--compiled needs ${COMPILED_CLI}: run npm run build first`)

/** bwnet's CLI (devnet, transfer put): from source, or with --compiled from dist/. */
function spawnBwnet (argv: string[], env: Record<string, string> = {}, nodeArgs: string[] = []): ChildProcess {
  if (args.compiled !== true) return spawnTs(join(REPO, 'node', 'cli.ts'), argv, env, nodeArgs)
  return spawnNode([...nodeArgs, COMPILED_CLI, ...argv], env)
}

async function sha256File (path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const piece of createReadStream(path, { highWaterMark: 4 * MIB })) hash.update(piece as Buffer)
  return hash.digest('hex')
}

async function api (base: string, key: string, path: string, init: RequestInit = {}): Promise<any> {
  const res = await fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } })
  const body = await res.json() as any
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`)
  return body
}

/** bwnet: the real CLI, as a user runs it; delivery time from the orchestrator's own timestamps. */
async function viaBwnet (file: string, baseUrl: string, key: string, stateDir: string): Promise<{ ms: number, cliMs: number, wallMs: number, cliCpu: number, cliCpuFromCreate: number, id: string }> {
  const t0 = performance.now()
  const child = spawnBwnet(['transfer', 'put', file, '--api', baseUrl, '--key', key, '--no-progress', '--parallel', String(parallel)], { BWN_STATE_DIR: stateDir },
    args['cli-node-args']!.split(' ').filter(a => a !== ''))
  let stdout = ''; let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { stdout += d })
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  // The CLI's CPU (start-up included): sampled, since /proc forgets a process once it is reaped.
  // Stamped, so the share spent before the transfer was created (start-up: loading modules) can be told apart.
  let cliCpu = NaN
  const cliCpuSamples: Array<{ at: number, cpu: number }> = []
  const cpuTimer = setInterval(() => { void cpuSecondsOf(child.pid!).then(c => { if (c !== null) { cliCpu = c; cliCpuSamples.push({ at: Date.now(), cpu: c }) } }) }, 100)
  const code = await new Promise<number | null>(resolve => child.once('exit', resolve))
  clearInterval(cpuTimer)
  const wallMs = performance.now() - t0
  if (code !== 0) throw new Error(`transfer put exited ${code}: ${stderr.slice(-2000)}`)
  const summary = JSON.parse(stdout.trim().split('\n').at(-1)!)
  const record = await api(baseUrl, key, `/transfers/${summary.transfer_id}`)
  if (record.status !== 'completed') throw new Error(`transfer ${record.id} is ${record.status}`)
  const createdAt = Date.parse(record.created_at)
  const beforeCreate = cliCpuSamples.filter(x => x.at <= createdAt).at(-1)?.cpu ?? 0
  return { ms: Date.parse(record.completed_at) - createdAt, cliMs: summary.elapsed_ms, wallMs, cliCpu, cliCpuFromCreate: cliCpu - beforeCreate, id: record.id }
}

/** What the orchestrator's audit rows say about one transfer: tasks, attempts, results by outcome, interventions. */
async function attemptsOf (baseUrl: string, adminKey: string, orchestrator: string, id: string): Promise<{ tasks: number, attempts: number, interventions: number, results: Record<string, number> }> {
  const r = await api(baseUrl, adminKey, `/api/audit/orchestrator/${orchestrator}/transfers/${id}?limit=5000`)
  const results: Record<string, number> = {}
  for (const row of r.task_results as Array<{ outcome: string }>) results[row.outcome] = (results[row.outcome] ?? 0) + 1
  if (process.env.BWN_BENCH_DEBUG === "1") process.stderr.write(JSON.stringify({ tasks: r.tasks, results: r.task_results, interventions: r.overseer_interventions, attempts: r.task_attempts }) + '\n')
  return { tasks: r.tasks.length, attempts: r.task_attempts.length, interventions: r.overseer_interventions.length, results }
}

/** Baseline: one streaming PUT of the whole file to the receiver writing into the sink directory. */
async function viaPut (file: string, url: string): Promise<{ ms: number, sha256: string }> {
  const t0 = performance.now()
  const body = await new Promise<{ bytes: number, sha256: string }>((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-length': String(sizeBytes) } }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (d: string) => { text += d }).on('end', () => {
        if (res.statusCode !== 201) reject(new Error(`baseline PUT answered ${res.statusCode}: ${text}`))
        else resolve(JSON.parse(text))
      })
    })
    req.on('error', reject)
    createReadStream(file, { highWaterMark: 1 * MIB }).on('error', reject).pipe(req)
  })
  const ms = performance.now() - t0
  if (body.bytes !== sizeBytes) throw new Error(`baseline stored ${body.bytes} bytes`)
  return { ms, sha256: body.sha256 }
}

/**
 * The bare pipeline's sender, in this process like the baseline's: the CLI's way (each chunk read into
 * one of parallel + 1 reused buffers, hashed, POSTed in 256 KiB writes, `parallel` in flight), then
 * finalize, which answers when every chunk is in the sink. Then waits (untimed) for every read-back.
 */
async function viaBare (file: string, url: string, name: string): Promise<{ ms: number, verified: number }> {
  const post = (path: string, body?: Buffer, headers: Record<string, string> = {}): Promise<any> => new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: path === '/verified' ? 'GET' : 'POST', agent: bareAgent, headers: { 'content-length': String(body?.length ?? 0), ...headers } }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (d: string) => { text += d }).on('end', () => {
        if ((res.statusCode ?? 0) >= 300) reject(new Error(`bare ${path} answered ${res.statusCode}: ${text}`))
        else resolve(JSON.parse(text))
      })
    })
    req.on('error', reject)
    if (body === undefined) { req.end(); return }
    let off = 0
    const next = (): void => {
      while (off < body.length) {
        const piece = body.subarray(off, Math.min(off + 256 * 1024, body.length))
        off += piece.length
        if (!req.write(piece)) { req.once('drain', next); return }
      }
      req.end()
    }
    next()
  })
  const t0 = performance.now()
  const { total } = await post(`/begin?name=${name}&size=${sizeBytes}&chunk=${CHUNK_BYTES}`)
  const fh = await open(file, 'r')
  const free: Buffer[] = Array.from({ length: parallel + 1 }, () => Buffer.allocUnsafe(CHUNK_BYTES))
  const inFlight = new Set<Promise<void>>()
  try {
    for (let i = 0; i < total; i++) {
      while (inFlight.size >= parallel) await Promise.race(inFlight)
      const buf = free.pop()!
      const length = Math.min(CHUNK_BYTES, sizeBytes - i * CHUNK_BYTES)
      for (let done = 0; done < length;) done += (await fh.read(buf, done, length - done, i * CHUNK_BYTES + done)).bytesRead
      const bytes = buf.subarray(0, length)
      const sha256 = createHash('sha256').update(bytes).digest('hex')
      const sent: Promise<void> = post(`/chunks/${i}`, bytes, { 'x-chunk-sha256': sha256 }).then(() => { free.push(buf); inFlight.delete(sent) })
      inFlight.add(sent)
    }
    await Promise.all(inFlight)
  } finally { await fh.close() }
  const done = await post('/finalize')
  const ms = performance.now() - t0
  if (done.failures.length > 0) throw new Error(`bare pipeline: ${done.failures.join('; ')}`)
  const checked = await post('/verified')
  if (checked.failures.length > 0 || checked.verified !== total) throw new Error(`bare pipeline read-backs: ${checked.verified} of ${total}, ${checked.failures.join('; ')}`)
  return { ms, verified: checked.verified }
}
const bareAgent = new Agent({ keepAlive: true })

/** Resident set size of a process in bytes, from /proc (Linux); null when it cannot be read. */
async function rssOf (pid: number): Promise<number | null> {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'))
    return m === null ? null : Number(m[1]) * 1024
  } catch { return null }
}

/** CPU seconds (user, system) of each thread of a process, by thread id. */
async function threadCpu (pid: number): Promise<Map<number, [number, number]>> {
  const out = new Map<number, [number, number]>()
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [])) {
    const cpu = await userSystemOf(`/proc/${pid}/task/${tid}/stat`)
    if (cpu !== null) out.set(Number(tid), cpu)
  }
  return out
}

/** BWN_BENCH_DEBUG=1: each thread's CPU seconds over a round (user/system; the main thread's id is the pid). */
function debugThreads (what: string, before: Map<number, [number, number]>, after: Map<number, [number, number]>): void {
  if (process.env.BWN_BENCH_DEBUG !== '1') return
  const rows = [...after].map(([tid, [u, s]]) => [tid, u - (before.get(tid)?.[0] ?? 0), s - (before.get(tid)?.[1] ?? 0)] as const).filter(r => r[1] + r[2] >= 0.05)
  process.stderr.write(`${what} threads (tid user/system s): ${rows.map(r => `${r[0]} ${r[1].toFixed(2)}/${r[2].toFixed(2)}`).join(', ')}\n`)
}

/** The highest RSS any sampler saw: reported even when the run fails. */
let rssPeakSoFar = 0

/** Samples a process's RSS every `everyMs` until stopped: peak and every sample, in bytes. */
function rssSampler (pid: number, everyMs: number): { stop (): Promise<{ peak: number, samples: number[] }> } {
  const samples: number[] = []
  let running = true
  const loop = (async () => {
    while (running) {
      const rss = await rssOf(pid)
      if (rss !== null) { samples.push(rss); rssPeakSoFar = Math.max(rssPeakSoFar, rss) }
      await sleep(everyMs)
    }
  })()
  return {
    async stop () {
      running = false
      await loop
      return { peak: samples.reduce((a, b) => Math.max(a, b), 0), samples }
    }
  }
}

/**
 * The source file: one random 16 MiB block written over and over, each chunk-sized piece stamped with
 * its index and the run's nonce in its first bytes, so every chunk is distinct (the blob store never
 * deduplicates) while writing costs no more than the disk. Quick even at 4 GiB.
 */
async function writeSource (path: string): Promise<void> {
  const block = randomBytes(Math.min(CHUNK_BYTES, sizeBytes))
  const nonce = randomBytes(16)
  const fh = await open(path, 'w')
  try {
    for (let off = 0, i = 0; off < sizeBytes; off += CHUNK_BYTES, i++) {
      const piece = block.subarray(0, Math.min(CHUNK_BYTES, sizeBytes - off))
      piece.writeUInt32BE(i, 0)
      nonce.copy(piece, 4)
      for (let done = 0; done < piece.length;) done += (await fh.write(piece, done, piece.length - done, off + done)).bytesWritten
    }
  } finally { await fh.close() }
}

async function waitForLine (child: ChildProcess, what: string): Promise<Record<string, any>> {
  const lines = createInterface({ input: child.stdout! })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} not ready in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS)
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before ready`)))
    lines.on('line', (l) => { try { const o = JSON.parse(l); if (o.ready) { clearTimeout(timer); resolve(o) } } catch {} })
  })
}

async function main (): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'bwnet-bench-e2e-'))
  try {
    // The source file, random bytes, written before anything is timed.
    const source = join(work, 'payload.bin')
    await writeSource(source)
    const sourceSha = await sha256File(source)

    const data = join(work, 'devnet')
    const devnetArgs = args['devnet-args']!.split(' ').filter(a => a !== '')
    const nodeArgs = [
      ...args['devnet-node-args']!.split(' ').filter(a => a !== ''),
      ...(args.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', args.profile, ...(args['heap-prof'] === true ? ['--heap-prof', '--heap-prof-dir', args.profile] : [])])
    ]
    if (args.profile !== undefined) await mkdir(args.profile, { recursive: true })
    const devnet = spawnBwnet(['devnet', '--port', '0', '--data', data, '--workers', String(workers), '--log-level', 'warn', ...devnetArgs], {}, nodeArgs)
    devnet.stdout!.resume()
    let devnetErr = ''
    devnet.stderr!.setEncoding('utf8').on('data', (d: string) => { devnetErr = (devnetErr + d).slice(-100_000) })
    if (args['devnet-log'] !== undefined) {
      const log = createWriteStream(args['devnet-log'])
      devnet.stdout!.pipe(log)
      devnet.stderr!.pipe(log)
    }
    const t0 = Date.now()
    let file: any
    for (;;) {
      try { file = JSON.parse(await readFile(join(data, 'devnet.json'), 'utf8')); break } catch {}
      if (devnet.exitCode !== null || Date.now() - t0 > START_TIMEOUT_MS) throw new Error(`devnet did not start: ${devnetErr.slice(-2000)}`)
      await sleep(200)
    }
    const sink = join(data, 'orchestrator', 'sink')
    const receiver = spawnTs(join(import.meta.dirname, 'baseline-server.ts'), ['--dir', sink])
    receiver.stderr!.resume()
    const ready = await waitForLine(receiver, 'baseline receiver')
    const bareOn = args.bare === true
    const bare = bareOn ? spawnTs(join(import.meta.dirname, 'bare-pipeline.ts'), ['--dir', join(work, 'bare'), '--sink', sink, '--moves', String(workers * 4)], {},
      args.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', join(args.profile, 'bare')]) : null
    bare?.stderr!.resume()
    const bareReady = bare === null ? null : await waitForLine(bare, 'bare pipeline')

    // Enterprise client key: the Free key's 60 requests/min would throttle a 64-chunk upload.
    const orgs = await api(file.baseUrl, file.keys.admin, '/admin/organizations')
    const created = await api(file.baseUrl, file.keys.admin, `/admin/organizations/${orgs.items[0].id}/keys`, { method: 'POST', body: JSON.stringify({ role: 'client', plan: 'enterprise', name: 'e2e bench' }) })
    const key = created.key as string
    // Wait until the workers have attached and the orchestrator knows the validator, so the first round
    // does not time their start-up (a chunk delivered before the validator is known is checked by the
    // orchestrator itself: a whole-chunk read-back on its own thread that a running devnet does not do).
    for (const started = Date.now(); ; await sleep(200)) {
      const health = await (await fetch(`${file.baseUrl}/health`)).json() as any
      if ((health.nodes?.worker ?? 0) >= workers && (health.nodes?.validator ?? 0) >= 1) break
      if (Date.now() - started > START_TIMEOUT_MS) throw new Error('workers or the validator did not join')
    }

    // The idle devnet's RSS (workers attached, nothing moving): the memory baseline of the same run.
    const idle = rssSampler(devnet.pid!, rssEveryMs)
    await sleep(idleMs)
    const idleSamples = (await idle.stop()).samples
    const per: { bwnet: number[], baseline: number[], bwnetCli: number[], bwnetWall: number[], rssPeak: number[], devnetCpu: number[], devnetMainCpu: number[], cliCpu: number[], cliCpuFromCreate: number[], baselineCpu: number[], bare: number[], bareCpu: number[], bareMainCpu: number[], attempts: unknown[] } = { bwnet: [], baseline: [], bwnetCli: [], bwnetWall: [], rssPeak: [], devnetCpu: [], devnetMainCpu: [], cliCpu: [], cliCpuFromCreate: [], baselineCpu: [], bare: [], bareCpu: [], bareMainCpu: [], attempts: [] }
    const skipBaseline = args['skip-baseline'] === true
    for (let round = 0; round < rounds; round++) {
      const paths = skipBaseline ? ['bwnet'] : ['bwnet', 'baseline', ...(bareOn ? ['bare'] : [])]
      const order = paths.map((_, i) => paths[(i + round) % paths.length]!) // each path leads in turn
      for (const path of order) {
        if (path === 'bwnet') {
          // A link per round gives each round its own name in the sink (and its own resume state).
          const name = `bwnet-r${round}.bin`
          const link = join(work, name)
          await symlink(source, link)
          const sampler = rssSampler(devnet.pid!, rssEveryMs)
          const cpu0 = await cpuSecondsOf(devnet.pid!)
          const main0 = await cpuSecondsOf(devnet.pid!, devnet.pid!)
          const threads0 = await threadCpu(devnet.pid!)
          const r = await viaBwnet(link, file.baseUrl, key, join(work, 'state'))
          per.rssPeak.push((await sampler.stop()).peak)
          per.devnetCpu.push((await cpuSecondsOf(devnet.pid!) ?? NaN) - (cpu0 ?? NaN))
          per.devnetMainCpu.push((await cpuSecondsOf(devnet.pid!, devnet.pid!) ?? NaN) - (main0 ?? NaN))
          debugThreads('devnet', threads0, await threadCpu(devnet.pid!))
          per.attempts.push(await attemptsOf(file.baseUrl, file.keys.admin, file.nodes.find((n: { role: string }) => n.role === 'orchestrator').hotkey, r.id))
          // In the organization's namespace of the sink (docs/destinations.md#tenant-namespaces).
          const delivered = sinkFilePath(sink, orgs.items[0].id, name)
          const got = await sha256File(delivered)
          if (got !== sourceSha) throw new Error(`bwnet delivered ${got}, not ${sourceSha}`)
          await unlink(delivered)
          per.bwnet.push(r.ms); per.bwnetCli.push(r.cliMs); per.bwnetWall.push(r.wallMs); per.cliCpu.push(r.cliCpu); per.cliCpuFromCreate.push(r.cliCpuFromCreate)
        } else if (path === 'bare') {
          const name = `bare-r${round}.bin`
          const serverCpu0 = await cpuSecondsOf(bare!.pid!)
          const serverMain0 = await cpuSecondsOf(bare!.pid!, bare!.pid!)
          const threads0 = await threadCpu(bare!.pid!)
          const senderCpu0 = process.cpuUsage()
          const r = await viaBare(source, bareReady!.url, name)
          const sender = process.cpuUsage(senderCpu0)
          per.bareCpu.push((await cpuSecondsOf(bare!.pid!) ?? NaN) - (serverCpu0 ?? NaN) + (sender.user + sender.system) / 1e6)
          per.bareMainCpu.push((await cpuSecondsOf(bare!.pid!, bare!.pid!) ?? NaN) - (serverMain0 ?? NaN))
          debugThreads('bare', threads0, await threadCpu(bare!.pid!))
          const got = await sha256File(join(sink, name))
          if (got !== sourceSha) throw new Error(`bare pipeline stored ${got}, not ${sourceSha}`)
          await unlink(join(sink, name))
          per.bare.push(r.ms)
        } else {
          const name = `baseline-r${round}.bin`
          const receiverCpu0 = await cpuSecondsOf(receiver.pid!)
          const senderCpu0 = process.cpuUsage()
          const r = await viaPut(source, `${ready.url}/files/${name}`)
          const sender = process.cpuUsage(senderCpu0)
          per.baselineCpu.push((await cpuSecondsOf(receiver.pid!) ?? NaN) - (receiverCpu0 ?? NaN) + (sender.user + sender.system) / 1e6)
          const got = await sha256File(join(sink, name))
          if (got !== sourceSha || r.sha256 !== sourceSha) throw new Error(`baseline stored ${got}, not ${sourceSha}`)
          await unlink(join(sink, name))
          per.baseline.push(r.ms)
        }
      }
    }
    // Abuse: concurrent oversized bodies for one chunk index; each must be refused (413) without buffering.
    let oversize: { statuses: number[], sentMiB: number[], rssPeakMiB: number } | null = null
    if (oversizeMib > 0) {
      const orchestrator = file.nodes.find((n: { role: string }) => n.role === 'orchestrator').hotkey
      const t = await api(file.baseUrl, key, '/transfers/create', { method: 'POST', body: JSON.stringify({ sender_hotkey: orchestrator, total_size: 64 * MIB, filename: 'oversize.bin', tier: 'STANDARD' }) })
      const sampler = rssSampler(devnet.pid!, rssEveryMs)
      const answers = (await Promise.all(Array.from({ length: oversizeCount }, async () => await floodChunk({
        baseUrl: file.baseUrl, key, transferId: t.id, index: 0, expectedBytes: t.chunk_size, maxBytes: oversizeMib * MIB, timeoutMs: 120_000, contentLength: true
      })))).map(a => {
        if (a.error !== null) throw new Error(`oversized body: ${a.error}`)
        return { status: a.status ?? 0, sentMiB: Math.round(a.bytesSent / MIB) }
      })
      const peak = (await sampler.stop()).peak
      oversize = { statuses: answers.map(a => a.status), sentMiB: answers.map(a => a.sentMiB), rssPeakMiB: Math.round(peak / MIB * 10) / 10 }
      per.rssPeak.push(peak)
    }
    await stopChild(receiver)
    if (bare !== null) await stopChild(bare)
    await stopChild(devnet)

    const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2 }
    const s3 = (ms: number): number => Math.round(ms) / 1000
    const mib = (bytes: number): number => Math.round(bytes / MIB * 10) / 10
    const round2 = (x: number): number => Math.round(x * 100) / 100
    const seconds = { bwnet: s3(median(per.bwnet)), baseline: skipBaseline ? null : s3(median(per.baseline)) }
    const idleRss = median(idleSamples)
    const idleMax = Math.max(...idleSamples)
    const peakRss = Math.max(...per.rssPeak)
    const cpuFloorS = median(per.devnetCpu.map((c, i) => c + (per.cliCpuFromCreate[i] ?? NaN)).filter(Number.isFinite)) / availableParallelism() // NaN when /proc could not be read
    const result = {
      bench: 'e2e',
      sizeBytes, rounds, workers, parallel,
      devnetArgs: args['devnet-args'],
      seconds,
      ratio: { bwnetOverBaseline: skipBaseline ? null : round2(median(per.bwnet) / median(per.baseline)) },
      mibPerSec: { bwnet: Math.round(sizeMib / (median(per.bwnet) / 1000) * 10) / 10, baseline: skipBaseline ? null : Math.round(sizeMib / (median(per.baseline) / 1000) * 10) / 10 },
      perRoundSeconds: { bwnet: per.bwnet.map(s3), baseline: per.baseline.map(s3) },
      bwnetCliSeconds: per.bwnetCli.map(s3),
      bwnetWallSeconds: per.bwnetWall.map(s3),
      // CPU seconds the devnet process used while each bwnet round ran (both cores count).
      devnetCpuSeconds: per.devnetCpu.map(x => Math.round(x * 10) / 10),
      // Of those, the seconds of its main thread (JavaScript runs there: one core at most).
      devnetMainThreadCpuSeconds: per.devnetMainCpu.map(x => Math.round(x * 10) / 10),
      // The CLI process's CPU seconds (start-up included; sampled every 100 ms, so up to 0.1 s short).
      cliCpuSeconds: per.cliCpu.map(x => Math.round(x * 10) / 10),
      // Of those, the seconds from the transfer's creation on (without start-up): what competed with the devnet.
      cliCpuFromCreateSeconds: per.cliCpuFromCreate.map(x => Math.round(x * 10) / 10),
      // The baseline's CPU seconds per round: the receiver's and this process's (the sender's).
      baselineCpuSeconds: per.baselineCpu.map(x => Math.round(x * 10) / 10),
      // The least time the bwnet work (the devnet's CPU seconds and the CLI's from create on, medians) could take on this machine's
      // cores, and that time over the baseline's: the ratio no scheduling could beat here.
      cpuFloor: skipBaseline ? null : { cores: availableParallelism(), seconds: round2(cpuFloorS), overBaseline: round2(cpuFloorS / (median(per.baseline) / 1000)) },
      // --bare: the same stages with plain node:http (bench/e2e/bare-pipeline.ts), its time over the
      // baseline's and its CPU (server + sender; timing includes the read-backs' CPU only while they overlap).
      bare: bareOn && !skipBaseline ? { seconds: s3(median(per.bare)), perRoundSeconds: per.bare.map(s3), overBaseline: round2(median(per.bare) / median(per.baseline)), cpuSeconds: per.bareCpu.map(x => Math.round(x * 10) / 10), mainThreadCpuSeconds: per.bareMainCpu.map(x => Math.round(x * 10) / 10), bwnetOverBare: round2(median(per.bwnet) / median(per.bare)) } : null,
      attempts: per.attempts,
      // The devnet process's resident set: idle (the same run's baseline) and the peak while moving.
      oversize,
      // idle: the median of the idle samples, idleMax their highest, idleSeconds how long they ran.
      rssMiB: { idle: mib(idleRss), idleMax: mib(idleMax), idleSamples: idleSamples.length, idleSeconds: idleMs / 1000, peak: mib(peakRss), perRoundPeak: per.rssPeak.map(mib), peakOverIdle: round2(peakRss / idleRss), limit: maxRssMib > 0 ? maxRssMib : null, idleLimit: maxIdleRssMib > 0 ? maxIdleRssMib : null },
      sha256: sourceSha,
      verified: true,
      node: process.version
    }
    console.log('| path | seconds (median) | MiB/s | per round |')
    console.log('|---|---:|---:|---|')
    console.log(`| bwnet devnet (create → completed, ${workers} workers) | ${seconds.bwnet} | ${result.mibPerSec.bwnet} | ${result.perRoundSeconds.bwnet.join(', ')} |`)
    if (!skipBaseline) {
      console.log(`| baseline single PUT into the sink dir | ${seconds.baseline} | ${result.mibPerSec.baseline} | ${result.perRoundSeconds.baseline.join(', ')} |`)
      console.log(`bwnet/baseline = ${result.ratio.bwnetOverBaseline} (${sizeMib} MiB, ${rounds} round(s); CLI elapsed ${result.bwnetCliSeconds.join(', ')} s, with process start ${result.bwnetWallSeconds.join(', ')} s)`)
    }
    if (result.bare !== null) console.log(`| bare pipeline (same stages, plain node:http) | ${result.bare.seconds} | ${Math.round(sizeMib / result.bare.seconds * 10) / 10} | ${result.bare.perRoundSeconds.join(', ')} |\nbare/baseline = ${result.bare.overBaseline}, bwnet/bare = ${result.bare.bwnetOverBare}; bare CPU ${result.bare.cpuSeconds.join(', ')} s (server + sender, read-backs included; server main thread ${result.bare.mainThreadCpuSeconds.join(', ')} s)`)
    if (result.cpuFloor !== null) console.log(`CPU per round: bwnet ${per.devnetCpu.map((c, i) => (c + per.cliCpuFromCreate[i]!).toFixed(1)).join(', ')} s (devnet + CLI from create on), baseline ${result.baselineCpuSeconds.join(', ')} s (sender + receiver); on ${result.cpuFloor.cores} cores the bwnet work needs ≥ ${result.cpuFloor.seconds} s = ${result.cpuFloor.overBaseline}× the baseline's time`)
    console.log(`devnet CPU while moving: ${result.devnetCpuSeconds.join(', ')} s (main thread ${result.devnetMainThreadCpuSeconds.join(', ')} s); CLI CPU ${result.cliCpuSeconds.join(', ')} s (${result.cliCpuFromCreateSeconds.join(', ')} s from create on); attempts: ${JSON.stringify(per.attempts)}`)
    if (oversize !== null) console.log(`${oversizeCount} × ${oversizeMib} MiB bodies for one chunk index: statuses ${oversize.statuses.join(', ')}, MiB sent before the answer ${oversize.sentMiB.join(', ')}, devnet RSS peak ${oversize.rssPeakMiB} MiB`)
    console.log(`devnet RSS: idle ${result.rssMiB.idle} MiB, peak ${result.rssMiB.peak} MiB while moving (peak/idle = ${result.rssMiB.peakOverIdle}${maxRssMib > 0 ? `; limit ${maxRssMib} MiB` : ''})`)
    console.log(`devnet RSS idle over ${idleMs / 1000} s (${idleSamples.length} samples): median ${result.rssMiB.idle} MiB, highest ${result.rssMiB.idleMax} MiB${maxIdleRssMib > 0 ? ` (limit ${maxIdleRssMib} MiB)` : ''}`)
    await mkdir(dirname(args.out!), { recursive: true })
    await writeFile(args.out!, JSON.stringify(result, null, 2) + '\n')
    console.log(JSON.stringify(result))
    if (oversize !== null && oversize.statuses.some(s => s !== 413)) throw new Error(`oversized chunk bodies answered ${oversize.statuses.join(', ')}, not 413`)
    const over = [
      ...(maxIdleRssMib > 0 && idleMax > maxIdleRssMib * MIB ? [`idle devnet RSS reached ${result.rssMiB.idleMax} MiB, over --max-idle-rss-mib ${maxIdleRssMib}`] : []),
      ...(maxRssMib > 0 && peakRss > maxRssMib * MIB ? [`devnet RSS peaked at ${result.rssMiB.peak} MiB, over --max-rss-mib ${maxRssMib}`] : [])
    ]
    if (over.length > 0) throw new Error(over.join('; '))
  } finally {
    killAll()
    await rm(work, { recursive: true, force: true })
  }
}

main().then(() => { clearTimeout(overall) }, (err: unknown) => {
  process.stderr.write(`e2e bench failed: ${(err as Error).stack ?? String(err)}\n(devnet RSS peak until then: ${Math.round(rssPeakSoFar / MIB * 10) / 10} MiB)\n`)
  killAll()
  process.exit(1)
})
