// A record the sink forgot stays forgotten: after a restart (nothing cached), a request's read of an
// upload's record that was under way while the upload was aborted must not put the record back, or a
// later begin of the same upload would answer "exists" for files that are gone.
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import * as fsp from 'node:fs/promises'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cryptoReady, newHotkey, authorityOf } from '../../../../protocol/index.ts'
import { sinkRoutes, NodeSinkDriver } from '../../../../node/adapters/destinations/node-sink.ts'
import { PARTIAL_DIR } from '../../../../node/adapters/destinations/sink-partials.ts'
import type { UploadSpec, UploadState } from '../../../../actors/destination.ts'

await cryptoReady()
const coordinator = newHotkey()
const CHUNK = 64 * 1024

/** Holds the next read of a file whose name ends with `suffix`, once armed: the test says when it goes on. */
function heldReads (): { readFile: typeof fsp.readFile, arm: (suffix: string) => { started: Promise<void>, release: () => void } } {
  let armed: { suffix: string, start: () => void, gate: Promise<void> } | null = null
  const readFile = (async (...args: Parameters<typeof fsp.readFile>) => {
    const read = await fsp.readFile(...args)
    const gate = armed
    if (gate !== null && String(args[0]).endsWith(gate.suffix)) {
      armed = null
      gate.start()
      await gate.gate
    }
    return read
  }) as typeof fsp.readFile
  return {
    readFile,
    arm: (suffix) => {
      let start!: () => void; let release!: () => void
      const started = new Promise<void>(resolve => { start = resolve })
      const gate = new Promise<void>(resolve => { release = resolve })
      armed = { suffix, start, gate }
      return { started, release }
    }
  }
}

/** Uploads begun by one process, then the sink restarted over the same directory with its record reads held on demand. */
async function begunThenRestarted (t: Test, specs: UploadSpec[]): Promise<{ dir: string, states: UploadState[], driver: NodeSinkDriver, reads: ReturnType<typeof heldReads> }> {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-sink-forget-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const first = Fastify({ logger: false })
  let firstUrl = ''
  await first.register(sinkRoutes, { dir, trustedSigners: new Set([coordinator.address]), authority: () => authorityOf(firstUrl), maxChunkBytes: 1024 * 1024 })
  firstUrl = await first.listen({ host: '127.0.0.1', port: 0 })
  const before = new NodeSinkDriver({ baseUrl: firstUrl, key: coordinator })
  const states: UploadState[] = []
  for (const spec of specs) states.push(await before.begin(spec))
  await first.close()
  // The restart has nothing of them in memory.
  const reads = heldReads()
  const mocked = await t.mockImport<typeof import('../../../../node/adapters/destinations/node-sink.ts')>('../../../../node/adapters/destinations/node-sink.ts', {
    'node:fs/promises': { ...fsp, readFile: reads.readFile }
  })
  const app = Fastify({ logger: false })
  let baseUrl = ''
  await app.register(mocked.sinkRoutes, { dir, trustedSigners: new Set([coordinator.address]), authority: () => authorityOf(baseUrl), maxChunkBytes: 1024 * 1024 })
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(() => app.close())
  return { dir, states, driver: new mocked.NodeSinkDriver({ baseUrl, key: coordinator }), reads }
}

t.test('a record read while its upload was aborted is not cached: a begin afterwards makes the upload anew', async t => {
  const spec: UploadSpec = { transferId: 'tr-forget', filename: 'forget.bin', totalSize: 3 * CHUNK, chunkSize: CHUNK, totalChunks: 3 }
  const { dir, states: [state], driver, reads } = await begunThenRestarted(t, [spec])

  // A chunk PUT reads the record, and its read is held past the abort.
  const held = reads.arm('tr-forget.json')
  const target = await driver.target(state!, { index: 0, offset: 0, length: CHUNK, attemptSlot: 0, attemptNo: 0 }, Date.now() + 60_000)
  const putDone = fetch(target.url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(CHUNK) })
  await held.started
  await driver.abort(state!)
  await t.rejects(stat(join(dir, PARTIAL_DIR, 'tr-forget')), { code: 'ENOENT' }, 'the abort removed the partial file')
  held.release()
  t.equal((await putDone).status, 404, 'the held write finds no upload')

  // Begun again: a new upload, with its partial file.
  const again = await driver.begin(spec)
  t.equal(again.uploadId, state!.uploadId)
  t.equal((await stat(join(dir, PARTIAL_DIR, 'tr-forget'))).size, spec.totalSize, 'the partial file is made anew, not answered from a stale record')
})

t.test('another upload forgotten meanwhile leaves a live upload\'s record read as it is: its chunk is written', async t => {
  const live: UploadSpec = { transferId: 'tr-live', filename: 'live.bin', totalSize: 3 * CHUNK, chunkSize: CHUNK, totalChunks: 3 }
  const other: UploadSpec = { transferId: 'tr-other', filename: 'other.bin', totalSize: 3 * CHUNK, chunkSize: CHUNK, totalChunks: 3 }
  const { states: [liveState, otherState], driver, reads } = await begunThenRestarted(t, [live, other])

  const held = reads.arm('tr-live.json')
  const target = await driver.target(liveState!, { index: 0, offset: 0, length: CHUNK, attemptSlot: 0, attemptNo: 0 }, Date.now() + 60_000)
  const putDone = fetch(target.url, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(CHUNK).fill(7) })
  await held.started
  await driver.abort(otherState!)
  held.release()
  t.equal((await putDone).status, 200, 'the live upload\'s chunk is written')
})
