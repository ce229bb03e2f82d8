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

t.test('pickByStake: an equal stake counted later does not displace a smaller id', async t => {
  t.same(pickByStake([{ validator: 'a', stakeRao: '1', snapshotId: 'a' }, { validator: 'b', stakeRao: '1', snapshotId: 'b' }]), { snapshotId: 'a', stake: 1n })
  t.same(pickByStake([{ validator: 'a', stakeRao: '2', snapshotId: 'a' }, { validator: 'b', stakeRao: '1', snapshotId: 'b' }, { validator: 'c', stakeRao: '1', snapshotId: 'b' }]), { snapshotId: 'a', stake: 2n })
})

t.test('content that is not JSON has no id: not a vote, and no throw', async t => {
  t.equal(idMatchesContent({ ...snap(1, 1), data: { count: 1n } }), false)
  t.equal(idMatchesContent(snap(1, 1)), true)
})

t.test('a vote without stake counts as 1 rao; the slots served are returned', async t => {
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const table = store.table<any>('snapshots')
  const s = snap(4, 1)
  t.same(await voteSnapshot(store, { group: 'epoch/4', slot: 'epoch/4/4', validator: 'Z', stakeRao: 0n, snapshot: s, idKey }), ['epoch/4/4'])
  t.same(await table.get('vote/epoch/4/epoch/4/4/Z'), { validator: 'Z', stakeRao: '1', snapshotId: s.snapshotId })
  await voteSnapshot(store, { group: 'epoch/4', slot: 'epoch/4/4', validator: 'N', stakeRao: -5n, snapshot: s, idKey })
  t.equal((await table.get('vote/epoch/4/epoch/4/4/N')).stakeRao, '1')
  t.equal(await table.get(idKey(s.snapshotId)), 'epoch/4/4')
})

t.test('exactly half the stake is enough to serve', async t => {
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const table = store.table<any>('snapshots')
  const one = snap(5, 1); const other = snap(5, 2)
  const [low, high] = [one, other].sort((a, b) => (a.snapshotId < b.snapshotId ? -1 : 1))
  await voteSnapshot(store, { group: 'epoch/5', slot: 'epoch/5/5', validator: 'A', stakeRao: 100n, snapshot: high, idKey })
  t.same(await voteSnapshot(store, { group: 'epoch/5', slot: 'epoch/5/5', validator: 'B', stakeRao: 100n, snapshot: low, idKey }), ['epoch/5/5'])
  t.equal((await table.get('epoch/5/5')).snapshotId, low.snapshotId, 'a tie of stake: the smaller id')
})

t.test('a validator counts once, with its largest stake in the group', async t => {
  // H votes 900 on slot a and 100 on slot b; R 50 on slot a. The group's stake is 950, not 150: H's
  // copy of b (100) is not served, and a is.
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const table = store.table<any>('snapshots')
  const a = snap(6, 1); const b = snap(7, 1); const r = snap(6, 2)
  await voteSnapshot(store, { group: 'epoch/6', slot: 'epoch/6/a', validator: 'H', stakeRao: 900n, snapshot: a, idKey })
  await voteSnapshot(store, { group: 'epoch/6', slot: 'epoch/6/a', validator: 'R', stakeRao: 50n, snapshot: r, idKey })
  t.same(await voteSnapshot(store, { group: 'epoch/6', slot: 'epoch/6/b', validator: 'H', stakeRao: 100n, snapshot: b, idKey }), ['epoch/6/a'])
  t.equal(await table.get('epoch/6/b'), undefined)
  t.equal((await table.get('epoch/6/a')).snapshotId, a.snapshotId)
})

t.test('a slot served by a lone validator is withdrawn when more stake votes elsewhere in the group', async t => {
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const table = store.table<any>('snapshots')
  const lone = snap(8, 999); const honest = snap(9, 10)
  t.same(await voteSnapshot(store, { group: 'epoch/8', slot: 'epoch/8/8', validator: 'R', stakeRao: 100n, snapshot: lone, idKey }), ['epoch/8/8'])
  t.equal((await table.get('epoch/8/8')).snapshotId, lone.snapshotId)
  t.same(await voteSnapshot(store, { group: 'epoch/8', slot: 'epoch/8/9', validator: 'H', stakeRao: 900n, snapshot: honest, idKey }), ['epoch/8/9'])
  t.equal(await table.get('epoch/8/8'), undefined, 'no longer served')
  t.equal((await table.get('epoch/8/9')).snapshotId, honest.snapshotId)
})

