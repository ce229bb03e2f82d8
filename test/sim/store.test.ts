// The simulator's store lets a finished transfer's rows go (FinishedTransfers): its row, every row keyed
// `<transferId>/…`, and its organization index key, so memory stays bounded over a million tasks.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { FinishedTransfers, SimStore } from '../../sim/store.ts'
import { TransferState } from '../../actors/transfer/state.ts'
import { transferRow } from '../helpers/transfer-state.ts'

t.test('a finished transfer leaves every table, its organization index key too', async t => {
  const finished = new FinishedTransfers()
  const store = new SimStore(finished)
  const keep = transferRow(randomUUID(), 1, { org_id: null })
  const done = transferRow(randomUUID(), 1, { org_id: null })
  for (const row of [keep, done]) await store.batch(new TransferState({ self: 'c', newId: randomUUID }).create(row, 0).ops)
  await store.batch([{ type: 'put', table: 'tasks', key: `${done.id}/x`, value: {} }])
  t.equal(store.size('index'), 2, 'both index keys held')
  await store.batch([{ type: 'put', table: 'transfers', key: done.id, value: { ...done, status: 'completed' } }])
  t.equal(finished.released, 1)
  t.same(store.rows('index').map(([k]) => k.endsWith(keep.id)), [true], 'only the live transfer\'s index key is left')
  t.equal(store.size('tasks'), 0)
  t.equal(store.size('transfers'), 1)
})
