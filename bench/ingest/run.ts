// Ingest bench: how fast the API takes chunk bytes (POST /transfers/{id}/chunks on a real orchestrator:
// parse, sha256, durable blob write, coordinator bookkeeping) against a bare node:http server that only
// writes the same bytes to disk and fsyncs them. Same run, same chunks, same client, rounds
// interleaved; every stored byte is read back and checked. docs/benchmarks.md#ingest.
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { createInterface } from 'node:readline'
import PQueue from 'p-queue'
import { cryptoReady, newHotkey } from '../../protocol/index.ts'

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
const chunkBytes = chunkMib * MIB

const children: ChildProcess[] = []
const killAll = (): void => { for (const c of children) if (c.exitCode === null) c.kill('SIGKILL') }
process.on('exit', killAll)
const overall = setTimeout(() => { process.stderr.write(`ingest bench: over --timeout-s ${timeoutS}; giving up\n`); killAll(); process.exit(1) }, timeoutS * 1000)
overall.unref()

async function startServer (mode: 'bwnet' | 'baseline', data: string): Promise<{ child: ChildProcess, ready: Record<string, string> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'server.ts'), '--mode', mode, '--data', data], { stdio: ['ignore', 'pipe', 'inherit'] })
  children.push(child)
  const lines = createInterface({ input: child.stdout! })
  const ready = await new Promise<Record<string, string>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${mode} server not ready in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS)
    child.once('exit', (code) => reject(new Error(`${mode} server exited (${code}) before ready`)))
    lines.on('line', (l) => { try { const o = JSON.parse(l); if (o.ready) { clearTimeout(timer); resolve(o) } } catch {} })
  })
  return { child, ready }
}

async function stopServer (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
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
            if (r.status !== 201 || r.body.bytes !== c.bytes.length) throw new Error(`baseline chunk ${i}: ${r.status}`)
            expected.baseline.push(`r${round}-${i}:${c.sha256}`)
          }
        }
      }
    ]

    // Warm-up: one untimed chunk per path (connections, JIT, first directory creation).
    const warm = payload(MAX_ROUNDS + 1).slice(0, 1)
    for (const tg of targets) await timed(await tg.prepare(MAX_ROUNDS + 1), warm)

    const perRound: Record<'bwnet' | 'baseline', number[]> = { bwnet: [], baseline: [] }
    for (let round = 0; round < rounds; round++) {
      const data = payload(round)
      const order = round % 2 === 0 ? targets : [...targets].reverse()
      for (const tg of order) {
        const send = await tg.prepare(round)
        const ms = await timed(send, data)
        perRound[tg.name].push((chunks * chunkBytes / MB) / (ms / 1000))
      }
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
    await stopServer(bw.child)
    await stopServer(base.child)

    const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2 }
    const mbPerSec = { bwnet: median(perRound.bwnet), baseline: median(perRound.baseline) }
    const round2 = (x: number): number => Math.round(x * 100) / 100
    const result = {
      bench: 'ingest',
      chunkBytes, chunksPerRound: chunks, rounds, parallel,
      mbPerSec: { bwnet: round2(mbPerSec.bwnet), baseline: round2(mbPerSec.baseline) },
      ratio: { bwnetOverBaseline: round2(mbPerSec.bwnet / mbPerSec.baseline) },
      perRoundMbPerSec: { bwnet: perRound.bwnet.map(round2), baseline: perRound.baseline.map(round2) },
      chunksVerified: verified,
      node: process.version
    }
    console.log('| path | MB/s (median) | per round |')
    console.log('|---|---:|---|')
    console.log(`| bwnet POST /transfers/{id}/chunks | ${result.mbPerSec.bwnet} | ${result.perRoundMbPerSec.bwnet.join(', ')} |`)
    console.log(`| baseline node:http write+fsync | ${result.mbPerSec.baseline} | ${result.perRoundMbPerSec.baseline.join(', ')} |`)
    console.log(`bwnet/baseline = ${result.ratio.bwnetOverBaseline} (${chunks} × ${chunkMib} MiB per path per round, ${rounds} rounds, ${parallel} in flight; ${verified} chunks read back and verified)`)
    await mkdir(dirname(args.out!), { recursive: true })
    await writeFile(args.out!, JSON.stringify(result, null, 2) + '\n')
    console.log(JSON.stringify(result))
  } finally {
    killAll()
    await rm(work, { recursive: true, force: true })
  }
}

main().then(() => { clearTimeout(overall) }, (err: unknown) => { process.stderr.write(`ingest bench failed: ${(err as Error).stack ?? String(err)}\n`); killAll(); process.exit(1) })
