import t from 'tap'
import {
  computePrism, decayWeight, decayedThroughput, rawReliability, successRate, fleetNormalize, performanceScore,
  activeTimeRatio, activePenaltyCounts, penaltyMultiplier, confidenceScore, nextPool,
  DEFAULT_PRISM_CONFIG, HOUR_MS, DAY_MS, type PrismOrchestratorInput
} from '../../../actors/domain/index.ts'

const now = 1_800_000_000_000
const close = (t: { ok: (v: boolean, m: string) => unknown }, a: number, b: number, msg?: string): void => { t.ok(Math.abs(a - b) < 1e-9, `${msg ?? ''} ${a} ≈ ${b}`) }

t.test('decay: half-life 1 h, nothing outside the window or in the future', async t => {
  t.equal(decayWeight(0, 1), 1)
  t.equal(decayWeight(HOUR_MS, 1), 0.5)
  t.equal(decayWeight(3 * HOUR_MS, 1), 0.125)
  t.equal(decayWeight(-1, 1), 0)
  t.equal(decayWeight(2 * DAY_MS, 1, DAY_MS), 0)
})

t.test('throughput: decay-weighted mean by task count', async t => {
  // 100 Mbps now (w 1), 400 Mbps 1 h ago (w 0.5) → (100 + 200) / 1.5 = 200
  close(t, decayedThroughput([{ atMs: now, mbps: 100 }, { atMs: now - HOUR_MS, mbps: 400 }], now), 200)
  // tasks weight the sample: 2 tasks at 100, 1 at 400 same time → 200
  close(t, decayedThroughput([{ atMs: now, mbps: 100, tasks: 2 }, { atMs: now, mbps: 400 }], now), 200)
  t.equal(decayedThroughput([], now), 0)
  t.equal(decayedThroughput([{ atMs: now - 2 * DAY_MS, mbps: 100 }], now), 0)
})

t.test('reliability: verified vs max(failed, interventions)', async t => {
  close(t, rawReliability([{ atMs: now, verified: 8, failed: 2, overseerInterventions: 1 }], now), 0.8)
  close(t, rawReliability([{ atMs: now, verified: 6, failed: 1, overseerInterventions: 4 }], now), 0.6)
  // 1 h old failures count half
  close(t, rawReliability([{ atMs: now, verified: 3 }, { atMs: now - HOUR_MS, failed: 2 }], now), 0.75)
  t.equal(rawReliability([], now), 0)
  close(t, successRate([{ atMs: now, verified: 3 }, { atMs: now - HOUR_MS, failed: 1 }], now), 0.75)
})

t.test('fleet normalization into [0.2, 1]', async t => {
  const n = fleetNormalize([10, 20, 30, 0, -1])
  t.same([n[0], n[2], n[3], n[4]], [0.2, 1, 0, 0])
  close(t, n[1], 0.6)
  t.same(fleetNormalize([5]), [0.2], 'lone member')
  t.same(fleetNormalize([7, 7]), [0.2, 0.2], 'all equal')
  t.same(fleetNormalize([0, 0]), [0, 0])
  close(t, performanceScore(1, 0.2), 0.52)
})

t.test('active time ratio from transitions', async t => {
  const day = DAY_MS
  // active from before the window, inactive for the last 6 h → 0.75
  const tr = [{ atMs: now - 2 * day, ready: true, connected: true }, { atMs: now - 6 * HOUR_MS, ready: true, connected: false }]
  close(t, activeTimeRatio(tr, { ready: true, connected: false }, now, day), 0.75)
  // no event before the window: the window starts at the first event (inactive 2 h, then active 2 h) → 0.5
  const inside = [{ atMs: now - 4 * HOUR_MS, ready: false, connected: true }, { atMs: now - 2 * HOUR_MS, ready: true, connected: true }]
  close(t, activeTimeRatio(inside, { ready: true, connected: true }, now, day), 0.5)
  t.equal(activeTimeRatio([], { ready: true, connected: true }, now, day), 1)
  t.equal(activeTimeRatio([], { ready: false, connected: true }, now, day), 0)
  // registration 12 h ago bounds the window
  close(t, activeTimeRatio([{ atMs: now - 2 * day, ready: true, connected: true }, { atMs: now - 6 * HOUR_MS, ready: false, connected: true }], { ready: false, connected: true }, now, day, now - 12 * HOUR_MS), 0.5)
})

