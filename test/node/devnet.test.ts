// The devnet as `make run` starts it: a real child process, real nodes on loopback.
import t from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { eventually, runCliOnce } from '../helpers/proc.ts'
import { startDevnetProcess, sinkFile, devnetOrgId } from '../helpers/devnet.ts'
import { nodeIdOf } from '../../protocol/node-id.ts'

const MEMBERSHIP_DEADLINE_MS = 10_000 // every node knows every peer within 10 s of start

t.test('devnet on one thread: up, every node known by role, graceful stop, restart keeps identities and rows', async t => {
  const data = await mkdtemp(join(tmpdir(), 'bwnet-devnet-'))
  t.teardown(() => rm(data, { recursive: true, force: true }))

  // --threads 1 as a one-core machine gets by default; the two-thread default has its own test below.
  const { proc: first, file } = await startDevnetProcess(t, data, { workers: 3, args: ['--threads', '1'], startTimeoutMs: 60_000, waitForWorkers: false }) // membership has its own deadline below
  t.match(file, { baseUrl: /^http:\/\/127\.0\.0\.1:\d+$/, dashboardUrl: String, telemetryUrl: String, keys: Object })
  t.same(file.nodes.map((n: any) => n.role).sort(), ['orchestrator', 'validator', 'worker', 'worker', 'worker'])
  for (const n of file.nodes) t.match(n, { hotkey: /^5[1-9A-HJ-NP-Za-km-z]{47}$/, publicKey: /^[0-9a-f]{64}$/, id: nodeIdOf(n.hotkey), metricsUrl: /^http:\/\/127\.0\.0\.1:\d+\/metrics$/ })

  const health = await eventually(async () => {
    const res = await fetch(`${file.baseUrl}/health`)
    const body = await res.json() as any
    return body.nodes.orchestrator === 1 && body.nodes.worker === 3 && body.nodes.validator === 1 ? body : undefined
  }, MEMBERSHIP_DEADLINE_MS, '/health to count 1 orchestrator, 3 workers, 1 validator')
  t.equal(health.total, 5)

  // Every node, not only the orchestrator, sees all four peers.
  const hotkeys = file.nodes.map((n: any) => n.hotkey)
  await eventually(async () => {
    const joined = new Map<string, Set<string>>()
    for (const l of first.lines) if (l.event === 'peer_joined') {
      const s = joined.get(l.hotkey) ?? new Set(); s.add(l.peer); joined.set(l.hotkey, s)
    }
    return hotkeys.every((h: string) => joined.get(h)?.size === 4)
  }, MEMBERSHIP_DEADLINE_MS, 'every node to see four peers')

  // Exit 0 means every node stopped within the command's own deadline (SHUTDOWN_TIMEOUT_MS, measured by
  // the process on its clock; past it the process logs shutdown_timeout and exits 1).
  const stopped = await first.stop('SIGTERM')
  t.equal(stopped.code, 0, `exits 0 on SIGTERM (${stopped.ms} ms seen from here)`)
  t.notOk(first.lines.some(l => l.event === 'shutdown_timeout'), 'no shutdown timeout')
  t.equal(first.lines.filter(l => l.event === 'node_stopped').length, 5, 'every node stopped cleanly')

  // The databases were closed cleanly: they open again and hold the peer rows.
  const db = new Level<string, string>(join(data, 'orchestrator', 'db'))
  await db.open()
  const workers = db.sublevel<string, any>('workers', { valueEncoding: 'json' })
  const workerHotkeys = file.nodes.filter((n: any) => n.role === 'worker').map((n: any) => n.hotkey)
  const rows = await Promise.all(workerHotkeys.map((h: string) => workers.get(h)))
  const sessions = await Promise.all(workerHotkeys.map((h: string) => workers.get(`session/${h}`)))
  await db.close()
  t.same(rows.map((r: any) => r?.role), ['worker', 'worker', 'worker'], 'orchestrator stored the three worker rows')
  t.same(sessions.map((r: any) => r?.orchestrator_id), workerHotkeys.map(() => file.nodes[0].hotkey), 'and their sessions')

  const { proc: second, file: again } = await startDevnetProcess(t, data, { workers: 3, args: ['--threads', '1'], startTimeoutMs: 60_000, waitForWorkers: false })
  t.same(again.nodes.map((n: any) => n.hotkey), hotkeys, 'identities reused')
  t.same(again.keys, file.keys, 'keys reused: one organization, the same keys')
  t.equal(second.lines.filter(l => l.event === 'identity' && l.created === false).length, 5)
  const restarted = await second.stop('SIGTERM')
  t.equal(restarted.code, 0)
})