t.test('a winning vote whose copy is not stored serves nothing', async t => {
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const table = store.table<any>('snapshots')
  await store.batch([{ type: 'put', table: 'snapshots', key: 'vote/epoch/10/epoch/10/1/G', value: { validator: 'G', stakeRao: '1000', snapshotId: 'gone' } }])
  const s = snap(10, 1)
  t.same(await voteSnapshot(store, { group: 'epoch/10', slot: 'epoch/10/2', validator: 'H', stakeRao: 1000n, snapshot: s, idKey }), ['epoch/10/2'])
  t.equal(await table.get('epoch/10/1'), undefined)
  t.equal(await table.get(idKey('gone')), undefined)
})

t.test('votes weigh the stake their validators hold now: a stake moved to a second hotkey, or a permit lost, does not count twice', async t => {
  // C (1,500) publishes X; A (1,000) votes a forged Y, then moves its stake to B, which gains a permit and
  // votes Y too. Weighed as cast, Y would have 2,000 of 3,500 and be served though its backers hold 1,000.
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const table = store.table<any>('snapshots')
  const x = snap(11, 10); const y = snap(11, 999)
  const before = new Map([['C', 1500n], ['A', 1000n]])
  await voteSnapshot(store, { group: 'epoch/11', slot: 'epoch/11/1', validator: 'C', stakeRao: 1500n, snapshot: x, idKey, permittedStake: 2500n, stakes: before })
  await voteSnapshot(store, { group: 'epoch/11', slot: 'epoch/11/1', validator: 'A', stakeRao: 1000n, snapshot: y, idKey, permittedStake: 2500n, stakes: before })
  t.equal((await table.get('epoch/11/1')).snapshotId, x.snapshotId)
  const after = new Map([['C', 1500n], ['A', 0n], ['B', 1000n]])
  await voteSnapshot(store, { group: 'epoch/11', slot: 'epoch/11/1', validator: 'B', stakeRao: 1000n, snapshot: y, idKey, permittedStake: 2501n, stakes: after })
  t.equal((await table.get('epoch/11/1')).snapshotId, x.snapshotId, 'the moved stake counts once: X stays served')
  // A loses its permit altogether: its vote no longer counts at all.
  const later = new Map([['C', 1500n], ['B', 1000n]])
  const z = snap(12, 1)
  await voteSnapshot(store, { group: 'epoch/12', slot: 'epoch/12/1', validator: 'A', stakeRao: 1000n, snapshot: z, idKey, permittedStake: 2500n, stakes: new Map([...later, ['A', 1000n]]) })
  t.equal((await table.get('epoch/12/1')), undefined, 'A alone holds 1,000 of 3,500: no quorum')
  await voteSnapshot(store, { group: 'epoch/12', slot: 'epoch/12/1', validator: 'B', stakeRao: 1000n, snapshot: snap(12, 2), idKey, permittedStake: 2500n, stakes: later })
  t.equal((await table.get('epoch/12/1')), undefined, 'A\'s vote, its permit gone, does not make B\'s 1,000 a quorum of 2,500')
})

t.test('a validator voting again in the group, for another slot, is counted at its stake now in every slot', async t => {
  // A (1,000) votes a forged copy of revision 1; A moves 900 to B, which votes the same; then A votes a
  // copy of revision 2. A's revision-1 vote weighs 100 now, not 1,000: the forgery has 1,000, not 1,900.
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const table = store.table<any>('snapshots')
  const honest = snap(1, 10); const forged = snap(1, 999); const second = snap(2, 5)
  const first = new Map([['C', 1500n], ['A', 1000n]])
  await voteSnapshot(store, { group: 'epoch/13', slot: 'epoch/13/1', validator: 'C', stakeRao: 1500n, snapshot: honest, idKey, permittedStake: 2500n, stakes: first })
  await voteSnapshot(store, { group: 'epoch/13', slot: 'epoch/13/1', validator: 'A', stakeRao: 1000n, snapshot: forged, idKey, permittedStake: 2500n, stakes: first })
  const moved = new Map([['C', 1500n], ['A', 100n], ['B', 900n]])
  await voteSnapshot(store, { group: 'epoch/13', slot: 'epoch/13/1', validator: 'B', stakeRao: 900n, snapshot: forged, idKey, permittedStake: 2500n, stakes: moved })
  await voteSnapshot(store, { group: 'epoch/13', slot: 'epoch/13/2', validator: 'A', stakeRao: 100n, snapshot: second, idKey, permittedStake: 2500n, stakes: moved })
  t.equal((await table.get('epoch/13/1')).snapshotId, honest.snapshotId, 'the honest copy stays served')
})
