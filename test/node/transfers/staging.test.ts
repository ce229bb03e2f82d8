// Staged blobs are shared by content: an acknowledged chunk never vanishes because another
// transfer with the same bytes is cancelled at the same moment (same organization or another one),
// a blob damaged on disk is healed by the next upload of the same bytes, and blobs go when their
// last reference does (cancelled and failed transfers release theirs). docs/transfers.md#staging.
import t from 'tap'
import { eventually } from '../../helpers/proc.ts'
import { readFile, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startTestDevnet, sinkFile, apiClient, waitForStatus, sha256, testBytes, type Api } from '../../helpers/devnet.ts'
import { collect, prefixRange } from '../../../actors/store.ts'

const MIB = 1024 * 1024
const ROUNDS = 50

const putChunk = (api: Api, id: string, index: number, bytes: Uint8Array) =>
  api(`/transfers/${id}/chunks`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-chunk-index': String(index), 'x-chunk-sha256': sha256(bytes) }, body: bytes as unknown as BodyInit })

async function blobFiles (dir: string): Promise<string[]> {
  const shards = (await readdir(dir)).filter(d => d !== 'tmp')
  return (await Promise.all(shards.map(async d => readdir(join(dir, d))))).flat()
}

t.test(`cancel of X racing an upload of the same bytes to Y: ${ROUNDS} rounds in one organization and ${ROUNDS} across two, no acknowledged chunk lost`, async t => {
  const net = await startTestDevnet(t, { workers: 0 })
  const hotkey = net.file.nodes[0]!.hotkey
  const blobs = join(net.data, 'orchestrator', 'blobs')
  const store = net.devnet.orchestrator.store
  const orgA = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const orgA2 = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const accounts = net.devnet.orchestrator.accounts!
  const other = await accounts.createOrganization({ name: 'org b' })
  const orgB = apiClient(net.file.baseUrl, (await accounts.createKey(other.id, { role: 'client', plan: 'enterprise', name: 'b' })).key)
  const create = async (api: Api, size: number, name: string): Promise<any> => {
    const r = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: hotkey, total_size: size, filename: name, tier: 'STANDARD' } })
    if (r.status !== 201) throw new Error(`create ${r.status}`)
    return r.body
  }

  for (const [label, xApi, yApi] of [['same organization', orgA, orgA2], ['across organizations', orgA, orgB]] as const) {
    let lost = 0
    let acknowledged = 0
    for (let round = 0; round < ROUNDS; round++) {
      const bytes = testBytes(MIB + round, round + 1 + (label === 'same organization' ? 0 : 1000))
      const digest = sha256(bytes)
      const x = await create(xApi, bytes.byteLength, `x-${round}.bin`)
      const y = await create(yApi, bytes.byteLength, `y-${round}.bin`)
      t.equal((await putChunk(xApi, x.id, 0, bytes)).status, 201)
      // The race: X's cancel and Y's upload of the same bytes, started together in either order.
      const cancel = () => xApi(`/transfers/${x.id}`, { method: 'DELETE' })
      const send = () => putChunk(yApi, y.id, 0, bytes)
      const [c, u] = round % 2 === 0 ? await Promise.all([cancel(), send()]) : await Promise.all([send(), cancel()]).then(([a, b]) => [b, a])
      if (c.status !== 200 || u.status !== 201) { t.fail(`round ${round}: cancel ${c.status}, upload ${u.status}`); continue }
      acknowledged++
      const stored = await readFile(join(blobs, digest.slice(0, 2), digest)).catch(() => undefined)
      if (stored === undefined || sha256(stored) !== digest) lost++
      // Y is done: its cancel releases the last reference and the blob goes.
      t.equal((await yApi(`/transfers/${y.id}`, { method: 'DELETE' })).status, 200)
    }
    t.equal(acknowledged, ROUNDS, `${label}: every upload acknowledged`)
    t.equal(lost, 0, `${label}: 0 acknowledged chunks lost in ${ROUNDS} rounds`)
  }
  // Staging is released outside the coordinator's mailbox, right after the cancel answers: wait for it.
  t.same(await eventually(async () => { const f = await blobFiles(blobs); return f.length === 0 ? f : false }, 30_000, 'blobs released').catch(async () => await blobFiles(blobs)), [], 'every blob deleted with its last reference')
  t.same(await collect(store.table('index'), prefixRange('blob/')), [], 'no reference left')
})

