// Small-transfer bench: how many 1 MiB transfers a devnet completes per second when a client sends
// many at once (create, upload its one chunk, finalize; workers move it into the node sink; the
// validator checks it; completed), against a baseline of the same files sent as direct durable PUTs
// (hashed, fsynced, renamed) into the same directory, in the same run. Every delivered file is checked
// byte for byte. docs/benchmarks.md#small-transfers.
// It also prints where the transfers waited: the median time each stage was reached (a sample of 50).
// Usage: npm run bench:small -- [--transfers 200] [--size-kib 1024] [--concurrency 200] [--rounds 1]
//        [--workers 2] [--profile DIR] [--keep-log FILE] [--devnet-args '...'] [--out file]
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { copyFile, mkdtemp, mkdir, readFile, rm, unlink, writeFile } from 'node:fs/promises'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import PQueue from 'p-queue'
import { TransferApiClient } from '../../node/transfers/api-client.ts'
import { sinkFilePath } from '../../node/adapters/destinations/node-sink.ts'
import { cryptoReady, newHotkey } from '../../protocol/index.ts'
import { cpuSecondsOf, stopChild } from '../children.ts'

const KIB = 1024
const MAX_TRANSFERS = 2000
const MAX_ROUNDS = 5
const START_TIMEOUT_MS = 90_000
const REPO = join(import.meta.dirname, '..', '..')
const GOAL_PER_SECOND = 100 // ≥ 100 transfers/s on a quiet 2-core machine
// How often the client asks how many are completed: each ask lists the organization's transfers, work
// the devnet does beside the bench's, so it is kept rare; the orchestrator's completion times are read.
const POLL_MS = 100

const { values: args } = parseArgs({
  options: {
    transfers: { type: 'string', default: '200' },
    'size-kib': { type: 'string', default: '1024' },
    concurrency: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '1' },
    workers: { type: 'string', default: '2' },
    'timeout-s': { type: 'string', default: '600' },
    'devnet-args': { type: 'string', default: '' },
    // Profile the devnet: --cpu-prof into this directory.
    profile: { type: 'string' },
    // Copy the devnet's log (devnet.log under its --data, info and above) here before it is removed.
    'keep-log': { type: 'string' },
    out: { type: 'string', default: join(import.meta.dirname, '..', 'out', 'small.json') }
  }
})
const count = Number(args.transfers)
const sizeBytes = Number(args['size-kib']) * KIB
const concurrency = Number(args.concurrency)
const rounds = Number(args.rounds)
const workers = Number(args.workers)
const timeoutS = Number(args['timeout-s'])
if (!Number.isInteger(count) || count < 1 || count > MAX_TRANSFERS) throw new Error(`--transfers 1..${MAX_TRANSFERS}`)
if (!Number.isInteger(sizeBytes) || sizeBytes < 1 || sizeBytes > 16 * 1024 * KIB) throw new Error('--size-kib 1..16384')
if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_TRANSFERS) throw new Error(`--concurrency 1..${MAX_TRANSFERS}`)
if (!Number.isInteger(rounds) || rounds < 1 || rounds > MAX_ROUNDS) throw new Error(`--rounds 1..${MAX_ROUNDS}`)
if (!Number.isInteger(workers) || workers < 1 || workers > 16) throw new Error('--workers 1..16')

const children: ChildProcess[] = []
const killAll = (): void => { for (const c of children) if (c.exitCode === null) c.kill('SIGKILL') }
process.on('exit', killAll)
const overall = setTimeout(() => { process.stderr.write(`small bench: over --timeout-s ${timeoutS}; giving up\n`); killAll(); process.exit(1) }, timeoutS * 1000)
overall.unref()

function spawnNode (argv: string[], nodeArgs: string[] = []): ChildProcess {
  const child = spawn(process.execPath, [...nodeArgs, ...argv], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  return child
}

async function waitForReady (child: ChildProcess, what: string): Promise<Record<string, any>> {
  const lines = createInterface({ input: child.stdout! })
  return await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} not ready in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS)
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before ready`)))
    lines.on('line', (l) => { try { const o = JSON.parse(l); if (o.ready === true) { clearTimeout(timer); resolve(o) } } catch {} })
  })
}

async function api (base: string, key: string, path: string, init: RequestInit = {}): Promise<any> {
  const res = await fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } })
  const body = await res.json() as any
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`)
  return body
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex')

