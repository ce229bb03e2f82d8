// Axis helpers shared by the simulator's reports (inline SVG, no scripts): "nice" tick values (1, 2, 5
// × 10^k steps) and labels with as many decimals as the step needs, so an axis never reads 0.000 five
// times and a count axis shows whole numbers.

/** Ticks from 0 (or the data's minimum when negative) to at least `max`, about `count` of them. */
export function niceTicks (min: number, max: number, count = 4, opts: { integer?: boolean } = {}): { ticks: number[], step: number, low: number, high: number } {
  let lo = Math.min(0, Number.isFinite(min) ? min : 0)
  let hi = Number.isFinite(max) ? max : 1
  if (hi <= lo) hi = lo + (opts.integer === true ? Math.max(1, count) : 1)
  const raw = (hi - lo) / Math.max(1, count)
  const mag = 10 ** Math.floor(Math.log10(raw))
  let step = [1, 2, 2.5, 5, 10].map(f => f * mag).find(s => s >= raw) ?? 10 * mag
  if (opts.integer === true) step = Math.max(1, Math.ceil(step))
  lo = Math.floor(lo / step) * step
  hi = Math.ceil(hi / step) * step
  const ticks: number[] = []
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push(Number(v.toPrecision(12)))
  return { ticks, step, low: lo, high: hi }
}

/** A tick label: the decimals the step needs (0.25 → 2, 5 → 0), thousands separated. */
export function tickLabel (v: number, step: number): string {
  let d = Math.min(15, Math.max(0, -Math.floor(Math.log10(step))))
  while (d < 15 && Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) > 1e-9) d++
  return v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d })
}
