// Readiness in the simulator (sim/scenarios/readiness.json): orchestrators start connected, partitions
// cut two of them off for a while. The validator's window starts at the start of the run (its first
// transition, in its state: connected), so at an epoch close `e` hours in, an orchestrator cut off for
// `d` of those hours has readiness (e − d)/e, and 0 while it is cut off (docs/formulas.md#prism).
import t from 'tap'
import { join } from 'node:path'
import { loadScenario, runSimulation } from '../../sim/index.ts'
import { assertInvariants } from '../helpers/sim.ts'

t.test('readiness is the share of the run an orchestrator was reachable', async t => {
  const scenario = await loadScenario(join(import.meta.dirname, '../../sim/scenarios/readiness.json'))
  const m = await runSimulation(scenario)
  const cuts = new Map<string, Array<[number, number]>>()
  for (const p of scenario.network!.partitions!) {
    for (const i of p.orchestrators) {
      const id = `orch-${String(i).padStart(3, '0')}`
      cuts.set(id, [...(cuts.get(id) ?? []), [p.startHours, p.startHours + p.durationMinutes / 60]])
    }
  }
  t.ok(m.epochs.length >= 6, `${m.epochs.length} epochs`)
  let partial = 0
  for (const e of m.epochs) {
    for (const o of e.orchestrators) {
      const mine = cuts.get(o.id) ?? []
      const cutNow = mine.some(([from, to]) => e.endHours >= from && e.endHours < to)
      const down = mine.reduce((sum, [from, to]) => sum + Math.max(0, Math.min(to, e.endHours) - from), 0)
      const expected = cutNow ? 0 : (e.endHours - down) / e.endHours
      if (expected > 0 && expected < 1) partial++
      t.ok(Math.abs(o.readiness - expected) < 1e-9, `epoch ${e.epoch} (${e.endHours.toFixed(3)} h) ${o.id}: readiness ${o.readiness} ≈ ${expected}`)
    }
  }
  t.ok(partial >= 2, `${partial} closes where a partial share is expected (so the walk is exercised)`)
  assertInvariants(t, m)
})