t.test('devnet on two threads (the default on two cores): workers and validator on a second thread join at once, deliver, log and stop cleanly', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-devnet-threads-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const data = join(dir, 'devnet')
  // No flag where the machine has two cores: that is the default then.
  const { proc, file } = await startDevnetProcess(t, data, { workers: 2, args: availableParallelism() >= 2 ? [] : ['--threads', '2'], startTimeoutMs: 60_000, waitForWorkers: false })
  t.same(file.nodes.map((n: any) => n.role).sort(), ['orchestrator', 'validator', 'worker', 'worker'], 'devnet.json lists the second thread\'s nodes too')
  t.ok(proc.lines.some(l => l.event === 'devnet_ready' && l.threads === 2 && l.nodes === 4), 'ready on two threads')
  await eventually(async () => {
    const body = await (await fetch(`${file.baseUrl}/health`)).json() as any
    return body.nodes.worker === 2 && body.nodes.validator === 1
  }, MEMBERSHIP_DEADLINE_MS, '/health to count 2 workers and 1 validator')

  // A file through the second thread's workers into the orchestrator's sink, byte for byte.
  const bytes = randomBytes(20 * 1024 * 1024 + 123)
  const path = join(dir, 'threads.bin')
  await writeFile(path, bytes)
  const run = await runCliOnce(['transfer', 'put', path, '--api', file.baseUrl, '--key', file.keys.client!], { BWN_STATE_DIR: join(dir, 'state'), CI: 'true' })
  t.equal(run.code, 0, `put exits 0; stderr: ${run.stderr.slice(-2000)}`)
  t.match(JSON.parse(run.stdout.trim().split('\n').at(-1)!), { event: 'transfer_put', status: 'completed', error: null })
  const digest = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')
  t.equal(digest(await readFile(sinkFile(data, await devnetOrgId(file.baseUrl, file.keys.admin!), 'threads.bin'))), digest(bytes), 'the sink holds the same bytes')

  // The second thread's log lines come out whole, through the main thread's logger.
  for (const name of ['worker-1', 'worker-2', 'validator']) t.ok(proc.lines.some(l => l.node === name && l.event === 'identity'), `${name} logs reach stdout`)
  const stopped = await proc.stop('SIGTERM')
  t.equal(stopped.code, 0, 'exits 0 on SIGTERM')
  t.notOk(proc.lines.some(l => l.event === 'shutdown_timeout' || l.event === 'devnet_thread_stop_timeout' || l.event === 'devnet_thread_exited'), 'no timeout, no lost thread')
  t.equal(proc.lines.filter(l => l.event === 'node_stopped').length, 4, 'every node stopped cleanly, on both threads')
})

t.test('devnet --validators 3: three validator nodes with unequal stakes, all in devnet.json, counted by the PRISM consensus', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-devnet-validators-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const { proc, file } = await startDevnetProcess(t, dir, { workers: 1, args: ['--threads', '1', '--validators', '3'], startTimeoutMs: 60_000, waitForWorkers: false })
  const validators = file.nodes.filter((n: any) => n.role === 'validator')
  t.same(validators.map((n: any) => n.name), ['validator', 'validator-2', 'validator-3'], 'devnet.json lists every validator')
  await eventually(async () => {
    const body = await (await fetch(`${file.baseUrl}/health`)).json() as any
    return body.nodes.validator === 3
  }, MEMBERSHIP_DEADLINE_MS, '/health to count 3 validators')
  // 1000 + 900 + 800 α: the permitted stake the orchestrator's consensus is taken over (known at the next epoch close).
  const prism = await eventually(async () => {
    const p = await (await fetch(`${file.baseUrl}/chain/prism`)).json() as any
    return p.totalStakeRao === (2_700n * 10n ** 9n).toString() ? p : undefined
  }, 30_000, 'the orchestrator to know the three validators\' stake', 250)
  t.same(prism.scores, [], 'no work yet: nothing scored')
  const stopped = await proc.stop('SIGTERM')
  t.equal(stopped.code, 0)
})
