// The data paths: a worker pulls over the swarm bulk channel when the coordinator's HTTP endpoint
// is not reachable (and writes to an `http` destination); a second session of a worker hotkey
// displaces the first, whose in-flight work is reassigned.
import t from 'tap'
import http from 'node:http'
import { once } from 'node:events'
import { copyFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { startTestDevnet, apiClient, waitForStatus, sha256, testBytes, upload } from '../../helpers/devnet.ts'
import { eventually } from '../../helpers/proc.ts'
import { collect, prefixRange } from '../../../actors/store.ts'

/**
 * An HTTP destination on loopback: PUT with Content-Range writes, GET with Range reads back. With
 * `hold`, every PUT waits for it before it answers: work delivered there stays in flight until then.
 */
async function rangeServer (t: { teardown (fn: () => unknown): void }, size: number, hold?: Promise<void>) {
  const object = Buffer.alloc(size)
  let puts = 0
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      if (req.method === 'PUT') {
        if (hold) await hold
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
  if (done.status !== 'completed') {
    // What each attempt ended with, for the next reader of a red run.
    const attempts = (await collect(coord.store.table<any>('task_attempts'), prefixRange(`${transfer.id}/`))).map(([, a]) => `${a.chunk_index ?? '?'}:${a.state}:${a.failure_reason ?? ''}`)
    t.comment(`attempts: ${attempts.join(' | ')}`)
  }
  t.equal(done.status, 'completed', JSON.stringify(done.error))
  t.equal(sha256(dest.object), sha256(data), 'the http destination holds the exact bytes')
  const results = (await collect(coord.store.table<any>('task_results'), prefixRange(`${transfer.id}/`))).map(([, r]) => r).filter(r => r.outcome === 'accepted')
  t.equal(results.length, 3)
  t.ok(results.every(r => r.via === 'bulk'), 'every chunk came over the swarm bulk channel')
})

t.test('a second session of the same worker hotkey displaces the first; its in-flight work is reassigned', async t => {
  // The first session must hold work when the second arrives, whatever the machine's speed: it is the
  // only worker, and its deliveries wait at the destination until the displacement is on record.
  const net = await startTestDevnet(t, { workers: 0 })
  const orch = net.devnet.orchestrator
  const key = await net.clientKey('enterprise')
  const api = apiClient(net.file.baseUrl, key)
  let release = (): void => {}
  const hold = new Promise<void>(resolve => { release = resolve })
  t.teardown(() => release())
  const data = testBytes(48 * 1024 * 1024, 8)
  const dest = await rangeServer(t, data.byteLength, hold)
  const d = await api('/destinations', { method: 'POST', headers: { 'x-api-key': key, authorization: '' }, json: { name: 'held', kind: 'http', config: { url: dest.url } } })
  t.equal(d.status, 201)
  const first = await net.addNode('twin-a', { role: 'worker', slots: 1 })
  await eventually(async () => (await collect(orch.store.table<any>('workers'), prefixRange('session/'))).some(([, w]) => w.hotkey === first.key.address), 15_000, 'first session attached')
  const transfer = await upload(api, data, { filename: 'twin.bin', hotkey: net.file.nodes[0]!.hotkey, destinationId: d.body.id })
  const held = await eventually(async () => {
    const open = (await collect(orch.store.table<any>('task_attempts'), prefixRange(`${transfer.id}/`))).map(([, a]) => a).filter(a => a.worker_id === first.key.address && a.state === 'accepted')
    return open.length >= 1 ? open : undefined
  }, 30_000, 'the first session to hold work')
  t.ok(held.length >= 1, `the first session holds ${held.length} accepted attempt(s)`)
  t.equal(dest.puts(), 0, 'nothing delivered yet: the destination holds every PUT')
  // The same identity starts again elsewhere: a copy of its keystore in another data directory.
  await mkdir(join(net.data, 'twin-b'), { recursive: true })
  await copyFile(join(net.data, 'twin-a', 'hotkey.json'), join(net.data, 'twin-b', 'hotkey.json'))
  const second = await net.addNode('twin-b', { role: 'worker', slots: 2 })
  t.equal(second.key.address, first.key.address, 'same hotkey')
  const interventions = async (): Promise<any[]> => (await collect(orch.store.table<any>('overseer_interventions'), prefixRange(`${transfer.id}/`))).map(([, r]) => r)
  const displaced = await eventually(async () => {
    const rows = (await interventions()).filter(r => r.reason === 'session_displaced' && r.previous_worker_id === first.key.address)
    return rows.length > 0 ? rows : undefined
  }, 30_000, 'the displaced session\'s work to be reassigned')
  t.ok(displaced.length >= 1, 'displaced work was reassigned')
  release()
  await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 90_000)
  t.equal(done.status, 'completed', JSON.stringify(done.error))
  t.equal(sha256(dest.object), sha256(data), 'the destination holds the exact bytes')
  const session = await orch.store.table<any>('workers').get(`session/${first.key.address}`)
  t.equal(session.status, 'active', 'the newer session stays attached')
})
