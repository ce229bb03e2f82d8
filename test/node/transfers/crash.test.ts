// Crash consistency: the devnet process is killed (SIGKILL, from inside, by a `--test-faults crash-*`
// point so the phase is exact) during upload, after finalize, during delivery, and just before and just
// after the destination completes the object. After a restart on the same data directory each transfer
// ends `completed` with the sender's sha256, without the client doing more than it would anyway.
import t from 'tap'

/** What these helpers use of a tap test. */
interface Test {
  teardown (fn: () => unknown): void
  equal: (...args: any[]) => unknown
  same: (...args: any[]) => unknown
  match: (...args: any[]) => unknown
  ok: (...args: any[]) => unknown
}
import { once } from 'node:events'
import { readFile, readdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { eventually } from '../../helpers/proc.ts'
import { apiClient, sha256, testBytes, startDevnetProcess, mintClientKey, devnetOrgId, sinkFile, type Api, type DevnetProcess } from '../../helpers/devnet.ts'

// Five phases, each two devnet starts: more than the default per-file budget on a loaded machine.
t.setTimeout(20 * 60_000)

const SIZE = 40 * 1024 * 1024 // three chunks: 16 + 16 + 8 MiB
const START_TIMEOUT_MS = 120_000
const CRASH_TIMEOUT_MS = 120_000
const DONE_TIMEOUT_MS = 120_000

type Running = DevnetProcess

async function startDevnet (t: Test, data: string, faults: string[] = []): Promise<Running> {
  return await startDevnetProcess(t, data, { args: faults.length > 0 ? ['--test-faults', faults.join(',')] : [], startTimeoutMs: START_TIMEOUT_MS })
}

/** Resolves once the process is gone; it must have been killed by its own crash point. */
async function crashed (t: Test, r: Running, point: string): Promise<void> {
  const exit = r.proc.child.exitCode !== null || r.proc.child.signalCode !== null
    ? [r.proc.child.exitCode, r.proc.child.signalCode]
    : await Promise.race([once(r.proc.child, 'exit'), new Promise((_resolve, reject) => setTimeout(() => reject(new Error(`no crash at ${point}`)), CRASH_TIMEOUT_MS).unref())]) as [number | null, string | null]
  // Nothing else sends SIGKILL to the devnet before the test does: the crash point fired.
  t.same(exit, [null, 'SIGKILL'], `killed at ${point}`)
}

async function sendChunk (api: Api, transfer: any, data: Uint8Array, i: number): Promise<number> {
  const chunk = data.subarray(i * transfer.chunk_size, Math.min(data.byteLength, (i + 1) * transfer.chunk_size))
  const res = await api(`/transfers/${transfer.id}/chunks`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-chunk-index': String(i), 'x-chunk-sha256': sha256(chunk) }, body: chunk as unknown as BodyInit })
  return res.status
}

/** A call the crash may cut off: its answer does not matter. */
const mayFail = async (p: Promise<unknown>): Promise<void> => { try { await p } catch {} }

async function waitDone (api: Api, id: string): Promise<any> {
  return eventually(async () => {
    const r = await api(`/transfers/${id}`)
    return r.status === 200 && ['completed', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined
  }, DONE_TIMEOUT_MS, `transfer ${id} to finish`, 500)
}

async function checkSink (t: Test, data: string, orgId: string, filename: string, bytes: Uint8Array): Promise<void> {
  const sink = join(data, 'orchestrator', 'sink')
  const stored = sinkFile(data, orgId, filename)
  t.equal(sha256(await readFile(stored)), sha256(bytes), 'identical sha256 at the destination')
  t.same(await readdir(dirname(stored)), [filename], 'one object, no second copy under another name')
  t.same((await readdir(sink)).filter(f => !f.startsWith('.')), ['orgs'], 'nothing outside the organizations\' namespaces')
  // The sink keeps a completed upload's small metadata record (so a repeated complete is answered), no data.
  t.same((await readdir(join(sink, '.partial'))).filter(f => !f.endsWith('.json')), [], 'no partial data left in the sink')
}

/** Sends every chunk, then finalize, which the crash may cut off. */
async function uploadAndFinalize ({ api, transfer, bytes }: { api: () => Api, transfer: any, bytes: Buffer }): Promise<void> {
  for (const i of [0, 1, 2]) await sendChunk(api(), transfer, bytes, i)
  await mayFail(api()(`/transfers/${transfer.id}/finalize`, { method: 'POST' }))
}

const phases: Array<{ point: string, what: string, run: (ctx: { t: Test, api: () => Api, data: string, bytes: Buffer, transfer: any }) => Promise<void>, after: (ctx: { t: Test, api: Api, transfer: any, bytes: Buffer }) => Promise<void> }> = [
  {
    point: 'after_chunk',
    what: 'during upload: a chunk durable but not acknowledged',
    run: async ({ api, transfer, bytes }) => { await mayFail(sendChunk(api(), transfer, bytes, 0)) },
    after: async ({ t, api, transfer, bytes }) => {
      t.equal(await sendChunk(api, transfer, bytes, 0), 200, 'the unacknowledged chunk was durable: sending it again is a duplicate')
      for (const i of [1, 2]) t.equal(await sendChunk(api, transfer, bytes, i), 201)
      t.equal((await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })).status, 202)
    }
  },
  {
    point: 'after_finalize',
    what: 'after finalize: recorded, not answered',
    run: uploadAndFinalize,
    after: async () => {} // completes without another finalize
  },
  {
    point: 'during_delivery',
    what: 'during delivery: every chunk received, a checked delivery not yet recorded',
    run: async ({ api, transfer, bytes }) => {
      for (const i of [0, 1, 2]) await mayFail(sendChunk(api(), transfer, bytes, i))
      await mayFail(api()(`/transfers/${transfer.id}/finalize`, { method: 'POST' }))
    },
    after: async ({ t, api, transfer }) => {
      t.ok([200, 202].includes((await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })).status), 'finalize after the restart')
    }
  },
  {
    point: 'before_complete',
    what: 'every chunk delivered, the destination not yet completed',
    run: uploadAndFinalize,
    after: async () => {}
  },
  {
    point: 'after_complete',
    what: 'the destination completed the object, the transfer not yet marked',
    run: uploadAndFinalize,
    after: async () => {}
  }
]

