// The realtime stream's push that finds no room in the socket's queue (the client stopped reading):
// the socket is closed with 1013 and the push, debited just before, is refunded, so the ledger's
// debits net of refunds equal the pushes the client received. The queue bound here sits between the
// first version's message and the second's (which names many providers), so the second cannot be queued.
import t from 'tap'
import { telemetryApp } from '../helpers/telemetry.ts'
import { connectWs } from '../helpers/ws.ts'
import { eventually } from '../helpers/proc.ts'
import { STREAM_MEMO, REFUND_MEMO } from '../../api/routes/live.ts'
import type { RealtimeStreamMessage } from '../../protocol/index.ts'

const MAX_QUEUE = 16 * 1024

t.test('a push the queue cannot take is closed 1013 and not charged', async t => {
  const T = await telemetryApp({ live: { maxQueueBytes: MAX_QUEUE } })
  t.teardown(() => T.app.close())
  const base = await T.app.listen({ host: '127.0.0.1', port: 0 })
  const { accounts } = T.env
  const price = accounts.price('realtime')
  const org = await accounts.createOrganization({ name: 'stream' })
  await accounts.grantCredits(org.id, 10 * price)
  const { key } = await accounts.createKey(org.id, { role: 'console', plan: 'enterprise', scopes: ['telemetry:read', 'telemetry:realtime:read'] })

  const s = await connectWs<RealtimeStreamMessage>(base.replace(/^http/, 'ws') + '/v1/telemetry/realtime/stream', { headers: { 'x-api-key': key } })
  await eventually(async () => s.messages[0], 10_000, 'the first push')
  t.ok(JSON.stringify(s.messages[0]).length < MAX_QUEUE, 'the first version fits the queue')
  ;(s.ws as any)._socket.pause() // the client stops reading

  // A new live version whose message is larger than the queue may hold.
  const providers = Array.from({ length: 400 }, (_, i) => ({ provider: `provider-${String(i).padStart(4, '0')}-${'p'.repeat(40)}`, workerCount: 1 }))
  T.projection.setParticipants({ workerCount: 400, orchestratorCount: 1, validatorCount: 0, reportedCapacityMbps: 400, providers }, {})
  t.ok(JSON.stringify(T.projection.current(T.env.clock.now()).env).length > MAX_QUEUE, 'the second does not')

  const debits = async (memo: string): Promise<number> => (await accounts.ledger(org.id, { limit: 1000 })).filter(e => e.memo === memo).length
  await eventually(async () => (await debits(STREAM_MEMO)) >= 2 ? true : undefined, 10_000, 'the second push debited')
  ;(s.ws as any)._socket.resume()
  const end = await s.closed
  t.equal(end.code, 1013, 'closed with 1013: the client fell behind')
  t.equal(s.messages.length, 1, 'one push delivered')

  // The refund is written after the close: wait for it (without one, this times out and fails).
  await eventually(async () => { await accounts.flush(); return (await debits(REFUND_MEMO)) >= 1 ? true : undefined }, 10_000, 'the undelivered push refunded')
  const charged = await debits(STREAM_MEMO)
  const refunded = await debits(REFUND_MEMO)
  t.equal(charged - refunded, s.messages.length, `ledger debits net of refunds equal the pushes delivered (${charged} debits, ${refunded} refunds)`)
  t.equal((await accounts.balance(org.id)).balance, 10 * price - s.messages.length * price, 'the balance paid for delivered pushes only')
})
