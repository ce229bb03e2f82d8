// The node's metrics registry and its health server, without a network: names carry the bwnet_
// prefix and the role label, scrape-time gauges read their sources, the parser refuses bad text.
import t from 'tap'
import { Histogram, Registry } from 'prom-client'
import { NodeMetrics, SeriesHistogram, HTTP_BUCKETS } from '../../node/metrics.ts'
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

t.test('the HTTP histogram writes exactly what a prom-client Histogram writes for the same observations', async t => {
  const ours = new Registry()
  const theirs = new Registry()
  for (const r of [ours, theirs]) r.setDefaultLabels({ role: 'orchestrator' })
  const labelNames = ['method', 'route', 'status'] as const
  const opts = { name: 'bwnet_http_request_duration_seconds', help: 'HTTP requests served, by method, route and status', labelNames, buckets: HTTP_BUCKETS }
  const mine = new SeriesHistogram({ ...opts, registers: [ours] })
  const reference = new Histogram({ ...opts, labelNames: [...labelNames], registers: [theirs] })
  const series = [
    { method: 'GET', route: '/v1/telemetry/network', status: '200' },
    { method: 'GET', route: '/v1/telemetry/network', status: '304' },
    { method: 'POST', route: '/transfers/:id/chunks', status: '201' },
    { method: 'GET', route: 'unmatched', status: '404' }
  ]
  // Every bucket, its bounds exactly, above the last, zero; a series observed once and one never.
  const values = [0, 0.001, 0.0010001, 0.004, 0.005, 0.3, 1, 2.5, 29.9, 30, 31, 1e6, ...HTTP_BUCKETS]
  for (const [i, v] of values.entries()) {
    const labels = series[i % 3]!
    mine.series(labels).observe(v)
    reference.labels(labels).observe(v)
  }
  mine.series(series[3]!)
  t.equal(mine.series(series[0]!), mine.series({ ...series[0]! }), 'the same labels: the same series')
  t.equal(await ours.metrics(), await theirs.metrics(), 'the same text exposition')
  t.same(await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON(), 'the same JSON')
  t.match(await ours.metrics(), /bwnet_http_request_duration_seconds_bucket\{le="\+Inf",role="orchestrator",method="GET",route="\/v1\/telemetry\/network",status="200"\} 9$/m)
  t.notMatch(await ours.metrics(), /unmatched/, 'a series never observed is not written')
  t.throws(() => mine.series({ method: 'GET', route: 'x' } as never), /label status missing/)
  t.throws(() => mine.series({ ...series[0]!, other: 'x' } as never), /unknown label other/)
  t.throws(() => mine.series(series[0]!).observe(Number.NaN), TypeError)
  // node/node.ts keeps each series for the process's life: a series taken before a reset still counts.
  const kept = mine.series(series[1]!)
  const keptReference = reference.labels(series[1]!)
  mine.reset(); reference.reset()
  t.equal(await ours.metrics(), await theirs.metrics(), 'reset: nothing written by either')
  kept.observe(0.02); keptReference.observe(0.02)
  t.equal(await ours.metrics(), await theirs.metrics(), 'observed again after the reset, through the series kept from before it')
  t.match(await ours.metrics(), /_count\{role="orchestrator",method="GET",route="\/v1\/telemetry\/network",status="304"\} 1$/m)
  t.throws(() => new SeriesHistogram({ ...opts, labelNames: ['le'] }), /reserved/)
})
