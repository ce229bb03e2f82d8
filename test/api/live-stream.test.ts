// GET /v1/telemetry/realtime/stream against a real devnet with a real `ws` client: the current live
// version first, then a new one once a transfer completes, each push debited at the realtime read
// price; a version the client names as held is not sent again; an organization that cannot pay the
// next push is closed with 4402 (and one with no credits at all is refused 402 before the upgrade).
import t from 'tap'
import type WebSocket from 'ws'
import { startTestDevnet, apiClient, sendChunks, testBytes, waitForStatus } from '../helpers/devnet.ts'
import { eventually } from '../helpers/proc.ts'
import { connectWs } from '../helpers/ws.ts'
import type { RealtimeStreamMessage } from '../../protocol/index.ts'
import { STREAM_MEMO, REFUND_MEMO } from '../../api/routes/live.ts'

const SIZE = 20 * 1024 * 1024

interface Stream { messages: RealtimeStreamMessage[], closed: Promise<{ code: number, reason: string }>, ws: WebSocket }

function stream (url: string, key: string, snapshotId?: string): Promise<Stream> {
  const u = new URL('/v1/telemetry/realtime/stream', url.replace(/^http/, 'ws'))
  if (snapshotId !== undefined) u.searchParams.set('snapshotId', snapshotId)
  return connectWs<RealtimeStreamMessage>(u, { headers: { 'x-api-key': key } })
}

t.test('realtime stream: pushes new live versions, charged per push; 4402 when the balance runs out', async t => {
  const net = await startTestDevnet(t, { workers: 2 })
  const accounts = net.devnet.orchestrator.accounts!
  const price = accounts.price('realtime')
  t.ok(price > 0, 'a realtime read has a price')
  const consoleKey = net.file.keys.console
  const org = (await accounts.listOrganizations())[0]!

  const s = await stream(net.file.baseUrl, consoleKey)
  const first = await eventually(async () => s.messages[0], 10_000, 'the current version')
  t.match(first, { seq: 1, type: 'network', charged: price, snapshotId: String })
  t.equal(first.envelope.snapshotId, first.snapshotId, 'the envelope of realtime/network, same version')
  const direct = await fetch(`${net.file.baseUrl}/v1/telemetry/realtime/network?snapshotId=${first.snapshotId}`, { headers: { 'x-api-key': consoleKey } })
  t.same({ ...(await direct.json() as object) }, first.envelope, 'identical to the REST read of that version')

  // A client that already holds this version is not sent it again: its first push is the next version.
  const holder = await stream(net.file.baseUrl, consoleKey, first.snapshotId)
  // A client of an organization that can pay exactly one push.
  const poorOrg = await accounts.createOrganization({ name: 'one push' })
  await accounts.grantCredits(poorOrg.id, price)
  const poorKey = (await accounts.createKey(poorOrg.id, { role: 'console', plan: 'enterprise', name: 'poor', scopes: ['telemetry:read', 'telemetry:realtime:read'] })).key
  const poor = await stream(net.file.baseUrl, poorKey)
  await eventually(async () => poor.messages[0], 10_000, 'the poor client\'s first push')
  t.equal(poor.messages[0]!.remaining, 0, 'its one push took its whole balance')

  // A transfer completes: its evidence makes a new live version.
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const created = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: net.file.nodes[0]!.hotkey, total_size: SIZE, filename: 'stream.bin', tier: 'STANDARD' } })
  await sendChunks(api, created.body, testBytes(SIZE, 3))
  await api(`/transfers/${created.body.id}/finalize`, { method: 'POST' })
  t.equal((await waitForStatus(api, created.body.id, ['completed', 'failed'], 120_000)).status, 'completed')

  const next = await eventually(async () => s.messages.find(m => m.seq >= 2 && ((m.envelope as any).data?.transferredBytes ?? 0) >= SIZE), 30_000, 'a version with the transfer')
  t.not(next.snapshotId, first.snapshotId, 'a new version')
  t.ok(s.messages.every((m, i) => i === 0 || m.snapshotId !== s.messages[i - 1]!.snapshotId), 'no version pushed twice')
  t.ok(s.messages.every((m, i) => m.seq === i + 1 && m.charged === price), 'every push numbered and charged the realtime price')
  t.ok(s.messages.every((m, i) => i === 0 || m.remaining <= s.messages[i - 1]!.remaining - price), 'the balance falls by the price (at least) with each push')

  const held = await eventually(async () => holder.messages[0], 30_000, 'the holder\'s first push')
  t.not(held.snapshotId, first.snapshotId, 'the held version was not resent')
  s.ws.close(); holder.ws.close()
  await s.closed; await holder.closed
  const ledger = await accounts.ledger(org.id, { limit: 1000 })
  const debits = ledger.filter(e => e.memo === STREAM_MEMO).length
  const refunds = ledger.filter(e => e.memo === REFUND_MEMO).length // a push the client closed before
  t.equal(debits - refunds, s.messages.length + holder.messages.length, `one ledger debit per delivered push (${debits} debits, ${refunds} refunds)`)

  const end = await poor.closed
  t.equal(end.code, 4402, 'the next push it cannot pay closes the socket with 4402')
  t.match(end.reason, /insufficient credits/)
  t.equal(poor.messages.length, 1, 'no unpaid push')

  // With no credits at all: refused before the upgrade, 402 problem.
  const refused = await stream(net.file.baseUrl, poorKey).then(() => null, (e) => e)
  t.equal(refused?.status, 402)
  t.match(JSON.parse(refused.body), { code: 'BWN_ERR_INSUFFICIENT_CREDITS' })
  // A client key is not a console key: 403 before the upgrade.
  const wrongRole = await stream(net.file.baseUrl, net.file.keys.client).then(() => null, (e) => e)
  t.equal(wrongRole?.status, 403)

})
