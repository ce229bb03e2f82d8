import t from 'tap'
import {
  computePrism, decayWeight, decayedThroughput, rawReliability, successRate, fleetNormalize, performanceScore,
  activeTimeRatio, activePenaltyCounts, penaltyMultiplier, confidenceScore, nextPool,
  hasPositiveEvidence, DEFAULT_PRISM_CONFIG, HOUR_MS, DAY_MS, TRANSITION_PENDING_REASON, type PrismOrchestratorInput
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

// The first transition inside the window sets the state the window starts in (docs/formulas.md#prism:
// "with no event at or before the window start, the window starts at the first event inside it").
t.test('active time ratio: the first transition inside the window counts in its own state', async t => {
  const up = (h: number) => ({ atMs: now - h * HOUR_MS, ready: true, connected: true })
  const down = (h: number) => ({ atMs: now - h * HOUR_MS, ready: true, connected: false })
  // one event, up at now − 11 h, still up: the window is [now − 11 h, now], up throughout → 11/11
  t.equal(activeTimeRatio([up(11)], { ready: true, connected: true }, now, DAY_MS), 1)
  // up −10 h, down −5 h, up −1 h: window 10 h, up 5 h + 1 h → 6/10
  close(t, activeTimeRatio([up(10), down(5), up(1)], { ready: true, connected: true }, now, DAY_MS), 0.6)
  // the same, listed out of order
  close(t, activeTimeRatio([up(1), up(10), down(5)], { ready: true, connected: true }, now, DAY_MS), 0.6)
  // down at −8 h, up at −2 h: window 8 h, up 2 h → 0.25
  close(t, activeTimeRatio([down(8), up(2)], { ready: true, connected: true }, now, DAY_MS), 0.25)
  // an event exactly at the window start counts as the state from the start: up at −24 h, down at −6 h → 18/24
  close(t, activeTimeRatio([up(24), down(6)], { ready: true, connected: false }, now, DAY_MS), 0.75)
  // two events at the same instant: the later one in input order holds (down then up at −4 h) → 1
  t.equal(activeTimeRatio([down(4), up(4)], { ready: true, connected: true }, now, DAY_MS), 1)
  // an event later than now is ignored; one event at exactly now leaves no window → current state
  t.equal(activeTimeRatio([up(3), { ...down(0), atMs: now + HOUR_MS }], { ready: true, connected: true }, now, DAY_MS), 1)
  t.equal(activeTimeRatio([up(0)], { ready: false, connected: true }, now, DAY_MS), 0)
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
  t.equal(by.new.routingOverrideReason, 'transition_pending_empty_qualified_task_evidence')
  close(t, by.new.routingScore, 0.5)
  t.equal(by.fast.routingScore, by.fast.finalScore)
})

t.test('computePrism: an orchestrator up since its first transition keeps its score', async t => {
  // Registered 12 h ago, up at now − 11 h and still up: window [now − 11 h, now] all up → ratio 1.
  // Lone member of its pool: throughput 0.2, reliability 0.2 → performance 0.4·0.2 + 0.6·0.2 = 0.2;
  // final = 0.2 × 1 × 1 = 0.2, and it routes on that.
  const [r] = computePrism({
    nowMs: now,
    orchestrators: [orch('a', { ageStartMs: now - 12 * HOUR_MS, transitions: [{ atMs: now - 11 * HOUR_MS, ready: true, connected: true }] })]
  })
  t.equal(r!.activeTimeRatio, 1)
  t.equal(r!.readinessMultiplier, 1)
  close(t, r!.performanceScore, 0.2)
  close(t, r!.finalScore, 0.2)
  close(t, r!.routingScore, 0.2)
})

t.test('transition pending ends only on positive evidence inside the lookback', async t => {
  // Qualified, transition pending, ready all along: routing = 0.5 × readiness 1 × penalty 1 = 0.5 until
  // positive evidence arrives.
  const pending = (over: Partial<PrismOrchestratorInput>) => computePrism({
    nowMs: now, orchestrators: [orch('g', { transitionPending: true, throughputSamples: [], outcomes: [], ...over })]
  })[0]!
  const cases: Array<[string, Partial<PrismOrchestratorInput>]> = [
    ['no evidence', {}],
    ['one failed outcome an hour ago', { outcomes: [{ atMs: now - HOUR_MS, failed: 1 }] }],
    ['an overseer intervention', { outcomes: [{ atMs: now - HOUR_MS, overseerInterventions: 1 }] }],
    ['a 900 Mbps sample 30 days old', { throughputSamples: [{ atMs: now - 30 * DAY_MS, mbps: 900 }] }],
    ['a verified task 30 days old', { outcomes: [{ atMs: now - 30 * DAY_MS, verified: 5 }] }],
    ['a 0 Mbps sample', { throughputSamples: [{ atMs: now - HOUR_MS, mbps: 0 }] }],
    ['a sample with no tasks', { throughputSamples: [{ atMs: now - HOUR_MS, mbps: 500, tasks: 0 }] }],
    ['a verified task in the future', { outcomes: [{ atMs: now + HOUR_MS, verified: 1 }] }]
  ]
  for (const [name, over] of cases) {
    const r = pending(over)
    close(t, r.routingScore, 0.5, `${name}: still routes at 0.5`)
    t.equal(r.routingOverrideReason, TRANSITION_PENDING_REASON, `${name}: reason kept`)
  }
  t.equal(TRANSITION_PENDING_REASON, 'transition_pending_empty_qualified_task_evidence', 'the reference\'s reason string')
  // Positive evidence inside the lookback ends it: the routing score becomes the final score.
  for (const [name, over] of [
    ['a verified task an hour ago', { outcomes: [{ atMs: now - HOUR_MS, verified: 1 }] }],
    ['a 900 Mbps sample an hour ago', { throughputSamples: [{ atMs: now - HOUR_MS, mbps: 900 }] }]
  ] as Array<[string, Partial<PrismOrchestratorInput>]>) {
    const r = pending(over)
    t.equal(r.routingOverrideReason, null, `${name}: override ends`)
    t.equal(r.routingScore, r.finalScore, `${name}: routes on the final score`)
    t.ok(r.finalScore > 0, `${name}: final ${r.finalScore}`)
  }
  t.notOk(hasPositiveEvidence({ throughputSamples: [], outcomes: [{ atMs: now - DAY_MS - 1, verified: 1 }] }, now, DAY_MS), 'one ms past the lookback')
  t.ok(hasPositiveEvidence({ throughputSamples: [], outcomes: [{ atMs: now - DAY_MS, verified: 1 }] }, now, DAY_MS), 'exactly at the lookback edge')
})

t.test('computePrism: every component of a mixed fleet, worked by hand', async t => {
  // Two pools, each normalized as its own cohort. Readiness 0.75 (down 6 h of the 24 h window), one fraud
  // row (× 0.9), three days old; graduating members route on the transition score × readiness × penalty.
  const upDownUp = [{ atMs: now - 2 * DAY_MS, ready: true, connected: true }, { atMs: now - 8 * HOUR_MS, ready: true, connected: false }, { atMs: now - 2 * HOUR_MS, ready: true, connected: true }]
  const fraud = [{ kind: 'fraud' as const, createdAtMs: now - HOUR_MS }]
  const r = computePrism({
    nowMs: now,
    orchestrators: [
      orch('q1', { transitions: upDownUp, penalties: fraud, ageStartMs: now - 3 * DAY_MS, lifetimeVerifiedTasks: 60 }),
      orch('q2', { throughputSamples: [{ atMs: now, mbps: 300 }], transitionPending: true }),
      orch('n1', { pool: 'qualifying', throughputSamples: [{ atMs: now, mbps: 50 }], lifetimeVerifiedTasks: 120, ageStartMs: now - 3 * DAY_MS }),
      orch('n2', { pool: 'qualifying', throughputSamples: [{ atMs: now, mbps: 150 }], lifetimeVerifiedTasks: 120, ageStartMs: now - 3 * DAY_MS, transitions: upDownUp, penalties: fraud })
    ]
  })
  const by = Object.fromEntries(r.map(x => [x.id, x]))
  // Throughput: q1 100 against q2 300 in the qualified pool; n1 50 against n2 150 in the qualifying one.
  t.same([by.q1.throughputScore, by.q2.throughputScore, by.n1.throughputScore, by.n2.throughputScore], [0.2, 1, 0.2, 1], 'each pool normalized on its own')
  t.same([by.q1.reliabilityScore, by.n2.reliabilityScore], [0.2, 0.2], 'equal reliabilities take the floor')
  close(t, by.q1.activeTimeRatio, 0.75)
  t.equal(by.q1.readinessGate, 1)
  close(t, by.q1.readinessMultiplier, 0.75)
  t.same(by.q1.activePenalties, { fraud: 1, integrity_chunk_mismatch: 0, sybil: 0 })
  close(t, by.q1.penaltyMultiplier, 0.9)
  t.equal(by.q1.ageDays, 3)
  t.equal(by.q1.verifiedTaskRatio, 0.5)
  close(t, by.q1.confidence, 0.5, '0.5 tasks × rate 1 × age saturated')
  t.equal(by.q1.nextPool, 'qualified', 'qualified is sticky')
  t.equal(by.q1.graduated, false)
  close(t, by.q1.performanceScore, 0.2)
  close(t, by.q1.finalScore, 0.2 * 0.75 * 0.9)
  close(t, by.q1.routingScore, by.q1.finalScore, 'no transition pending')
  t.equal(by.q1.routingOverrideReason, null)
  close(t, by.q2.finalScore, 0.52)
  close(t, by.q2.routingScore, 0.52, 'a pending transition ends on positive evidence')
  t.equal(by.q2.routingOverrideReason, null)
  t.equal(by.n1.graduated, true)
  close(t, by.n1.finalScore, 0.2)
  close(t, by.n1.routingScore, 0.5, 'graduated: the transition score')
  t.equal(by.n2.graduated, true)
  close(t, by.n2.finalScore, 0.52 * 0.75 * 0.9)
  close(t, by.n2.routingScore, 0.5 * 0.75 * 0.9, 'the transition score, times readiness and penalty')
  t.equal(by.n2.routingOverrideReason, TRANSITION_PENDING_REASON)
})

t.test('edges of the pieces: exact window ends, half-lives, bad samples, penalty lifetimes, age saturation', async t => {
  t.equal(decayWeight(DAY_MS, 1, DAY_MS), 0.5 ** 24, 'evidence exactly at the lookback still counts')
  close(t, decayWeight(HOUR_MS, 2), Math.SQRT1_2, 'half-life 2 h: an hour weighs √½')
  t.equal(decayedThroughput([{ atMs: now, mbps: 100 }, { atMs: now, mbps: Number.NaN }], now), 100, 'a sample that is not a number is skipped')
  t.equal(rawReliability([{ atMs: now, verified: 3, failed: -5 }], now), 1, 'negative counts count as 0')
  t.same(fleetNormalize([1, 11, 0, -5]), [0.2, 1, 0, 0], 'zero and negative values stay 0 however wide the span')
  const p = (over: Record<string, unknown>) => ({ kind: 'fraud' as const, createdAtMs: now - HOUR_MS, ...over })
  t.same(activePenaltyCounts([
    p({ createdAtMs: now + 1 }), // not yet
    p({ revokedAtMs: now }), // revoked exactly now
    p({ createdAtMs: now - 2 * HOUR_MS, durationMs: HOUR_MS }), // its own, shorter duration has run out
    p({ createdAtMs: now - 1000 * HOUR_MS, durationMs: null }), // no end
    { kind: 'unknown' as never, createdAtMs: now - HOUR_MS } // not a penalty kind
  ], now), { fraud: 1, integrity_chunk_mismatch: 0, sybil: 0 })
  close(t, confidenceScore(120, 1, 2, { verifiedTaskTarget: 120, ageSaturationDays: 4 }), 0.9, 'half way to saturation: 0.8 + 0.2 × ½')
  t.equal(confidenceScore(120, 1, 0, { verifiedTaskTarget: 120, ageSaturationDays: 0 }), 1, 'no saturation period: age counts in full')
  t.equal(hasPositiveEvidence({ outcomes: [{ atMs: now, verified: 1 }], throughputSamples: [] }, now), true, 'evidence dated now counts')
  t.equal(hasPositiveEvidence({ outcomes: [], throughputSamples: [{ atMs: now - HOUR_MS, mbps: 10, tasks: 2 }] }, now), true, 'a throughput sample alone is evidence')
  t.equal(hasPositiveEvidence({ outcomes: [], throughputSamples: [{ atMs: now - HOUR_MS, mbps: 10 }] }, now), true, 'with its task count left out')
})
