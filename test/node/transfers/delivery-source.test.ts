// How `bwnet transfer put` follows delivery (node/transfers/delivery-source.ts): over the pushed events
// of GET /transfers/{id}/events when the API has the live route, by polling GET /transfers/{id} when it
// refuses the upgrade. Each update the caller sees moves forward; the final record is the stored one.
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildApp } from '../../../api/app.ts'
import { testDeps } from '../../helpers/api.ts'
import { eventually } from '../../helpers/proc.ts'
import { TransferEventHub, eventKey } from '../../../actors/transfer/events.ts'
import { EventsDeliverySource } from '../../../node/transfers/delivery-source.ts'
import { TransferApiClient } from '../../../node/transfers/api-client.ts'
import type { TransferRecord, TransferService } from '../../../api/transfers.ts'
import type { TransferEvent } from '../../../protocol/index.ts'

const ID = '5d0a3e1c-9a51-4f0e-8a3c-7d1c2b9e4f10'
const AT = '2026-11-23T12:00:00.000Z'

function recordAt (delivered: number, status: TransferRecord['status'] = 'in_progress'): TransferRecord {
  return {
    id: ID, status, tier: 'STANDARD', sender_hotkey: '5Sender', destination_id: 'd', transfer_name: 'f', stored_filename: null, metadata: { name: 'f' }, total_size: 4, chunk_size: 1, total_chunks: 4,
    chunks: { received: 4, delivered, verified: delivered, total: 4 }, bytes: { received: 4, delivered, total: 4 },
    finalize_requested: true, created_at: AT, updated_at: `2026-11-23T12:00:0${delivered}.000Z`, started_at: AT, finalized_at: AT,
    completed_at: status === 'completed' ? AT : null, error: null
  }
}

t.test('events: every update moves forward, ends with the stored record, no polling', async t => {
  const env = testDeps()
  const org = await env.accounts.createOrganization({ name: 'o' })
  const key = (await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise', name: 'k' })).key
  const hub = new TransferEventHub(env.store)
  let current = recordAt(1)
  let gets = 0
  const transfers = { get: async () => { gets++; return current } } as unknown as TransferService
  const app = await buildApp({ ...env.deps, transfers, transferEvents: hub })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  const event = (seq: number, delivered: number, status = 'in_progress', type: TransferEvent['type'] = 'chunk_delivered'): TransferEvent => ({
    seq, type, at: `2026-11-23T12:00:0${delivered}.500Z`, transfer_id: ID, status: status as never, chunk_index: type === 'status' ? null : delivered - 1,
    chunks: { received: 4, delivered, verified: delivered, total: 4 }, bytes: { received: 4, delivered, total: 4 }, error: null
  })
  const emit = async (events: TransferEvent[]): Promise<void> => {
    await env.store.batch(events.map(e => ({ type: 'put', table: 'transfer_events', key: eventKey(ID, e.seq), value: e })))
    hub.publish(events)
  }
  await emit([event(1, 0), event(2, 1)]) // the stored history, partly behind the caller's record

  const source = new EventsDeliverySource(new TransferApiClient(url, key), key)
  const seen: number[] = []
  const following = source.follow(recordAt(1), (r) => seen.push(r.chunks.delivered))
  await eventually(async () => hub.subscribers === 1 ? true : undefined, 10_000, 'subscribed')
  await emit([event(3, 2), event(4, 3), event(5, 4)])
  current = recordAt(4, 'completed')
  await emit([event(6, 4, 'completed', 'status')])
  const final = await following
  t.equal(source.used, 'events')
  t.equal(final.status, 'completed')
  t.same(final, current, 'the stored record at the end')
  t.ok(seen.every((d, i) => i === 0 || d >= seen[i - 1]!), `never backwards: ${seen.join(', ')}`)
  t.equal(seen.at(-1), 4)
  t.equal(gets, 2, 'the route\'s owner check at the upgrade, and one read for the final record: no polling')
})

t.test('an API without the live route: falls back to polling and completes', async t => {
  let polls = 0
  const server = createServer((req, res) => {
    if (req.headers.upgrade !== undefined) { res.writeHead(404, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ status: 404, code: 'BWN_ERR_NOT_FOUND', detail: 'no live route' })); return }
    polls++
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(recordAt(Math.min(4, polls), polls >= 4 ? 'completed' : 'in_progress')))
  })
  server.listen(0, '127.0.0.1')
  await new Promise(r => server.once('listening', r))
  t.teardown(() => server.close())
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const source = new EventsDeliverySource(new TransferApiClient(url, 'bwn_test'), 'bwn_test')
  const seen: number[] = []
  const final = await source.follow(recordAt(0), (r) => seen.push(r.chunks.delivered))
  t.equal(source.used, 'poll')
  t.equal(final.status, 'completed')
  t.same(seen, [1, 2, 3, 4], 'each polled record')
})
