// A client's chunk upload is checked against the node's free space before its body is read, and holds
// none of it while it streams: a tenant trickling many bodies (each may last as long as its connection)
// would otherwise hold the node's room for everyone. The sink's writes, each holding a window of the
// in-flight budget, do hold theirs (test/node/adapters/destinations/node-sink-storage.test.ts).
import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testDeps } from '../../helpers/api.ts'
import { NodeTransferService, MAX_CHUNK_BODIES_PER_ORG } from '../../../node/transfers/service.ts'
import { StorageGuard } from '../../../node/storage.ts'
import { startSystem, stopActor } from '../../../actors/runtime.ts'
import { systemClock } from '../../../node/clock.ts'
import { planChunks } from '../../../actors/domain/chunk-plan.ts'
import { keys } from '../../../actors/transfer/model.ts'
import type { StagedBody } from '../../../node/adapters/blob-store.ts'
import { silentLogger } from '../../helpers/logger.ts'
import { eventually } from '../../helpers/proc.ts'
import { storingCoordinator } from '../../helpers/transfer-service.ts'

const HOTKEY = '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY'
const MIB = 1024 * 1024

t.test('chunk bodies are checked, not held: two stream side by side; one that does not fit is refused before its body', async t => {
  const env = testDeps()
  const system = startSystem()
  t.teardown(() => stopActor(system as never))
  const coordinator = storingCoordinator(system, env.store, { chunk: { duplicate: false, chunksReceived: 1 } })
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-chunk-reserve-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const total = 64 * MIB
  const plan = planChunks(total)
  t.ok(plan.totalChunks >= 2)
  const chunk = plan.chunk(0).length
  let free = 10 * total // room for the create; lowered below to room for one chunk and a half
  const storage = new StorageGuard({ dir, node: '5Node', logger: silentLogger(), minFreeBytes: MIB, probe: async () => {}, reopen: async () => {}, space: async () => ({ freeBytes: free, totalBytes: 100 * total }) })
  await storage.open()
  t.teardown(() => storage.close())

  // The blob store holds each body until the test lets it go: the first upload is mid-stream.
  const gates: Array<() => void> = []
  const blobs = {
    ingest: async (_body: AsyncIterable<Uint8Array>, opts: { length: number }): Promise<StagedBody> => {
      await new Promise<void>(resolve => gates.push(resolve))
      return { sha256: `${gates.length}`.padStart(64, '0'), md5: null, bytes: opts.length, commit: async (linked) => { await linked?.() }, discard: async () => {} }
    }
  }
  const destinations = { defaultId: async () => 'elsewhere', visible: async (id: string) => ({ id, kind: 'http', builtin: false }), driverFor: async () => ({ readableBeforeComplete: true }) }
  const service = new NodeTransferService({ store: env.store, blobs: blobs as never, clock: systemClock, coordinator, destinations: destinations as never, storage })
  const org = await env.accounts.createOrganization({ name: 'o' })
  const auth = await env.accounts.authenticate((await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise' })).key)
  if (!auth.ok) throw new Error('the key did not authenticate')
  const principal = auth.principal
  const created = await service.create({ sender_hotkey: HOTKEY, total_size: total, filename: 'f.bin', tier: 'STANDARD' } as never, principal)

  free = MIB + Math.floor(1.5 * chunk)
  const body = (async function * () {})()
  const put = (index: number): Promise<unknown> => service.putChunk(created.id, index, body, { contentLength: chunk, sha256: null } as never, principal)
  const first = put(0)
  await eventually(async () => gates.length === 1, 5000, 'the first upload streaming', 10)
  t.equal(storage.reservedBytes, 0, 'a client\'s body streaming holds no room')
  const second = put(1)
  await eventually(async () => gates.length === 2, 5000, 'the second upload streaming beside it', 10)
  for (const open of gates) open()
  await Promise.all([first, second])
  free = MIB + Math.floor(0.5 * chunk)
  await t.rejects(put(1), { code: 'BWN_ERR_STORAGE_FULL', statusCode: 507, extensions: { needed_bytes: chunk } }, 'one that does not fit now is refused before its body is read')
  t.equal(gates.length, 2)
})

t.test('a chunk recorded after its upload timed out, whose blob the disk sweep reclaimed meanwhile: the client\'s retry puts it back', async t => {
  const env = testDeps()
  const system = startSystem()
  t.teardown(() => stopActor(system as never))
  const coordinator = storingCoordinator(system, env.store)
  const held = new Set<string>()
  const done: string[] = []
  const SHA = 'ab'.repeat(32)
  const blobs = {
    has: async (sha: string) => held.has(sha),
    ingest: async (_body: AsyncIterable<Uint8Array>, opts: { length: number }): Promise<StagedBody> => ({
      sha256: SHA, md5: null, bytes: opts.length,
      commit: async (linked) => { held.add(SHA); done.push('commit'); await linked?.() },
      discard: async () => { done.push('discard') }
    })
  }
  const destinations = { defaultId: async () => 'elsewhere', visible: async (id: string) => ({ id, kind: 'http', builtin: false }), driverFor: async () => ({ readableBeforeComplete: true }) }
  const service = new NodeTransferService({ store: env.store, blobs: blobs as never, clock: systemClock, coordinator, destinations: destinations as never })
  const org = await env.accounts.createOrganization({ name: 'o' })
  const auth = await env.accounts.authenticate((await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise' })).key)
  if (!auth.ok) throw new Error('the key did not authenticate')
  const created = await service.create({ sender_hotkey: HOTKEY, total_size: MIB, filename: 'f.bin', tier: 'STANDARD' } as never, auth.principal)
  // The coordinator recorded chunk 0 (row and reference) long after the upload gave up on it.
  await env.store.table('chunks').put(keys.chunk(created.id, 0), { sha256: SHA } as never)
  const put = async (): Promise<any> => await service.putChunk(created.id, 0, (async function * () {})(), { contentLength: MIB, sha256: null } as never, auth.principal)
  t.match(await put(), { created: false, ack: { duplicate: true } })
  t.same(done, ['commit'], 'its blob was gone: this copy takes its place')
  t.match(await put(), { created: false, ack: { duplicate: true } })
  t.same(done, ['commit', 'discard'], 'once there, a repeat is discarded')
})

t.test('one organization streams at most MAX_CHUNK_BODIES_PER_ORG chunk bodies at once; another is not held back by it', async t => {
  const env = testDeps()
  const system = startSystem()
  t.teardown(() => stopActor(system as never))
  const coordinator = storingCoordinator(system, env.store, { chunk: { duplicate: false, chunksReceived: 1 } })
  const gates: Array<() => void> = []
  const blobs = {
    ingest: async (_body: AsyncIterable<Uint8Array>, opts: { length: number }): Promise<StagedBody> => {
      await new Promise<void>(resolve => gates.push(resolve))
      return { sha256: 'cd'.repeat(32), md5: null, bytes: opts.length, commit: async (linked) => { await linked?.() }, discard: async () => {} }
    }
  }
  const destinations = { defaultId: async () => 'elsewhere', visible: async (id: string) => ({ id, kind: 'http', builtin: false }), driverFor: async () => ({ readableBeforeComplete: true }) }
  const service = new NodeTransferService({ store: env.store, blobs: blobs as never, clock: systemClock, coordinator, destinations: destinations as never })
  const principalOf = async (name: string) => {
    const org = await env.accounts.createOrganization({ name })
    const auth = await env.accounts.authenticate((await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise' })).key)
    if (!auth.ok) throw new Error('the key did not authenticate')
    return auth.principal
  }
  const [a, b] = [await principalOf('a'), await principalOf('b')]
  const total = 4 * MIB
  const transferOf = async (p: typeof a) => await service.create({ sender_hotkey: HOTKEY, total_size: total, filename: `f-${p.organizationId}.bin`, tier: 'STANDARD' } as never, p)
  const [ta, tb] = [await transferOf(a), await transferOf(b)]
  const body = (async function * () {})()
  const put = (id: string, p: typeof a): Promise<unknown> => service.putChunk(id, 0, body, { contentLength: total, sha256: null } as never, p)
  const streaming = Array.from({ length: MAX_CHUNK_BODIES_PER_ORG }, () => put(ta.id, a))
  await eventually(async () => gates.length === MAX_CHUNK_BODIES_PER_ORG, 10_000, 'every body streaming', 10)
  await t.rejects(put(ta.id, a), { code: 'BWN_ERR_RATE_LIMITED', statusCode: 429, headers: { 'retry-after': '1' }, extensions: { chunk_bodies: MAX_CHUNK_BODIES_PER_ORG } }, 'one more of the same organization is refused before its body is read')
  const other = put(tb.id, b)
  await eventually(async () => gates.length === MAX_CHUNK_BODIES_PER_ORG + 1, 5000, 'another organization\'s body streaming', 10)
  gates.shift()!()
  await Promise.race(streaming)
  const again = put(ta.id, a)
  await eventually(async () => gates.length === MAX_CHUNK_BODIES_PER_ORG + 1, 5000, 'a place freed is taken', 10)
  for (const open of gates.splice(0)) open()
  await Promise.all([...streaming, other, again])
})
