// Acceptance: a 256 MiB file crosses the devnet to the `node` destination with identical sha256.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startTestDevnet, sinkFile, apiClient, upload, waitForStatus, sha256, testBytes } from '../../helpers/devnet.ts'
import { collect, prefixRange } from '../../../actors/store.ts'

const SIZE = 256 * 1024 * 1024

t.test('256 MiB to the node destination, byte for byte, moved in parallel over HTTP', async t => {
  const net = await startTestDevnet(t, { workers: 3 })
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const data = testBytes(SIZE, 7)
  const transfer = await upload(api, data, { filename: 'big.bin', hotkey: net.file.nodes[0]!.hotkey })
  t.equal(transfer.total_chunks, 16, '16 MiB chunks')
  const fin = await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  t.ok([200, 202].includes(fin.status), `finalize ${fin.status}`)
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 120_000)
  t.equal(done.status, 'completed', JSON.stringify(done.error))
  t.same(done.chunks, { received: 16, delivered: 16, verified: 16, total: 16 }, 'every chunk verified by the devnet validator')
  const written = await readFile(sinkFile(net.data, await net.orgId(), 'big.bin'))
  t.equal(written.byteLength, SIZE)
  t.equal(sha256(written), sha256(data), 'identical sha256')

  const store = net.devnet.orchestrator.store
  const results = (await collect(store.table<any>('task_results'), prefixRange(`${transfer.id}/`))).map(([, r]) => r)
  const workers = new Set(results.filter(r => r.outcome === 'accepted').map(r => r.worker_id))
  t.ok(workers.size >= 2, `moved by ${workers.size} workers in parallel`)
  t.ok(results.every(r => r.via === 'http'), 'workers pulled over the HTTP data endpoint')
  const staged = await collect(store.table<any>('index'), prefixRange('blob/'))
  t.equal(staged.length, 0, 'staging freed after completion')
})
