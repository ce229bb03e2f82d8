// The netns lab's transfer as a simulator scenario (bench/net/sim-compare.ts): valid, shaped like the
// lab (one orchestrator, its workers' slots, the CLI's upload, one validator reading every delivery
// back), and its prediction bounded by the links it is given.
import t from 'tap'
import { labScenario, simulateLab, LAB_SLOTS } from '../../bench/net/sim-compare.ts'
import { parseScenario } from '../../sim/scenario.ts'
import { DEFAULT_PARALLEL } from '../../node/commands/transfer/shared.ts'


t.test('the scenario is valid and says what the lab runs', async t => {
  const s = labScenario({ workers: 4, workerLinkMbit: 89.8, edgeLinkMbit: 933, sizeMib: 512 })
  t.same(parseScenario(JSON.parse(JSON.stringify(s)), 'lab'), s, 'it passes the scenario schema unchanged')
  t.equal(s.orchestrators.count, 1)
  t.equal(s.orchestrators.workersPerOrchestrator, 4)
  t.equal(s.workers.slots, LAB_SLOTS)
  t.same(s.workers.bandwidthMbps, { kind: 'constant', value: 89.8 })
  t.same(s.workload, { transfers: 1, sizeMiB: { kind: 'constant', value: 512 }, arrival: 'uniform', uploadMbps: { kind: 'constant', value: 933 }, uploadParallel: DEFAULT_PARALLEL })
  t.same(s.validators, { count: 1, sampleRate: 1, latencyMs: 1 })
  t.same(s.epoch, { blocks: 10, blockTimeMs: 1000 }, "the lab orchestrator's epochs")
})

const MIB_BITS = 1024 * 1024 * 8 / 1e6 // Mbit in a MiB

t.test('the prediction is never above what the links carry, and above it only by the pipeline fill and drain', async t => {
  for (const [workers, link, edge, sizeMib] of [[1, 90, 930, 128], [2, 9.6, 930, 64], [4, 90, 930, 512], [8, 100, 300, 256]] as const) {
    const r = await simulateLab({ workers, workerLinkMbit: link, edgeLinkMbit: edge, sizeMib })
    const ideal = sizeMib * MIB_BITS / Math.min(workers * link, edge) // s, every link busy from the first byte to the last
    // Fill: the first four chunks (16 MiB each) come up together before any worker has a byte. Drain: the
    // last chunk of a worker's share moves after the upload ends; at most one chunk at the worker's link.
    const slack = 4 * 16 * MIB_BITS / edge + 16 * MIB_BITS / link + 0.5
    t.ok(r.seconds >= ideal, `${workers} × ${link} Mbit/s, client ${edge}: ${r.seconds.toFixed(2)} s ≥ ${ideal.toFixed(2)} s at the links' rate`)
    t.ok(r.seconds <= ideal + slack, `${workers} × ${link} Mbit/s, client ${edge}: ${r.seconds.toFixed(2)} s ≤ ${(ideal + slack).toFixed(2)} s with the fill and the drain`)
    t.equal(r.reassignments, 0, 'no work taken back from a steady link')
  }
})