t.test('a staged blob damaged on disk is healed by the next upload of the same bytes', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const hotkey = net.file.nodes[0]!.hotkey
  const blobs = join(net.data, 'orchestrator', 'blobs')
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const data = testBytes(2 * MIB, 42)
  const digest = sha256(data)
  const create = async (name: string): Promise<any> => (await api('/transfers/create', { method: 'POST', json: { sender_hotkey: hotkey, total_size: data.byteLength, filename: name, tier: 'STANDARD' } })).body

  // A holds the blob staged (never finalized), then four bytes of it flip on disk.
  const a = await create('a.bin')
  t.equal((await putChunk(api, a.id, 0, data)).status, 201)
  const path = join(blobs, digest.slice(0, 2), digest)
  const damaged = Buffer.from(await readFile(path))
  for (const at of [0, 1000, 70_000, damaged.length - 1]) damaged[at]! ^= 0xff
  await writeFile(path, damaged)
  t.not(sha256(await readFile(path)), digest, 'the staged blob is damaged')

  // B uploads the same bytes: the blob is rewritten from them, and B delivers identical bytes.
  const b = await create('b.bin')
  t.equal((await putChunk(api, b.id, 0, data)).status, 201)
  t.equal(sha256(await readFile(path)), digest, 'healed by the upload')
  t.ok([200, 202].includes((await api(`/transfers/${b.id}/finalize`, { method: 'POST' })).status))
  const done = await waitForStatus(api, b.id, ['completed', 'failed'], 120_000)
  t.equal(done.status, 'completed', JSON.stringify(done.error))
  t.equal(sha256(await readFile(sinkFile(net.data, await net.orgId(), 'b.bin'))), digest, 'identical sha256 at the destination')
  t.ok((await readFile(path).then(() => true, () => false)), 'A still references the blob, so it stays')
  t.equal((await api(`/transfers/${a.id}`, { method: 'DELETE' })).status, 200)
  t.same(await eventually(async () => { const f = await blobFiles(blobs); return f.length === 0 ? f : false }, 30_000, 'blob released').catch(async () => await blobFiles(blobs)), [], 'deleted with the last reference')
})

t.test('a failed transfer releases its staged blobs', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const hotkey = net.file.nodes[0]!.hotkey
  const blobs = join(net.data, 'orchestrator', 'blobs')
  const key = await net.clientKey('enterprise')
  const api = apiClient(net.file.baseUrl, key)
  // A destination nothing listens at: the upload cannot begin and the transfer fails.
  const dest = await api('/destinations', { method: 'POST', headers: { 'x-api-key': key }, json: { name: 'unreachable', kind: 'node', config: { baseUrl: 'http://127.0.0.1:9/' } } })
  t.equal(dest.status, 201, JSON.stringify(dest.body))
  const data = testBytes(MIB, 5)
  const created = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: hotkey, total_size: data.byteLength, filename: 'f.bin', tier: 'STANDARD', destination_id: dest.body.id } })
  t.equal(created.status, 201)
  // The upload begins only once a chunk is staged, so the chunk lands (staged and acknowledged) first.
  const put = await putChunk(api, created.body.id, 0, data)
  t.equal(put.status, 201, 'the chunk is staged: acknowledged once durable')
  const done = await waitForStatus(api, created.body.id, ['completed', 'failed'], 120_000)
  t.equal(done.status, 'failed', 'the destination cannot begin the upload')
  const { eventually } = await import('../../helpers/proc.ts')
  await eventually(async () => (await blobFiles(blobs)).length === 0, 30_000, 'the failed transfer\'s blobs to be released')
  t.same(await blobFiles(blobs), [], 'its staged blob is gone')
})
