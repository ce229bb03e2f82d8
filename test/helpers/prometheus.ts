// A strict reader of the Prometheus text exposition format (0.0.4): every line must be a comment
// (`# HELP name text`, `# TYPE name counter|gauge|histogram|summary|untyped`) or a sample
// `name{label="value",…} value`; anything else throws, so a test that parses /metrics checks its format.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { writeFile, mkdir } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'

export interface Sample { name: string, labels: Record<string, string>, value: number }
export interface Exposition { samples: Sample[], types: Map<string, string> }

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+-?\\d+)?$`)
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y

export function parsePrometheus (text: string): Exposition {
  const samples: Sample[] = []
  const types = new Map<string, string>()
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue
    if (line.startsWith('#')) {
      const m = new RegExp(`^# (HELP|TYPE) (${NAME})(?: (.*))?$`).exec(line)
      if (m === null) throw new Error(`line ${i + 1}: bad comment: ${line}`)
      if (m[1] === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(m[3] ?? '')) throw new Error(`line ${i + 1}: bad type: ${line}`)
        types.set(m[2]!, m[3]!)
      }
      continue
    }
    const m = SAMPLE.exec(line)
    if (m === null) throw new Error(`line ${i + 1}: bad sample: ${line}`)
    const labels: Record<string, string> = {}
    const body = m[2] ?? ''
    LABEL.lastIndex = 0
    while (LABEL.lastIndex < body.length) {
      const at = LABEL.lastIndex
      const l = LABEL.exec(body)
      if (l === null || l.index !== at) throw new Error(`line ${i + 1}: bad labels: ${line}`)
      labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\')
    }
    const raw = m[3]!
    // Prometheus reads values with Go's ParseFloat: NaN and ±Inf in any case.
    const nan = /^nan$/i.test(raw)
    const value = /^\+?inf$/i.test(raw) ? Infinity : /^-inf$/i.test(raw) ? -Infinity : nan ? NaN : Number(raw)
    if (Number.isNaN(value) && !nan) throw new Error(`line ${i + 1}: bad value: ${line}`)
    samples.push({ name: m[1]!, labels, value })
  }
  return { samples, types }
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when none; throws when several. */
export function sample (e: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = e.samples.filter(s => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value
}

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan'])

/**
 * The metric names a PromQL expression reads: its identifiers that are neither functions nor
 * aggregations (followed by `(`), keywords, label names (in `{…}`, `by (…)`, `without (…)`, `on (…)`,
 * `ignoring (…)`, `group_left (…)`), strings, durations (`[5m]`) nor Grafana variables (`$x`).
 */
export function promqlMetricNames (expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ')
  const names = new Set<string>()
  for (const m of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const name = m[0]
    const before = stripped[m.index - 1] ?? ''
    if (/[0-9.]/.test(before)) continue // a number's exponent or unit (1e3, 0.5)
    if (/^\s*\(/.test(stripped.slice(m.index + name.length))) continue // a function or aggregation
    if (PROMQL_WORDS.has(name.toLowerCase())) continue
    names.add(name)
  }
  return [...names]
}

/** Debian's `prometheus` on loopback, scraping `targets` every second; storage in `dir`. */
export interface PrometheusServer { url: string, query (expr: string): Promise<Array<{ metric: Record<string, string>, value: [number, string] }>>, stop (): Promise<void> }

export async function startPrometheus (dir: string, targets: Array<{ url: string, labels: Record<string, string> }>): Promise<PrometheusServer> {
  const port = await new Promise<number>((resolve, reject) => {
    const s = createServer().once('error', reject).listen(0, '127.0.0.1', () => { const p = (s.address() as { port: number }).port; s.close(() => resolve(p)) })
  })
  // One job; a static target per node, labelled with its name. YAML is a superset of JSON.
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    scrape_configs: [{
      job_name: 'bwnet',
      static_configs: targets.map(t => { const u = new URL(t.url); return { targets: [u.host], labels: t.labels } }),
      metrics_path: new URL(targets[0]!.url).pathname
    }]
  }
  await mkdir(join(dir, 'data'), { recursive: true })
  await writeFile(join(dir, 'prometheus.yml'), JSON.stringify(config, null, 2))
  const child = spawn('prometheus', [
    `--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--storage.tsdb.retention.time=1h', '--log.level=warn'
  ], { stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { stderr = (stderr + d).slice(-4000) })
  const exited = once(child, 'exit')
  const url = `http://127.0.0.1:${port}`
  const stop = async (): Promise<void> => { if (child.exitCode === null && child.signalCode === null) { child.kill('SIGTERM'); await exited } }
  return {
    url,
    stop,
    async query (expr) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`)
      const body = await res.json() as { status: string, error?: string, data?: { resultType: string, result: any[] } }
      if (body.status !== 'success') throw new Error(`prometheus query ${expr}: ${body.error ?? res.status}; stderr: ${stderr}`)
      return body.data!.result
    }
  }
}
