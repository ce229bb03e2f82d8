// Issue 10 item 1, end to end: org B points an http destination at a server it controls, with the path
// of org A's sink upload, sends a transfer there, captures the worker's signed PUT and replays it,
// without any API key, against the orchestrator's sink. The sink must refuse it and A's bytes must
// arrive intact.
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startTestDevnet, sinkFile, apiClient, upload, waitForStatus, sha256, testBytes } from '../../helpers/devnet.ts'
import { eventually } from '../../helpers/proc.ts'

const SIZE = 3 * 1024 * 1024 + 17

t.test('a worker PUT captured by a tenant\'s http destination does not verify at the orchestrator\'s sink', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const accounts = net.devnet.orchestrator.accounts!
  const hotkey = net.file.nodes[0]!.hotkey
  const apiA = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const orgB = await accounts.createOrganization({ name: 'attacker' })
  const keyB = (await accounts.createKey(orgB.id, { role: 'client', plan: 'enterprise' })).key
  const apiB = apiClient(net.file.baseUrl, keyB)

  // Org A: a transfer to the default node sink, every chunk delivered, not yet finalized.
  const dataA = testBytes(SIZE, 11)
  const transferA = await upload(apiA, dataA, { filename: 'victim.bin', hotkey })
  await waitForStatus(apiA, transferA.id, ['in_progress', 'pending'])
  await eventually(async () => (await apiA(`/transfers/${transferA.id}`)).body.chunks.delivered === transferA.total_chunks, 60_000, 'A delivered')

  // Org B: the attacker's server, recording every request target the worker sends it.
  const captured: string[] = []
  const attacker = createServer((req, res) => {
    captured.push(req.url!)
    req.resume()
    req.on('end', () => res.writeHead(200, { etag: '"x"' }).end())
  })
  await new Promise<void>(resolve => attacker.listen(0, '127.0.0.1', resolve))
  t.teardown(() => attacker.close())
  const port = (attacker.address() as AddressInfo).port
  const dest = await apiB('/destinations', {
    method: 'POST',
    headers: { 'x-api-key': keyB },
    json: { name: 'trap', kind: 'http', config: { url: `http://127.0.0.1:${port}/sink/uploads/${transferA.id}/chunks/0?slot=0` } }
  })
  t.equal(dest.status, 201, JSON.stringify(dest.body))
  const chunk0 = Math.min(transferA.chunk_size, SIZE)
  const transferB = await upload(apiB, testBytes(chunk0, 99), { filename: 'bait.bin', hotkey, destinationId: dest.body.id })
  t.ok(transferB.id)
  await eventually(async () => captured.find(u => u.startsWith('/sink/uploads/')), 60_000, 'the worker PUT at the attacker server')
  const target = captured.find(u => u.startsWith('/sink/uploads/'))!
  t.match(target, /X-Bwn-Signature=/, 'the worker PUT carried a signature')

  // The replay, without a key, against the orchestrator's sink.
  const replay = await fetch(`${net.file.baseUrl}${target}`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(Buffer.alloc(chunk0, 0x41)) })
  t.equal(replay.status, 403, 'refused')
  t.match(await replay.json(), { code: 'BWN_ERR_SIGNED_URL_INVALID' })

  // A's transfer completes with A's bytes.
  const fin = await apiA(`/transfers/${transferA.id}/finalize`, { method: 'POST' })
  t.ok([200, 202].includes(fin.status), `finalize ${fin.status}`)
  const done = await waitForStatus(apiA, transferA.id, ['completed', 'failed'], 60_000)
  t.equal(done.status, 'completed', JSON.stringify(done.error))
  t.equal(sha256(await readFile(sinkFile(net.data, await net.orgId(), 'victim.bin'))), sha256(dataA), 'A\'s file holds A\'s bytes')
})
