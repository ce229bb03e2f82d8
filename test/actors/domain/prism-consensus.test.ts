// PRISM consensus over validators' score vectors (docs/formulas.md#prism-consensus): worked examples.
import t from 'tap'
import { prismConsensus, type PrismScore, type ValidatorVector } from '../../../actors/domain/prism-consensus.ts'
import { kappaQuantile } from '../../../actors/domain/yuma.ts'

const A = 1000n * 10n ** 9n // 1000 α
const SMALL = 10n ** 9n // 1 α
const score = (hotkey: string, routingScore: number, pool: 'qualifying' | 'qualified' = 'qualified'): PrismScore =>
  ({ hotkey, pool, routingScore, finalScore: routingScore, penaltyMultiplier: 1, readinessMultiplier: 1, activeTimeRatio: 1 })
const vec = (validator: string, scores: PrismScore[], epoch = 7, computedAt = 70_000): ValidatorVector => ({ validator, epoch, computedAt, scores })
const routing = (c: { scores: PrismScore[] }): Record<string, number> => Object.fromEntries(c.scores.map(s => [s.hotkey, s.routingScore]))
const stakes = (...pairs: Array<[string, bigint]>): Map<string, bigint> => new Map(pairs)
const THREE = stakes(['v1', A], ['v2', A], ['rogue', SMALL])
const honest = [vec('v1', [score('orch', 0.8)]), vec('v2', [score('orch', 0.8)])]

t.test('the κ-quantile: the largest value at least κ of the stake gave or exceeded', async t => {
  const cmp = (a: number, b: number): number => a - b
  // Stakes 1000/1000/1 (total 2001, half 1000.5): when the two large ones split, the small one's side wins (a weighted median).
  t.equal(kappaQuantile([{ value: 0.8, stake: 1000n }, { value: 0.4, stake: 1000n }, { value: 1, stake: 1n }], 2001n, cmp), 0.8, 'the 1 α validator joining the higher side reaches half: 0.8')
  t.equal(kappaQuantile([{ value: 0.8, stake: 1000n }, { value: 0.4, stake: 1000n }, { value: 0, stake: 1n }], 2001n, cmp), 0.4)
  t.equal(kappaQuantile([{ value: 0.8, stake: 1000n }], 2001n, cmp), undefined, 'less than half of the total stake: no value')
  t.equal(kappaQuantile([], 0n, cmp), undefined)
})

t.test('a 1 α validator that disagrees with two 1000 α validators changes nothing', async t => {
  const before = prismConsensus(honest, THREE)
  t.same(routing(before), { orch: 0.8 })
  const after = prismConsensus([...honest, vec('rogue', [score('orch', 0), score('rogue', 1)], 99_999)], THREE)
  t.same(routing(after), { orch: 0.8 }, 'the honest orchestrator keeps 0.8; the rogue\'s own hotkey is not scored')
  t.equal(after.epoch, 7, 'the consensus epoch is the one half the stake reported, not 99999')
  t.equal(after.validator, null, 'no validator decides alone')
  t.equal(after.totalStake, 2n * A + SMALL)
  t.equal(after.reportingStake, 2n * A + SMALL)
})

t.test('both large validators agreeing on a change change it', async t => {
  const changed = prismConsensus([vec('v1', [score('orch', 0), score('new', 1)]), vec('v2', [score('orch', 0), score('new', 1)]), vec('rogue', [score('orch', 0.8)])], THREE)
  t.same(routing(changed), { new: 1, orch: 0 })
})

t.test('two large validators that disagree: the lower, clipped value', async t => {
  const split = prismConsensus([vec('v1', [score('orch', 0.9)]), vec('v2', [score('orch', 0.3)]), vec('rogue', [])], THREE)
  t.same(routing(split), { orch: 0.3 }, '0.9 has 1000 of 2001 α, 0.3 has 2000')
  const withRogueLow = prismConsensus([vec('v1', [score('orch', 0.9)]), vec('v2', [score('orch', 0.3)]), vec('rogue', [score('orch', 0)])], THREE)
  t.same(routing(withRogueLow), { orch: 0.3 }, 'the 1 α validator cannot push it below what half the stake gave')
  // Each field is combined the same way.
  const fields = prismConsensus([vec('v1', [{ ...score('orch', 0.9), penaltyMultiplier: 0.5 }]), vec('v2', [{ ...score('orch', 0.3), penaltyMultiplier: 1 }]), vec('rogue', [])], THREE)
  t.match(fields.scores[0], { routingScore: 0.3, finalScore: 0.3, penaltyMultiplier: 0.5 })
  // An exact half is enough (κ = ½, at least, as in Yuma): of two equal validators alone, the higher value holds.
  t.same(routing(prismConsensus([vec('v1', [score('orch', 0.9)]), vec('v2', [score('orch', 0.3)])], stakes(['v1', A], ['v2', A]))), { orch: 0.9 })
})

t.test('no consensus until validators holding half of the permitted stake have reported', async t => {
  const rogueOnly = prismConsensus([vec('rogue', [score('orch', 0), score('rogue', 1)])], THREE)
  t.same(rogueOnly, { validator: null, epoch: null, computedAt: null, scores: [], totalStake: 2n * A + SMALL, reportingStake: 0n }, 'the 1 α validator alone decides nothing')
  t.same(prismConsensus([vec('v1', [score('orch', 0.8)])], THREE).scores, [], '1000 α of 2001 α is not half: nothing yet')
  const oneLarge = prismConsensus([vec('v1', [score('orch', 0.8)]), vec('rogue', [score('orch', 0), score('rogue', 1)])], THREE)
  // With v2 silent, its stake backs no value: 0.8 has 1000 of 2001 α, so the score falls to what the
  // reporters needed for half of all stake gave. It can be held down while stake is silent, never raised.
  t.same(routing(oneLarge), { orch: 0 }, 'the 1 α validator completes the quorum: 0.8 is not backed by half of all stake')
  t.equal(oneLarge.validator, null, 'no reporter holds half of all stake alone')
  t.equal(oneLarge.reportingStake, A + SMALL)
  t.same(prismConsensus([], THREE).scores, [])
  t.same(prismConsensus(honest, new Map()).scores, [], 'no permitted validator: nothing')
  const unpermitted = prismConsensus([...honest, vec('gone', [score('orch', 0)])], THREE)
  t.same(routing(unpermitted), { orch: 0.8 }, 'a vector of a hotkey without a permit does not count')
})

