// What an orchestrator takes in from validators: PRISM score vectors, combined by stake into the routing
// weights and pools GET /chain/prism serves (kept over a restart; future and stale epochs refused);
// snapshot copies are stake-weighted votes, a tampered copy a penalty.
import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../../actors/store.ts'
import { sealEnvelope } from '../../../actors/validator/envelope.ts'
import { KEYS } from '../../../actors/validator/snapshots.ts'
import { validatorIntake, voteEpoch, STAKES_FOR_VOTES_MS, PRISM_VECTORS_PER_EPOCH, SNAPSHOT_VOTE_EPOCHS, MAX_PENDING_SNAPSHOTS_PER_VALIDATOR } from '../../../actors/validator/intake.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { collect, prefixRange } from '../../../actors/store.ts'
import { silentLogger, capturingLogger } from '../../helpers/logger.ts'

const score = (hotkey: string, routingScore: number, pool: 'qualifying' | 'qualified') => ({ hotkey, pool, routingScore, finalScore: routingScore, penaltyMultiplier: 1, readinessMultiplier: 1, activeTimeRatio: 1 })
const snap = (count: number) => sealEnvelope({ version: 'v', observedAt: 'a', sourceEpoch: 3, formulaReference: 'f', publishedAt: 'p', evidenceSequence: '1', data: { revision: 0, count } }) as any

const sellSnap = (hotkey: string, epoch: number) => sealEnvelope({ version: 'v', observedAt: 'a', sourceEpoch: epoch, formulaReference: 'f', publishedAt: 'p', evidenceSequence: '1', data: { hotkey, epoch, sellAllowance: 1 } }) as any

/** A chain view whose head and permitted validators a test sets. */
function fakeChain (stakes: Record<string, bigint>, epochs = { current: 7, lastClosed: 6 }) {
  const state = { stakes: new Map(Object.entries(stakes)), epochs, down: false }
  return {
    state,
    view: {
      epochs: async () => { if (state.down) throw new Error('chain down'); return { ...state.epochs } },
      validatorStakes: async () => { if (state.down) throw new Error('chain down'); return new Map(state.stakes) }
    }
  }
}
const newStore = () => new LevelStore(new MemoryLevel<string, string>() as never)
const A = 1000n * 10n ** 9n
const ONE = 10n ** 9n

