// Aggregate bandwidth across hosts: a 1 GiB transfer through 1, 2, 4 and 8 workers whose links are
// capped at 100 Mbit/s (client and destination at 1 Gbit/s), each host a network namespace, each node
// its own process (test/net/harness). Goodput = file bytes ÷ the transfer's create → completed as the
// orchestrator records it (the CLI's start-up and its wait to notice completion are reported beside it,
// not counted). `--trace` adds per-process CPU and per-link rates each second (trace.ts). Baselines measured in the same run on the same kind of links: one plain HTTP PUT over a
// capped worker link and one over the client's link (curl to the same destination server). Goal per N:
// ≥ 0.8 × min(N × 100 Mbit/s, 1 Gbit/s). Needs root. docs/benchmarks.md#net.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createInterface } from 'node:readline'
import { NetLab, skipReason, LINK_QUEUE_MS } from '../../test/net/harness/netns.ts'
import { startNetwork, putSummary, DEST_PORT } from '../../test/net/harness/network.ts'
import { writeRandomFile, sha256File } from '../../test/net/harness/files.ts'
import { REPO } from '../../test/helpers/proc.ts'
import { LabTrace } from './trace.ts'
import { simulateLab, labScenario, LAB_SLOTS, type SimRow } from './sim-compare.ts'

const MIB = 1024 * 1024
const { values: args } = parseArgs({
  options: {
    'size-mib': { type: 'string', default: '1024' },
    workers: { type: 'string', default: '1,2,4,8' },
    'worker-mbit': { type: 'string', default: '100' },
    'edge-mbit': { type: 'string', default: '1000' },
    // How long each capped link's queue holds a packet (tbf latency), ms: its buffer depth (test/net/harness/netns.ts).
    'queue-ms': { type: 'string', default: String(LINK_QUEUE_MS) },
    'timeout-s': { type: 'string', default: '600' }, // per transfer
    // Where the time goes: per-process CPU and per-link rates each second, printed per N (bench/net/trace.ts).
    trace: { type: 'boolean', default: false },
    // The same transfer in the simulator, from the links as measured (bench/net/sim-compare.ts), beside each row.
    'compare-sim': { type: 'boolean', default: false },
    // node --cpu-prof of the orchestrator and the first worker, into DIR/<N>-workers/<host>/.
    profile: { type: 'string' },
    // Extra flags for every node (e.g. '--inflight-mib 128') and for `bwnet transfer put` (e.g. '--parallel 8'), split on spaces.
    'node-args': { type: 'string', default: '' },
    'put-args': { type: 'string', default: '' },
    out: { type: 'string', default: join(import.meta.dirname, '..', 'out', 'net.json') }
  }
})
const sizeMib = Number(args['size-mib'])
const counts = args.workers!.split(',').map(Number)
const workerMbit = Number(args['worker-mbit'])
const edgeMbit = Number(args['edge-mbit'])
const timeoutS = Number(args['timeout-s'])
const queueMs = Number(args['queue-ms'])
if (!(Number.isInteger(queueMs) && queueMs >= 1 && queueMs <= 1000)) throw new Error('--queue-ms 1..1000')
if (!(sizeMib >= 16 && sizeMib <= 8192)) throw new Error('--size-mib 16..8192')
if (counts.some(n => !Number.isInteger(n) || n < 1 || n > 16)) throw new Error('--workers: a list of 1..16')

const skip = skipReason()
if (skip !== null) {
  process.stdout.write(`bench/net skipped: ${skip}\n`)
  process.exit(0)
}

/** Relays at once in the relay baseline: a worker's default slots (test/net/harness/network.ts). */
const RELAY_STREAMS = LAB_SLOTS
const IDLE_S = 5 // with --trace: seconds of the idle network sampled before each put

const mbit = (bytes: number, ms: number): number => bytes * 8 / 1e6 / (ms / 1000)