t.test('penalties: durations, coefficients, clamp', async t => {
  const f = (h: number) => ({ kind: 'fraud' as const, createdAtMs: now - h * HOUR_MS })
  const c = activePenaltyCounts([f(1), f(167), f(168), { kind: 'sybil', createdAtMs: now - HOUR_MS, revokedAtMs: now - 1 }, { kind: 'integrity_chunk_mismatch', createdAtMs: now - 1000 * HOUR_MS }], now)
  t.same(c, { fraud: 2, integrity_chunk_mismatch: 1, sybil: 0 })
  t.same(penaltyMultiplier({ fraud: 2, integrity_chunk_mismatch: 0, sybil: 0 }), { pressure: 0.2, multiplier: 0.8 })
  t.equal(penaltyMultiplier({ fraud: 10, integrity_chunk_mismatch: 0, sybil: 0 }).multiplier, 0, '10 fraud rows zero it')
  t.equal(penaltyMultiplier({ fraud: 0, integrity_chunk_mismatch: 0, sybil: 2 }).multiplier, 0, '2 sybil rows zero it')
  t.equal(penaltyMultiplier({ fraud: 0, integrity_chunk_mismatch: 1, sybil: 0 }).multiplier, 0)
  t.equal(penaltyMultiplier({ fraud: 0, integrity_chunk_mismatch: 0, sybil: 1 }).multiplier, 0.5)
})

t.test('confidence and graduation', async t => {
  close(t, confidenceScore(120, 1, 1), 1)
  close(t, confidenceScore(60, 1, 1), 0.5)
  close(t, confidenceScore(120, 0.95, 0.5), 0.95 * 0.9)
  close(t, confidenceScore(500, 1, 0), 0.8)
  t.equal(nextPool('qualifying', 0.9), 'qualified')
  t.equal(nextPool('qualifying', 0.89), 'qualifying')
  t.equal(nextPool('qualified', 0), 'qualified', 'sticky')
})

const orch = (id: string, over: Partial<PrismOrchestratorInput> = {}): PrismOrchestratorInput => ({
  id, pool: 'qualified', throughputSamples: [{ atMs: now, mbps: 100 }], outcomes: [{ atMs: now, verified: 10 }],
  ready: true, connected: true, transitions: [], penalties: [], lifetimeVerifiedTasks: 500, ageStartMs: now - 10 * DAY_MS, ...over
})

t.test('computePrism over a fleet', async t => {
  const r = computePrism({
    nowMs: now,
    orchestrators: [
      orch('fast', { throughputSamples: [{ atMs: now, mbps: 300 }] }),
      orch('slow'),
      orch('flaky', { outcomes: [{ atMs: now, verified: 5, failed: 5 }], penalties: [{ kind: 'fraud', createdAtMs: now - HOUR_MS }] }),
      orch('down', { connected: false }),
      orch('new', { pool: 'qualifying', lifetimeVerifiedTasks: 120, ageStartMs: now - 2 * DAY_MS })
    ]
  }, DEFAULT_PRISM_CONFIG)
  const by = Object.fromEntries(r.map(x => [x.id, x]))
  t.equal(by.fast.throughputScore, 1)
  t.equal(by.slow.throughputScore, 0.2)
  t.equal(by.fast.reliabilityScore, 1)
  t.equal(by.flaky.reliabilityScore, 0.2)
  close(t, by.fast.finalScore, 1)
  close(t, by.slow.finalScore, 0.4 * 0.2 + 0.6 * 1)
  close(t, by.flaky.finalScore, (0.4 * 0.2 + 0.6 * 0.2) * 0.9)
  t.equal(by.down.readinessGate, 0)
  t.equal(by.down.finalScore, 0)
  t.equal(by.new.throughputScore, 0.2, 'lone member of its pool')
  t.equal(by.new.nextPool, 'qualified')
  t.ok(by.new.graduated)
  t.equal(by.new.routingOverrideReason, 'transition_pending_empty_qualified_evidence')
  close(t, by.new.routingScore, 0.5)
  t.equal(by.fast.routingScore, by.fast.finalScore)
})
