// The sweep's report.html: one self-contained page (inline SVG, no scripts, fonts or network). Per
// summary field, a chart over the first parameter's values: one line per combination of the other
// parameters, the mean over seeds with its 95% confidence band (clipped to the field's range); then a
// table of every grid point (scrolling sideways within the page when it is wider).
import { niceTicks, tickLabel } from './chart.ts'
import type { SweepResult, RunSummary, Band } from './sweep.ts'

const W = 560
const H = 260
const PAD = { left: 64, right: 170, top: 16, bottom: 40 }
const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf']

/** Summary fields charted, with their axis labels. */
export const SWEEP_CHARTS: Array<{ field: keyof RunSummary, title: string, integer?: boolean }> = [
  { field: 'honestWeightShare', title: 'weight share of honest orchestrators' },
  { field: 'weightPerHonestOrchestrator', title: 'mean weight of one honest orchestrator' },
  { field: 'adversarialWeightShare', title: 'weight share of adversarial orchestrators' },
  { field: 'contributingOrchestrators', title: 'orchestrators with weight (last workload epoch)', integer: true },
  { field: 'integrityMismatches', title: 'integrity mismatches', integer: true },
  { field: 'reassignments', title: 'reassignments', integer: true },
  { field: 'verifiedMbps', title: 'verified throughput, Mbps (workload epochs)' },
  { field: 'transfersFailed', title: 'transfers failed', integer: true }
]

const esc = (s: string): string => s.replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v))
const num = (x: number): string => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 1 ? x.toFixed(2) : x.toFixed(4))

function chart (r: SweepResult, field: keyof RunSummary, title: string, integer: boolean): string {
  const [xParam, ...rest] = r.params
  const xValues = xParam?.values ?? [null]
  const numeric = xValues.every(v => typeof v === 'number')
  const xPos = (v: unknown, i: number): number => (numeric ? v as number : i)
  const xs = xValues.map(xPos)
  const xAxis = numeric ? niceTicks(Math.min(...xs), Math.max(...xs)) : { ticks: xs, step: 1, low: 0, high: Math.max(1, xs.length - 1) }
  const key = (params: Record<string, unknown>): string => rest.map(p => `${p.path}=${show(params[p.path])}`).join(' ')
  const groups = new Map<string, Array<{ x: number, b: Band }>>()
  for (const p of r.points) {
    const i = xValues.findIndex(v => JSON.stringify(v) === JSON.stringify(p.params[xParam?.path ?? '']))
    const k = key(p.params)
    if (!groups.has(k)) groups.set(k, [])
    groups.get(k)!.push({ x: xPos(xValues[Math.max(0, i)], Math.max(0, i)), b: p.stats[field]! })
  }
  const all = [...groups.values()].flat()
  const yAxis = niceTicks(Math.min(0, ...all.map(g => g.b.low)), Math.max(0, ...all.map(g => g.b.high)), 4, { integer })
  const innerW = W - PAD.left - PAD.right
  const innerH = H - PAD.top - PAD.bottom
  const px = (x: number): number => PAD.left + ((x - xAxis.low) / Math.max(1e-12, xAxis.high - xAxis.low)) * innerW
  const py = (y: number): number => PAD.top + innerH - ((y - yAxis.low) / Math.max(1e-12, yAxis.high - yAxis.low)) * innerH
  const parts: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}">`, `<rect width="${W}" height="${H}" fill="#fff"/>`]
  for (const y of yAxis.ticks) {
    parts.push(`<line x1="${PAD.left}" x2="${PAD.left + innerW}" y1="${py(y).toFixed(1)}" y2="${py(y).toFixed(1)}" stroke="#e5e5e5"/>`)
    parts.push(`<text x="${PAD.left - 6}" y="${(py(y) + 4).toFixed(1)}" font-size="10" text-anchor="end" fill="#555">${tickLabel(y, yAxis.step)}</text>`)
  }
  xAxis.ticks.forEach((x, i) => {
    const label = numeric ? tickLabel(x, xAxis.step) : show(xValues[i])
    parts.push(`<text x="${px(x).toFixed(1)}" y="${H - PAD.bottom + 14}" font-size="10" text-anchor="middle" fill="#555">${esc(label)}</text>`)
  })
  parts.push(`<text x="${PAD.left + innerW / 2}" y="${H - 6}" font-size="11" text-anchor="middle" fill="#222">${esc(xParam?.path ?? '')}</text>`)
  let k = 0
  for (const [name, pts] of groups) {
    const color = PALETTE[k % PALETTE.length]!
    pts.sort((a, b) => a.x - b.x)
    const upper = pts.map(p => `${px(p.x).toFixed(1)},${py(p.b.high).toFixed(1)}`)
    const lower = pts.map(p => `${px(p.x).toFixed(1)},${py(p.b.low).toFixed(1)}`).reverse()
    parts.push(`<polygon points="${[...upper, ...lower].join(' ')}" fill="${color}" fill-opacity="0.18" stroke="none"><title>95% confidence band</title></polygon>`)
    parts.push(`<polyline points="${pts.map(p => `${px(p.x).toFixed(1)},${py(p.b.mean).toFixed(1)}`).join(' ')}" fill="none" stroke="${color}" stroke-width="2"/>`)
    for (const p of pts) parts.push(`<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.b.mean).toFixed(1)}" r="3" fill="${color}"><title>${esc(`${num(p.b.mean)} (95% CI ${num(p.b.low)} .. ${num(p.b.high)}, n=${p.b.n})`)}</title></circle>`)
    parts.push(`<rect x="${W - PAD.right + 12}" y="${PAD.top + k * 16}" width="10" height="10" fill="${color}"/>`)
    parts.push(`<text x="${W - PAD.right + 26}" y="${PAD.top + k * 16 + 9}" font-size="11" fill="#222">${esc(name || 'mean, 95% band')}</text>`)
    k++
  }
  parts.push('</svg>')
  return `<figure><figcaption>${esc(title)}</figcaption>${parts.join('')}</figure>`
}