/** CPU seconds (user + kernel) a process has used so far: /proc/PID/stat. */
async function cpuSeconds (pid: number): Promise<number> {
  const line = await readFile(`/proc/${pid}/stat`, 'utf8')
  const f = line.slice(line.lastIndexOf(')') + 2).split(' ')
  return (Number(f[11]) + Number(f[12])) / 100
}

/** `times` of a POSIX shell: its children's user and system seconds (the last line). */
function childTimes (out: string): number {
  const last = out.trim().split('\n').pop() ?? ''
  const m = [...last.matchAll(/(\d+)m([\d.]+)s/g)].map(x => Number(x[1]) * 60 + Number(x[2]))
  if (m.length !== 2) throw new Error(`no times in ${JSON.stringify(last)}`)
  return m[0]! + m[1]!
}

interface Baselines {
  workerLinkMbit: number
  edgeLinkMbit: number
  /** CPU s per GiB of one plain HTTP hop over the client link: curl sending + the destination receiving. */
  hopCpuPerGiB: number
  /** With --compare-sim, per worker count N: what each of N worker links carries relaying as a worker does (RELAY_STREAMS GETs piped into PUTs at once on each, all N at once), Mbit/s. */
  workerRelayMbit: Record<number, number[]> | null
}

/**
 * Plain HTTP PUTs (curl) to the lab's destination server over a capped worker link and the client's
 * link, and what one such hop costs in CPU (curl and the destination process, user + kernel).
 */
async function baselines (dir: string): Promise<Baselines> {
  const workerHosts = args['compare-sim'] === true ? Math.max(...counts) : 1
  const lab = await NetLab.create([{ name: 'dest', rateMbit: edgeMbit, queueMs }, { name: 'client', rateMbit: edgeMbit, queueMs },
    ...Array.from({ length: workerHosts }, (_, i) => ({ name: `w${i + 1}`, rateMbit: workerMbit, queueMs }))])
  try {
    const destDir = join(dir, 'baseline-dest')
    await mkdir(destDir)
    const dest = lab.spawn('dest', [process.execPath, join(REPO, 'test/net/harness/http-destination.ts'), lab.host('dest').ip, String(DEST_PORT), destDir])
    await new Promise(resolve => createInterface({ input: dest.stdout! }).once('line', resolve))
    const put = async (host: string, bytes: number): Promise<{ mbit: number, cpuS: number }> => {
      const piece = join(dir, `baseline-${bytes}.bin`)
      await writeFile(piece, randomBytes(bytes))
      const destCpu0 = await cpuSeconds(dest.pid!)
      const t0 = performance.now()
      const r = await lab.exec(host, ['sh', '-c', 'curl "$@"; echo; times', 'sh', '-sS', '-o', '/dev/null', '-w', '%{http_code}', '-T', piece, '-H', `content-range: bytes 0-${bytes - 1}/${bytes}`, `http://${lab.host('dest').ip}:${DEST_PORT}/objects/${host}`])
      const ms = performance.now() - t0
      const destCpu = await cpuSeconds(dest.pid!) - destCpu0
      if (r.stdout.trim().split('\n')[0] !== '200') throw new Error(`baseline PUT from ${host}: ${r.stdout} ${r.stderr}`)
      await rm(piece)
      return { mbit: mbit(bytes, ms), cpuS: childTimes(r.stdout) + destCpu }
    }
    const worker = await put('w1', 64 * MIB)
    const edge = await put('client', 256 * MIB)
    // What worker links carry when they relay as workers do, N of them at once as in the row: on each,
    // `slots` plain HTTP relays, each a GET of one piece piped into a PUT (curl | curl), both over that
    // worker's link, all sharing the destination and the machine. The simulator's worker links are the
    // slowest of these (--compare-sim): the lab's chunks are split evenly, so the slowest worker ends the
    // transfer. Measured, never fitted to bwnet's own result.
    let relayMbit: Record<number, number[]> | null = null
    if (args['compare-sim'] === true) {
      relayMbit = {}
      const piece = (workerMbit >= 50 ? 16 : 4) * MIB // about 6 s of relaying at 100 Mbit/s, 15 s at 10
      const url = (name: string): string => `http://${lab.host('dest').ip}:${DEST_PORT}/objects/${name}`
      for (const n of counts) {
        relayMbit[n] = await Promise.all(Array.from({ length: n }, async (_, w) => {
          const host = `w${w + 1}`
          const relays = Array.from({ length: RELAY_STREAMS }, (_, i) =>
            `curl -sS -r ${i * piece}-${(i + 1) * piece - 1} "${url('client')}" | curl -sS -o /dev/null -T - -H "content-range: bytes 0-${piece - 1}/${piece}" "${url(`${host}-relay-${i}`)}" &`).join(' ')
          const r = await lab.exec(host, ['sh', '-c', `t0=$(date +%s%N); ${relays} wait; echo $(( $(date +%s%N) - t0 ))`])
          if (r.code !== 0 || r.stderr !== '') throw new Error(`relay baseline on ${host}: ${r.code} ${r.stderr}`)
          return mbit(RELAY_STREAMS * piece, Number(r.stdout.trim()) / 1e6)
        }))
      }
    }
    return { workerLinkMbit: worker.mbit, edgeLinkMbit: edge.mbit, hopCpuPerGiB: edge.cpuS * 4, workerRelayMbit: relayMbit }
  } finally { await lab.destroy() }
}

