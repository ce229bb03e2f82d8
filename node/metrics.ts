// Prometheus metrics of one node (prom-client, every name prefixed `bwnet_`). Each node owns its own
// registry (never prom-client's global one), handed to the role wiring, which meters the actors'
// ports with it (node/metrics-ports.ts): the actors never see a metric and never reach a global.
// Gauges that read state (peers, mailbox depth, chain head) are collected at scrape time.
import { Registry, Counter, Gauge, Histogram, collectDefaultMetrics, type Metric } from 'prom-client'
import type { Role } from '../protocol/index.ts'

export const METRIC_PREFIX = 'bwnet_'
/** Attempt latency buckets (seconds): one chunk moved, from 10 ms to 5 min. */
export const ATTEMPT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]
/** HTTP request buckets (seconds). */
export const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** Readers the node supplies for gauges read at scrape time. */
export interface MetricsSources {
  peers? (): Promise<Record<string, number>>
  mailboxes? (): Record<string, number>
  /** Frames waiting for peers' budgets (node/messenger.ts), all connections together. */
  framesWaiting? (): number
}

export class NodeMetrics {
  readonly role: Role
  readonly registry = new Registry()
  /** Bytes this node moved: `delivered` (a worker's chunk writes), `settled` (deliveries an orchestrator accepted), `ingested` (chunks staged from clients). */
  readonly bytes: Counter<'direction'>
  /** Tasks by outcome: on workers the chunk moves (delivered, failed, cancelled); on orchestrators the settled attempts (accepted, failed, integrity_mismatch, ...). */
  readonly tasks: Counter<'outcome'>
  readonly attemptSeconds: Histogram<'outcome'>
  readonly interventions: Counter<'reason'>
  readonly transfers: Counter<'status'>
  readonly verdicts: Counter<'verdict'>
  readonly epochsClosed: Counter
  readonly weightsSet: Counter<'result'>
  readonly chainHead: Gauge
  readonly epoch: Gauge
  readonly httpSeconds: SeriesHistogram<'method' | 'route' | 'status'>
  /** Connections this node closed, by reason: score, refused, banned, cap_address, cap_pending, announce_timeout, admission_timeout. */
  readonly peerDisconnects: Counter<'reason'>
  readonly actorRestarts: Counter<'actor'>
  /** Files the disk sweep deleted (orchestrators), by kind: blob, blob_temp, sink_partial (docs/node.md#disk-sweep). */
  readonly reclaimedFiles: Counter<'kind'>
  /** Bytes on disk those files held, by kind. */
  readonly reclaimedBytes: Counter<'kind'>
  #sources: MetricsSources = {}

