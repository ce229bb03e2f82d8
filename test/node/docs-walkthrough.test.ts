// docs/node.md, followed literally: the shell block between the walkthrough markers is run line by line
// from an empty directory — `bwnet bootstrap`, the orchestrator's identity, `bwnet admin init`, a
// standalone orchestrator, two workers and a validator, a client key, credits, `bwnet transfer put`.
// Then /metrics of every role parses as Prometheus text and its counters match what happened.
//
// The block is read, not copied: a line is `bwnet ARGS &` (a long-running node: wait for its ready line),
// `NAME=$(bwnet ARGS | jq -r PATH)` (run, read PATH from its JSON stdout) or `bwnet ARGS` (run, exit 0).
import t from 'tap'
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { randomBytes } from 'node:crypto'
import { REPO, eventually, runCli, type CliProcess } from '../helpers/proc.ts'
import { parsePrometheus, sample } from '../helpers/prometheus.ts'

// Longer than the suite's per-file default: it starts several processes (and the machine may be shared).
t.setTimeout(480_000)

const MIB = 1024 * 1024
const FILE_SIZE = 40 * MIB // 3 chunks of the 16 MiB plan
const CHUNKS = 3
const CLI = [process.execPath, join(REPO, 'node', 'cli.ts')]

export function walkthrough (markdown: string): string[] {
  const m = /<!-- walkthrough:begin -->\s*```sh\n([\s\S]*?)```\s*<!-- walkthrough:end -->/.exec(markdown)
  if (m === null) throw new Error('docs/node.md has no walkthrough block')
  return m[1]!.split('\n').map(l => l.trim()).filter(l => l !== '' && !l.startsWith('#'))
}

/** Splits a command line into words (no quoting is used in the walkthrough). */
const words = (line: string, vars: Map<string, string>): string[] =>
  line.split(/\s+/).map(w => w.replace(/\$([A-Z_]+)/g, (_, name: string) => {
    const v = vars.get(name)
    if (v === undefined) throw new Error(`$${name} used before it is set`)
    return v
  }))

function jqPath (value: unknown, path: string): unknown {
  let v: any = value
  for (const part of path.replace(/^\./, '').split('.')) {
    const m = /^([A-Za-z_]+)(?:\[(\d+)\])?$/.exec(part)
    if (m === null) throw new Error(`unsupported jq path ${path}`)
    v = v?.[m[1]!]
    if (m[2] !== undefined) v = v?.[Number(m[2])]
  }
  return v
}

