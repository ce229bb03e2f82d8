// Ingest bench: how fast the API takes chunk bytes (POST /transfers/{id}/chunks on a real orchestrator:
// auth, streamed sha256 + durable blob write, coordinator bookkeeping) against a bare node:http server
// that streams the same bytes to a file with sha256 and fsyncs before answering. Same run, same chunks,
// same client, rounds interleaved; every stored byte is read back and checked. Then a flood phase:
// `--floods` concurrent bodies of `--flood-mib` sent to one chunk of the planned size, each of which
// must be refused with 413 at the excess byte while the server's RSS (sampled from /proc) stays
// bounded. docs/benchmarks.md#ingest.
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { createInterface } from 'node:readline'
import PQueue from 'p-queue'
import { cryptoReady, newHotkey } from '../../protocol/index.ts'
import { floodChunk, type FloodResult } from './flood.ts'
import { cpuSecondsOf, stopChild } from '../children.ts'

const MIB = 1024 * 1024
const MB = 1_000_000
const PLAN_CHUNK_MIB = 16 // the chunk plan's size for objects up to ~52 GiB
const MAX_CHUNKS_PER_ROUND = 1024
const MAX_ROUNDS = 64
const START_TIMEOUT_MS = 60_000 // a server child must be ready within 1 min
const REQUEST_TIMEOUT_MS = 120_000 // one chunk POST

const { values: args } = parseArgs({
  options: {
    'chunk-mib': { type: 'string', default: String(PLAN_CHUNK_MIB) },
    chunks: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '4' },
    parallel: { type: 'string', default: '4' },
    'timeout-s': { type: 'string', default: '600' },
    floods: { type: 'string', default: '4' },
    'cpu-prof-dir': { type: 'string' },
    'flood-mib': { type: 'string', default: '1024' },
    out: { type: 'string', default: join(import.meta.dirname, '..', 'out', 'ingest.json') }
  }
})
const chunkMib = Number(args['chunk-mib'])
const chunks = Number(args.chunks)
const rounds = Number(args.rounds)
const parallel = Number(args.parallel)
const timeoutS = Number(args['timeout-s'])
if (!(chunkMib > 0 && chunkMib <= PLAN_CHUNK_MIB) || !Number.isInteger(chunkMib * MIB)) throw new Error(`--chunk-mib must be in (0, ${PLAN_CHUNK_MIB}]`)
if (!Number.isInteger(chunks) || chunks < 1 || chunks > MAX_CHUNKS_PER_ROUND) throw new Error(`--chunks 1..${MAX_CHUNKS_PER_ROUND}`)
if (!Number.isInteger(rounds) || rounds < 1 || rounds > MAX_ROUNDS) throw new Error(`--rounds 1..${MAX_ROUNDS}`)
if (!Number.isInteger(parallel) || parallel < 1 || parallel > 64) throw new Error('--parallel 1..64')
const floods = Number(args.floods)
const floodMib = Number(args['flood-mib'])
if (!Number.isInteger(floods) || floods < 0 || floods > 16) throw new Error('--floods 0..16')
if (!Number.isInteger(floodMib) || floodMib <= chunkMib || floodMib > 4096) throw new Error('--flood-mib: more than --chunk-mib, at most 4096')
const chunkBytes = chunkMib * MIB
// A flood body may get this far past the chunk before its 413 (what loopback sockets buffer).
const FLOOD_SLACK_BYTES = 48 * MIB

/** Resident set size of a process, from /proc (Linux); null elsewhere. */
async function rssOf (pid: number): Promise<number | null> {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : null
  } catch { return null }
}

/** CPU time (user + system, ms) a process has used so far, from /proc (Linux); null elsewhere. */
async function cpuMsOf (pid: number): Promise<number | null> {
  const s = await cpuSecondsOf(pid)
  return s === null ? null : s * 1000
}

