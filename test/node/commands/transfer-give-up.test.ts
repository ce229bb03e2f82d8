// `bwnet transfer put` that gives up after the transfer id is known still prints what docs/cli.md
// says: the id first, the JSON summary last with `error: { code, message }`, `bwnet: <CODE>: …` on
// stderr, exit 1. Against a small fake API on loopback.
import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { runCliOnce } from '../../helpers/proc.ts'

const ID = randomUUID()
const now = new Date().toISOString()
const record = (status: string) => ({
  id: ID, status, tier: 'STANDARD', sender_hotkey: '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY', destination_id: 'd', transfer_name: 'f.bin',
  metadata: { name: 'f.bin' }, total_size: 100, chunk_size: 100, total_chunks: 1, chunks: { received: 0, delivered: 0, verified: 0, total: 1 },
  bytes: { received: 0, delivered: 0, total: 100 }, finalize_requested: status !== 'pending', created_at: now, updated_at: now,
  started_at: null, finalized_at: null, completed_at: null, error: null
})

async function fakeApi (t: { teardown (fn: () => unknown): void }, mode: 'refuse-chunk' | 'never-completes') {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      const json = (status: number, body: unknown, type = 'application/json') => res.writeHead(status, { 'content-type': type }).end(JSON.stringify(body))
      if (req.url === '/transfers/create') return json(201, record('pending'))
      if (req.url === `/transfers/${ID}/chunks`) {
        if (mode === 'refuse-chunk') return json(400, { type: 'about:blank', title: 'Bad Request', status: 400, code: 'BWN_ERR_CHUNK_SIZE', detail: 'Chunk 0 must be 100 bytes' }, 'application/problem+json')
        return json(201, { transfer_id: ID, chunk_index: 0, sha256: req.headers['x-chunk-sha256'], bytes: 100, duplicate: false, chunks_received: 1 })
      }
      if (req.url === `/transfers/${ID}/finalize`) return json(202, record('in_progress'))
      if (req.url === `/transfers/${ID}`) return json(200, record('in_progress'))
      json(404, { code: 'BWN_ERR_NOT_FOUND' })
    })
  })
  await new Promise<void>(r => server.listen(0, '127.0.0.1', r))
  t.teardown(() => server.close())
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

t.test('a refused chunk and a wait timeout end with the code and the JSON summary', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-giveup-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'f.bin')
  await writeFile(file, Buffer.alloc(100, 7))
  for (const [mode, code, extra] of [['refuse-chunk', 'BWN_ERR_CHUNK_SIZE', []], ['never-completes', 'BWN_ERR_CLI', ['--wait-timeout-s', '1']]] as const) {
    const api = await fakeApi(t, mode)
    const run = await runCliOnce(['transfer', 'put', file, '--api', api, '--key', 'bwn_0123456789abcdef_x', '--state', join(dir, `${mode}.json`), '--no-progress', ...extra], { CI: 'true' })
    t.equal(run.code, 1, `${mode}: exit 1`)
    const lines = run.stdout.trim().split('\n')
    t.equal(lines[0], ID, `${mode}: the id first`)
    const summary = JSON.parse(lines.at(-1)!)
    t.match(summary, { event: 'transfer_put', transfer_id: ID, error: { code } }, `${mode}: the summary last, with the code`)
    t.match(run.stderr, new RegExp(`^bwnet: ${code}: `, 'm'), `${mode}: stderr names the code`)
  }
})
