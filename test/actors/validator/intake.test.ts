// What an orchestrator takes in from validators: PRISM scores become routing weights and pools (the latest
// copy served by GET /chain/prism); snapshot copies are stake-weighted votes, a tampered copy a penalty.
import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../../actors/store.ts'
import { sealEnvelope } from '../../../actors/validator/envelope.ts'
import { KEYS } from '../../../actors/validator/snapshots.ts'
import { validatorIntake } from '../../../actors/validator/intake.ts'
import { silentLogger } from '../../helpers/logger.ts'

const score = (hotkey: string, routingScore: number, pool: 'qualifying' | 'qualified') => ({ hotkey, pool, routingScore, finalScore: routingScore, penaltyMultiplier: 1, readinessMultiplier: 1, activeTimeRatio: 1 })
const snap = (count: number) => sealEnvelope({ version: 'v', observedAt: 'a', sourceEpoch: 3, formulaReference: 'f', publishedAt: 'p', evidenceSequence: '1', data: { revision: 0, count } }) as any

t.test('PRISM scores: routing weights and pools from the latest scores, the latest copy stored', async t => {
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const intake = validatorIntake({ store, logger: silentLogger(), penalize: () => t.fail('no penalty') })
  t.equal(intake.routingScore('o1'), undefined, 'unscored until a validator scores it')
  t.equal(intake.poolOf('o1'), 'unscored')
  t.same(await intake.latestPrism(), { validator: null, epoch: null, computedAt: null, scores: [] })
  intake.prism('val', { epoch: 4, computedAt: 1000, scores: [score('o1', 0.25, 'qualifying'), score('o2', 0.75, 'qualified')] })
  t.equal(intake.routingScore('o1'), 0.25)
  t.equal(intake.poolOf('o2'), 'qualified')
  intake.prism('val2', { epoch: 5, computedAt: 2000, scores: [score('o1', 0.5, 'qualified')] })
  t.equal(intake.routingScore('o1'), 0.5, 'a later score replaces the earlier one')
  t.equal(intake.routingScore('o2'), 0.75, 'an orchestrator missing from the later scores keeps its last one')
  const latest = await intake.latestPrism()
  t.same({ validator: latest.validator, epoch: latest.epoch, computedAt: latest.computedAt, hotkeys: latest.scores.map(s => s.hotkey) }, { validator: 'val2', epoch: 5, computedAt: 2000, hotkeys: ['o1'] })
  // Stored: a new intake over the same store serves it too.
  const again = validatorIntake({ store, logger: silentLogger(), penalize: () => {} })
  t.equal((await again.latestPrism()).validator, 'val2')
})

t.test('snapshots: a copy is a vote by stake; a copy whose id does not match its content is a penalty', async t => {
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const penalties: Array<[string, string]> = []
  const intake = validatorIntake({ store, logger: silentLogger(), penalize: (v, d) => penalties.push([v, d]) })
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
  const paid = snap(5)
  await intake.snapshot('H', { kind: 'sell_paid', epoch: 3, revision: 0, hotkey: 'hk', snapshot: paid }, 900n)
  t.equal((await table.get(KEYS.sellPaid('hk', 3))).snapshotId, paid.snapshotId, 'sell-allowance proofs are served under their own slot')
})
