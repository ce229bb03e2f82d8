// The data paths: a worker pulls over the swarm bulk channel when the coordinator's HTTP endpoint
// is not reachable (and writes to an `http` destination); a second session of a worker hotkey
// displaces the first, whose in-flight work is reassigned.
import t from 'tap'
import http from 'node:http'
import { once } from 'node:events'
import { copyFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { startTestDevnet, apiClient, sendChunks, waitForStatus, sha256, testBytes, upload } from '../../helpers/devnet.ts'
import { eventually } from '../../helpers/proc.ts'
import { collect, prefixRange } from '../../../actors/store.ts'

/** An HTTP destination on loopback: PUT with Content-Range writes, GET with Range reads back. */
async function rangeServer (t: { teardown (fn: () => unknown): void }, size: number) {
  const object = Buffer.alloc(size)
  let puts = 0
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.method === 'PUT') {
        const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(req.headers['content-range'] ?? '')
        const body = Buffer.concat(chunks)
        if (!m || Number(m[2]) - Number(m[1]) + 1 !== body.byteLength) { res.writeHead(400).end(); return }
        body.copy(object, Number(m[1]))
        puts++
        res.writeHead(200, { etag: `"${sha256(body)}"` }).end()
      } else if (req.method === 'GET') {
        const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')
        if (!m) { res.writeHead(200).end(object); return }
        res.writeHead(206).end(object.subarray(Number(m[1]), Number(m[2]) + 1))
      } else { res.writeHead(204).end() }
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise(resolve => server.close(resolve)))
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/objects/{transferId}`, object, puts: () => puts }
}

t.test('bulk-channel fallback: the coordinator\'s HTTP endpoint is unreachable, the swarm carries the bytes', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  // A second orchestrator that advertises an address nobody can reach, with a worker of its own.
  const coord = await net.addNode('coordinator-2', { role: 'orchestrator', publicUrl: 'http://127.0.0.1:9' })
  await net.addNode('worker-x', { role: 'worker', attachTo: coord.key.address })
  await eventually(async () => (await coord.membership.view()).peers.filter(p => p.role === 'worker').length === 2, 15_000, 'workers seen by the second orchestrator')
  const org = await coord.accounts!.createOrganization({ name: 'fallback' })
  const key = (await coord.accounts!.createKey(org.id, { role: 'client', plan: 'enterprise', name: 'k' })).key
  const api = apiClient(coord.url!, key)
  const data = testBytes(40 * 1024 * 1024, 4)
  const dest = await rangeServer(t, data.byteLength)
  const d = await api('/destinations', { method: 'POST', headers: { 'x-api-key': key, authorization: '' }, json: { name: 'range', kind: 'http', config: { url: dest.url } } })
  t.equal(d.status, 201)
  const transfer = await upload(api, data, { filename: 'fallback.bin', hotkey: coord.key.address, destinationId: d.body.id })
  await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 60_000)
  t.equal(done.status, 'completed', JSON.stringify(done.error))
  t.equal(sha256(dest.object), sha256(data), 'the http destination holds the exact bytes')
  const results = (await collect(coord.store.table<any>('task_results'), prefixRange(`${transfer.id}/`))).map(([, r]) => r).filter(r => r.outcome === 'accepted')
  t.equal(results.length, 3)
  t.ok(results.every(r => r.via === 'bulk'), 'every chunk came over the swarm bulk channel')
})

t.test('a second session of the same worker hotkey displaces the first; its in-flight work is reassigned', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const orch = net.devnet.orchestrator
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const first = await net.addNode('twin-a', { role: 'worker', slots: 1 })
  await eventually(async () => (await collect(orch.store.table<any>('workers'), prefixRange('session/'))).some(([, w]) => w.hotkey === first.key.address), 15_000, 'first session attached')
  const data = testBytes(128 * 1024 * 1024, 8)
  const created = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: net.file.nodes[0]!.hotkey, total_size: data.byteLength, filename: 'twin.bin', tier: 'STANDARD' } })
  const transfer = created.body
  const lanes = Array.from({ length: 8 }, (_, lane) => sendChunks(api, transfer, data, i => i % 8 === lane))
  await eventually(async () => (await collect(orch.store.table<any>('task_attempts'), prefixRange(`${transfer.id}/`))).filter(([, a]) => a.worker_id === first.key.address && a.state === 'accepted').length >= 2, 30_000, 'the first session to hold work', 10)
  // The same identity starts again elsewhere: a copy of its keystore in another data directory.
  await mkdir(join(net.data, 'twin-b'), { recursive: true })
  await copyFile(join(net.data, 'twin-a', 'hotkey.json'), join(net.data, 'twin-b', 'hotkey.json'))
  const second = await net.addNode('twin-b', { role: 'worker', slots: 2 })
  t.equal(second.key.address, first.key.address, 'same hotkey')
  await Promise.all(lanes)
  await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 90_000)
  t.equal(done.status, 'completed', JSON.stringify(done.error))
  const interventions = (await collect(orch.store.table<any>('overseer_interventions'), prefixRange(`${transfer.id}/`))).map(([, r]) => r)
  t.ok(interventions.some(r => r.reason === 'session_displaced' && r.previous_worker_id === first.key.address), 'displaced work was reassigned')
  const session = await orch.store.table<any>('workers').get(`session/${first.key.address}`)
  t.equal(session.status, 'active', 'the newer session stays attached')
})
