// A destination out of room is a wait, not a failed delivery (docs/transfers.md#overseer,
// `destination_full`). A devnet whose data directory is a small tmpfs takes a transfer while no worker
// is attached (staged, its upload begun at the node's own sink), then the disk is filled below the
// node's watermark and a worker joins: every chunk PUT meets 507. Before, each 507 was a failed attempt,
// redelivered at once, and the eighth failed the transfer within seconds. Now the chunk waits, longer
// each time, spending no attempt; once the filler is gone the transfer completes with the exact bytes.
// Needs root (mount); skipped otherwise, with the reason. The second test refuses through the storage
// guard instead of a full disk, so the sink's report of its refusals to the coordinator is tested on any
// machine.
import t from 'tap'
import { mkdtemp, rm, readFile, statfs, open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestDevnet, apiClient, upload, waitForStatus, sinkFile, sha256, testBytes } from '../../helpers/devnet.ts'
import { eventually } from '../../helpers/proc.ts'
import { mountTmpfs, tmpfsSkipReason } from '../../helpers/tmpfs.ts'
import { collect, prefixRange } from '../../../actors/store.ts'
import { MAX_ATTEMPTS_PER_TASK } from '../../../actors/transfer/state.ts'

const MIB = 1024 * 1024
const TMPFS_MIB = 128

t.test('a node sink out of room: the chunk waits for room, spending no attempt, and is delivered once there is room', { skip: tmpfsSkipReason() ?? false, timeout: 180_000 }, async t => {
  const mnt = await mountTmpfs(t, TMPFS_MIB, 'bwnet-dest-full-')
  const workerDir = await mkdtemp(join(tmpdir(), 'bwnet-dest-full-worker-')) // the worker's own disk is not the full one
  t.teardown(async () => { await rm(workerDir, { recursive: true, force: true }) })
  const net = await startTestDevnet(t, { workers: 0, data: join(mnt, 'devnet') })
  const orch = net.devnet.orchestrator
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const data = testBytes(2 * MIB + 5, 91)
  const transfer = await upload(api, data, { filename: 'full.bin', hotkey: net.file.nodes[0]!.hotkey })
  t.ok([200, 202].includes((await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })).status), 'finalized')
  // Staged, and the upload begun at the sink (its room checked then), while no worker can take it.
  await eventually(async () => (await orch.store.table<any>('transfers').get(transfer.id))?.upload != null, 30_000, 'the upload begun', 100)

  // The disk filled until less than the node's watermark is free: the sink refuses every chunk (507).
  const filler = join(mnt, 'filler')
  const free = async (): Promise<number> => { const s = await statfs(mnt); return s.bavail * s.bsize }
  const leave = Math.floor(orch.storage.minFreeBytes / 2)
  const fh = await open(filler, 'a')
  try {
    const block = Buffer.alloc(MIB)
    for (let room = await free() - leave; room > 0; room = await free() - leave) await fh.write(block, 0, Math.min(block.byteLength, room))
  } finally { await fh.close() }
  t.ok(await free() < orch.storage.minFreeBytes, 'less than the watermark free')

  await net.addNode('worker-1', { role: 'worker', attachTo: orch.key.address, data: workerDir }, { enroll: false })
  const interventions = async (): Promise<any[]> => (await collect(orch.store.table<any>('overseer_interventions'), prefixRange(`${transfer.id}/`))).map(([, r]) => r)
  // Each refusal a wait, none an attempt spent (before, each was a failed attempt: the eighth failed the transfer).
  const waits = await eventually(async () => {
    const rows = (await interventions()).filter(r => r.reason === 'destination_full')
    return rows.length >= 3 ? rows : undefined
  }, 60_000, 'the chunk to meet no room three times', 250)
  t.ok(waits.every(r => r.outcome === 'failure_redelivered'), 'each refusal is offered again')
  t.same((await interventions()).filter(r => r.reason !== 'destination_full'), [], 'no other intervention: no attempt failed')
  t.equal((await api(`/transfers/${transfer.id}`)).body.status, 'in_progress', 'the transfer waits')
  t.ok(MAX_ATTEMPTS_PER_TASK > 3, 'the test is not under the attempt limit by accident')

  // Room again: the next offer goes through.
  await rm(filler, { force: true })
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 90_000)
  t.equal(done.status, 'completed', `completed once there is room (${JSON.stringify(done.error ?? null)})`)
  t.equal(sha256(await readFile(sinkFile(join(mnt, 'devnet'), await net.orgId(), done.stored_filename ?? 'full.bin'))), sha256(data), 'the sink holds the exact bytes')
})

// The same on any machine (no mount): the sink's storage guard refuses every chunk PUT while the test
// says so. What this adds is the wiring: the coordinator takes each `destination_full` as a wait only
// because its own sink told it of the refusal; without that report each would be a failed attempt.
t.test('the node\'s own sink tells its coordinator of each refusal: each destination_full is a wait, none an attempt spent', { timeout: 180_000 }, async t => {
  const workerDir = await mkdtemp(join(tmpdir(), 'bwnet-dest-refuse-worker-'))
  t.teardown(async () => { await rm(workerDir, { recursive: true, force: true }) })
  const net = await startTestDevnet(t, { workers: 0 })
  const orch = net.devnet.orchestrator
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const data = testBytes(2 * MIB + 7, 92)
  const transfer = await upload(api, data, { filename: 'refused.bin', hotkey: net.file.nodes[0]!.hotkey })
  t.ok([200, 202].includes((await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })).status), 'finalized')
  await eventually(async () => (await orch.store.table<any>('transfers').get(transfer.id))?.upload != null, 30_000, 'the upload begun', 100)
  let refusing = true
  let refused = 0
  const room = orch.storage.room.bind(orch.storage)
  orch.storage.room = async (bytes: number, what: string): Promise<void> => {
    if (refusing && what.startsWith('chunk ')) { refused++; throw orch.storage.refusal(what, bytes, 0) }
    await room(bytes, what)
  }
  await net.addNode('worker-1', { role: 'worker', attachTo: orch.key.address, data: workerDir }, { enroll: false })
  const interventions = async (): Promise<any[]> => (await collect(orch.store.table<any>('overseer_interventions'), prefixRange(`${transfer.id}/`))).map(([, r]) => r)
  await eventually(async () => (await interventions()).filter(r => r.reason === 'destination_full').length >= 3, 60_000, 'three refusals taken as waits', 250)
  t.ok(refused >= 3, `the sink refused ${refused} PUTs`)
  t.same((await interventions()).filter(r => r.reason !== 'destination_full'), [], 'no other intervention: no refusal was taken as a failed attempt')
  refusing = false
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 90_000)
  t.equal(done.status, 'completed', `completed once the sink takes the chunks (${JSON.stringify(done.error ?? null)})`)
  t.equal(sha256(await readFile(sinkFile(net.data, await net.orgId(), done.stored_filename ?? 'refused.bin'))), sha256(data), 'the sink holds the exact bytes')
})
