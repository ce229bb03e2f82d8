// Acceptance: on a healthy devnet a clean transfer needs zero recovery: no overseer intervention, no
// second attempt of any chunk, telemetry recoveryAttemptCount 0. Delivery is pipelined with the upload:
// chunk k is offered as soon as it is acknowledged, before the client has sent the rest.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startTestDevnet, sinkFile, apiClient, sendChunks, waitForStatus, sha256, testBytes } from '../../helpers/devnet.ts'
import { eventually } from '../../helpers/proc.ts'
import { collect, prefixRange } from '../../../actors/store.ts'

const CHUNKS = 6
const SIZE = CHUNKS * 16 * 1024 * 1024

t.test('a clean multi-chunk transfer: pipelined, zero recovery attempts, identical bytes', async t => {
  const net = await startTestDevnet(t, { workers: 3 })
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const data = testBytes(SIZE, 11)
  const created = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: net.file.nodes[0]!.hotkey, total_size: SIZE, filename: 'clean.bin', tier: 'STANDARD' } })
  t.equal(created.status, 201)
  const transfer = created.body
  t.equal(transfer.total_chunks, CHUNKS)
  await sendChunks(api, transfer, data) // one chunk after the other, as a single client lane
  t.equal((await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })).status, 202)
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 180_000)
  t.equal(done.status, 'completed', JSON.stringify(done.error))
  t.equal(sha256(await readFile(sinkFile(net.data, await net.orgId(), 'clean.bin'))), sha256(data), 'identical sha256')

  const store = net.devnet.orchestrator.store
  const rows = async (table: string): Promise<any[]> => (await collect(store.table<any>(table as never), prefixRange(`${transfer.id}/`))).map(([, r]) => r)
  const chunks = await rows('chunks')
  const attempts = await rows('task_attempts')
  const lastReceived = chunks.map(c => c.received_at).sort().at(-1)
  const firstOffered = attempts.map(a => a.offered_at).sort()[0]
  t.ok(firstOffered < lastReceived, `delivery started (${firstOffered}) before the upload ended (${lastReceived})`)
  t.same(await rows('overseer_interventions'), [], 'no overseer intervention')
  t.equal(attempts.length, CHUNKS, 'one attempt per chunk')
  t.ok(attempts.every(a => a.attempt_no === 0 && a.recovery === false && a.state === 'succeeded'), 'every first attempt succeeded')

  // Telemetry (the console's view) agrees: attempts counted, none of them a recovery.
  const workloads = await eventually(async () => {
    const res = await fetch(`${net.file.telemetryUrl}/v1/telemetry/realtime/network`, { headers: { 'x-api-key': net.file.keys.console! } })
    const body = await res.json() as any
    const w = body.data?.workloads ?? body.workloads ?? []
    return w.reduce((n: number, x: any) => n + x.attemptCount, 0) >= CHUNKS ? w : undefined
  }, 30_000, 'telemetry to count the attempts')
  t.equal(workloads.reduce((n: number, x: any) => n + x.recoveryAttemptCount, 0), 0, 'recoveryAttemptCount 0')
})