/** The round's files: distinct random bytes each (the blob store never deduplicates them). */
function files (round: number): Array<{ name: string, bytes: Buffer, sha256: string }> {
  return Array.from({ length: count }, (_v, i) => {
    const bytes = randomBytes(sizeBytes)
    return { name: `small-r${round}-${i}.bin`, bytes, sha256: sha256(bytes) }
  })
}

const putAgent = new Agent({ keepAlive: true, maxSockets: concurrency })

/** Baseline: each file as one PUT to the durable receiver, `concurrency` at a time. */
async function viaPut (batch: ReturnType<typeof files>, url: string): Promise<{ ms: number }> {
  const queue = new PQueue({ concurrency })
  const t0 = performance.now()
  await Promise.all(batch.map(f => queue.add(() => new Promise<void>((resolve, reject) => {
    const req = request(`${url}/files/${f.name}`, { method: 'PUT', agent: putAgent, headers: { 'content-type': 'application/octet-stream', 'content-length': String(f.bytes.length) } }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (d: string) => { text += d }).on('end', () => {
        if (res.statusCode !== 201) { reject(new Error(`baseline PUT answered ${res.statusCode}: ${text}`)); return }
        const body = JSON.parse(text)
        if (body.sha256 !== f.sha256) { reject(new Error(`baseline stored ${body.sha256} for ${f.name}`)); return }
        resolve()
      })
    })
    req.on('error', reject)
    req.end(f.bytes)
  }))))
  return { ms: performance.now() - t0 }
}

/**
 * bwnet: each file as a transfer (create, its one chunk, finalize), `concurrency` at a time; done when
 * every transfer is completed, which the organization's list of completed transfers tells at once.
 */
async function viaBwnet (batch: ReturnType<typeof files>, client: TransferApiClient, hotkey: string): Promise<{ ms: number, uploadMs: number, ids: string[], polledMs: number, wall0: number }> {
  const before = (await client.list({ limit: 1, offset: 0, status: 'completed' })).total
  const queue = new PQueue({ concurrency })
  const t0 = performance.now()
  const wall0 = Date.now()
  const ids = await Promise.all(batch.map(f => queue.add(async () => {
    const record = await client.create({ sender_hotkey: hotkey, total_size: f.bytes.length, filename: f.name, tier: 'STANDARD' })
    if (record.total_chunks !== 1) throw new Error(`${f.name}: planned ${record.total_chunks} chunks`)
    const { ack } = await client.putChunk(record.id, 0, f.bytes, f.sha256)
    if (ack.sha256 !== f.sha256) throw new Error(`${f.name}: stored ${ack.sha256}`)
    await client.finalize(record.id)
    return record.id
  }) as Promise<string>))
  const uploadMs = performance.now() - t0
  for (;;) {
    const done = (await client.list({ limit: 1, offset: 0, status: 'completed' })).total - before
    if (done >= count) break
    const failed = (await client.list({ limit: 1, offset: 0, status: 'failed' })).total
    if (failed > 0) throw new Error(`${failed} transfers failed`)
    await sleep(POLL_MS)
  }
  const polledMs = performance.now() - t0
  // The orchestrator's own completion times: the last one ends the run, without the poll's granularity.
  let lastCompletedAt = 0
  for (const id of ids) lastCompletedAt = Math.max(lastCompletedAt, Date.parse((await client.get(id)).completed_at!))
  return { ms: lastCompletedAt - wall0, uploadMs, ids, polledMs, wall0 }
}

const STAGE_SAMPLE = 50 // transfers whose stage times are read back (two requests each)

/**
 * Where the transfers waited: for a sample of them, the median time (ms after the round's first create)
 * at which each reached a stage, from the transfer record and the orchestrator's audit rows.
 */