t.test('PRISM scores: routing weights and pools from the validators\' consensus, each validator\'s latest vector kept', async t => {
  const store = newStore()
  const chain = fakeChain({ v1: A, v2: A, rogue: ONE })
  const intake = validatorIntake({ store, logger: silentLogger(), chain: chain.view, penalize: () => t.fail('no penalty') })
  await intake.refresh()
  t.equal(intake.routingScore('o1'), undefined, 'unscored until validators score it')
  t.equal(intake.poolOf('o1'), 'unscored')
  t.same(await intake.latestPrism(), { validator: null, epoch: null, computedAt: null, scores: [], totalStakeRao: (2n * A + ONE).toString(), validators: [] })
  t.equal(await intake.prism('v1', { epoch: 6, computedAt: 1000, scores: [score('o1', 0.25, 'qualifying'), score('o2', 0.75, 'qualified')] }), 'accepted')
  t.equal(intake.routingScore('o1'), undefined, 'one of two 1000 α validators is not enough')
  t.equal(await intake.prism('rogue', { epoch: 7, computedAt: 1500, scores: [score('o1', 0, 'qualifying'), score('rogue', 1, 'qualified')] }), 'accepted')
  t.equal(intake.routingScore('o1'), 0, 'the 1 α validator completes the quorum; with v2 silent, 0.25 is not backed by half of all stake (held down, never raised)')
  t.equal(intake.routingScore('rogue'), undefined, 'the 1 α validator cannot score itself')
  t.equal(await intake.prism('v2', { epoch: 6, computedAt: 2000, scores: [score('o1', 0.5, 'qualified'), score('o2', 0.75, 'qualified')] }), 'accepted')
  t.equal(intake.routingScore('o1'), 0.25, 'v1 and v2 disagree: the lower value')
  t.equal(intake.poolOf('o1'), 'qualifying', 'qualified for v2 alone')
  t.equal(intake.poolOf('o2'), 'qualified', 'qualified for both')
  t.equal(await intake.prism('v1', { epoch: 7, computedAt: 3000, scores: [score('o1', 0.5, 'qualified')] }), 'accepted')
  t.equal(intake.routingScore('o1'), 0.5, 'a later vector of the same validator replaces its earlier one')
  t.equal(intake.poolOf('o1'), 'qualified')
  t.equal(intake.routingScore('o2'), undefined, 'v1 no longer scores o2: v2 alone (1000 of 2001 α) cannot keep it scored')
  t.equal(intake.poolOf('o2'), 'unscored')
  const latest = await intake.latestPrism()
  t.same({ validator: latest.validator, epoch: latest.epoch, computedAt: latest.computedAt, hotkeys: latest.scores.map(s => s.hotkey) }, { validator: null, epoch: 7, computedAt: 2000, hotkeys: ['o1'] })
  t.same(latest.validators.map(v => [v.hotkey, v.stakeRao, v.epoch, v.scores.length]), [['v1', A.toString(), 7, 1], ['v2', A.toString(), 6, 2], ['rogue', ONE.toString(), 7, 2]], 'every vector, most stake first')
  // Stored: a new intake over the same store serves the same consensus once it has read the chain.
  const again = validatorIntake({ store, logger: silentLogger(), chain: chain.view, penalize: () => {} })
  await again.refresh()
  t.same(await again.latestPrism(), latest, 'the consensus survives a restart')
  t.equal(again.routingScore('o1'), 0.5)
  t.same((await collect(store.table('meta'), prefixRange('prism/score/v1/'))).map(([k]) => k), ['prism/score/v1/o1'], 'a replaced vector\'s rows are gone from the store')
})

t.test('PRISM scores: a future or long-past epoch is refused and keeps the validator\'s vector', async t => {
  const store = newStore()
  const { logger, lines } = capturingLogger('warn')
  const chain = fakeChain({ v1: A })
  const intake = validatorIntake({ store, logger, chain: chain.view, penalize: () => t.fail('no penalty') })
  t.equal(await intake.prism('v1', { epoch: 6, computedAt: 1000, scores: [score('o1', 0.6, 'qualified')] }), 'accepted')
  t.equal(intake.routingScore('o1'), 0.6)
  t.equal((await intake.latestPrism()).validator, 'v1', 'the only validator decides alone')
  t.equal(await intake.prism('v1', { epoch: 99_999, computedAt: 2000, scores: [score('o1', 0, 'qualified')] }), 'future_epoch')
  t.equal(await intake.prism('v1', { epoch: 8, computedAt: 2000, scores: [score('o1', 0, 'qualified')] }), 'future_epoch', 'one past the chain\'s current epoch')
  t.equal(await intake.prism('v1', { epoch: 4, computedAt: 2000, scores: [score('o1', 0, 'qualified')] }), 'older_than_held', 'older than the vector held: refused before the chain is asked')
  t.equal(await intake.prism('v1', { epoch: 5, computedAt: 500, scores: [score('o1', 0.1, 'qualified')] }), 'older_than_held', 'in the window, but older than the vector held')
  t.equal(intake.routingScore('o1'), 0.6, 'unchanged')
  t.same((await intake.latestPrism()).validators.map(v => v.epoch), [6], 'the held vector stays')
  t.same(lines.filter(l => l.event === 'prism_scores_refused').map(l => [l.validator, l.epoch, l.reason]), [['v1', 99_999, 'future_epoch'], ['v1', 8, 'future_epoch']], 'refusals after the chain was asked are logged as warnings (those before it, at debug)')
  t.equal(await intake.prism('v1', { epoch: 7, computedAt: 3000, scores: [score('o1', 0.7, 'qualified')] }), 'accepted', 'the current epoch is taken')
  t.equal(intake.routingScore('o1'), 0.7)
  // The chain moves on: a vector older than the window stops counting and is dropped at the next refresh.
  chain.state.epochs = { current: 10, lastClosed: 9 }
  await intake.refresh()
  t.equal(intake.routingScore('o1'), undefined, 'epoch 7 < 9 - 1: no longer counts')
  t.same(await collect(store.table('meta'), prefixRange('prism/')), [], 'and is removed from the store')
  t.equal(await intake.prism('v1', { epoch: 7, computedAt: 3500, scores: [score('o1', 0.7, 'qualified')] }), 'stale_epoch', 'with none held: older than the last closed epoch and the one before')
  // The chain unreachable: the last epochs known decide; the stakes, the consensus as it was.
  t.equal(await intake.prism('v1', { epoch: 9, computedAt: 4000, scores: [score('o1', 0.9, 'qualified')] }), 'accepted')
  chain.state.down = true
  t.equal(await intake.prism('v1', { epoch: 99_999, computedAt: 5000, scores: [] }), 'future_epoch')
  t.equal(await intake.prism('v1', { epoch: 10, computedAt: 5000, scores: [score('o1', 0.2, 'qualified')] }), 'accepted')
  t.equal(intake.routingScore('o1'), 0.9, 'stakes unknown: the consensus is kept until the chain answers')
  chain.state.down = false
  await intake.refresh()
  t.equal(intake.routingScore('o1'), 0.2)
  const cold = validatorIntake({ store: newStore(), logger: silentLogger(), chain: { epochs: async () => { throw new Error('down') }, validatorStakes: async () => new Map() }, penalize: () => {} })
  t.equal(await cold.prism('v1', { epoch: 1, computedAt: 1, scores: [] }), 'chain_unavailable', 'no epoch ever known: refused')
})

