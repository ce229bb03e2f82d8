// The devnet as `make run` starts it: a real child process, real nodes on loopback.
import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { eventually } from '../helpers/proc.ts'
import { startDevnetProcess } from '../helpers/devnet.ts'
import { nodeIdOf } from '../../protocol/node-id.ts'

const MEMBERSHIP_DEADLINE_MS = 10_000 // every node knows every peer within 10 s of start

t.test('devnet: up, every node known by role, graceful stop, restart keeps identities and rows', async t => {
  const data = await mkdtemp(join(tmpdir(), 'bwnet-devnet-'))
  t.teardown(() => rm(data, { recursive: true, force: true }))

  const { proc: first, file } = await startDevnetProcess(t, data, { workers: 3, startTimeoutMs: 60_000, waitForWorkers: false }) // membership has its own deadline below
  t.match(file, { baseUrl: /^http:\/\/127\.0\.0\.1:\d+$/, dashboardUrl: String, telemetryUrl: String, keys: Object })
  t.same(file.nodes.map((n: any) => n.role).sort(), ['orchestrator', 'validator', 'worker', 'worker', 'worker'])
  for (const n of file.nodes) t.match(n, { hotkey: /^5[1-9A-HJ-NP-Za-km-z]{47}$/, publicKey: /^[0-9a-f]{64}$/, id: nodeIdOf(n.hotkey) })

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

  const { proc: second, file: again } = await startDevnetProcess(t, data, { workers: 3, startTimeoutMs: 60_000, waitForWorkers: false })
  t.same(again.nodes.map((n: any) => n.hotkey), hotkeys, 'identities reused')
  t.equal(second.lines.filter(l => l.event === 'identity' && l.created === false).length, 5)
  const restarted = await second.stop('SIGTERM')
  t.equal(restarted.code, 0)
})
