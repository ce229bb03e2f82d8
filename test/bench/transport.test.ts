// The transport bench runs end to end with tiny sizes: three positive throughputs, consistent ratios,
// every path's first transfer hashing to the served payload, and the same result written to --out.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO } from '../helpers/proc.ts'

const RUN_TIMEOUT_MS = 20_000 // the bench's own limit is set below this

t.test('transport bench prints swarm, HTTP and TCP throughput with their ratios', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-bench-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const out = join(dir, 'transport.json')
  const child = spawn(process.execPath, [
    '--import', 'tsx', join(REPO, 'bench', 'transport', 'run.ts'),
    '--chunk-mib', '1', '--total-mib', '4', '--rounds', '2', '--timeout-s', '18', '--out', out
  ], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
  const killer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS)
  t.teardown(() => { clearTimeout(killer); if (child.exitCode === null) child.kill('SIGKILL') })
  let stdout = ''; let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d })
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  const [code] = await once(child, 'exit') as [number | null]
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)

  const jsonLine = stdout.trim().split('\n').at(-1) ?? ''
  const result = JSON.parse(jsonLine)
  t.equal(result.bench, 'transport')
  for (const path of ['swarm', 'http', 'tcp']) {
    t.ok(result.mibPerSec[path] > 0, `${path} throughput ${result.mibPerSec[path]} MiB/s > 0`)
    t.equal(result.perRoundMiBPerSec[path].length, 2, `${path} measured in both rounds`)
    t.equal(result.firstTransferSha256[path], result.sha256, `${path} first transfer carries the payload`)
  }
  const close = (a: number, b: number): boolean => Math.abs(a - b) <= 0.01 * Math.max(1, b)
  t.ok(close(result.ratio.swarmOverHttp, result.mibPerSec.swarm / result.mibPerSec.http), 'swarm/http ratio')
  t.ok(close(result.ratio.swarmOverTcp, result.mibPerSec.swarm / result.mibPerSec.tcp), 'swarm/tcp ratio')
  t.ok(close(result.ratio.httpOverTcp, result.mibPerSec.http / result.mibPerSec.tcp), 'http/tcp ratio')
  t.equal(result.transfersPerPath, 4)
  t.match(stdout, /swarm\/http/, 'human table printed')
  t.same(JSON.parse(await readFile(out, 'utf8')), result, 'same result written to --out')
})