t.test('PRISM scores: a validator that lost its permit stops counting', async t => {
  const chain = fakeChain({ v1: A, v2: A })
  const intake = validatorIntake({ store: newStore(), logger: silentLogger(), chain: chain.view, penalize: () => {} })
  await intake.prism('v1', { epoch: 7, computedAt: 1, scores: [score('o1', 0.9, 'qualified')] })
  await intake.prism('v2', { epoch: 7, computedAt: 1, scores: [score('o1', 0.3, 'qualified')] })
  t.equal(intake.routingScore('o1'), 0.9, 'two equal validators: exactly half is enough for the higher value')
  chain.state.stakes.delete('v1')
  await intake.refresh()
  t.equal(intake.routingScore('o1'), 0.3, 'v2 alone holds every permitted stake')
  t.same((await intake.latestPrism()).validators.map(v => v.hotkey), ['v2'])
})

t.test('snapshots: a copy is a vote by stake; a copy whose id does not match its content is a penalty', async t => {
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const penalties: Array<[string, string]> = []
  const intake = validatorIntake({ store, logger: silentLogger(), chain: fakeChain({}).view, penalize: (v, d) => penalties.push([v, d]) })
  const honest = snap(10)
  const slot = KEYS.epochSnapshot(3, 0)
  await intake.snapshot('H', { kind: 'epoch', epoch: 3, revision: 0, hotkey: null, snapshot: honest }, 900n)
  const table = store.table<any>('snapshots')
  t.equal((await table.get(slot)).snapshotId, honest.snapshotId, 'served')
  t.equal(await table.get(KEYS.snapshotId(honest.snapshotId)), slot, 'found by its id')
  await intake.snapshot('R', { kind: 'epoch', epoch: 3, revision: 0, hotkey: null, snapshot: snap(999) }, 100n)
  t.equal((await table.get(slot)).snapshotId, honest.snapshotId, 'a minority copy does not replace it')
  const tampered = { ...honest, data: { ...honest.data, count: 11 } }
  await intake.snapshot('T', { kind: 'epoch', epoch: 3, revision: 0, hotkey: null, snapshot: tampered }, 10_000n)
  t.same(penalties, [['T', 'snapshot id does not match its content']])
  t.equal((await table.get(slot)).snapshotId, honest.snapshotId, 'a tampered copy is not even a vote')
  const paid = sellSnap('hk', 3)
  await intake.snapshot('H', { kind: 'sell_paid', epoch: 3, revision: 0, hotkey: 'hk', snapshot: paid }, 900n)
  t.equal((await table.get(KEYS.sellPaid('hk', 3))).snapshotId, paid.snapshotId, 'sell-allowance proofs are served under their own slot')
})

