// `bwnet transfer put` of a large file on a Free key (60 requests a minute) against the same put on an
// Enterprise key (no request limit), same devnet, same run: how much longer the Free key takes, and
// whether the output ever went silent for longer than the progress refresh interval (the Free key's
// 429 waits must show as a countdown, not as a frozen line). docs/benchmarks.md#cli-free-put.
//   node bench/cli/free-put.ts [--size-mib 1024] [--workers 2] [--spend-budget] [--out bench/out/cli-free.json]
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, mkdir, open, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { createInterface } from 'node:readline'
import { Devnet } from '../../node/devnet.ts'
import { bootstrapDevnetKeys } from '../../api/accounts/devnet.ts'
import { createLogger } from '../../node/logger.ts'
import { PLAIN_REFRESH_MS } from '../../node/transfers/progress.ts'

const MIB = 1024 * 1024
const REPO = join(import.meta.dirname, '..', '..')
const { values: args } = parseArgs({
  options: {
    'size-mib': { type: 'string', default: '1024' },
    workers: { type: 'string', default: '2' },
    'timeout-s': { type: 'string', default: '1800' },
    // A gap this much longer than the refresh interval still counts as "not silent" (a loaded machine
    // runs timers late).
    'slack-ms': { type: 'string', default: '1000' },
    // Spend the Free key's minute of requests before its put, so the put meets 429s however fast or
    // slow the machine is (a slow machine may never reach 60 requests a minute on its own).
    'spend-budget': { type: 'boolean', default: false },
    out: { type: 'string', default: join(import.meta.dirname, '..', 'out', 'cli-free.json') }
  }
})
const sizeMib = Number(args['size-mib'])
if (!Number.isInteger(sizeMib) || sizeMib < 1 || sizeMib > 8192) throw new Error('--size-mib 1..8192')
const workers = Number(args.workers)
const timeoutMs = Number(args['timeout-s']) * 1000
const slackMs = Number(args['slack-ms'])

interface Run { label: string, code: number | null, elapsedMs: number, maxGapMs: number, medianGapMs: number, lines: number, notices: number, summary: any }

// Stamps each stderr line of the CLI with the time it arrived, in a process of its own: the devnet
// shares this process's event loop, and a busy devnet would otherwise bunch the lines up.
const STAMP = `
const { spawn } = require('node:child_process')
const { createInterface } = require('node:readline')
const child = spawn(process.argv[1], process.argv.slice(2), { stdio: ['ignore', 'inherit', 'pipe'] })
createInterface({ input: child.stderr }).on('line', l => process.stderr.write(Date.now() + ' ' + l + '\\n'))
child.on('exit', code => { process.exitCode = code ?? 1 })
`

/** Runs the CLI put; the longest gap between two stderr lines (stamped as they came) is the longest silence. */
async function put (label: string, file: string, env: Record<string, string>): Promise<Run> {
  const t0 = Date.now()
  const child = spawn(process.execPath, ['-e', STAMP, '--', process.execPath, join(REPO, 'node', 'cli.ts'), 'transfer', 'put', file, '--profile', label], {
    cwd: REPO, env: { ...process.env, ...env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe']
  })
  const timer = setTimeout(() => child.kill('SIGINT'), timeoutMs)
  let stdout = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d })
  const stamps: number[] = []
  let notices = 0
  createInterface({ input: child.stderr }).on('line', (line) => {
    const m = /^([0-9]+) (.*)$/.exec(line)
    if (m === null) return
    stamps.push(Number(m[1]))
    if (/rate limited, resuming in \d+ s/.test(m[2]!)) notices++
  })
  const [code] = await once(child, 'exit') as [number | null]
  clearTimeout(timer)
  const gaps = stamps.slice(1).map((s, i) => s - stamps[i]!).sort((a, b) => a - b)
  const summary = JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null')
  return { label, code, elapsedMs: Date.now() - t0, maxGapMs: gaps.at(-1) ?? 0, medianGapMs: gaps[Math.floor(gaps.length / 2)] ?? 0, lines: stamps.length, notices, summary }
}