  constructor (role: Role, opts: { defaults?: boolean } = {}) {
    this.role = role
    const registers = [this.registry]
    this.registry.setDefaultLabels({ role })
    const p = METRIC_PREFIX
    this.bytes = new Counter({ name: `${p}bytes_moved_total`, help: 'Chunk bytes moved, by direction', labelNames: ['direction'], registers })
    this.tasks = new Counter({ name: `${p}tasks_total`, help: 'Tasks (chunk moves) by outcome', labelNames: ['outcome'], registers })
    this.attemptSeconds = new Histogram({ name: `${p}attempt_duration_seconds`, help: 'Time to move one chunk, by outcome', labelNames: ['outcome'], buckets: ATTEMPT_BUCKETS, registers })
    this.interventions = new Counter({ name: `${p}interventions_total`, help: 'Overseer interventions (reassigned work), by reason', labelNames: ['reason'], registers })
    this.transfers = new Counter({ name: `${p}transfers_total`, help: 'Transfers that reached a final status', labelNames: ['status'], registers })
    this.verdicts = new Counter({ name: `${p}verdicts_total`, help: 'Verification verdicts reached (validators)', labelNames: ['verdict'], registers })
    this.epochsClosed = new Counter({ name: `${p}epochs_closed_total`, help: 'Chain epochs this node saw close', registers })
    this.weightsSet = new Counter({ name: `${p}weights_set_total`, help: 'Weight vectors submitted to the chain (validators), by result', labelNames: ['result'], registers })
    this.chainHead = new Gauge({ name: `${p}chain_head`, help: 'Latest chain block this node saw', registers })
    this.epoch = new Gauge({ name: `${p}epoch`, help: 'Latest chain epoch this node saw', registers })
    this.httpSeconds = new SeriesHistogram({ name: `${p}http_request_duration_seconds`, help: 'HTTP requests served, by method, route and status', labelNames: ['method', 'route', 'status'], buckets: HTTP_BUCKETS, registers })
    this.actorRestarts = new Counter({ name: `${p}actor_restarts_total`, help: 'Actor crashes answered with a restart, by actor', labelNames: ['actor'], registers })
    this.peerDisconnects = new Counter({ name: `${p}peer_disconnects_total`, help: 'Peer connections this node closed, by reason', labelNames: ['reason'], registers })
    this.reclaimedFiles = new Counter({ name: `${p}disk_reclaimed_files_total`, help: 'Files the disk sweep deleted (nothing referenced them), by kind', labelNames: ['kind'], registers })
    this.reclaimedBytes = new Counter({ name: `${p}disk_reclaimed_bytes_total`, help: 'Bytes on disk the files the disk sweep deleted held, by kind', labelNames: ['kind'], registers })
    const sources = (): MetricsSources => this.#sources
    // eslint-disable-next-line no-new
    new Gauge({
      name: `${p}peers`, help: 'Peers in this node\'s membership view, by role', labelNames: ['peer_role'], registers,
      async collect () {
        const counts = await sources().peers?.() ?? {}
        for (const [role, n] of Object.entries(counts)) this.set({ peer_role: role }, n)
      }
    })
    // eslint-disable-next-line no-new
    new Gauge({
      name: `${p}mailbox_depth`, help: 'Messages waiting in each actor\'s mailbox', labelNames: ['actor'], registers,
      collect () {
        this.reset()
        for (const [actor, n] of Object.entries(sources().mailboxes?.() ?? {})) this.set({ actor }, n)
      }
    })
    // eslint-disable-next-line no-new
    new Gauge({
      name: `${p}frames_waiting`, help: 'Frames this node holds back to stay inside its peers\' frame budgets', registers,
      collect () { this.set(sources().framesWaiting?.() ?? 0) }
    })
    if (opts.defaults !== false) collectDefaultMetrics({ register: this.registry, prefix: p })
  }

  /** Installs the readers of scrape-time gauges (once the node has them). */
  setSources (sources: MetricsSources): void { this.#sources = { ...this.#sources, ...sources } }

  /** The Prometheus text exposition. */
  text (): Promise<string> { return this.registry.metrics() }

  get contentType (): string { return this.registry.contentType }
}

/** One series of a `SeriesHistogram`: its labels and counts. */
export interface HistogramSeries {
  observe (value: number): void
}

interface SeriesState<L extends string> extends HistogramSeries {
  readonly labels: Readonly<Record<L, string>>
  /** Observations per bucket (not cumulative); the last entry is above every bound. */
  readonly counts: Float64Array
  sum: number
  count: number
}

/**
 * A histogram for a hot path (every HTTP request): `series(labels)` is looked up once by the caller and
 * kept, and its `observe` only adds to counts. prom-client's labelled child validates and hashes the
 * labels and turns the bucket bound into a property name on every observe (about 1 µs, measured:
 * docs/benchmarks.md#telemetry). Registered in a prom-client registry like its own metrics and exposed
 * in exactly prom-client's format (test/node/metrics.test.ts holds the two texts equal; series are
 * written in the order they were first observed, and after a reset they keep that order). It is a
 * histogram for exposition only: what a registry's `getSingleMetric` returns for it has no prom-client
 * methods beyond `get` and `reset`.
 */
export class SeriesHistogram<L extends string> {
  readonly name: string
  readonly help: string
  readonly type = 'histogram' as const
  readonly aggregator = 'sum' as const
  readonly labelNames: readonly L[]
  readonly #bounds: readonly number[]
  readonly #series = new Map<string, SeriesState<L>>()