t.test('a quarter of the stake cannot raise a score while half is silent (quantiles over all permitted stake)', async t => {
  const s = stakes(['big', 2n * A], ['v1', A], ['rogue', A])
  const c = prismConsensus([vec('v1', [score('honest', 0.9), score('rogueOrch', 0)]), vec('rogue', [score('honest', 0.9), score('rogueOrch', 1)])], s)
  t.equal(c.reportingStake, 2n * A, 'the quorum holds: half of all stake reported')
  t.same(routing(c), { honest: 0.9, rogueOrch: 0 }, 'rogueOrch at 1 is backed by a quarter of all stake only')
  const later = prismConsensus([vec('big', [score('honest', 0.9), score('rogueOrch', 1)]), vec('v1', [score('honest', 0.9), score('rogueOrch', 0)]), vec('rogue', [score('honest', 0.9), score('rogueOrch', 1)])], s)
  t.same(routing(later), { honest: 0.9, rogueOrch: 1 }, 'once the half that was silent backs it, it stands')
})

t.test('a missing score counts as 0; an orchestrator is scored only when half the stake scored it', async t => {
  const s = stakes(['v1', 600n], ['v2', 400n])
  const c = prismConsensus([vec('v1', [score('a', 0.5), score('b', 0.7)]), vec('v2', [score('a', 0.9)])], s)
  t.same(routing(c), { a: 0.5, b: 0.7 }, 'v1 (60 %) decides b alone; a is 0.5 (v1) since 0.9 has only 40 %')
  t.equal(c.validator, 'v1', 'v1 holds more than half: its vector is the consensus')
  const d = prismConsensus([vec('v1', [score('a', 0.5)]), vec('v2', [score('a', 0.9), score('b', 1)])], s)
  t.same(routing(d), { a: 0.5 }, 'b is scored by 40 % only: not in the consensus')
  const e = prismConsensus([vec('v1', [score('a', 0.5)]), vec('v2', [score('a', 0.9)]), vec('v3', [])], stakes(['v1', 300n], ['v2', 300n], ['v3', 400n]))
  t.same(routing(e), { a: 0.5 }, 'v3 (40 %) gave nothing: a at 0.9 has 30 %, at 0.5 60 %')
})

t.test('pools: qualified only when validators holding half the stake say so', async t => {
  const c = prismConsensus([
    vec('v1', [score('a', 0.5, 'qualified'), score('b', 0.5, 'qualified')]),
    vec('v2', [score('a', 0.5, 'qualifying'), score('b', 0.5, 'qualified')]),
    vec('rogue', [score('a', 0.5, 'qualified'), score('b', 0.5, 'qualifying')])
  ], stakes(['v1', A], ['v2', A], ['rogue', SMALL]))
  t.same(c.scores.map(s => [s.hotkey, s.pool]), [['a', 'qualified'], ['b', 'qualified']], 'v1 + the rogue hold 1001 of 2001 for a; v1 + v2 for b')
  const d = prismConsensus([vec('v1', [score('a', 0.5, 'qualified')]), vec('v2', [score('a', 0.5, 'qualifying')]), vec('rogue', [score('a', 0.5, 'qualifying')])], stakes(['v1', A], ['v2', A], ['rogue', SMALL]))
  t.equal(d.scores[0]!.pool, 'qualifying', 'v1 alone (1000 of 2001 α) cannot make it qualified')
  const e = prismConsensus([vec('v1', [score('a', 0.5, 'qualifying')]), vec('v2', [score('a', 0.5, 'qualifying')]), vec('rogue', [score('a', 1, 'qualified')])], stakes(['v1', A], ['v2', A], ['rogue', SMALL]))
  t.same(e.scores.map(s => [s.pool, s.routingScore]), [['qualifying', 0.5]], 'nor can the 1 α validator')
})

t.test('epoch and computedAt: the latest that half the stake reported; equal weights without stake', async t => {
  const c = prismConsensus([vec('v1', [score('a', 1)], 9, 90_000), vec('v2', [score('a', 1)], 8, 80_000)], stakes(['v1', A], ['v2', A]))
  t.same({ epoch: c.epoch, computedAt: c.computedAt }, { epoch: 9, computedAt: 90_000 }, 'v1 holds exactly half (κ = ½): its later epoch')
  const three = prismConsensus([vec('v1', [score('a', 1)], 9), vec('v2', [score('a', 1)], 8), vec('v3', [score('a', 0.2)], 8)], stakes(['v1', 0n], ['v2', 0n], ['v3', 0n]))
  t.same({ epoch: three.epoch, a: routing(three).a }, { epoch: 8, a: 1 }, 'no stake anywhere: one vote each (2 of 3 at 1)')
  t.equal(three.totalStake, 3n)
  const mixed = prismConsensus([vec('v1', [score('a', 1)]), vec('t', [score('a', 0)])], stakes(['v1', A], ['t', 0n]))
  t.same(routing(mixed), { a: 1 }, 'a validator without stake weighs nothing once another holds stake')
})
