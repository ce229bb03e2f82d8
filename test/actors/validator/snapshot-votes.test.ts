// Orchestrators combine validators' snapshot copies by stake: the copy backed by the most stake is
// served only with at least half the stake of the epoch's voters; a minority cannot add or replace one.
import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../../actors/store.ts'
import { sealEnvelope } from '../../../actors/validator/envelope.ts'
import { voteSnapshot, pickByStake, idMatchesContent } from '../../../actors/validator/snapshot-votes.ts'

const snap = (revision: number, count: number) => sealEnvelope({ version: 'v', observedAt: 'a', sourceEpoch: 3, formulaReference: 'f', publishedAt: 'p', evidenceSequence: '1', data: { revision, count } }) as any
const idKey = (id: string) => `id/${id}`

t.test('pickByStake: most stake wins, ties by id', async t => {
  t.same(pickByStake([{ validator: 'a', stakeRao: '5', snapshotId: 'x' }, { validator: 'b', stakeRao: '3', snapshotId: 'y' }, { validator: 'c', stakeRao: '3', snapshotId: 'y' }]), { snapshotId: 'y', stake: 6n })
  t.same(pickByStake([{ validator: 'a', stakeRao: '1', snapshotId: 'b' }, { validator: 'b', stakeRao: '1', snapshotId: 'a' }]), { snapshotId: 'a', stake: 1n })
  t.equal(pickByStake([]), null)
})

t.test('a tampered copy whose id was not recomputed is not even a vote', async t => {
  const s = snap(1, 1)
  t.ok(idMatchesContent(s))
  t.notOk(idMatchesContent({ ...s, data: { ...s.data, count: 999 } }))
})

t.test('a minority validator can neither replace a version nor add a revision', async t => {
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const table = store.table<any>('snapshots')
  const honest = snap(1, 10); const forged = snap(1, 999); const extra = snap(8, 999)
  await voteSnapshot(store, { group: 'epoch/3', slot: 'epoch/3/1', validator: 'H', stakeRao: 900n, snapshot: honest, idKey })
  t.equal((await table.get('epoch/3/1')).snapshotId, honest.snapshotId, 'the first copy is served')
  await voteSnapshot(store, { group: 'epoch/3', slot: 'epoch/3/1', validator: 'R', stakeRao: 100n, snapshot: forged, idKey })
  t.equal((await table.get('epoch/3/1')).snapshotId, honest.snapshotId, 'a minority copy does not replace it')
  await voteSnapshot(store, { group: 'epoch/3', slot: 'epoch/3/8', validator: 'R', stakeRao: 100n, snapshot: extra, idKey })
  t.equal(await table.get('epoch/3/8'), undefined, 'a revision only a minority published is not served')
  t.equal(await table.get(idKey(extra.snapshotId)), undefined)
})

t.test('a copy served while its validator voted alone is withdrawn once outvoted', async t => {
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const table = store.table<any>('snapshots')
  const forged = snap(2, 999); const honest = snap(2, 10)
  await voteSnapshot(store, { group: 'epoch/3', slot: 'epoch/3/2', validator: 'R', stakeRao: 100n, snapshot: forged, idKey })
  t.equal((await table.get('epoch/3/2')).snapshotId, forged.snapshotId)
  await voteSnapshot(store, { group: 'epoch/3', slot: 'epoch/3/2', validator: 'H', stakeRao: 900n, snapshot: honest, idKey })
  t.equal((await table.get('epoch/3/2')).snapshotId, honest.snapshotId, 'the stake majority\'s copy replaces it')
})