  constructor (opts: { name: string, help: string, labelNames: readonly L[], buckets: readonly number[], registers?: Registry[] }) {
    this.name = opts.name
    this.help = opts.help
    this.labelNames = opts.labelNames
    if (this.labelNames.includes('le' as L)) throw new Error('le is a reserved label name')
    this.#bounds = [...opts.buckets].sort((a, b) => a - b)
    for (const r of opts.registers ?? []) r.registerMetric(this as unknown as Metric)
  }

  /** The series of `labels` (every label name given): the same one for the same labels. */
  series (labels: Readonly<Record<L, string>>): HistogramSeries {
    for (const n of Object.keys(labels)) if (!this.labelNames.includes(n as L)) throw new Error(`${this.name}: unknown label ${n}`)
    const values = this.labelNames.map(n => {
      const v = labels[n]
      if (typeof v !== 'string') throw new Error(`${this.name}: label ${n} missing`)
      return v
    })
    const key = JSON.stringify(values)
    let s = this.#series.get(key)
    if (s === undefined) {
      const bounds = this.#bounds
      const state: SeriesState<L> = {
        labels: Object.fromEntries(this.labelNames.map((n, i) => [n, values[i]])) as Record<L, string>,
        counts: new Float64Array(bounds.length + 1),
        sum: 0,
        count: 0,
        observe (value: number): void {
          if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`)
          let i = 0
          while (i < bounds.length && value > bounds[i]!) i++
          state.counts[i]!++
          state.sum += value
          state.count++
        }
      }
      s = state
      this.#series.set(key, s)
    }
    return s
  }

  /** Zeroes every series (prom-client's reset forgets them; a zeroed series is not exposed until observed again). */
  reset (): void {
    for (const s of this.#series.values()) { s.counts.fill(0); s.sum = 0; s.count = 0 }
  }

  /** What a prom-client registry writes as text: bucket lines with `le` and the series' labels shared. */
  async getForPromString (): Promise<{ name: string, help: string, type: 'histogram', aggregator: 'sum', values: Array<{ value: number, metricName: string, exemplar: null | undefined, labels: Record<string, string | number>, sharedLabels: Record<string, string> }> }> {
    const values = []
    for (const s of this.#series.values()) {
      if (s.count === 0) continue
      let acc = 0
      for (let i = 0; i < this.#bounds.length; i++) {
        acc += s.counts[i]!
        values.push({ value: acc, metricName: `${this.name}_bucket`, exemplar: null, labels: { le: this.#bounds[i]! } as Record<string, string | number>, sharedLabels: s.labels })
      }
      values.push({ value: s.count, metricName: `${this.name}_bucket`, exemplar: null, labels: { le: '+Inf' }, sharedLabels: s.labels })
      values.push({ value: s.sum, metricName: `${this.name}_sum`, exemplar: undefined, labels: {}, sharedLabels: s.labels })
      values.push({ value: s.count, metricName: `${this.name}_count`, exemplar: undefined, labels: {}, sharedLabels: s.labels })
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values }
  }

  /** The registry's JSON form (getMetricsAsJSON): each value's labels with the series' labels merged in. */
  async get (): Promise<{ name: string, help: string, type: 'histogram', aggregator: 'sum', values: Array<{ value: number, metricName: string, exemplar: null | undefined, labels: Record<string, string | number> }> }> {
    const data = await this.getForPromString()
    return { ...data, values: data.values.map(({ sharedLabels, labels, ...v }) => ({ ...v, labels: { ...labels, ...sharedLabels } })) }
  }
}