t.test('snapshots: only for closed epochs, labelled as their content, and only once half the permitted stake has published', async t => {
  const store = newStore()
  const penalties: Array<[string, string]> = []
  const chain = fakeChain({ big: A, big2: A, small: ONE })
  const intake = validatorIntake({ store, logger: silentLogger(), chain: chain.view, penalize: (v, d) => penalties.push([v, d]) })
  const table = store.table<any>('snapshots')
  const at = (epoch: number, extra: Record<string, unknown> = {}) => sealEnvelope({ version: 'v', observedAt: 'a', sourceEpoch: epoch, formulaReference: 'f', publishedAt: 'p', evidenceSequence: '1', data: { revision: 0, epoch, ...extra } }) as any
  // The smallest validator alone, for an epoch the chain has not reached, then for a closed one.
  await intake.snapshot('small', { kind: 'epoch', epoch: 99999, revision: 0, hotkey: null, snapshot: at(99999) }, ONE)
  t.equal(await table.get(KEYS.epochSnapshot(99999, 0)), undefined, 'a future epoch is refused')
  await intake.snapshot('small', { kind: 'epoch', epoch: 7, revision: 0, hotkey: null, snapshot: at(7) }, ONE)
  t.equal(await table.get(KEYS.epochSnapshot(7, 0)), undefined, 'so is the current epoch, not closed yet')
  await intake.snapshot('small', { kind: 'epoch', epoch: 6, revision: 0, hotkey: null, snapshot: at(6, { forged: true }) }, ONE)
  t.equal(await table.get(KEYS.epochSnapshot(6, 0)), undefined, 'a closed epoch: not served while its publishers hold under half the permitted stake')
  const lone = sellSnap('nobody-else', 6)
  await intake.snapshot('small', { kind: 'sell_paid', epoch: 6, revision: 0, hotkey: 'nobody-else', snapshot: lone }, ONE)
  t.equal(await table.get(KEYS.sellPaid('nobody-else', 6)), undefined, 'nor a sell allowance only it publishes')
  // A large validator's copy of a sell allowance alone: half of the permitted stake exactly is not reached.
  const paid = sellSnap('hk', 6)
  await intake.snapshot('big', { kind: 'sell_paid', epoch: 6, revision: 0, hotkey: 'hk', snapshot: paid }, A)
  t.equal(await table.get(KEYS.sellPaid('hk', 6)), undefined, 'one of two equal validators is not yet half of the permitted stake')
  await intake.snapshot('big2', { kind: 'sell_paid', epoch: 6, revision: 0, hotkey: 'hk', snapshot: paid }, A)
  t.equal((await table.get(KEYS.sellPaid('hk', 6)))?.snapshotId, paid.snapshotId, 'both large validators agree: served')
  // The epoch: the small validator's copy plus a large one's make the quorum, and the large one's copy wins.
  const honest = at(6)
  await intake.snapshot('big', { kind: 'epoch', epoch: 6, revision: 0, hotkey: null, snapshot: honest }, A)
  t.equal((await table.get(KEYS.epochSnapshot(6, 0)))?.snapshotId, honest.snapshotId, 'the stake-backed copy is served, never the small one\'s')
  t.same(penalties, [], 'no penalty so far: a future epoch is refused, not punished')
  // A copy relabelled under another epoch, revision or hotkey than its content names: a penalty, not a vote.
  await intake.snapshot('big', { kind: 'epoch', epoch: 5, revision: 0, hotkey: null, snapshot: honest }, A)
  await intake.snapshot('big', { kind: 'epoch', epoch: 6, revision: 3, hotkey: null, snapshot: honest }, A)
  await intake.snapshot('big', { kind: 'sell_free', epoch: 6, revision: 0, hotkey: 'other', snapshot: sellSnap('hk', 6) }, A)
  t.same(penalties.map(([v, d]) => [v, d.replace(/:.*/, '')]), Array(3).fill(['big', 'snapshot labelled unlike its content']))
  t.equal(await table.get(KEYS.epochSnapshot(5, 0)), undefined)
  t.equal(await table.get(KEYS.epochSnapshot(6, 3)), undefined)
  t.equal(await table.get(KEYS.sellFree('other', 6)), undefined)
})