t.test('docs/node.md walkthrough: bootstrap, admin init, standalone nodes, a transfer, metrics that add up', { timeout: 420_000 }, async t => {
  const lines = walkthrough(await readFile(join(REPO, 'docs', 'node.md'), 'utf8'))
  t.ok(lines.length >= 10, 'the walkthrough has its steps')
  const cwd = await mkdtemp(join(tmpdir(), 'bwnet-walk-'))
  await writeFile(join(cwd, 'file.bin'), randomBytes(FILE_SIZE))
  const running: CliProcess[] = []
  const procs: Array<{ child: ReturnType<typeof spawn> }> = []
  // Children must not outlive the test, even when it is killed (a timeout): their ports are fixed.
  const killAll = (): void => { for (const p of [...running, ...procs]) if (p.child.exitCode === null) p.child.kill('SIGKILL') }
  const onSignal = (): void => { killAll(); process.exit(1) }
  process.once('exit', killAll)
  process.once('SIGTERM', onSignal)
  t.teardown(async () => {
    process.off('exit', killAll)
    process.off('SIGTERM', onSignal)
    for (const p of [...running].reverse()) await p.stop('SIGTERM').catch(() => {})
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL')
    await rm(cwd, { recursive: true, force: true })
  })
  const vars = new Map<string, string>()
  let putStdout = ''

  for (const line of lines) {
    const assign = /^([A-Z_]+)=\$\((bwnet .*) \| jq -r (\S+)\)$/.exec(line)
    const cmd = assign?.[2] ?? line
    if (!cmd.startsWith('bwnet ')) throw new Error(`not a bwnet line: ${line}`)
    const background = cmd.endsWith(' &')
    const args = words(cmd.replace(/ &$/, ''), vars).slice(1)
    if (background) {
      const p = runCli(args, {}, { cwd })
      running.push(p)
      await p.waitFor(l => l.event === 'bootstrap_ready' || l.event === 'node_ready', 60_000, `ready: ${line}`)
      continue
    }
    if (args[0] === 'transfer') {
      // As an operator would before the first upload: wait until the orchestrator's membership view (its
      // /metrics) holds both workers and the validator, so the validator is there to verify deliveries.
      const orchestrator = running.find(p => p.child.spawnargs.includes('orchestrator'))!
      const port = Number(orchestrator.child.spawnargs[orchestrator.child.spawnargs.indexOf('--metrics-port') + 1])
      await eventually(async () => {
        const m = parsePrometheus(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())
        return (sample(m, 'bwnet_peers', { peer_role: 'worker' }) ?? 0) >= 2 && (sample(m, 'bwnet_peers', { peer_role: 'validator' }) ?? 0) >= 1
      }, 60_000, 'the orchestrator sees both workers and the validator')
    }
    const child = spawn(CLI[0]!, [...CLI.slice(1), ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } })
    procs.push({ child })
    let stdout = ''; let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d })
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
    const [code] = await once(child, 'exit') as [number | null]
    t.equal(code, 0, `${line.slice(0, 80)}… exits 0${code === 0 ? '' : `: ${stderr.slice(-500)}`}`)
    if (code !== 0) return
    if (assign !== null) {
      // jq reads the JSON document on stdout (pretty-printed by admin commands, one line by the others).
      const value = jqPath(JSON.parse(stdout), assign[3]!)
      t.type(value, 'string', `${assign[1]} is set`)
      vars.set(assign[1]!, String(value))
    }
    if (args[0] === 'transfer') putStdout = stdout
  }

  const summary = JSON.parse(putStdout.trim().split('\n').pop()!)
  t.equal(summary.status, 'completed', 'the transfer completed')
  t.equal(summary.chunks_total, CHUNKS)

  // /metrics on every role, read from the ports the walkthrough gave them.
  const metricsPort = (p: CliProcess): number => Number(p.child.spawnargs[p.child.spawnargs.indexOf('--metrics-port') + 1])
  const nodes = running.filter(p => p.child.spawnargs.includes('--metrics-port'))
  t.equal(nodes.length, 4, 'orchestrator, two workers and a validator serve metrics')
  const scrape = async (p: CliProcess) => {
    const res = await fetch(`http://127.0.0.1:${metricsPort(p)}/metrics`)
    t.equal(res.status, 200)
    t.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
    return parsePrometheus(await res.text())
  }
  const [orch, w1, w2, val] = nodes
  for (const p of nodes) {
    const health = await fetch(`http://127.0.0.1:${metricsPort(p)}/healthz`)
    t.equal(health.status, 200, 'healthz')
    t.equal((await fetch(`http://127.0.0.1:${metricsPort(p)}/readyz`)).status, 200, 'readyz')
  }

  const o = await scrape(orch!)
  t.equal(sample(o, 'bwnet_tasks_total', { outcome: 'accepted' }), CHUNKS, 'orchestrator: one accepted result per chunk')
  t.equal(sample(o, 'bwnet_bytes_moved_total', { direction: 'settled' }), FILE_SIZE, 'orchestrator: settled bytes = file size')
  t.equal(sample(o, 'bwnet_transfers_total', { status: 'completed' }), 1, 'orchestrator: one completed transfer')
  // The swarm may be replacing a connection at this instant (its de-duplication): the gauge settles.
  const workersSeen = await eventually(async () => sample(await scrape(orch!), 'bwnet_peers', { peer_role: 'worker' }) === 2 || false, 20_000, 'both workers in the peers gauge').catch(() => false)
  t.ok(workersSeen, 'orchestrator sees both workers')
  t.ok((sample(o, 'bwnet_http_request_duration_seconds_count', { route: '/transfers/:id/chunks', method: 'POST', status: '201' }) ?? 0) === CHUNKS, 'HTTP histogram counted each chunk upload')
  t.ok((sample(o, 'bwnet_chain_head') ?? 0) >= 1, 'chain head gauge')

  const workers = [await scrape(w1!), await scrape(w2!)]
  const delivered = workers.reduce((n, m) => n + (sample(m, 'bwnet_tasks_total', { outcome: 'delivered' }) ?? 0), 0)
  const deliveredBytes = workers.reduce((n, m) => n + (sample(m, 'bwnet_bytes_moved_total', { direction: 'delivered' }) ?? 0), 0)
  const accepted = sample(o, 'bwnet_tasks_total', { outcome: 'accepted' }) ?? 0
  const settledSuccesses = ['accepted', 'late_superseded', 'integrity_mismatch', 'rejected'].reduce((n, outcome) => n + (sample(o, 'bwnet_tasks_total', { outcome }) ?? 0), 0)
  const interventions = o.samples.filter(s => s.name === 'bwnet_interventions_total').reduce((n, s) => n + s.value, 0)
  if (interventions === 0) {
    // Nothing was taken away: every move a worker finished was reported and settled, once per chunk.
    t.equal(delivered, settledSuccesses, 'workers delivered exactly the successes the orchestrator settled')
    t.equal(delivered, CHUNKS, 'one delivery per chunk')
    t.equal(deliveredBytes, FILE_SIZE, 'delivered bytes = file size')
  } else {
    // Reassigned work (a loaded machine): a worker may finish a move whose result is no longer wanted.
    t.ok(delivered >= settledSuccesses && settledSuccesses >= CHUNKS, `deliveries (${delivered}) ≥ settled successes (${settledSuccesses}) ≥ chunks; ${interventions} interventions`)
    t.ok(deliveredBytes >= FILE_SIZE, 'at least the file\'s bytes delivered')
  }
  for (const m of workers) t.equal(sample(m, 'bwnet_attempt_duration_seconds_count', { outcome: 'delivered' }), sample(m, 'bwnet_tasks_total', { outcome: 'delivered' }) ?? undefined, 'one latency sample per delivery')

  // The validator's verdicts: as many as the orchestrator recorded as verified (deliveries made before
  // the validator connected are checked by the coordinator itself); they may land just after completion.
  const record = async (): Promise<{ chunks: { verified: number } }> => (await (await fetch(`${vars.get('BWN_API') ?? 'http://127.0.0.1:30080'}/transfers/${summary.transfer_id}`, { headers: { 'x-api-key': vars.get('CLIENT_KEY')! } })).json()) as never
  const quietScrape = async (p: CliProcess) => parsePrometheus(await (await fetch(`http://127.0.0.1:${metricsPort(p)}/metrics`)).text())
  let verifiedByRecord = 0
  await eventually(async () => {
    verifiedByRecord = (await record()).chunks.verified
    return (sample(await quietScrape(val!), 'bwnet_verdicts_total', { verdict: 'verified' }) ?? 0) >= verifiedByRecord
  }, 60_000, 'the validator\'s verdicts')
  t.ok(verifiedByRecord >= 1, `the validator verified deliveries (${verifiedByRecord} of ${CHUNKS} chunks)`)
  const v = await scrape(val!)
  const verified = sample(v, 'bwnet_verdicts_total', { verdict: 'verified' }) ?? 0
  t.ok(verified >= verifiedByRecord && verified <= settledSuccesses, `validator: verified verdicts (${verified}) cover the chunks the transfer records as verified (${verifiedByRecord})`)
  if (verified === CHUNKS) t.equal(sample(v, 'bwnet_bytes_moved_total', { direction: 'verified' }), FILE_SIZE, 'validator: verified bytes = file size')
  t.equal(sample(v, 'bwnet_verdicts_total', { verdict: 'mismatch' }) ?? 0, 0, 'no mismatches')
  t.ok((sample(v, 'bwnet_epoch') ?? -1) >= 0, 'validator epoch gauge')

  for (const p of [...running].reverse()) {
    const { code } = await p.stop('SIGTERM')
    t.equal(code, 0, 'stops cleanly on SIGTERM')
  }
})