export function renderSweepReport (r: SweepResult): string {
  const charts = SWEEP_CHARTS.map(c => chart(r, c.field, c.title, c.integer === true))
  const head = `<tr>${r.params.map(p => `<th>${esc(p.path)}</th>`).join('')}${SWEEP_CHARTS.map(c => `<th>${esc(c.field)}</th>`).join('')}<th>invariants ok</th></tr>`
  const rows = r.points.map(p => `<tr>${r.params.map(q => `<td>${esc(show(p.params[q.path]))}</td>`).join('')}${SWEEP_CHARTS.map(c => {
    const b = p.stats[c.field]!
    return `<td>${num(b.mean)}${b.high > b.low ? ` <small>${num(b.low)}–${num(b.high)}</small>` : ''}</td>`
  }).join('')}<td>${r.runs.filter(x => x.point === p.point && x.summary.invariantsOk).length}/${r.runs.filter(x => x.point === p.point).length}</td></tr>`).join('')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bwnet sim sweep: ${esc(r.scenario)}</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}figure{display:inline-block;margin:8px}figcaption{font-weight:600;margin-bottom:4px}
.scroll{overflow-x:auto;max-width:100%}table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:3px 6px;text-align:right;white-space:nowrap}th{white-space:normal;word-break:break-word;min-width:5em;vertical-align:bottom}small{color:#777}code{background:#f3f3f3;padding:1px 4px}</style></head>
<body><h1>Sweep: ${esc(r.scenario)}</h1>
<p>${r.points.length} grid points × ${r.seeds.length} seeds (${r.seeds.join(', ')}) = ${r.runs.length} runs. Parameters: ${r.params.map(p => `<code>${esc(p.path)}</code> = ${esc(p.values.map(show).join(', '))}`).join('; ')}.
Lines are means over the seeds; bands (and the table's low–high) are 95% confidence intervals of the mean (Student t), clipped to what the quantity can be (counts not below 0, shares within 0..1). Weights and throughput are over the workload's epochs (the drain is left out).</p>
${charts.join('\n')}
<h2>Grid points</h2><div class="scroll"><table><thead>${head}</thead><tbody>${rows}</tbody></table></div>
</body></html>
`
}