interface Row { sim?: SimRow & { ratio: number }, calibrated?: SimRow & { ratio: number }, chunksPerWorker: number[], medianMoveS: number[], workers: number, seconds: number, uploadSeconds: number, orchestratorSeconds: number, goodputMbit: number, goalMbit: number, idealMbit: number, ratioToBaseline: number, meetsGoal: boolean, interventions: number | null, reasons?: Record<string, number>, trace?: ReturnType<LabTrace['summary']> & { idleCpuPct: Record<string, number>, labCpuPerGiB: number } }

const dir = await mkdtemp(join(tmpdir(), 'bwnet-bench-net-'))
try {
  const size = sizeMib * MIB
  const file = join(dir, 'payload.bin')
  const expected = await writeRandomFile(file, size)
  const base = await baselines(dir)
  process.stderr.write(`baselines: plain HTTP PUT over a ${workerMbit} Mbit/s worker link ${base.workerLinkMbit.toFixed(1)} Mbit/s${base.workerRelayMbit !== null ? `; relaying (${RELAY_STREAMS} GETs piped into PUTs at once on each, N links at once), the slowest of N: ${Object.entries(base.workerRelayMbit).map(([n, r]) => `${n}: ${Math.min(...r).toFixed(1)}`).join(', ')} Mbit/s` : ''}, over the ${edgeMbit} Mbit/s client link ${base.edgeLinkMbit.toFixed(0)} Mbit/s; one such hop costs ${base.hopCpuPerGiB.toFixed(1)} CPU s per GiB (curl + the destination, user + kernel)\n`)
  const rows: Row[] = []
  for (const n of counts) {
    const profileDir = args.profile === undefined ? undefined : join(args.profile, `${n}-workers`)
    const prof = (host: string): string[] => profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', join(profileDir, host)]
    const extra = args['node-args']!.split(' ').filter(a => a !== '')
    const net = await startNetwork({ workers: n, workerMbit, edgeMbit, queueMs, logLevel: 'info', nodeArgs: { orch: prof('orch'), w1: prof('w1') }, flags: { orchestrator: extra, worker: extra, validator: extra } })
    const trace = args.trace === true ? new LabTrace(net.lab).start() : null
    try {
      // The idle network's own CPU (heartbeats, DHT, chain blocks), to tell it from the cost of moving bytes.
      if (trace !== null) await new Promise(resolve => setTimeout(resolve, IDLE_S * 1000))
      const from = trace?.now() ?? 0
      const t0 = performance.now()
      const put = net.lab.bwnet('client', ['transfer', 'put', file, '--api', net.api, '--key', net.clientKey, '--dest', net.destinationId,
        '--no-progress', '--state', join(net.dir, 'state.json'), '--wait-timeout-s', String(timeoutS), ...args['put-args']!.split(' ').filter(a => a !== '')])
      const code = await new Promise<number | null>(resolve => put.child.once('exit', resolve))
      const ms = performance.now() - t0
      const to = trace?.now() ?? 0
      const stdout = put.lines.map(l => l.unparsed === true ? l.msg : JSON.stringify(l)).join('\n')
      if (code !== 0) throw new Error(`${n} workers: transfer put exited ${code}: ${put.stderr().slice(-500)}`)
      const { id, summary } = putSummary(stdout)
      if (summary.status !== 'completed') throw new Error(`${n} workers: ${summary.status}`)
      if (await sha256File(join(net.destDir, id)) !== expected) throw new Error(`${n} workers: the destination's copy differs`)
      // Where the time went: the CLI's upload phase, and the orchestrator's own create → completed.
      const got = await net.lab.exec('client', ['curl', '-sS', '-H', `authorization: Bearer ${net.clientKey}`, `${net.api}/transfers/${id}`])
      const record = JSON.parse(got.stdout) as { created_at?: string, completed_at?: string | null }
      const orchestratorSeconds = record.completed_at != null && record.created_at !== undefined ? (Date.parse(record.completed_at) - Date.parse(record.created_at)) / 1000 : null
      // Chunks each worker delivered, and its median move time: an uneven split or a slow worker ends the transfer late.
      const perWorker = net.workers.map(w => w.lines.filter(l => l.event === 'delivery' && l.transferId === id).map(l => Number(l.ms)).sort((a, b) => a - b))
      const chunksPerWorker = perWorker.map(ms => ms.length)
      const medianMoveS = perWorker.map(ms => ms.length === 0 ? 0 : ms[Math.floor(ms.length / 2)]! / 1000)
      const reassigned = net.orchestrator.lines.filter(l => l.event === 'overseer_reassign' && l.transferId === id)
      const interventions = reassigned.length
      // Why the overseer took work back, by reason (with the workers it took it from).
      const reasons: Record<string, number> = {}
      for (const l of reassigned) reasons[String(l.reason)] = (reasons[String(l.reason)] ?? 0) + 1
      // Goodput over the network's own create → completed: the CLI's start-up (loading the program) and
      // its wait to notice completion are the client machine's, not the network's. Both clocks are kept.
      if (orchestratorSeconds === null) throw new Error(`${n} workers: the transfer record has no completed_at`)
      const goodput = mbit(size, orchestratorSeconds * 1000)
      const ideal = Math.min(n * workerMbit, edgeMbit)
      const measuredIdeal = Math.min(n * base.workerLinkMbit, base.edgeLinkMbit)
      const row: Row = { workers: n, seconds: ms / 1000, uploadSeconds: summary.upload_ms / 1000, orchestratorSeconds, goodputMbit: goodput, goalMbit: 0.8 * ideal, idealMbit: ideal, ratioToBaseline: goodput / measuredIdeal, meetsGoal: goodput >= 0.8 * ideal, interventions, reasons, chunksPerWorker, medianMoveS }
      rows.push(row)
      if (args['compare-sim'] === true) {
        const shape = { workers: n, workerLinkMbit: Math.min(...base.workerRelayMbit![n]!), edgeLinkMbit: base.edgeLinkMbit, sizeMib }
        // The scenario beside the results, so `bwnet sim <file>` replays this row's prediction with its report.
        const scenarioFile = join(args.out!, '..', 'net-sim', `${workerMbit}mbit-${n}workers.json`)
        await mkdir(join(scenarioFile, '..'), { recursive: true })
        await writeFile(scenarioFile, JSON.stringify(labScenario(shape), null, 2) + '\n')
        const sim = await simulateLab(shape)
        row.sim = { ...sim, ratio: sim.goodputMbit / goodput }
        process.stderr.write(`${n} workers, simulated: create → completed ${sim.seconds.toFixed(1)} s, ${sim.goodputMbit.toFixed(0)} Mbit/s (${row.sim.ratio.toFixed(2)} × the lab), ${sim.reassignments} reassignments (scenario: ${scenarioFile})\n`)
      }
      process.stderr.write(`${n} workers: create → completed ${orchestratorSeconds.toFixed(1)} s (the client's own time ${row.seconds.toFixed(1)} s, of which upload ${row.uploadSeconds.toFixed(1)} s), ${goodput.toFixed(0)} Mbit/s (goal ${row.goalMbit.toFixed(0)}), ${interventions} reassignments${interventions > 0 ? ` (${Object.entries(reasons).map(([r, c]) => `${r} ${c}`).join(', ')})` : ''}; chunks per worker ${chunksPerWorker.join('/')}, median move ${medianMoveS.map(x => x.toFixed(1)).join('/')} s\n`)
      if (trace !== null) {
        await trace.stop()
        const idle = trace.summary(0, from)
        const sum = trace.summary(from, to)
        const labCpu = Object.values(sum.hosts).reduce((a, v) => a + v.cpuS, 0)
        row.trace = { ...sum, idleCpuPct: Object.fromEntries(Object.entries(idle.hosts).map(([h, v]) => [h, v.cpuPct])), labCpuPerGiB: labCpu / (size / 2 ** 30) }
        process.stderr.write(trace.timeline(from, to).join('\n') + '\n')
        const labSys = Object.values(sum.hosts).reduce((a, v) => a + v.sysS, 0)
        process.stderr.write(`lab processes: ${labCpu.toFixed(1)} CPU s in all, ${labSys.toFixed(1)} s of it in the kernel (${(labCpu / (size / 2 ** 30)).toFixed(1)} CPU s per GiB = ${(labCpu / (size / 2 ** 30) / base.hopCpuPerGiB).toFixed(1)} × one plain HTTP hop); idle before the put (${idle.seconds.toFixed(1)} s): ${Object.entries(idle.hosts).map(([h, v]) => `${h} ${v.cpuPct.toFixed(0)} %`).join(', ')}\n`)
        process.stderr.write(`over the transfer (${sum.seconds.toFixed(1)} s), machine busy ${sum.machineBusyPct.toFixed(0)} % of all cores; per host CPU % of one core (main thread), link Mbit/s sent / received:\n`)
        for (const [h, v] of Object.entries(sum.hosts)) process.stderr.write(`  ${h.padEnd(6)} cpu ${v.cpuPct.toFixed(0).padStart(4)} % (${v.mainPct.toFixed(0).padStart(3)} %)  ${v.cpuS.toFixed(1).padStart(6)} s (kernel ${v.sysS.toFixed(1).padStart(5)} s), main thread waiting for a core ${v.mainWaitPct.toFixed(0).padStart(3)} % of the time   ↑ ${v.upMbit.toFixed(0).padStart(5)}  ↓ ${v.downMbit.toFixed(0).padStart(5)}\n`)
      }
    } finally { await trace?.stop(); await net.stop() }
  }
  const traced = args.trace === true
  const lines = [
    `net bench: ${sizeMib} MiB through N workers; worker links ${workerMbit} Mbit/s, client and destination ${edgeMbit} Mbit/s, ${queueMs} ms of queue on each capped link`,
    `baseline (same run, plain HTTP PUT): worker link ${base.workerLinkMbit.toFixed(0)} Mbit/s, client link ${base.edgeLinkMbit.toFixed(0)} Mbit/s; one hop ${base.hopCpuPerGiB.toFixed(1)} CPU s per GiB`,
    '',
    `| workers | create → completed (s) | goodput (Mbit/s) | goal 0.8 × min(N × link, edge) | ratio to min(N × measured worker link, measured edge) | goal met | client time incl. its start-up (s) | of which upload (s) | reassignments |${traced ? ' lab CPU s per GiB | machine busy % |' : ''}`,
    `|---:|---:|---:|---:|---:|:---:|---:|---:|---:|${traced ? '---:|---:|' : ''}`,
    ...rows.map(r => `| ${r.workers} | ${r.orchestratorSeconds.toFixed(1)} | ${r.goodputMbit.toFixed(0)} | ${r.goalMbit.toFixed(0)} | ${r.ratioToBaseline.toFixed(2)} | ${r.meetsGoal ? 'yes' : 'no'} | ${r.seconds.toFixed(1)} | ${r.uploadSeconds.toFixed(1)} | ${r.interventions ?? ''} |${r.trace !== undefined ? ` ${r.trace.labCpuPerGiB.toFixed(1)} | ${r.trace.machineBusyPct.toFixed(0)} |` : ''}`)
  ]
  // Calibrated on the 1-worker row: the share f of the relay baseline that a bwnet worker moves, found by
  // bisection so the simulated 1-worker transfer takes the lab's time; every other row is then predicted
  // from f (SimGrid's way: calibrate on one simple run, validate on the others).
  const one = rows.find(r => r.workers === 1)
  let efficiency: number | null = null
  if (args['compare-sim'] === true && one !== undefined) {
    const relay1 = Math.min(...base.workerRelayMbit![1]!)
    let lo = 0.3; let hi = 1.2
    for (let i = 0; i < 14; i++) {
      const mid = (lo + hi) / 2
      const s1 = await simulateLab({ workers: 1, workerLinkMbit: relay1 * mid, edgeLinkMbit: base.edgeLinkMbit, sizeMib })
      if (s1.seconds > one.orchestratorSeconds) lo = mid; else hi = mid
    }
    efficiency = (lo + hi) / 2
    for (const r of rows) {
      const c = await simulateLab({ workers: r.workers, workerLinkMbit: Math.min(...base.workerRelayMbit![r.workers]!) * efficiency, edgeLinkMbit: base.edgeLinkMbit, sizeMib })
      r.calibrated = { ...c, ratio: c.goodputMbit / r.goodputMbit }
    }
  }
  if (args['compare-sim'] === true) {
    const cal = efficiency !== null
    lines.push('', `simulator against the lab (bwnet sim, the same transfer; worker links as measured relaying: ${RELAY_STREAMS} plain HTTP GETs piped into PUTs at once on each of N links, the slowest of them; client and destination ${base.edgeLinkMbit.toFixed(0)} Mbit/s as measured):`, '',
      `| worker links | workers | relay baseline, slowest link (Mbit/s) | lab (Mbit/s) | simulator (Mbit/s) | simulator ÷ lab | within 10 % |${cal ? ` calibrated on 1 worker (links × ${(efficiency ?? 0).toFixed(3)}) (Mbit/s) | calibrated ÷ lab | within 10 % |` : ''} lab reassignments | simulator reassignments |`,
      `|---:|---:|---:|---:|---:|---:|:---:|${cal ? '---:|---:|:---:|' : ''}---:|---:|`,
      ...rows.map(r => `| ${workerMbit} Mbit/s | ${r.workers} | ${Math.min(...base.workerRelayMbit![r.workers]!).toFixed(1)} | ${r.goodputMbit.toFixed(1)} | ${r.sim!.goodputMbit.toFixed(1)} | ${r.sim!.ratio.toFixed(2)} | ${Math.abs(r.sim!.ratio - 1) <= 0.1 ? 'yes' : 'no'} |${r.calibrated !== undefined ? ` ${r.calibrated.goodputMbit.toFixed(1)} | ${r.calibrated.ratio.toFixed(2)} | ${r.workers === 1 ? '(calibration)' : Math.abs(r.calibrated.ratio - 1) <= 0.1 ? 'yes' : 'no'} |` : ''} ${r.interventions ?? ''} | ${r.sim!.reassignments} |`))
  }
  const result = { bench: 'net', sizeMib, workerMbit, edgeMbit, queueMs, baselines: base, ...(efficiency !== null ? { simWorkerEfficiency: efficiency } : {}), rows }
  process.stdout.write(lines.join('\n') + '\n' + JSON.stringify(result) + '\n')
  await mkdir(join(args.out!, '..'), { recursive: true })
  await writeFile(args.out!, JSON.stringify(result, null, 2) + '\n')
} finally {
  await rm(dir, { recursive: true, force: true })
}
