import t from 'tap'
import { join } from 'node:path'
import { loadScenario, runSimulation, renderReport } from '../../sim/index.ts'
import { assertInvariants } from '../helpers/sim.ts'

t.test('corrupting fleets are penalized to zero weight; a dropping orchestrator loses its routing share', async t => {
  const scenario = await loadScenario(join(import.meta.dirname, '../../sim/scenarios/adversarial.json'))
  const m = await runSimulation(scenario)
  assertInvariants(t, m)
  t.ok(m.totals.integrityMismatches > 0, 'corrupt deliveries were caught')
  const first = m.epochs[0]!
  const later = m.epochs.slice(1)
  const corrupt = first.orchestrators.filter(o => o.role === 'corrupting-workers')
  t.equal(corrupt.length, 2, '10% of 200 workers fill two orchestrators')
  for (const o of corrupt) {
    t.ok(o.routedChunks > 0, `${o.id} received work before it was caught`)
    t.ok(o.activePenalties.integrity_chunk_mismatch > 0, `${o.id} penalized`)
    t.equal(o.penaltyMultiplier, 0, `${o.id} penalty multiplier 0`)
    for (const e of m.epochs) t.equal(e.orchestrators.find(r => r.id === o.id)!.weight, 0, `${o.id} weight 0 in epoch ${e.epoch}`)
  }
  const dropping = first.orchestrators.find(o => o.role === 'dropping')!
  t.ok(dropping.routingShare > 0, 'the dropping orchestrator had a routing share at first')
  t.equal(dropping.routingScore, 0, 'its PRISM routing score fell to 0')
  for (const e of later) t.equal(e.orchestrators.find(r => r.id === dropping.id)!.routingShare, 0, `no routing share in epoch ${e.epoch}`)
  t.ok(m.totals.reassignments > 0, 'its stalled work was reassigned')
  const honest = m.epochs[m.epochs.length - 1]!.orchestrators.filter(o => o.role === 'honest')
  t.ok(Math.abs(honest.reduce((a, o) => a + o.weight, 0) - 1) < 1e-9, 'honest orchestrators hold all the weight')
  const html = renderReport(m)
  for (const title of ['Verified throughput per epoch', 'Reliability per epoch', 'Weight shares per epoch', 'Routing share by orchestrator role', 'Penalties per epoch']) t.match(html, title)
  t.match(html, /<svg[^>]*>/)
  t.match(html, 'corrupting-workers')
  t.match(html, 'dropping')
  t.notMatch(html, /<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/, 'no scripts or external assets')
})
