// followTransferEvents (api/client/events.ts), the piece a CLI progress bar plugs in: it sees every
// event once, in order, across a dropped connection (it resumes with ?after=), resolves with the
// terminal status, and stops when its signal aborts.
import t from 'tap'
import { buildApp } from '../../api/app.ts'
import { testDeps } from '../helpers/api.ts'
import { eventually } from '../helpers/proc.ts'
import { TransferEventHub, eventKey } from '../../actors/transfer/events.ts'
import { followTransferEvents } from '../../api/client/events.ts'
import type { TransferService } from '../../api/transfers.ts'
import type { TransferEvent } from '../../protocol/index.ts'

const ID = '5d0a3e1c-9a51-4f0e-8a3c-7d1c2b9e4f10'

t.test('follows across a dropped socket without loss or duplicate, until the terminal status', async t => {
  const env = testDeps()
  const org = await env.accounts.createOrganization({ name: 'o' })
  const key = (await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise', name: 'k' })).key
  const hub = new TransferEventHub(env.store)
  const transfers = { get: async (id: string) => ({ id, status: 'in_progress' }) } as unknown as TransferService
  const app = await buildApp({ ...env.deps, transfers, transferEvents: hub })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())

  const event = (seq: number, status = 'in_progress', type: TransferEvent['type'] = 'chunk_received'): TransferEvent => ({
    seq, type, at: new Date().toISOString(), transfer_id: ID, status: status as never, chunk_index: type === 'status' ? null : seq,
    chunks: { received: seq, delivered: 0, verified: 0, total: 9 }, bytes: { received: seq, delivered: 0, total: 9 }, error: null
  })
  const emit = async (events: TransferEvent[]): Promise<void> => {
    await env.store.batch(events.map(e => ({ type: 'put', table: 'transfer_events', key: eventKey(ID, e.seq), value: e })))
    hub.publish(events)
  }
  await emit([event(1, 'pending', 'status'), event(2), event(3)])

  const seen: number[] = []
  const following = followTransferEvents(url, key, ID, { onEvent: (e) => seen.push(e.seq) })
  await eventually(async () => seen.length === 3 ? true : undefined, 10_000, 'the stored events')
  for (const client of app.websocketServer.clients) client.terminate() // the connection drops
  await emit([event(4), event(5)]) // while it is down: only the store has them
  await eventually(async () => hub.subscribers === 1 ? true : undefined, 10_000, 'resubscribed')
  await emit([event(6, 'completed', 'status')])
  const result = await following
  t.same(result, { last: 6, status: 'completed' })
  t.same(seen, [1, 2, 3, 4, 5, 6], 'every event once, in order')

  // An aborted follow returns without a status.
  const ac = new AbortController()
  const other = '7c1f0f5e-2b8e-4d0a-9a57-3e2d1c0b9a88'
  const aborted = followTransferEvents(url, key, other, { onEvent: () => {}, signal: ac.signal })
  await eventually(async () => hub.subscribers === 1 ? true : undefined, 10_000, 'subscribed')
  ac.abort()
  t.same(await aborted, { last: 0, status: null })
})
