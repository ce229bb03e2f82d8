// What an operator scrapes: a devnet's every node serves /metrics (devnet.json nodes[].metricsUrl);
// Debian's real `prometheus` scrapes them with a generated config (loopback, a free port, storage in a
// temporary directory) and answers over its HTTP API with series from every role and a counter that
// rises during a transfer; the Grafana dashboard in deploy/grafana reads only series the nodes export,
// and every one of its queries is valid PromQL to that Prometheus.
import t from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestDevnet, apiClient, upload, waitForStatus, testBytes } from '../helpers/devnet.ts'
import { eventually, REPO } from '../helpers/proc.ts'
import { parsePrometheus, promqlMetricNames, startPrometheus } from '../helpers/prometheus.ts'

const MIB = 1024 * 1024
const SCRAPE_WAIT_MS = 30_000 // scrapes run every second; a loaded machine gets a few in this
const hasPrometheus = await promisify(execFile)('prometheus', ['--version']).then(() => true, () => false)

interface Dashboard { panels: Array<{ title: string, type: string, targets?: Array<{ expr: string }> }>, templating: { list: Array<{ name: string, query?: unknown, definition?: string }> } }
const dashboard = JSON.parse(await readFile(join(REPO, 'deploy', 'grafana', 'bwnet.json'), 'utf8')) as Dashboard
/** Every PromQL query of the dashboard: its panels' targets and its query variables. */
const queries = [
  ...dashboard.panels.flatMap(p => (p.targets ?? []).map(q => ({ where: p.title, expr: q.expr }))),
  ...dashboard.templating.list.filter(v => typeof v.definition === 'string').map(v => ({ where: `variable ${v.name}`, expr: v.definition!.replace(/^label_values\((.*),\s*\w+\)$/, '$1') }))
]
/** A dashboard query as Grafana sends it: its variables filled in. */
const asSent = (expr: string): string => expr.replace(/\$__rate_interval/g, '1m').replace(/\$instance/g, '.*')

const net = await startTestDevnet(t, { workers: 2 })
const { file } = net

t.test('every node of the devnet serves /metrics, each labelled with its role', async t => {
  t.same(file.nodes.map(n => n.role).sort(), ['orchestrator', 'validator', 'worker', 'worker'])
  for (const n of file.nodes) {
    t.match(n.metricsUrl, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/, `${n.name}: metricsUrl`)
    const res = await fetch(n.metricsUrl!)
    t.equal(res.status, 200)
    const e = parsePrometheus(await res.text())
    t.ok(e.samples.length > 0 && e.samples.every(s => s.labels.role === n.role), `${n.name}: every sample labelled role="${n.role}"`)
  }
})

t.test('the Grafana dashboard reads only series the nodes export', async t => {
  // Every name a node exposes (its TYPE lines: a labelled counter not yet counted has no sample), with
  // a histogram's _bucket, _sum and _count.
  const exposed = new Set<string>()
  for (const n of file.nodes) {
    const e = parsePrometheus(await (await fetch(n.metricsUrl!)).text())
    for (const [name, type] of e.types) {
      exposed.add(name)
      if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) exposed.add(name + s)
    }
    for (const s of e.samples) exposed.add(s.name)
  }
  t.ok(queries.length >= 20, `${queries.length} queries`)
  const read = new Set<string>()
  for (const q of queries) {
    const names = promqlMetricNames(q.expr)
    t.ok(names.length > 0, `${q.where}: names a series (${q.expr})`)
    for (const name of names) {
      read.add(name)
      t.ok(exposed.has(name), `${q.where}: ${name} is exported`)
    }
  }
  // The extraction itself: functions, aggregations, labels, durations and variables are not names.
  t.same(promqlMetricNames('histogram_quantile(0.95, sum by (le, route) (rate(bwnet_x_bucket{instance=~"$instance", a="b c"}[$__rate_interval]))) / on (job) group_left (y) bwnet_y offset 5m'), ['bwnet_x_bucket', 'bwnet_y'])
  t.same(promqlMetricNames('topk(10, max by (instance) (bwnet_nodejs_eventloop_lag_p99_seconds)) > 1e3'), ['bwnet_nodejs_eventloop_lag_p99_seconds'])
  t.ok(read.has('bwnet_bytes_moved_total') && read.has('bwnet_peers'), 'the data plane and the peers are on it')
})

t.test('Debian\'s prometheus scrapes the devnet: series from every role, a counter rising during a transfer', { skip: hasPrometheus ? false : (process.env.CI === 'true' ? false : 'prometheus is not installed (apt-get install prometheus; .ci/run installs it)') }, async t => {
  t.ok(hasPrometheus, 'prometheus is installed')
  if (!hasPrometheus) return
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-prometheus-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const prom = await startPrometheus(dir, file.nodes.map(n => ({ url: n.metricsUrl!, labels: { node: n.name } })))
  t.teardown(() => prom.stop())
  t.match(prom.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'on loopback')

  // Every node's target is up, and every role's series are in.
  await eventually(async () => (await prom.query('up{job="bwnet"} == 1')).length === file.nodes.length, SCRAPE_WAIT_MS, 'every target up')
  const roles = await eventually(async () => {
    const r = await prom.query('count by (role) (bwnet_process_start_time_seconds)')
    return r.length === 3 ? r.map(s => s.metric.role).sort() : undefined
  }, SCRAPE_WAIT_MS, 'series of every role')
  t.same(roles, ['orchestrator', 'validator', 'worker'], 'series from the orchestrator, the workers and the validator')
  const peers = await prom.query('sum by (node) (bwnet_peers)')
  t.same(peers.map(s => s.metric.node).sort(), file.nodes.map(n => n.name).sort(), 'each node\'s own series, by its target label')

  // A transfer: the workers' delivered bytes rise in Prometheus.
  const delivered = 'sum(bwnet_bytes_moved_total{direction="delivered"})'
  const before = Number((await prom.query(delivered))[0]?.value[1] ?? 0)
  const api = apiClient(file.baseUrl, file.keys.client!)
  const data = testBytes(8 * MIB + 17, 9)
  const transfer = await upload(api, data, { filename: 'scraped.bin', hotkey: net.devnet.orchestrator.key.address })
  t.ok((await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })).status < 300, 'finalized')
  await waitForStatus(api, transfer.id, ['completed'])
  const after = await eventually(async () => {
    const v = Number((await prom.query(delivered))[0]?.value[1] ?? 0)
    return v >= before + data.byteLength ? v : undefined
  }, SCRAPE_WAIT_MS, 'the delivered bytes to rise')
  t.ok(after - before >= data.byteLength, `bwnet_bytes_moved_total{direction="delivered"} rose by ${after - before} bytes (the file: ${data.byteLength})`)
  const tasks = await eventually(async () => {
    const r = await prom.query('sum by (role) (bwnet_tasks_total)')
    return r.length === 2 ? r : undefined
  }, SCRAPE_WAIT_MS, 'tasks counted by workers and the orchestrator')
  t.same(tasks.map(s => s.metric.role).sort(), ['orchestrator', 'worker'])

  // Every dashboard query is valid PromQL to a real Prometheus.
  for (const q of queries) await t.resolves(prom.query(asSent(q.expr)), `${q.where}: accepted`)
})