/** Samples a process's RSS every 50 ms until stopped; returns the peak. */
function sampleRss (pid: number): { stop (): Promise<number | null> } {
  let peak: number | null = null
  let running = true
  const loop = (async () => {
    while (running) {
      const r = await rssOf(pid)
      if (r !== null) peak = Math.max(peak ?? 0, r)
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  })()
  return { async stop () { running = false; await loop; return peak } }
}

const children: ChildProcess[] = []
const killAll = (): void => { for (const c of children) if (c.exitCode === null) c.kill('SIGKILL') }
process.on('exit', killAll)
const overall = setTimeout(() => { process.stderr.write(`ingest bench: over --timeout-s ${timeoutS}; giving up\n`); killAll(); process.exit(1) }, timeoutS * 1000)
overall.unref()

async function startServer (mode: 'bwnet' | 'baseline', data: string): Promise<{ child: ChildProcess, ready: Record<string, string> }> {
  // --cpu-prof-dir: each server writes V8 CPU profiles (one per thread; the main thread's is the
  // largest) to <dir>/<mode>/ when it stops (docs/benchmarks.md#ingest, bench/profile-top.ts).
  const prof = args['cpu-prof-dir'] !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${join(args['cpu-prof-dir'], mode)}`] : []
  const child = spawn(process.execPath, [...prof, join(import.meta.dirname, 'server.ts'), '--mode', mode, '--data', data], { stdio: ['ignore', 'pipe', 'inherit'] })
  children.push(child)
  const lines = createInterface({ input: child.stdout! })
  const ready = await new Promise<Record<string, string>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${mode} server not ready in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS)
    child.once('exit', (code) => reject(new Error(`${mode} server exited (${code}) before ready`)))
    lines.on('line', (l) => { try { const o = JSON.parse(l); if (o.ready) { clearTimeout(timer); resolve(o) } } catch {} })
  })
  return { child, ready }
}

async function call (url: string, init: RequestInit & { key?: string }): Promise<{ status: number, body: any }> {
  const res = await fetch(url, {
    ...init,
    headers: { ...(init.key ? { authorization: `Bearer ${init.key}` } : {}), ...(init.headers as Record<string, string>) },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

/** One round's payload: `chunks` distinct chunks (a counter in the first bytes), same for both paths. */
function payload (round: number): Array<{ bytes: Buffer, sha256: string }> {
  const base = randomBytes(chunkBytes)
  return Array.from({ length: chunks }, (_, i) => {
    const bytes = Buffer.from(base)
    bytes.writeUInt32BE(round, 0)
    bytes.writeUInt32BE(i, 4)
    return { bytes, sha256: createHash('sha256').update(bytes).digest('hex') }
  })
}

interface Target { name: 'bwnet' | 'baseline', prepare (round: number): Promise<(i: number, c: { bytes: Buffer, sha256: string }) => Promise<void>> }

async function timed (send: (i: number, c: { bytes: Buffer, sha256: string }) => Promise<void>, data: Array<{ bytes: Buffer, sha256: string }>): Promise<number> {
  const queue = new PQueue({ concurrency: parallel })
  const t0 = performance.now()
  await Promise.all(data.map((c, i) => queue.add(() => send(i, c))))
  return performance.now() - t0
}

async function main (): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'bwnet-bench-ingest-'))
  try {
    const bw = await startServer('bwnet', join(work, 'bwnet'))
    const base = await startServer('baseline', join(work, 'base'))
    const api = bw.ready.url!
    // An Enterprise client key: no request-per-minute or concurrency limit (the Free key would throttle).
    const orgs = await call(`${api}/admin/organizations`, { method: 'GET', key: bw.ready.admin })
    const orgId = orgs.body.items[0].id as string
    const created = await call(`${api}/admin/organizations/${orgId}/keys`, {
      method: 'POST', key: bw.ready.admin, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ role: 'client', plan: 'enterprise', name: 'ingest bench' })
    })
    if (created.status !== 201) throw new Error(`key create answered ${created.status}`)
    const key = created.body.key as string
    const expected: Record<'bwnet' | 'baseline', string[]> = { bwnet: [], baseline: [] }
    await cryptoReady()
    const sender = newHotkey().address

    const targets: Target[] = [
      {
        name: 'bwnet',
        // A transfer per round (created untimed): one of `chunks` plan-sized chunks, or with smaller
        // chunks one single-chunk transfer per chunk (the plan never cuts chunks under 16 MiB).
        async prepare (round) {
          const single = chunkMib < PLAN_CHUNK_MIB
          const ids: string[] = []
          for (let i = 0; i < (single ? chunks : 1); i++) {
            const r = await call(`${api}/transfers/create`, {
              method: 'POST', key, headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ sender_hotkey: sender, total_size: single ? chunkBytes : chunks * chunkBytes, filename: `ingest-${round}-${i}.bin`, tier: 'STANDARD' })
            })
            if (r.status !== 201) throw new Error(`create answered ${r.status}: ${JSON.stringify(r.body)}`)
            if (!single && r.body.chunk_size !== chunkBytes) throw new Error(`plan chunk size ${r.body.chunk_size}, not ${chunkBytes}`)
            ids.push(r.body.id)
          }
          return async (i, c) => {
            const r = await call(`${api}/transfers/${single ? ids[i] : ids[0]}/chunks`, {
              method: 'POST', key, body: c.bytes as Uint8Array<ArrayBuffer>,
              headers: { 'content-type': 'application/octet-stream', 'x-chunk-index': String(single ? 0 : i), 'x-chunk-sha256': c.sha256 }
            })
            if (r.status !== 201 || r.body.sha256 !== c.sha256) throw new Error(`chunk ${i}: ${r.status} ${JSON.stringify(r.body)}`)
            expected.bwnet.push(c.sha256)
          }
        }
      },
      {
        name: 'baseline',
        async prepare (round) {
          return async (i, c) => {
            const r = await call(`${base.ready.url}/chunks/r${round}-${i}`, { method: 'POST', body: c.bytes as Uint8Array<ArrayBuffer>, headers: { 'content-type': 'application/octet-stream' } })
            if (r.status !== 201 || r.body.bytes !== c.bytes.length || r.body.sha256 !== c.sha256) throw new Error(`baseline chunk ${i}: ${r.status} ${JSON.stringify(r.body)}`)
            expected.baseline.push(`r${round}-${i}:${c.sha256}`)
          }
        }
      }
    ]

    // Warm-up: one untimed chunk per path (connections, JIT, first directory creation).
    const warm = payload(MAX_ROUNDS + 1).slice(0, 1)
    for (const tg of targets) await timed(await tg.prepare(MAX_ROUNDS + 1), warm)

    const rssIdle = { bwnet: await rssOf(bw.child.pid!), baseline: await rssOf(base.child.pid!) }
    const rssRounds = { bwnet: sampleRss(bw.child.pid!), baseline: sampleRss(base.child.pid!) }
    const perRound: Record<'bwnet' | 'baseline', number[]> = { bwnet: [], baseline: [] }
    // Server CPU time spent in the timed rounds: on a shared machine, a steadier measure than the clock.
    const cpuMs: Record<'bwnet' | 'baseline', number> = { bwnet: 0, baseline: 0 }
    for (let round = 0; round < rounds; round++) {
      const data = payload(round)
      const order = round % 2 === 0 ? targets : [...targets].reverse()
      for (const tg of order) {
        const send = await tg.prepare(round)
        const pid = (tg.name === 'bwnet' ? bw : base).child.pid!
        const cpu0 = await cpuMsOf(pid)
        const ms = await timed(send, data)
        const cpu1 = await cpuMsOf(pid)
        perRound[tg.name].push((chunks * chunkBytes / MB) / (ms / 1000))
        if (cpu0 !== null && cpu1 !== null) cpuMs[tg.name] += cpu1 - cpu0
      }
    }

    const rssPeak = { bwnet: await rssRounds.bwnet.stop(), baseline: await rssRounds.baseline.stop() }

    // Flood: oversized bodies at one chunk of `chunkBytes` (a one-chunk transfer of that size), all at once.
    let flood: { results: FloodResult[], rssBefore: number | null, rssPeak: number | null, health: number[] } | null = null
    if (floods > 0) {
      const t = await call(`${api}/transfers/create`, {
        method: 'POST', key, headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sender_hotkey: sender, total_size: chunkBytes, filename: 'flood.bin', tier: 'STANDARD' })
      })
      if (t.status !== 201 || t.body.total_chunks !== 1) throw new Error(`flood transfer: ${t.status} ${JSON.stringify(t.body)}`)
      const rssBefore = await rssOf(bw.child.pid!)
      const sampler = sampleRss(bw.child.pid!)
      const health: number[] = []
      let flooding = true
      const healthLoop = (async () => {
        for (let i = 0; i < 1000 && flooding; i++) {
          const r = await fetch(`${api}/healthz`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
          await r.arrayBuffer()
          health.push(r.status)
        }
      })()
      const results = await Promise.all(Array.from({ length: floods }, () => floodChunk({
        baseUrl: api, key, transferId: t.body.id, index: 0, expectedBytes: chunkBytes, maxBytes: floodMib * MIB, timeoutMs: REQUEST_TIMEOUT_MS
      })))
      flooding = false
      await healthLoop
      flood = { results, rssBefore, rssPeak: await sampler.stop(), health }
    }

    // Every byte stored, read back and hashed (untimed).
    let verified = 0
    for (const sha of expected.bwnet) {
      const got = createHash('sha256').update(await readFile(join(bw.ready.blobs!, sha.slice(0, 2), sha))).digest('hex')
      if (got !== sha) throw new Error(`bwnet blob ${sha} holds ${got}`)
      verified++
    }
    for (const entry of expected.baseline) {
      const [name, sha] = entry.split(':') as [string, string]
      const got = createHash('sha256').update(await readFile(join(base.ready.dir!, name))).digest('hex')
      if (got !== sha) throw new Error(`baseline file ${name} holds ${got}`)
      verified++
    }
    await stopChild(bw.child)
    await stopChild(base.child)

    const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2 }
    const mbPerSec = { bwnet: median(perRound.bwnet), baseline: median(perRound.baseline) }
    const round2 = (x: number): number => Math.round(x * 100) / 100
    const mib = (x: number | null): number | null => x === null ? null : Math.round(x / MIB)
    const gib = rounds * chunks * chunkBytes / 1024 ** 3
    const result = {
      bench: 'ingest',
      chunkBytes, chunksPerRound: chunks, rounds, parallel,
      mbPerSec: { bwnet: round2(mbPerSec.bwnet), baseline: round2(mbPerSec.baseline) },
      ratio: { bwnetOverBaseline: round2(mbPerSec.bwnet / mbPerSec.baseline) },
      perRoundMbPerSec: { bwnet: perRound.bwnet.map(round2), baseline: perRound.baseline.map(round2) },
      chunksVerified: verified,
      // Server CPU ms per GiB taken in; the ratio is baseline/bwnet (1 = as frugal as the baseline).
      cpuMsPerGiB: { bwnet: Math.round(cpuMs.bwnet / gib), baseline: Math.round(cpuMs.baseline / gib) },
      cpuRatio: { baselineOverBwnet: cpuMs.bwnet > 0 ? round2(cpuMs.baseline / cpuMs.bwnet) : null },
      rssMiB: {
        bwnet: { idle: mib(rssIdle.bwnet), peak: mib(rssPeak.bwnet) },
        baseline: { idle: mib(rssIdle.baseline), peak: mib(rssPeak.baseline) }
      },
      flood: flood === null
        ? null
        : {
            bodies: floods,
            bodyMiB: floodMib,
            chunkBytes,
            statuses: flood.results.map(r => r.status),
            codes: flood.results.map(r => r.code),
            sentMiB: flood.results.map(r => round2(r.bytesSent / MIB)),
            msFromExcessToAnswer: flood.results.map(r => r.msFromExcessToAnswer === null ? null : Math.round(r.msFromExcessToAnswer)),
            rssMiB: { before: mib(flood.rssBefore), peak: mib(flood.rssPeak) },
            healthz: { answers: flood.health.length, allOk: flood.health.every(s => s === 200) },
            refusedAtExcess: flood.results.every(r => r.status === 413 && r.excessSent && r.bytesSent <= chunkBytes + FLOOD_SLACK_BYTES)
          },
      node: process.version,
      loadavg: loadavg().map(round2)
    }
    console.log('| path | MB/s (median) | per round |')
    console.log('|---|---:|---|')
    console.log(`| bwnet POST /transfers/{id}/chunks | ${result.mbPerSec.bwnet} | ${result.perRoundMbPerSec.bwnet.join(', ')} |`)
    console.log(`| baseline node:http write+fsync | ${result.mbPerSec.baseline} | ${result.perRoundMbPerSec.baseline.join(', ')} |`)
    console.log(`bwnet/baseline = ${result.ratio.bwnetOverBaseline} (${chunks} × ${chunkMib} MiB per path per round, ${rounds} rounds, ${parallel} in flight; ${verified} chunks read back and verified)`)
    console.log(`server CPU ms per GiB: bwnet ${result.cpuMsPerGiB.bwnet}, baseline ${result.cpuMsPerGiB.baseline} (baseline/bwnet = ${result.cpuRatio.baselineOverBwnet})`)
    console.log(`RSS MiB: bwnet idle ${result.rssMiB.bwnet.idle}, peak ${result.rssMiB.bwnet.peak}; baseline idle ${result.rssMiB.baseline.idle}, peak ${result.rssMiB.baseline.peak}`)
    if (result.flood !== null) {
      const f = result.flood
      console.log(`flood: ${f.bodies} × ${f.bodyMiB} MiB at a ${chunkBytes / MIB} MiB chunk → ${f.statuses.join(', ')}; sent MiB ${f.sentMiB.join(', ')}; ms from excess byte to answer ${f.msFromExcessToAnswer.join(', ')}; server RSS ${f.rssMiB.before} → peak ${f.rssMiB.peak} MiB; /healthz ${f.healthz.answers} answers${f.healthz.allOk ? ', all 200' : ', NOT all 200'}`)
    }
    await mkdir(dirname(args.out!), { recursive: true })
    await writeFile(args.out!, JSON.stringify(result, null, 2) + '\n')
    console.log(JSON.stringify(result))
  } finally {
    killAll()
    await rm(work, { recursive: true, force: true })
  }
}

main().then(() => { clearTimeout(overall) }, (err: unknown) => { process.stderr.write(`ingest bench failed: ${(err as Error).stack ?? String(err)}\n`); killAll(); process.exit(1) })