t.test('snapshot votes weigh the stakes validators hold now: a stake moved to another hotkey counts once', async t => {
  const store = newStore()
  const chain = fakeChain({ c: 1500n * ONE, a: A })
  const intake = validatorIntake({ store, logger: silentLogger(), chain: chain.view, penalize: () => t.fail('no penalty') })
  const table = store.table<any>('snapshots')
  const at = (count: number) => sealEnvelope({ version: 'v', observedAt: 'a', sourceEpoch: 6, formulaReference: 'f', publishedAt: 'p', evidenceSequence: '1', data: { revision: 0, epoch: 6, count } }) as any
  const honest = at(1); const forged = at(999)
  await intake.snapshot('c', { kind: 'epoch', epoch: 6, revision: 0, hotkey: null, snapshot: honest }, 1500n * ONE)
  await intake.snapshot('a', { kind: 'epoch', epoch: 6, revision: 0, hotkey: null, snapshot: forged }, A)
  t.equal((await table.get(KEYS.epochSnapshot(6, 0)))?.snapshotId, honest.snapshotId)
  // a's stake moves to b, which gains a permit and votes the forged copy as well.
  chain.state.stakes = new Map([['c', 1500n * ONE], ['b', A]])
  await intake.snapshot('b', { kind: 'epoch', epoch: 6, revision: 0, hotkey: null, snapshot: forged }, A)
  t.equal((await table.get(KEYS.epochSnapshot(6, 0)))?.snapshotId, honest.snapshotId, 'the forged copy is backed by 1,000 of 2,500, not 2,000 of 3,500')
  // a, admitted on a standing read from before the move, sends its copy again: refused, its permit gone.
  await intake.snapshot('a', { kind: 'epoch', epoch: 6, revision: 0, hotkey: null, snapshot: forged }, A)
  t.equal((await table.get(KEYS.epochSnapshot(6, 0)))?.snapshotId, honest.snapshotId, 'a validator no longer permitted adds nothing, however it was admitted')
})

t.test('snapshot votes: the stakes read once per burst of copies; a chain without stake counts each validator as one', async t => {
  const store = newStore()
  let reads = 0
  const chain = fakeChain({ a: 0n, b: 0n, c: 0n })
  const view = { ...chain.view, validatorStakes: async () => { reads++; return await chain.view.validatorStakes() } }
  const clock = new ManualClock(1_000_000)
  const intake = validatorIntake({ store, logger: silentLogger(), chain: view, penalize: () => t.fail('no penalty'), clock })
  const table = store.table<any>('snapshots')
  for (let i = 0; i < 10; i++) await intake.snapshot('a', { kind: 'sell_paid', epoch: 6, revision: 0, hotkey: `h${i}`, snapshot: sellSnap(`h${i}`, 6) }, 0n)
  t.equal(reads, 1, 'ten copies, one read of the stakes')
  t.equal(await table.get(KEYS.sellPaid('h0', 6)), undefined, 'one of three validators without stake is not half')
  await intake.snapshot('b', { kind: 'sell_paid', epoch: 6, revision: 0, hotkey: 'h0', snapshot: sellSnap('h0', 6) }, 0n)
  t.ok(await table.get(KEYS.sellPaid('h0', 6)), 'two of three are')
  clock.advance(STAKES_FOR_VOTES_MS)
  await intake.snapshot('b', { kind: 'sell_paid', epoch: 6, revision: 0, hotkey: 'h1', snapshot: sellSnap('h1', 6) }, 0n)
  t.equal(reads, 2, 'read again once the last read is STAKES_FOR_VOTES_MS old')
})

