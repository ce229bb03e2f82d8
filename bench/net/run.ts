// Aggregate bandwidth across hosts: a 1 GiB transfer through 1, 2, 4 and 8 workers whose links are
// capped at 100 Mbit/s (client and destination at 1 Gbit/s), each host a network namespace, each node
// its own process (test/net/harness). Goodput = file bytes ÷ (transfer put start → completed), as the
// client sees it. Baselines measured in the same run on the same kind of links: one plain HTTP PUT over a
// capped worker link and one over the client's link (curl to the same destination server). Goal per N:
// ≥ 0.8 × min(N × 100 Mbit/s, 1 Gbit/s). Needs root. docs/benchmarks.md#net.
import { createReadStream } from 'node:fs'
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises'
import { createHash, randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createInterface } from 'node:readline'
import { NetLab, skipReason } from '../../test/net/harness/netns.ts'
import { startNetwork, putSummary, DEST_PORT } from '../../test/net/harness/network.ts'
import { REPO } from '../../test/helpers/proc.ts'

const MIB = 1024 * 1024
const { values: args } = parseArgs({
  options: {
    'size-mib': { type: 'string', default: '1024' },
    workers: { type: 'string', default: '1,2,4,8' },
    'worker-mbit': { type: 'string', default: '100' },
    'edge-mbit': { type: 'string', default: '1000' },
    'timeout-s': { type: 'string', default: '600' }, // per transfer
    out: { type: 'string', default: join(import.meta.dirname, '..', 'out', 'net.json') }
  }
})
const sizeMib = Number(args['size-mib'])
const counts = args.workers!.split(',').map(Number)
const workerMbit = Number(args['worker-mbit'])
const edgeMbit = Number(args['edge-mbit'])
const timeoutS = Number(args['timeout-s'])
if (!(sizeMib >= 16 && sizeMib <= 8192)) throw new Error('--size-mib 16..8192')
if (counts.some(n => !Number.isInteger(n) || n < 1 || n > 16)) throw new Error('--workers: a list of 1..16')

const skip = skipReason()
if (skip !== null) {
  process.stdout.write(`bench/net skipped: ${skip}\n`)
  process.exit(0)
}

const mbit = (bytes: number, ms: number): number => bytes * 8 / 1e6 / (ms / 1000)

async function writeRandomFile (path: string, size: number): Promise<string> {
  const fh = await open(path, 'w')
  const hash = createHash('sha256')
  try {
    for (let off = 0; off < size; off += 16 * MIB) {
      const piece = randomBytes(Math.min(16 * MIB, size - off))
      hash.update(piece)
      await fh.write(piece, 0, piece.byteLength, off)
    }
  } finally { await fh.close() }
  return hash.digest('hex')
}

async function sha256File (path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const piece of createReadStream(path)) hash.update(piece as Buffer)
  return hash.digest('hex')
}

/** Plain HTTP PUTs (curl) to the lab's destination server over a capped worker link and the client's link. */
async function baselines (file: string, dir: string): Promise<{ workerLinkMbit: number, edgeLinkMbit: number }> {
  const lab = await NetLab.create([{ name: 'dest', rateMbit: edgeMbit }, { name: 'client', rateMbit: edgeMbit }, { name: 'w1', rateMbit: workerMbit }])
  try {
    const destDir = join(dir, 'baseline-dest')
    await mkdir(destDir)
    const dest = lab.spawn('dest', [process.execPath, '--import', 'tsx', join(REPO, 'test/net/harness/http-destination.ts'), lab.host('dest').ip, String(DEST_PORT), destDir])
    await new Promise(resolve => createInterface({ input: dest.stdout! }).once('line', resolve))
    const put = async (host: string, bytes: number): Promise<number> => {
      const piece = join(dir, `baseline-${bytes}.bin`)
      await writeFile(piece, randomBytes(bytes))
      const t0 = performance.now()
      const r = await lab.exec(host, ['curl', '-sS', '-o', '/dev/null', '-w', '%{http_code}', '-T', piece, '-H', `content-range: bytes 0-${bytes - 1}/${bytes}`, `http://${lab.host('dest').ip}:${DEST_PORT}/objects/${host}`])
      const ms = performance.now() - t0
      if (r.stdout.trim() !== '200') throw new Error(`baseline PUT from ${host}: ${r.stdout} ${r.stderr}`)
      await rm(piece)
      return mbit(bytes, ms)
    }
    return { workerLinkMbit: await put('w1', 64 * MIB), edgeLinkMbit: await put('client', 256 * MIB) }
  } finally { await lab.destroy() }
}

interface Row { workers: number, seconds: number, uploadSeconds: number, orchestratorSeconds: number | null, goodputMbit: number, goalMbit: number, idealMbit: number, ratioToBaseline: number, meetsGoal: boolean, interventions: number | null }