for (const [n, phase] of phases.entries()) {
  t.test(`kill -9 ${phase.what} (${phase.point}): after a restart the transfer completes with identical bytes`, async t => {
    const data = await mkdtemp(join(tmpdir(), 'bwnet-crash-'))
    t.teardown(() => rm(data, { recursive: true, force: true }))
    const bytes = testBytes(SIZE, 40 + n)
    const filename = `crash-${phase.point}.bin`

    const first = await startDevnet(t, data, [`crash-${phase.point.replaceAll('_', '-')}`])
    const key = await mintClientKey(first.baseUrl, first.file.keys.admin, 'crash test')
    // Asked now: each devnet start bootstraps another organization of its own; the key's is the first.
    const orgId = await devnetOrgId(first.baseUrl, first.file.keys.admin)
    const hotkey = JSON.parse(await readFile(join(data, 'devnet.json'), 'utf8')).nodes[0].hotkey
    let api = apiClient(first.baseUrl, key)
    const created = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: hotkey, total_size: SIZE, filename, tier: 'STANDARD' } })
    t.equal(created.status, 201)
    const transfer = created.body
    t.equal(transfer.total_chunks, 3)
    await phase.run({ t, api: () => api, data, bytes, transfer })
    await crashed(t, first, phase.point)

    const second = await startDevnet(t, data)
    api = apiClient(second.baseUrl, key)
    await phase.after({ t, api, transfer, bytes })
    const done = await waitDone(api, transfer.id)
    t.equal(done.status, 'completed', JSON.stringify(done.error))
    t.match(done.chunks, { received: 3, delivered: 3, total: 3 })
    await checkSink(t, data, orgId, filename, bytes)
    const fin = await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
    t.equal(fin.status, 200, 'finalize of the completed transfer answers 200')
    await second.proc.stop('SIGTERM')
  })
}