t.test('PRISM scores: at most PRISM_VECTORS_PER_EPOCH vectors of one validator per epoch, refused before anything is asked of the chain', async t => {
  const store = newStore()
  const chain = fakeChain({ v1: A })
  let asked = 0
  const view = { ...chain.view, epochs: async () => { asked++; return await chain.view.epochs() } }
  const intake = validatorIntake({ store, logger: silentLogger(), chain: view, penalize: () => t.fail('no penalty') })
  for (let i = 0; i < PRISM_VECTORS_PER_EPOCH; i++) t.equal(await intake.prism('v1', { epoch: 6, computedAt: 1000 + i, scores: [score('o1', 0.1 * (i + 1), 'qualified')] }), 'accepted', `vector ${i + 1} of epoch 6`)
  const before = asked
  for (let i = 0; i < 50; i++) t.equal(await intake.prism('v1', { epoch: 6, computedAt: 2000 + i, scores: [score('o1', 0.9, 'qualified')] }), 'too_many_for_epoch')
  t.equal(asked, before, 'no chain lookup for any of them')
  t.ok(Math.abs(intake.routingScore('o1')! - 0.4) < 1e-9, 'the last vector taken stands')
  t.equal(await intake.prism('v1', { epoch: 7, computedAt: 3000, scores: [score('o1', 0.7, 'qualified')] }), 'accepted', 'a new epoch is taken at once')
  t.equal(intake.routingScore('o1'), 0.7)
})

