// Checks on a simulation's result that cannot pass vacuously.
import type { SimMetrics } from '../../sim/index.ts'

/** The invariants every run reports (sim/run.ts). */
export const SIM_INVARIANTS = [
  'every delivered chunk matches',
  'corrupting workers never hold weight',
  'weights of an epoch sum to 1 (or the fallback)',
  'no task lost'
] as const

/**
 * Every invariant was checked (an empty or shorter list fails) and holds; the chunk check looked at
 * every chunk of every completed object (at least one per completed transfer), and at least one epoch closed.
 */
export function assertInvariants (t: { ok (v: unknown, m: string): unknown, same (a: unknown, b: unknown, m: string): unknown }, m: SimMetrics): void {
  t.same(m.invariants.map(i => i.name).sort(), [...SIM_INVARIANTS].sort(), 'every invariant was checked')
  for (const inv of m.invariants) t.ok(inv.ok, `${inv.name}: ${inv.detail}`)
  const chunks = m.invariants.find(i => i.name === 'every delivered chunk matches')
  const checked = Number(/^(\d+) chunks/.exec(chunks?.detail ?? '')?.[1] ?? NaN)
  t.ok(checked >= m.totals.transfersCompleted, `${checked} chunks checked for ${m.totals.transfersCompleted} completed transfers`)
  t.ok(m.epochs.length >= 1, `${m.epochs.length} epochs closed`)
}
