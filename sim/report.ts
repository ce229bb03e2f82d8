// Run outputs: metrics.json (the numbers, byte-identical for the same scenario and seed) and
// report.html, one self-contained page with inline SVG charts (no scripts, fonts or network).
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { SimMetrics, EpochMetrics, OrchestratorEpochRow } from './run.ts'
import { niceTicks, tickLabel } from './chart.ts'

const W = 720 // chart width, px
const H = 240 // chart height, px
const PAD = { left: 56, right: 150, top: 16, bottom: 36 }
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf']
const ROLE_COLORS: Record<OrchestratorEpochRow['role'], string> = {
  honest: '#1f77b4', 'corrupting-workers': '#d62728', 'stalling-workers': '#ff7f0e', dropping: '#9467bd', sybil: '#8c564b', seller: '#e377c2'
}
/** Orchestrators drawn one by one in the weight chart; the rest are summed as "others". */
export const TOP_ORCHESTRATORS = 8

export interface Series { name: string, color: string, values: number[] }

const esc = (s: string): string => s.replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
const fmt = (x: number): string => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toFixed(3))

/** A line chart (or stacked areas) over the epochs' end times, as an SVG element. */
export function svgChart (title: string, xs: number[], series: Series[], opts: { yLabel: string, stacked?: boolean, yMax?: number, integer?: boolean } = { yLabel: '' }): string {
  const innerW = W - PAD.left - PAD.right
  const innerH = H - PAD.top - PAD.bottom
  const xAxis = niceTicks(0, Math.max(0, ...xs))
  const xMax = xAxis.high
  const stacks = series.map(() => xs.map(() => 0))
  if (opts.stacked === true) {
    series.forEach((s, k) => xs.forEach((_, i) => { stacks[k]![i] = (k > 0 ? stacks[k - 1]![i]! : 0) + (s.values[i] ?? 0) }))
  }
  const tops = opts.stacked === true ? stacks : series.map(s => s.values)
  const yAxis = niceTicks(0, opts.yMax ?? Math.max(0, ...tops.flat().filter(Number.isFinite)), 4, { integer: opts.integer })
  const yMax = yAxis.high
  const px = (x: number): number => PAD.left + (x / xMax) * innerW
  const py = (y: number): number => PAD.top + innerH - (Math.min(y, yMax) / yMax) * innerH
  const parts: string[] = []
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}">`)
  parts.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#fff"/>`)
  for (const y of yAxis.ticks) {
    parts.push(`<line x1="${PAD.left}" x2="${PAD.left + innerW}" y1="${py(y).toFixed(1)}" y2="${py(y).toFixed(1)}" stroke="#e5e5e5"/>`)
    parts.push(`<text x="${PAD.left - 6}" y="${(py(y) + 4).toFixed(1)}" font-size="10" text-anchor="end" fill="#555">${tickLabel(y, yAxis.step)}</text>`)
  }
  for (const x of xAxis.ticks) {
    parts.push(`<text x="${px(x).toFixed(1)}" y="${H - PAD.bottom + 14}" font-size="10" text-anchor="middle" fill="#555">${tickLabel(x, xAxis.step)} h</text>`)
  }
  parts.push(`<text x="12" y="${PAD.top + innerH / 2}" font-size="10" fill="#555" transform="rotate(-90 12 ${PAD.top + innerH / 2})" text-anchor="middle">${esc(opts.yLabel)}</text>`)
  series.forEach((s, k) => {
    const top = tops[k]!
    const pts = xs.map((x, i) => `${px(x).toFixed(1)},${py(top[i] ?? 0).toFixed(1)}`)
    if (opts.stacked === true) {
      const base = k > 0 ? stacks[k - 1]! : xs.map(() => 0)
      const back = xs.map((x, i) => `${px(x).toFixed(1)},${py(base[i] ?? 0).toFixed(1)}`).reverse()
      parts.push(`<polygon points="${[...pts, ...back].join(' ')}" fill="${s.color}" fill-opacity="0.75" stroke="${s.color}"><title>${esc(s.name)}</title></polygon>`)
    } else {
      parts.push(`<polyline points="${pts.join(' ')}" fill="none" stroke="${s.color}" stroke-width="2"><title>${esc(s.name)}</title></polyline>`)
      xs.forEach((x, i) => parts.push(`<circle cx="${px(x).toFixed(1)}" cy="${py(top[i] ?? 0).toFixed(1)}" r="2.5" fill="${s.color}"/>`))
    }
    parts.push(`<rect x="${W - PAD.right + 12}" y="${PAD.top + k * 16}" width="10" height="10" fill="${s.color}"/>`)
    parts.push(`<text x="${W - PAD.right + 26}" y="${PAD.top + k * 16 + 9}" font-size="11" fill="#222">${esc(s.name)}</text>`)
  })
  parts.push('</svg>')
  return `<figure><figcaption>${esc(title)}</figcaption>${parts.join('')}</figure>`
}

