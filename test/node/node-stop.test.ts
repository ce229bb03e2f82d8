// A node stops without waiting out the HTTP keep-alive timeout (Fastify's 72 s) for a connection that was
// busy when the stop began: the request in flight is answered, and its connection closed once idle.
import t from 'tap'
import { Agent, request } from 'node:http'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { startTestDevnet, apiClient } from '../helpers/devnet.ts'
import { eventually } from '../helpers/proc.ts'

const MIB = 1024 * 1024
// Far below the keep-alive timeout the stop used to wait for, far above what a stop takes on a loaded machine.
const STOP_BOUND_MS = 30_000

t.test('a stop that begins during an upload answers it and then ends, without waiting for keep-alive', async t => {
  const net = await startTestDevnet(t, { workers: 0 })
  const key = await net.clientKey('enterprise')
  const api = apiClient(net.file.baseUrl, key)
  const created = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: net.file.nodes[0]!.hotkey, total_size: 4 * MIB, filename: 'stop.bin', tier: 'STANDARD' } })
  t.equal(created.status, 201)
  const agent = new Agent({ keepAlive: true })
  t.teardown(() => agent.destroy())
  // Half the chunk's body, on a keep-alive connection; the rest once the stop has begun.
  const req = request(new URL(`/transfers/${created.body.id}/chunks`, net.file.baseUrl), {
    method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/octet-stream', 'x-chunk-index': '0', 'content-length': String(4 * MIB) }
  })
  const answered = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)) })
    req.on('error', reject)
  })
  await new Promise<void>(resolve => req.write(Buffer.alloc(2 * MIB, 1), () => resolve()))
  const tmp = join(net.data, 'orchestrator', 'blobs', 'tmp')
  await eventually(async () => (await readdir(tmp)).length === 1, 30_000, 'the body to be streaming')

  const began = performance.now()
  const orch = net.devnet.orchestrator
  const stopped = orch.stop().then(() => performance.now() - began)
  // The rest of the body once the close has begun (the server no longer listens): the connection is busy then.
  await eventually(async () => !orch.app!.server.listening, 30_000, 'the HTTP server to begin closing')
  req.end(Buffer.alloc(2 * MIB, 1))
  t.equal(await answered, 201, 'the upload in flight is answered')
  let timer: NodeJS.Timeout | undefined
  const took = await Promise.race([stopped, new Promise<null>(resolve => { timer = setTimeout(() => resolve(null), STOP_BOUND_MS) })])
  clearTimeout(timer)
  t.not(took, null, `the node stopped within ${STOP_BOUND_MS} ms (it took ${took === null ? 'longer' : `${took.toFixed(0)} ms`})`)
  await stopped
})