async function stagesOf (baseUrl: string, clientKey: string, adminKey: string, orchestrator: string, ids: string[], wall0: number): Promise<Record<string, number>> {
  const at: Record<string, number[]> = {}
  const add = (stage: string, iso: string | null | undefined): void => { if (typeof iso === 'string') (at[stage] ??= []).push(Date.parse(iso) - wall0) }
  const step = Math.max(1, Math.floor(ids.length / STAGE_SAMPLE))
  for (let i = 0; i < ids.length; i += step) {
    const t = await api(baseUrl, clientKey, `/transfers/${ids[i]}`)
    const a = await api(baseUrl, adminKey, `/api/audit/orchestrator/${orchestrator}/transfers/${ids[i]}`)
    add('created', t.created_at); add('begun', t.started_at); add('finalized', t.finalized_at)
    add('offered', a.tasks[0]?.offered_at); add('accepted', a.tasks[0]?.accepted_at); add('result', a.task_results[0]?.received_at)
    add('verified', a.tasks[0]?.completed_at); add('completed', t.completed_at)
  }
  const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!
  return Object.fromEntries(Object.entries(at).map(([k, v]) => [k, median(v)]))
}

async function main (): Promise<void> {
  await cryptoReady()
  const work = await mkdtemp(join(tmpdir(), 'bwnet-bench-small-'))
  try {
    const data = join(work, 'devnet')
    const nodeArgs = args.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', args.profile]
    if (args.profile !== undefined) await mkdir(args.profile, { recursive: true })
    const devnetArgs = args['devnet-args']!.split(' ').filter(a => a !== '')
    const devnet = spawnNode([join(REPO, 'node', 'cli.ts'), 'devnet', '--port', '0', '--data', data, '--workers', String(workers), '--log-level', 'warn', ...devnetArgs], nodeArgs)
    devnet.stdout!.resume()
    let devnetErr = ''
    devnet.stderr!.setEncoding('utf8').on('data', (d: string) => { devnetErr = (devnetErr + d).slice(-100_000) })
    let file: any
    for (const t0 = Date.now(); ; await sleep(200)) {
      try { file = JSON.parse(await readFile(join(data, 'devnet.json'), 'utf8')); break } catch {}
      if (devnet.exitCode !== null || Date.now() - t0 > START_TIMEOUT_MS) throw new Error(`devnet did not start: ${devnetErr.slice(-2000)}`)
    }
    const sink = join(data, 'orchestrator', 'sink')
    const receiver = spawnNode([join(REPO, 'bench', 'e2e', 'baseline-server.ts'), '--dir', sink])
    receiver.stderr!.resume()
    const baseline = await waitForReady(receiver, 'baseline receiver')

    // An Enterprise client key: a Free key's 60 requests a minute would throttle the client, not bwnet.
    const orgs = await api(file.baseUrl, file.keys.admin, '/admin/organizations')
    const orgId = orgs.items[0].id as string
    const created = await api(file.baseUrl, file.keys.admin, `/admin/organizations/${orgId}/keys`, { method: 'POST', body: JSON.stringify({ role: 'client', plan: 'enterprise', name: 'small bench' }) })
    const client = new TransferApiClient(file.baseUrl, created.key)
    for (const t0 = Date.now(); ; await sleep(200)) {
      const health = await (await fetch(`${file.baseUrl}/health`)).json() as any
      if ((health.nodes?.worker ?? 0) >= workers && (health.nodes?.validator ?? 0) >= 1) break
      if (Date.now() - t0 > START_TIMEOUT_MS) throw new Error('workers or the validator did not join')
    }
    const hotkey = newHotkey().address

    let verified = 0 // delivered files read back from the sink and compared with what was sent
    const per: { bwnet: number[], bwnetUpload: number[], bwnetPolled: number[], cpuMs: Array<{ process: number, mainThread: number, client: number } | null>, baseline: number[], stages: Array<Record<string, number>> } = { bwnet: [], bwnetUpload: [], bwnetPolled: [], cpuMs: [], baseline: [], stages: [] }
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ['bwnet', 'baseline'] : ['baseline', 'bwnet']
      for (const path of order) {
        const batch = files(round).map(f => ({ ...f, name: `${path}-${f.name}` }))
        if (path === 'bwnet') {
          // The devnet's CPU over the round (all its threads, and its main thread alone): steadier than a
          // rate on a shared 2-core machine, and what per-transfer work the devnet does.
          const cpu0 = [await cpuSecondsOf(devnet.pid!), await cpuSecondsOf(devnet.pid!, devnet.pid!)]
          const own0 = process.cpuUsage()
          const r = await viaBwnet(batch, client, hotkey)
          const own = process.cpuUsage(own0)
          const cpu1 = [await cpuSecondsOf(devnet.pid!), await cpuSecondsOf(devnet.pid!, devnet.pid!)]
          per.bwnet.push(r.ms); per.bwnetUpload.push(r.uploadMs); per.bwnetPolled.push(r.polledMs)
          per.cpuMs.push(cpu0.includes(null) || cpu1.includes(null) ? null : { process: (cpu1[0]! - cpu0[0]!) * 1000 / count, mainThread: (cpu1[1]! - cpu0[1]!) * 1000 / count, client: (own.user + own.system) / 1000 / count })
          const orchestrator = file.nodes.find((n: { role: string }) => n.role === 'orchestrator').hotkey as string
          per.stages.push(await stagesOf(file.baseUrl, created.key, file.keys.admin, orchestrator, r.ids, r.wall0))
          for (const f of batch) {
            const delivered = sinkFilePath(sink, orgId, f.name)
            const got = sha256(await readFile(delivered))
            if (got !== f.sha256) throw new Error(`${f.name}: delivered ${got}, not ${f.sha256}`)
            verified++
            await unlink(delivered)
          }
        } else {
          const r = await viaPut(batch, baseline.url as string)
          per.baseline.push(r.ms)
          for (const f of batch) await unlink(join(sink, f.name))
        }
      }
    }
    const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]! }
    const bwnetMs = median(per.bwnet)
    const baselineMs = median(per.baseline)
    const result = {
      bench: 'small',
      node: process.version,
      transfers: count,
      sizeBytes,
      concurrency,
      rounds,
      workers,
      // ms: first create to the last completion (the orchestrator's completed_at); uploadMs: until every
      // finalize was answered; polledMs: until the client saw every one completed.
      // cpuMsPerTransfer: the devnet's CPU ms per transfer over each round (the process, its main thread).
      bwnet: { perSecond: count / (bwnetMs / 1000), ms: per.bwnet, uploadMs: per.bwnetUpload, polledMs: per.bwnetPolled, cpuMsPerTransfer: per.cpuMs },
      // Per round: the median ms (after its first create) at which a sample of its transfers reached each stage.
      stages: per.stages,
      baseline: { perSecond: count / (baselineMs / 1000), ms: per.baseline },
      ratio: baselineMs / bwnetMs,
      verified,
      identical: verified === count * rounds,
      goal: { perSecond: GOAL_PER_SECOND, met: count / (bwnetMs / 1000) >= GOAL_PER_SECOND }
    }
    await mkdir(dirname(args.out!), { recursive: true })
    await writeFile(args.out!, JSON.stringify(result, null, 2) + '\n')
    process.stderr.write(`small: ${count} × ${sizeBytes / KIB} KiB, ${concurrency} at a time: bwnet ${result.bwnet.perSecond.toFixed(1)} transfers/s (median ${bwnetMs.toFixed(0)} ms), ` +
      `direct durable PUTs ${result.baseline.perSecond.toFixed(1)}/s (${baselineMs.toFixed(0)} ms): ${result.ratio.toFixed(3)}× the baseline's rate; ${verified} of ${count * rounds} read back identical; goal ≥ ${GOAL_PER_SECOND}/s ${result.goal.met ? 'met' : 'not met'}\n`)
    for (const [i, c] of per.cpuMs.entries()) if (c !== null) process.stderr.write(`devnet CPU, round ${i}: ${c.process.toFixed(1)} ms per transfer (main thread ${c.mainThread.toFixed(1)} ms); the bench's client ${c.client.toFixed(1)} ms\n`)
    for (const [i, st] of per.stages.entries()) process.stderr.write(`stages, round ${i} (median ms after the first create): ${Object.entries(st).map(([k, v]) => `${k} ${v}`).join(', ')}\n`)
    process.stdout.write(JSON.stringify(result) + '\n')
    await stopChild(receiver)
    await stopChild(devnet, args.profile === undefined ? undefined : 120_000)
    putAgent.destroy()
  } finally {
    killAll()
    if (args['keep-log'] !== undefined) await copyFile(join(work, 'devnet', 'devnet.log'), args['keep-log']).catch((err: Error) => process.stderr.write(`devnet log not kept: ${err.message}\n`))
    await rm(work, { recursive: true, force: true })
  }
}

await main()