const roleShares = (epochs: EpochMetrics[], pick: (r: OrchestratorEpochRow) => number): Series[] => {
  const roles = [...new Set(epochs.flatMap(e => e.orchestrators.map(o => o.role)))].sort()
  return roles.map(role => ({ name: role, color: ROLE_COLORS[role], values: epochs.map(e => e.orchestrators.filter(o => o.role === role).reduce((a, o) => a + pick(o), 0)) }))
}

export function renderReport (full: SimMetrics): string {
  // Charts show the workload's epochs; the drain (transfers in flight finishing after the last arrival,
  // often a short last epoch) is summed apart so its rate does not dwarf the epochs'.
  const drain = full.epochs.filter(e => e.phase === 'drain')
  const m = { ...full, epochs: full.epochs.filter(e => e.phase !== 'drain') }
  const xs = m.epochs.map(e => e.endHours)
  const reliability = m.epochs.map(e => {
    const settled = e.tasks.verified + e.tasks.failed + e.tasks.integrityMismatch
    return settled > 0 ? e.tasks.verified / settled : 0
  })
  const totalWeight = new Map<string, number>()
  for (const e of m.epochs) for (const o of e.orchestrators) totalWeight.set(o.id, (totalWeight.get(o.id) ?? 0) + o.weight)
  const top = [...totalWeight].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, TOP_ORCHESTRATORS).map(([id]) => id)
  const weightSeries: Series[] = top.map((id, k) => ({ name: id, color: PALETTE[k % PALETTE.length]!, values: m.epochs.map(e => e.orchestrators.find(o => o.id === id)?.weight ?? 0) }))
  weightSeries.push({ name: 'others', color: '#cccccc', values: m.epochs.map(e => e.orchestrators.filter(o => !top.includes(o.id)).reduce((a, o) => a + o.weight, 0)) })
  const penalized = m.epochs.map(e => e.orchestrators.filter(o => o.penaltyMultiplier < 1).length)

  const charts = [
    svgChart('Verified throughput per epoch', xs, [{ name: 'verified Mbps', color: PALETTE[0]!, values: m.epochs.map(e => e.throughput.verifiedMbps) }], { yLabel: 'Mbps' }),
    svgChart('Reliability per epoch', xs, [
      { name: 'verified / settled', color: PALETTE[2]!, values: reliability }
    ], { yLabel: 'share', yMax: 1 }),
    svgChart('Reassignments and failures per epoch', xs, [
      { name: 'reassignments', color: PALETTE[3]!, values: m.epochs.map(e => e.tasks.reassignments) },
      { name: 'failed attempts', color: PALETTE[7]!, values: m.epochs.map(e => e.tasks.failed) },
      { name: 'integrity mismatches', color: PALETTE[1]!, values: m.epochs.map(e => e.tasks.integrityMismatch) }
    ], { yLabel: 'tasks', integer: true }),
    svgChart('Weight shares per epoch (top orchestrators)', xs, weightSeries, { yLabel: 'weight', stacked: true, yMax: 1 }),
    svgChart('Weight share by orchestrator role', xs, roleShares(m.epochs, o => o.weight), { yLabel: 'weight', yMax: 1 }),
    svgChart('Routing share by orchestrator role (chunks offered)', xs, roleShares(m.epochs, o => o.routingShare), { yLabel: 'share', yMax: 1 }),
    ...(m.epochs.some(e => e.orchestrators.some(o => o.role === 'seller'))
      ? [svgChart('Sell pressure: weight of the selling orchestrators', xs, [
          { name: 'served (before)', color: PALETTE[7]!, values: m.epochs.map(e => e.orchestrators.filter(o => o.role === 'seller').reduce((a, o) => a + o.servedWeight, 0)) },
          { name: 'set on chain', color: ROLE_COLORS.seller, values: m.epochs.map(e => e.orchestrators.filter(o => o.role === 'seller').reduce((a, o) => a + o.weight, 0)) },
          { name: 'mean multiplier', color: PALETTE[2]!, values: m.epochs.map(e => { const s = e.orchestrators.filter(o => o.role === 'seller'); return s.reduce((a, o) => a + o.sellMultiplier, 0) / Math.max(1, s.length) }) }
        ], { yLabel: 'weight / multiplier', yMax: 1 })]
      : []),
    ...(m.epochs.some(e => e.orchestrators.some(o => o.outageHours > 0))
      ? [svgChart('Orchestrator outages', xs, [
          { name: 'orchestrators down', color: PALETTE[1]!, values: m.epochs.map(e => e.orchestrators.filter(o => o.outageHours > 0).length) },
          { name: 'outage hours', color: PALETTE[3]!, values: m.epochs.map(e => e.orchestrators.reduce((a, o) => a + o.outageHours, 0)) }
        ], { yLabel: 'count / hours' })]
      : []),
    svgChart('Penalties per epoch', xs, [
      { name: 'penalties issued', color: PALETTE[1]!, values: m.epochs.map(e => e.penaltiesIssued) },
      { name: 'penalized orchestrators', color: PALETTE[4]!, values: penalized }
    ], { yLabel: 'count', integer: true })
  ]
  const drainSpan = drain.reduce((a, e) => a + e.endHours - e.startHours, 0)
  const drainBytes = drain.reduce((a, e) => a + e.throughput.verifiedBytes, 0)
  const drainText = drain.length === 0
    ? '<p>No drain: every transfer had ended when the workload did.</p>'
    : `<p>After the last arrival (${fmt(full.durationHours)} h) the network ran ${fmt(drainSpan)} h more to finish transfers in flight, over ${drain.length} epoch${drain.length > 1 ? 's' : ''}: ` +
      `${drain.reduce((a, e) => a + e.tasks.verified, 0)} tasks verified (${(drainBytes / 2 ** 30).toFixed(1)} GiB), ${drain.reduce((a, e) => a + e.transfers.completed, 0)} transfers completed, ` +
      `${drain.reduce((a, e) => a + e.tasks.reassignments, 0)} reassignments. Its epochs are in metrics.json (<code>phase: "drain"</code>) and not in the charts.</p>`
  const last = full.epochs[full.epochs.length - 1]
  const rows = last === undefined ? [] : [...last.orchestrators].sort((a, b) => b.weight - a.weight || (a.id < b.id ? -1 : 1))
  const shown = rows.filter((r, i) => i < 20 || r.role !== 'honest')
  const table = `<table><thead><tr><th>orchestrator</th><th>role</th><th>weight</th><th>PRISM</th><th>routing score</th><th>reliability</th><th>penalty ×</th><th>verified MiB</th><th>routing share</th></tr></thead><tbody>${shown.map(r =>
    `<tr><td>${esc(r.id)}</td><td>${esc(r.role)}</td><td>${fmt(r.weight)}</td><td>${fmt(r.prismFinal)}</td><td>${fmt(r.routingScore)}</td><td>${fmt(r.reliabilityScore)}</td><td>${fmt(r.penaltyMultiplier)}</td><td>${r.verifiedMib}</td><td>${fmt(r.routingShare)}</td></tr>`).join('')}</tbody></table>`
  const inv = `<ul class="inv">${m.invariants.map(i => `<li class="${i.ok ? 'ok' : 'bad'}"><b>${i.ok ? 'OK' : 'FAILED'}</b> ${esc(i.name)}: ${esc(i.detail)}</li>`).join('')}</ul>`
  const t = m.totals
  const v = m.validators
  // Which code path scored the run: the validator's own actors, or the formulas called directly.
  const validatorsText = v === undefined
    ? '<p>PRISM and weights from the formulas called directly; the coordinators\' destination checks are the verdicts.</p>'
    : `<p>PRISM and weights from the validator's own verifier and epoch actors (${v.count} validator, sample rate ${fmt(v.sampleRate)}): ${v.verifyRequests} deliveries asked about, ${v.readBacks} read back (${v.coordinatorChecks} checked by the coordinators themselves), ${v.verified} verified, ${v.mismatches} mismatched; ${v.workerPenalties} integrity penalties on ${v.workersPenalized} workers (${v.honestWorkersPenalized} of them honest). Weights of an epoch are published at the next close.</p>`
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bwnet sim: ${esc(m.scenario)}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}figure{margin:16px 0}figcaption{font-weight:600;margin-bottom:4px}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:3px 6px;text-align:right}td:first-child,td:nth-child(2){text-align:left}
.inv li.ok b{color:#2a7a2a}.inv li.bad b{color:#b00}code{background:#f3f3f3;padding:1px 4px}</style></head>
<body><h1>Simulation: ${esc(full.scenario)}</h1>
<p>Seed <code>${m.seed}</code>, start ${esc(m.startIso)}, ${fmt(m.simulatedHours)} simulated hours (${m.durationHours} h of workload), ${m.nodes.orchestrators} orchestrators, ${m.nodes.workers} workers.
${t.transfers} transfers (${t.transfersCompleted} completed, ${t.transfersFailed} failed), ${t.tasks} tasks, ${t.attempts} attempts, ${t.reassignments} reassignments, ${t.integrityMismatches} integrity mismatches, ${(t.verifiedBytes / 2 ** 30).toFixed(1)} GiB verified.</p>
${validatorsText}
<h2>Invariants</h2>${inv}
<h2>Charts (workload epochs)</h2>${charts.join('\n')}
<h2>Drain</h2>${drainText}
<h2>Orchestrators in the last epoch</h2>${table}
</body></html>
`
}

/** Writes metrics.json and report.html into `dir` (created if missing); returns their paths. */
export async function writeOutputs (dir: string, m: SimMetrics): Promise<{ metrics: string, report: string }> {
  await mkdir(dir, { recursive: true })
  const metrics = join(dir, 'metrics.json')
  const report = join(dir, 'report.html')
  await writeFile(metrics, JSON.stringify(m, null, 2) + '\n')
  await writeFile(report, renderReport(m))
  return { metrics, report }
}