t.test('snapshot copies are bounded: recent epochs only, revisions no further than the closes since, sell allowances of registered orchestrators, one copy per validator and slot', async t => {
  const store = newStore()
  const chain = fakeChain({ v: A }, { current: 21, lastClosed: 20 })
  const { logger, lines } = capturingLogger('info')
  const orchestrators = new Set(['o1', 'o2'])
  const intake = validatorIntake({ store, logger, chain: chain.view, penalize: () => t.fail('no penalty'), isOrchestrator: async (h) => orchestrators.has(h) })
  const table = store.table<any>('snapshots')
  const epochSnap = (epoch: number, revision: number, count = 1) => sealEnvelope({ version: 'v', observedAt: 'a', sourceEpoch: epoch, formulaReference: 'f', publishedAt: 'p', evidenceSequence: '1', data: { revision, epoch, count } }) as any
  const refusals = () => lines.filter(l => l.event === 'snapshot_refused').map(l => l.reason)
  const oldest = 20 - SNAPSHOT_VOTE_EPOCHS
  await intake.snapshot('v', { kind: 'epoch', epoch: oldest - 1, revision: 1, hotkey: null, snapshot: epochSnap(oldest - 1, 1) }, A)
  await intake.snapshot('v', { kind: 'epoch', epoch: oldest, revision: 1, hotkey: null, snapshot: epochSnap(oldest, 1) }, A)
  t.equal(await table.get(KEYS.epochSnapshot(oldest - 1, 1)), undefined, 'an epoch older than the window: refused')
  t.ok(await table.get(KEYS.epochSnapshot(oldest, 1)), 'the oldest epoch of the window: taken')
  // Epoch 19: its first revision came at close 20; at most one more per close since (margin: one).
  await intake.snapshot('v', { kind: 'epoch', epoch: 19, revision: 3, hotkey: null, snapshot: epochSnap(19, 3) }, A)
  await intake.snapshot('v', { kind: 'epoch', epoch: 19, revision: 2, hotkey: null, snapshot: epochSnap(19, 2) }, A)
  t.equal(await table.get(KEYS.epochSnapshot(19, 3)), undefined, 'a revision ahead of the closes since its epoch: refused')
  t.ok(await table.get(KEYS.epochSnapshot(19, 2)))
  await intake.snapshot('v', { kind: 'sell_paid', epoch: 19, revision: 0, hotkey: 'made-up', snapshot: sellSnap('made-up', 19) }, A)
  await intake.snapshot('v', { kind: 'sell_paid', epoch: 19, revision: 0, hotkey: 'o1', snapshot: sellSnap('o1', 19) }, A)
  t.equal(await table.get(KEYS.sellPaid('made-up', 19)), undefined, 'a sell allowance of a hotkey that is no registered orchestrator: refused')
  t.ok(await table.get(KEYS.sellPaid('o1', 19)))
  t.same(refusals(), ['stale_epoch', 'revision_ahead', 'not_an_orchestrator'])

  // One validator sending copy after copy for one slot keeps one copy.
  const cands = async () => (await collect(table, prefixRange('cand/'))).length
  const before = await cands()
  for (let i = 0; i < 20; i++) await intake.snapshot('v', { kind: 'epoch', epoch: 18, revision: 1, hotkey: null, snapshot: epochSnap(18, 1, 100 + i) }, A)
  t.equal(await cands(), before + 1, 'twenty copies for one slot: one kept')

  // The chain moves on: votes and copies of epochs that left the window go; the versions served stay.
  chain.state.epochs = { current: 31, lastClosed: 30 }
  await intake.snapshot('v', { kind: 'epoch', epoch: 30, revision: 1, hotkey: null, snapshot: epochSnap(30, 1) }, A)
  const votes = (await collect(table, prefixRange('vote/'))).map(([k]) => voteEpoch(k))
  t.same(votes, [30], 'only the vote of the epoch still in the window is kept')
  t.equal(await cands(), 1, 'and only its copy')
  t.ok(await table.get(KEYS.epochSnapshot(oldest, 1)), 'a version served before stays served')
  t.ok(await table.get(KEYS.sellPaid('o1', 19)))
})

t.test('snapshot copies waiting to be counted are bounded per validator', async t => {
  const store = newStore()
  const chain = fakeChain({ v: A, w: A })
  let release!: () => void
  const held = new Promise<void>(resolve => { release = resolve })
  const view = { ...chain.view, epochs: async () => { await held; return await chain.view.epochs() } }
  const { logger, lines } = capturingLogger('warn')
  const intake = validatorIntake({ store, logger, chain: view, penalize: () => t.fail('no penalty') })
  const done: Array<Promise<void>> = []
  for (let i = 0; i < MAX_PENDING_SNAPSHOTS_PER_VALIDATOR + 10; i++) done.push(intake.snapshot('v', { kind: 'sell_paid', epoch: 6, revision: 0, hotkey: `h${i}`, snapshot: sellSnap(`h${i}`, 6) }, A))
  done.push(intake.snapshot('w', { kind: 'sell_paid', epoch: 6, revision: 0, hotkey: 'h0', snapshot: sellSnap('h0', 6) }, A))
  t.equal(lines.filter(l => l.event === 'snapshot_refused' && l.reason === 'too_many_pending').length, 10, 'the copies past the bound are dropped')
  release()
  await Promise.all(done)
  const table = store.table<any>('snapshots')
  t.ok(await table.get(KEYS.sellPaid('h0', 6)), 'the other validator\'s copy was not held back by the bound')
  t.equal(await table.get(KEYS.sellPaid(`h${MAX_PENDING_SNAPSHOTS_PER_VALIDATOR + 5}`, 6)), undefined)
  // Once counted, the bound frees.
  await intake.snapshot('v', { kind: 'sell_paid', epoch: 6, revision: 0, hotkey: 'late', snapshot: sellSnap('late', 6) }, A)
  t.equal(lines.filter(l => l.reason === 'too_many_pending').length, 10)
})
