// The node's metrics registry and its health server, without a network: names carry the bwnet_
// prefix and the role label, scrape-time gauges read their sources, the parser refuses bad text.
import t from 'tap'
import { NodeMetrics } from '../../node/metrics.ts'
import { MetricsServer } from '../../node/metrics-server.ts'
import { meteredMover, coordinatorMetrics } from '../../node/metrics-ports.ts'
import { parsePrometheus, sample } from '../helpers/prometheus.ts'
import { silentLogger } from '../helpers/logger.ts'

t.test('every metric is prefixed bwnet_ and labelled with the role; two nodes in one process keep separate counts', async t => {
  const a = new NodeMetrics('worker', { defaults: false })
  const b = new NodeMetrics('worker', { defaults: false })
  a.tasks.inc({ outcome: 'delivered' }, 3)
  a.setSources({ peers: async () => ({ orchestrator: 1, worker: 0, validator: 2 }), mailboxes: () => ({ worker: 7 }), framesWaiting: () => 12 })
  const e = parsePrometheus(await a.text())
  t.ok(e.samples.length > 0)
  t.ok(e.samples.every(s => s.name.startsWith('bwnet_')), 'prefix')
  t.ok(e.samples.every(s => s.labels.role === 'worker'), 'role label')
  t.equal(sample(e, 'bwnet_tasks_total', { outcome: 'delivered' }), 3)
  t.equal(sample(e, 'bwnet_peers', { peer_role: 'validator' }), 2)
  t.equal(sample(e, 'bwnet_mailbox_depth', { actor: 'worker' }), 7)
  t.equal(sample(e, 'bwnet_frames_waiting'), 12)
  t.equal(sample(parsePrometheus(await b.text()), 'bwnet_tasks_total', { outcome: 'delivered' }), undefined, 'the other registry is untouched')
})

t.test('the metered mover counts deliveries, failures and cancellations', async t => {
  const m = new NodeMetrics('worker', { defaults: false })
  const offer = { transferId: 't', chunkIndex: 0, attemptId: 'a' } as never
  let fail: Error | null = null
  const mover = meteredMover({ move: async () => { if (fail) throw fail; return { sha256: 'x', etag: null, bytes: 100, via: 'http' as const } } }, m, silentLogger())
  await mover.move(offer, { signal: new AbortController().signal, corrupt: false })
  fail = new Error('boom')
  await t.rejects(mover.move(offer, { signal: new AbortController().signal, corrupt: false }))
  const ac = new AbortController(); ac.abort()
  await t.rejects(mover.move(offer, { signal: ac.signal, corrupt: false }))
  const e = parsePrometheus(await m.text())
  t.equal(sample(e, 'bwnet_tasks_total', { outcome: 'delivered' }), 1)
  t.equal(sample(e, 'bwnet_tasks_total', { outcome: 'failed' }), 1)
  t.equal(sample(e, 'bwnet_tasks_total', { outcome: 'cancelled' }), 1)
  t.equal(sample(e, 'bwnet_bytes_moved_total', { direction: 'delivered' }), 100)
  t.equal(sample(e, 'bwnet_attempt_duration_seconds_count', { outcome: 'delivered' }), 1)
})

t.test('coordinator events: settled results, interventions, final transfers', async t => {
  const m = new NodeMetrics('orchestrator', { defaults: false })
  const on = coordinatorMetrics(m)
  on({ type: 'result', row: { outcome: 'accepted', bytes: 10, duration_ms: 1500 } as never, attempt: {} as never })
  on({ type: 'result', row: { outcome: 'failed', bytes: 10, duration_ms: 100 } as never, attempt: {} as never })
  on({ type: 'intervention', row: { reason: 'result_gap' } as never })
  on({ type: 'transfer', row: { status: 'in_progress' } as never })
  on({ type: 'transfer', row: { status: 'completed' } as never })
  const e = parsePrometheus(await m.text())
  t.equal(sample(e, 'bwnet_tasks_total', { outcome: 'accepted' }), 1)
  t.equal(sample(e, 'bwnet_bytes_moved_total', { direction: 'settled' }), 10, 'only accepted results count as settled bytes')
  t.equal(sample(e, 'bwnet_interventions_total', { reason: 'result_gap' }), 1)
  t.equal(sample(e, 'bwnet_transfers_total', { status: 'completed' }), 1)
  t.equal(sample(e, 'bwnet_transfers_total', { status: 'in_progress' }), undefined, 'only final statuses')
})

t.test('the health server: liveness, readiness that follows the node, metrics, nothing else', async t => {
  let reasons = ['starting or stopping']
  const server = new MetricsServer(new NodeMetrics('validator'), () => reasons)
  const url = await server.listen('127.0.0.1', 0)
  t.teardown(() => server.close())
  t.equal((await fetch(`${url}/healthz`)).status, 200)
  const starting = await fetch(`${url}/readyz`)
  t.equal(starting.status, 503, 'not ready while starting')
  t.same(await starting.json(), { status: 'not_ready', reasons: ['starting or stopping'] }, 'the reasons are named')
  reasons = []
  t.equal((await fetch(`${url}/readyz`)).status, 200)
  const res = await fetch(`${url}/metrics`)
  t.equal(res.status, 200)
  const e = parsePrometheus(await res.text())
  t.ok((sample(e, 'bwnet_process_cpu_seconds_total') ?? -1) >= 0, 'process metrics, prefixed')
  t.equal((await fetch(`${url}/metrics`, { method: 'POST' })).status, 405)
  t.equal((await fetch(`${url}/other`)).status, 404)
})

t.test('the Prometheus reader refuses malformed text', async t => {
  t.throws(() => parsePrometheus('bwnet_x{role="a" 1\n'))
  t.throws(() => parsePrometheus('bwnet_x one\n'))
  t.throws(() => parsePrometheus('# TYPE bwnet_x weird\n'))
  t.equal(sample(parsePrometheus('# TYPE bwnet_x counter\nbwnet_x{a="1",b="2"} 5\n'), 'bwnet_x', { b: '2' }), 5)
})
