// Acceptance (telemetry 4): on a real devnet, after a transfer to an http destination that holds
// credentials, no telemetry or audit response carries a destination secret, presigned or signed URL,
// object path, signature or the transfer's display name.
import t from 'tap'
import { eventually } from '../../helpers/proc.ts'
import http from 'node:http'
import { once } from 'node:events'
import { startTestDevnet, apiClient, upload, waitForStatus, testBytes } from '../../helpers/devnet.ts'
import { scanForSecrets, type ScannedResponse } from '../../helpers/secret-scan.ts'

const UPLOAD_TOKEN = 'upload-token-5ecr3t'
const CONTROL_TOKEN = 'control-token-5ecr3t'
const OBJECT_DIR = 'private-bucket-path-5ecr3t'
const DISPLAY_NAME = 'Board Pack 5ecr3t.bin'

t.test('telemetry and audit responses of a devnet transfer hold no private detail', async t => {
  const size = 40 * 1024 * 1024
  const object = Buffer.alloc(size)
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = []
    req.on('data', (c: Buffer) => parts.push(c))
    req.on('end', () => {
      if (req.method === 'PUT') {
        if (req.headers.authorization !== `Bearer ${UPLOAD_TOKEN}`) { res.writeHead(401).end(); return }
        const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(req.headers['content-range'] ?? '')
        if (!m) { res.writeHead(400).end(); return }
        Buffer.concat(parts).copy(object, Number(m[1]))
        res.writeHead(200).end()
      } else if (req.method === 'GET') {
        const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')
        res.writeHead(m ? 206 : 200).end(m ? object.subarray(Number(m[1]), Number(m[2]) + 1) : object)
      } else res.writeHead(204).end()
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise(resolve => server.close(resolve)))
  const port = (server.address() as { port: number }).port

  const net = await startTestDevnet(t, { workers: 2 })
  const key = await net.clientKey('enterprise')
  const api = apiClient(net.file.baseUrl, key)
  const dest = await api('/destinations', {
    method: 'POST', headers: { 'x-api-key': key, authorization: '' },
    json: { name: 'private', kind: 'http', config: { url: `http://127.0.0.1:${port}/${OBJECT_DIR}/{filename}`, uploadHeaders: { authorization: `Bearer ${UPLOAD_TOKEN}` }, controlHeaders: { authorization: `Bearer ${CONTROL_TOKEN}` } } }
  })
  t.equal(dest.status, 201)
  const transfer = await upload(api, testBytes(size, 21), { filename: DISPLAY_NAME, hotkey: net.file.nodes[0]!.hotkey, destinationId: dest.body.id })
  await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  t.equal((await waitForStatus(api, transfer.id, ['completed', 'failed'])).status, 'completed')

  const orch = net.file.nodes.find(n => n.role === 'orchestrator')!.hotkey
  const workers = net.file.nodes.filter(n => n.role === 'worker').map(n => n.hotkey)
  const responses: ScannedResponse[] = []
  const read = async (url: string, headers: Record<string, string>): Promise<void> => {
    const res = await fetch(net.file.telemetryUrl + url, { headers })
    responses.push({ url, statusCode: res.status, body: await res.text(), headers: Object.fromEntries(res.headers) })
  }
  const consoleKey = { 'x-api-key': net.file.keys.console! }
  // The sell allowance is published at an epoch close after the transfer: scanned once it is there.
  await eventually(async () => (await fetch(`${net.file.telemetryUrl}/v1/telemetry/sell-allowance/${orch}`, { headers: consoleKey })).status === 200, 90_000, 'a sell allowance for the orchestrator', 1000)
  for (const url of [
    '/v1/telemetry/network', '/v1/telemetry/realtime/network', '/v1/telemetry/network/history', '/v1/telemetry/realtime/network/history',
    '/v1/telemetry/tasks', `/v1/telemetry/tasks?transferId=${transfer.id}`, '/v1/telemetry/realtime/tasks', `/v1/telemetry/realtime/tasks?transferId=${transfer.id}`,
    '/v1/telemetry/epochs', '/v1/telemetry/realtime/epochs', `/v1/telemetry/sell-allowance/${orch}`, `/v1/audit/sell-allowance/${orch}`
  ]) await read(url, consoleKey)
  const admin = { 'x-api-key': net.file.keys.admin! }
  await read(`/api/audit/orchestrator/${orch}/transfers/${transfer.id}`, admin)
  for (const w of workers) await read(`/api/audit/worker/${w}/transfers/${transfer.id}`, admin)

  for (const r of responses) t.equal(r.statusCode, 200, `${r.url}: a scanned body is a real answer, not an error`)
  const audit = responses.find(r => r.url.startsWith('/api/audit/orchestrator'))!
  t.equal(audit.statusCode, 200)
  const rows = JSON.parse(audit.body)
  t.ok(rows.tables?.task_results?.length ?? rows.task_results?.length ?? 0, 'the audit read has rows to scan')
  const realtime = JSON.parse(responses.find(r => r.url === `/v1/telemetry/realtime/tasks?transferId=${transfer.id}`)!.body)
  t.ok(realtime.items.length >= 3, 'the realtime evidence has the transfer\'s tasks')
  t.same(scanForSecrets(responses, [UPLOAD_TOKEN, CONTROL_TOKEN, OBJECT_DIR, DISPLAY_NAME, 'X-Bwn-Signature', '/sink/uploads']), [], 'nothing private in any response')
})
