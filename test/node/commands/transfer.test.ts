// `bwnet transfer put|status` as a user runs it: the real CLI in a child process against an in-process
// devnet (1 orchestrator with its sink, 2 workers, 1 validator), files delivered byte for byte, and
// resume: a second run for the same file reuses the transfer and sends only the missing chunks.
import t from 'tap'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Devnet } from '../../../node/devnet.ts'
import { bootstrapDevnetKeys } from '../../../api/accounts/devnet.ts'
import { statePathFor } from '../../../node/transfers/upload-state.ts'
import { runCliOnce } from '../../helpers/proc.ts'
import { silentLogger } from '../../helpers/logger.ts'
import { sinkFile } from '../../helpers/devnet.ts'

const MIB = 1024 * 1024
const FILE_BYTES = 40 * MIB // three chunks: 16 + 16 + 8 MiB
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')

t.test('transfer put and status against a devnet', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-transfer-cli-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const data = join(dir, 'devnet')
  const stateDir = join(dir, 'state')
  const devnet = new Devnet({ port: 0, data, workers: 2, logLevel: 'silent' }, silentLogger(), {
    bootstrapKeys: async (o) => ({ ...await bootstrapDevnetKeys(o.accounts!) })
  })
  t.teardown(() => devnet.stop())
  const file = await devnet.start()
  const env = { BWN_API: file.baseUrl, BWN_KEY: file.keys.client!, BWN_STATE_DIR: stateDir, CI: 'true', BWN_KEYSTORE: join(dir, 'no-keystore.json') }
  const orgId = (await devnet.orchestrator.accounts!.listOrganizations())[0]!.id
  const api = async (path: string): Promise<any> => (await fetch(`${file.baseUrl}${path}`, { headers: { authorization: `Bearer ${file.keys.client}` } })).json()
  const summaryOf = (stdout: string): any => JSON.parse(stdout.trim().split('\n').at(-1)!)

  await t.test('put delivers the file; status reports it; a re-run changes nothing', async t => {
    const bytes = randomBytes(FILE_BYTES)
    const path = join(dir, 'whole.bin')
    await writeFile(path, bytes)
    const run = await runCliOnce(['transfer', 'put', path, '--api', file.baseUrl, '--key', file.keys.client!], { BWN_STATE_DIR: stateDir, CI: 'true' })
    t.equal(run.code, 0, `exits 0; stderr: ${run.stderr.slice(-2000)}`)
    const id = run.stdout.split('\n')[0]!
    t.match(id, UUID, 'first stdout line is the transfer id')
    const summary = summaryOf(run.stdout)
    t.match(summary, { event: 'transfer_put', transfer_id: id, status: 'completed', resumed: false, chunks_total: 3, chunks_uploaded: 3, chunks_created: 3, chunks_duplicate: 0, bytes_uploaded: FILE_BYTES, error: null })
    t.match(run.stderr, /upload: \d+\/3 chunks/, 'plain progress lines without a TTY')
    t.equal(sha256(await readFile(sinkFile(data, orgId, 'whole.bin'))), sha256(bytes), 'the sink holds the same bytes')

    const status = await runCliOnce(['transfer', 'status', id], env)
    t.equal(status.code, 0, status.stderr)
    t.match(JSON.parse(status.stdout), { id, status: 'completed', total_size: FILE_BYTES, chunks: { received: 3, delivered: 3, total: 3 } })

    const again = await runCliOnce(['transfer', 'put', path], env)
    t.equal(again.code, 0, again.stderr)
    t.equal(again.stdout.split('\n')[0], id, 'the same transfer')
    t.match(summaryOf(again.stdout), { status: 'completed', resumed: true, chunks_uploaded: 0, chunks_skipped: 3 })

    const missing = await runCliOnce(['transfer', 'status', randomUUID()], env)
    t.not(missing.code, 0)
    t.match(missing.stderr, /BWN_ERR_TRANSFER_NOT_FOUND/)
  })

  await t.test('an interrupted put resumes the same transfer and sends only the missing chunks', async t => {
    const bytes = randomBytes(FILE_BYTES)
    const path = join(dir, 'resumed.bin')
    await writeFile(path, bytes)
    const first = await runCliOnce(['transfer', 'put', path, '--parallel', '1', '--max-chunks', '1'], env)
    t.equal(first.code, 3, `stopped early with exit 3; stderr: ${first.stderr.slice(-2000)}`)
    const id = first.stdout.split('\n')[0]!
    t.match(summaryOf(first.stdout), { status: 'stopped', chunks_uploaded: 1, chunks_created: 1 })
    const state = JSON.parse(await readFile(statePathFor(path, stateDir), 'utf8'))
    t.match(state, { transfer_id: id, chunk_size: 16 * MIB, total_chunks: 3, acked: [0] }, 'state file records the acknowledged chunk')
    t.match(await api(`/transfers/${id}`), { status: 'in_progress', chunks: { received: 1 } })

    const second = await runCliOnce(['transfer', 'put', path], env)
    t.equal(second.code, 0, second.stderr)
    t.equal(second.stdout.split('\n')[0], id, 'the same transfer id')
    // Only chunks 1 and 2 were posted, and both were new to the API (a resend of 0 would be a duplicate).
    t.match(summaryOf(second.stdout), { status: 'completed', resumed: true, chunks_uploaded: 2, chunks_created: 2, chunks_duplicate: 0, chunks_skipped: 1, bytes_uploaded: 24 * MIB })
    t.match(await api(`/transfers/${id}`), { status: 'completed', chunks: { received: 3, delivered: 3 } })
    t.equal(sha256(await readFile(sinkFile(data, orgId, 'resumed.bin'))), sha256(bytes), 'the sink holds the same bytes')
  })

  await t.test('a state file naming a transfer the API does not know starts a new transfer', async t => {
    const path = join(dir, 'small.bin')
    await writeFile(path, randomBytes(MIB))
    const info = await stat(path)
    // What a run that created a since-deleted transfer leaves behind.
    await mkdir(stateDir, { recursive: true })
    await writeFile(statePathFor(path, stateDir), JSON.stringify({
      version: 1, file: path, size: MIB, mtime_ms: info.mtimeMs, api: file.baseUrl, transfer_id: randomUUID(), destination_id: null,
      tier: 'STANDARD', sender_hotkey: 'x', chunk_size: MIB, total_chunks: 1, acked: [0]
    }))
    const second = await runCliOnce(['transfer', 'put', path, '--no-wait'], env)
    t.equal(second.code, 0, second.stderr)
    t.match(second.stdout.split('\n')[0], UUID, 'a new transfer id')
    t.match(summaryOf(second.stdout), { resumed: false, chunks_created: 1 })
    t.match(second.stderr, /is gone; starting a new one/)
  })

  await t.test('bad input exits non-zero with one line', async t => {
    const noKey = await runCliOnce(['transfer', 'put', join(dir, 'small.bin'), '--api', file.baseUrl], { BWN_STATE_DIR: stateDir, BWN_KEY: '' })
    t.not(noKey.code, 0)
    t.match(noKey.stderr, /API key is needed/)
  })
})
