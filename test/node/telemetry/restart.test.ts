// A restarted devnet serves the same telemetry: published network snapshots and task evidence with
// the same snapshot ids, a cursor taken before the restart continues after it, and a live version
// read before the restart is still readable by its id (within its 10 minutes). Real nodes, real
// level stores on disk, real HTTP, through the typed client.
import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Devnet } from '../../../node/devnet.ts'
import { bootstrapDevnetKeys } from '../../../api/accounts/devnet.ts'
import { createApiClient } from '../../../api/client/index.ts'
import { apiClient, upload, waitForStatus, testBytes } from '../../helpers/devnet.ts'
import { silentLogger } from '../../helpers/logger.ts'
import { eventually } from '../../helpers/proc.ts'

const data = await mkdtemp(join(tmpdir(), 'bwnet-restart-'))
t.teardown(() => rm(data, { recursive: true, force: true }))

async function startDevnet (): Promise<{ devnet: Devnet, baseUrl: string, keys: Record<string, string> }> {
  const devnet = new Devnet({ port: 0, data, workers: 1, logLevel: 'silent' }, silentLogger(), { bootstrapKeys: async (o) => ({ ...await bootstrapDevnetKeys(o.accounts!) }) })
  const file = await devnet.start()
  return { devnet, baseUrl: file.baseUrl, keys: file.keys }
}

t.test('history, snapshot ids, cursors and live versions survive a restart', async t => {
  const first = await startDevnet()
  let stopped = false
  t.teardown(async () => { if (!stopped) await first.devnet.stop() })
  await eventually(async () => (await (await fetch(`${first.baseUrl}/health`)).json() as any).nodes.worker === 1, 15_000, 'the worker to join')
  const api = apiClient(first.baseUrl, first.keys.client!)
  const transfer = await upload(api, testBytes(3 * 1024 * 1024 + 5, 3), { filename: 'restart.bin', hotkey: first.devnet.orchestrator.key.address })
  t.equal((await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })).status < 300, true, 'finalized')
  await waitForStatus(api, transfer.id, ['completed'])

  const before = createApiClient(first.baseUrl, { key: first.keys.console, keyHeader: 'x-api-key' })
  const tasks = await eventually(async () => {
    const r = await before.GET('/v1/telemetry/tasks', { params: { query: { transferId: transfer.id } } })
    return (r.data?.items.length ?? 0) >= 1 ? r.data! : undefined
  }, 15_000, 'published task evidence')
  const history = (await before.GET('/v1/telemetry/network/history')).data!
  t.ok(history.items.length >= 2, 'a snapshot at start and one at the completed transfer')
  const page1 = (await before.GET('/v1/telemetry/network/history', { params: { query: { limit: 1 } } })).data!
  t.not(page1.nextCursor, '', 'a cursor to continue with')
  const page2Before = (await before.GET('/v1/telemetry/network/history', { params: { query: { limit: 1, cursor: page1.nextCursor } } })).data!
  const live = (await before.GET('/v1/telemetry/realtime/network')).data!
  const latest = (await before.GET('/v1/telemetry/network')).data!

  await first.devnet.stop()
  stopped = true

  const second = await startDevnet()
  t.teardown(() => second.devnet.stop())
  const after = createApiClient(second.baseUrl, { key: second.keys.console, keyHeader: 'x-api-key' })
  const tasksAfter = (await after.GET('/v1/telemetry/tasks', { params: { query: { transferId: transfer.id } } })).data!
  t.same(tasksAfter.items.map(i => i.snapshotId), tasks.items.map(i => i.snapshotId), 'the same task evidence, the same ids')
  const historyAfter = (await after.GET('/v1/telemetry/network/history')).data!
  t.same(historyAfter.items.slice(0, history.items.length).map(i => i.snapshotId), history.items.map(i => i.snapshotId), 'the same network history')
  t.equal((await after.GET('/v1/telemetry/network')).data!.snapshotId, latest.snapshotId, 'the latest snapshot is the same one (none added at start)')
  const page2After = await after.GET('/v1/telemetry/network/history', { params: { query: { limit: 1, cursor: page1.nextCursor } } })
  t.equal(page2After.response.status, 200, 'a cursor from before the restart is accepted')
  t.same(page2After.data!.items.map(i => i.snapshotId), page2Before.items.map(i => i.snapshotId), 'and continues where it did')
  const liveAfter = await after.GET('/v1/telemetry/realtime/network', { params: { query: { snapshotId: live.snapshotId } } })
  t.equal(liveAfter.response.status, 200, 'a live version from before the restart is readable by id')
  t.equal(liveAfter.data!.snapshotId, live.snapshotId)
})