const dir = await mkdtemp(join(tmpdir(), 'bwnet-bench-cli-'))
const devnet = new Devnet({ port: 0, data: join(dir, 'devnet'), workers, logLevel: 'silent' }, createLogger({ level: 'silent' }), {
  bootstrapKeys: async (o) => ({ ...await bootstrapDevnetKeys(o.accounts!) })
})
try {
  const devfile = await devnet.start()
  const accounts = devnet.orchestrator.accounts!
  const org = (await accounts.listOrganizations())[0]!
  const enterprise = (await accounts.createKey(org.id, { role: 'client', plan: 'enterprise', name: 'bench enterprise' })).key
  const config = join(dir, 'config.json')
  await writeFile(config, JSON.stringify({ version: 1, profiles: { enterprise: { api: devfile.baseUrl, key: enterprise }, free: { api: devfile.baseUrl, key: devfile.keys.clientFree } } }), { mode: 0o600 })
  const file = join(dir, 'big.bin')
  const fh = await open(file, 'w')
  const block = Buffer.alloc(MIB)
  for (let i = 0; i < sizeMib; i++) { block.fill(i & 0xff, 0, 64); block.writeUInt32LE(i, 64); await fh.write(block) }
  await fh.close()
  const base = { BWN_CONFIG: config, BWN_KEYSTORE: join(dir, 'none'), BWN_API: '', BWN_KEY: '', BWN_PROFILE: '' }
  await mkdir(join(dir, 's1')); await mkdir(join(dir, 's2'))
  const baseline = await put('enterprise', file, { ...base, BWN_STATE_DIR: join(dir, 's1') })
  if (args['spend-budget'] === true) {
    for (let i = 0; i < 70; i++) if ((await fetch(`${devfile.baseUrl}/transfers/tiers`, { headers: { authorization: `Bearer ${devfile.keys.clientFree}` } })).status === 429) break
  }
  const free = await put('free', file, { ...base, BWN_STATE_DIR: join(dir, 's2') })
  const result = {
    bench: 'cli-free-put', size_mib: sizeMib, workers, spend_budget: args['spend-budget'], refresh_ms: PLAIN_REFRESH_MS, slack_ms: slackMs,
    enterprise: { ...baseline, summary: undefined, status: baseline.summary?.status, rate_limited: baseline.summary?.rate_limited },
    free: { ...free, summary: undefined, status: free.summary?.status, rate_limited: free.summary?.rate_limited },
    ratio_elapsed: free.elapsedMs / baseline.elapsedMs
  }
  await mkdir(dirname(args.out!), { recursive: true })
  await writeFile(args.out!, JSON.stringify(result, null, 2) + '\n')
  console.log(`${sizeMib} MiB put: enterprise ${(baseline.elapsedMs / 1000).toFixed(1)} s (silence: longest ${baseline.maxGapMs} ms, median ${baseline.medianGapMs} ms), ` +
    `free ${(free.elapsedMs / 1000).toFixed(1)} s (${free.summary?.rate_limited ?? '?'} × 429, ${free.notices} notice lines, silence: longest ${free.maxGapMs} ms, median ${free.medianGapMs} ms); ` +
    `free/enterprise ${result.ratio_elapsed.toFixed(2)}×; refresh interval ${PLAIN_REFRESH_MS} ms`)
  const ok = baseline.code === 0 && free.code === 0 && free.maxGapMs <= PLAIN_REFRESH_MS + slackMs && baseline.maxGapMs <= PLAIN_REFRESH_MS + slackMs
  if (!ok) { console.error('FAIL: a put failed or went silent for longer than the refresh interval'); process.exitCode = 1 }
} finally {
  await devnet.stop()
  await rm(dir, { recursive: true, force: true })
}