const dir = await mkdtemp(join(tmpdir(), 'bwnet-bench-net-'))
try {
  const size = sizeMib * MIB
  const file = join(dir, 'payload.bin')
  const expected = await writeRandomFile(file, size)
  const base = await baselines(file, dir)
  process.stderr.write(`baselines: plain HTTP PUT over a ${workerMbit} Mbit/s worker link ${base.workerLinkMbit.toFixed(0)} Mbit/s, over the ${edgeMbit} Mbit/s client link ${base.edgeLinkMbit.toFixed(0)} Mbit/s\n`)
  const rows: Row[] = []
  for (const n of counts) {
    const net = await startNetwork({ workers: n, workerMbit, edgeMbit, logLevel: 'info' })
    try {
      const t0 = performance.now()
      const put = net.lab.bwnet('client', ['transfer', 'put', file, '--api', net.api, '--key', net.clientKey, '--dest', net.destinationId,
        '--no-progress', '--state', join(net.dir, 'state.json'), '--wait-timeout-s', String(timeoutS)])
      const code = await new Promise<number | null>(resolve => put.child.once('exit', resolve))
      const ms = performance.now() - t0
      const stdout = put.lines.map(l => l.unparsed === true ? l.msg : JSON.stringify(l)).join('\n')
      if (code !== 0) throw new Error(`${n} workers: transfer put exited ${code}: ${put.stderr().slice(-500)}`)
      const { id, summary } = putSummary(stdout)
      if (summary.status !== 'completed') throw new Error(`${n} workers: ${summary.status}`)
      if (await sha256File(join(net.destDir, id)) !== expected) throw new Error(`${n} workers: the destination's copy differs`)
      // Where the time went: the CLI's upload phase, and the orchestrator's own create → completed.
      const got = await net.lab.exec('client', ['curl', '-sS', '-H', `authorization: Bearer ${net.clientKey}`, `${net.api}/transfers/${id}`])
      const record = JSON.parse(got.stdout) as { created_at?: string, completed_at?: string | null }
      const orchestratorSeconds = record.completed_at != null && record.created_at !== undefined ? (Date.parse(record.completed_at) - Date.parse(record.created_at)) / 1000 : null
      const interventions = net.orchestrator.lines.filter(l => l.event === 'overseer_reassign' && l.transferId === id).length
      const goodput = mbit(size, ms)
      const ideal = Math.min(n * workerMbit, edgeMbit)
      const measuredIdeal = Math.min(n * base.workerLinkMbit, base.edgeLinkMbit)
      const row: Row = { workers: n, seconds: ms / 1000, uploadSeconds: summary.upload_ms / 1000, orchestratorSeconds, goodputMbit: goodput, goalMbit: 0.8 * ideal, idealMbit: ideal, ratioToBaseline: goodput / measuredIdeal, meetsGoal: goodput >= 0.8 * ideal, interventions }
      rows.push(row)
      process.stderr.write(`${n} workers: ${row.seconds.toFixed(1)} s (upload ${row.uploadSeconds.toFixed(1)} s, orchestrator create → completed ${orchestratorSeconds?.toFixed(1) ?? '?'} s), ${goodput.toFixed(0)} Mbit/s (goal ${row.goalMbit.toFixed(0)}), ${interventions} reassignments\n`)
    } finally { await net.stop() }
  }
  const lines = [
    `net bench: ${sizeMib} MiB through N workers; worker links ${workerMbit} Mbit/s, client and destination ${edgeMbit} Mbit/s`,
    `baseline (same run, plain HTTP PUT): worker link ${base.workerLinkMbit.toFixed(0)} Mbit/s, client link ${base.edgeLinkMbit.toFixed(0)} Mbit/s`,
    '',
    '| workers | time (s) | of which upload (s) | orchestrator create → completed (s) | goodput (Mbit/s) | goal 0.8 × min(N × link, edge) | ratio to min(N × measured worker link, measured edge) | goal met | reassignments |',
    '|---:|---:|---:|---:|---:|---:|---:|:---:|---:|',
    ...rows.map(r => `| ${r.workers} | ${r.seconds.toFixed(1)} | ${r.uploadSeconds.toFixed(1)} | ${r.orchestratorSeconds?.toFixed(1) ?? '?'} | ${r.goodputMbit.toFixed(0)} | ${r.goalMbit.toFixed(0)} | ${r.ratioToBaseline.toFixed(2)} | ${r.meetsGoal ? 'yes' : 'no'} | ${r.interventions ?? ''} |`)
  ]
  const result = { bench: 'net', sizeMib, workerMbit, edgeMbit, baselines: base, rows }
  process.stdout.write(lines.join('\n') + '\n' + JSON.stringify(result) + '\n')
  await mkdir(join(args.out!, '..'), { recursive: true })
  await writeFile(args.out!, JSON.stringify(result, null, 2) + '\n')
} finally {
  await rm(dir, { recursive: true, force: true })
}
