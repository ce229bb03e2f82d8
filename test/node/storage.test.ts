// The storage guard (node/storage.ts): the watermark's refusal, the ballast, the probe that clears a
// failing store and reopens LevelDB when it holds on to an old error. The last test reproduces that
// LevelDB error on a real full tmpfs (root only).
import t from 'tap'
import { mkdtemp, rm, stat, statfs, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { StorageGuard, guardStore, isNoSpace, STORAGE_PROBE_KEY } from '../../node/storage.ts'
import { LevelStore } from '../../actors/store.ts'
import { eventually } from '../helpers/proc.ts'
import { mountTmpfs, tmpfsSkipReason } from '../helpers/tmpfs.ts'
import { silentLogger } from '../helpers/logger.ts'

const MIB = 1024 * 1024
const noSpace = (): Error => Object.assign(new Error('IO error: /x/000005.ldb: No space left on device'), { code: 'LEVEL_IO_ERROR' })

t.test('what counts as out of space', async t => {
  t.ok(isNoSpace(Object.assign(new Error('write'), { code: 'ENOSPC' })))
  t.ok(isNoSpace(noSpace()))
  t.ok(isNoSpace(Object.assign(new Error('wrapped'), { cause: Object.assign(new Error('x'), { code: 'EDQUOT' }) })))
  t.notOk(isNoSpace(Object.assign(new Error('IO error: corruption'), { code: 'LEVEL_IO_ERROR' })), 'another IO error is not')
  t.notOk(isNoSpace(new Error('boom')))
})

t.test('the watermark refuses with 507 naming the node and the space; a failing store is probed, reopened and cleared', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-storage-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const { bavail, bsize } = await statfs(dir)
  const free = bavail * bsize
  let probes = 0
  let reopened = 0
  let probeFails = 1
  const guard = new StorageGuard({
    dir, node: '5Node', logger: silentLogger(), minFreeBytes: free - 64 * MIB,
    probe: async () => { probes++; if (probeFails-- > 0) throw noSpace() },
    reopen: async () => { reopened++ }
  })
  await guard.open()
  t.teardown(() => guard.close())
  await guard.room(MIB, 'a small chunk')
  const refused = await guard.room(128 * MIB, 'chunk 3').then(() => null, (err: unknown) => err as any)
  t.equal(refused?.statusCode, 507)
  t.equal(refused?.code, 'BWN_ERR_STORAGE_FULL')
  t.match(refused?.message, /Node 5Node cannot store chunk 3: it needs 128 MiB and has .* free/)
  t.match(refused?.extensions, { node: '5Node', needed_bytes: 128 * MIB, min_free_bytes: free - 64 * MIB })

  t.equal(guard.failed(new Error('boom')), false, 'other errors are not storage faults')
  t.equal(guard.problem(), null)
  t.equal(guard.failed(noSpace()), true)
  t.match(guard.problem(), /No space left/, 'a write that failed for space marks the storage failing')
  await t.rejects(guard.room(1, 'anything'), { code: 'BWN_ERR_STORAGE_FULL' }, 'and refuses new data while it fails')
  // First probe: the store still fails with space available, so it is reopened and probed again.
  await eventually(async () => guard.problem() === null, 10_000, 'the probe to clear the failing state')
  t.equal(reopened, 1, 'reopened once')
  t.equal(probes, 2, 'probed before and after the reopen')
})

t.test('reservations: checks made at once cannot together pass the watermark; room counts them; a release gives them back once', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-reserve-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  // A fake filesystem: 10 MiB free, 4 MiB kept free, so 6 MiB of room.
  const guard = new StorageGuard({
    dir, node: '5Node', logger: silentLogger(), minFreeBytes: 4 * MIB,
    probe: async () => {}, reopen: async () => {}, space: async () => ({ freeBytes: 10 * MIB, totalBytes: 1024 })
  })
  await guard.open()
  t.teardown(() => guard.close())
  const asked = await Promise.allSettled([1, 2, 3, 4].map(async i => await guard.reserve(2 * MIB, `chunk ${i}`)))
  const held = asked.flatMap(a => a.status === 'fulfilled' ? [a.value] : [])
  const refused = asked.flatMap(a => a.status === 'rejected' ? [a.reason as any] : [])
  t.equal(held.length, 3, 'three of four 2 MiB reservations asked at once fit in 6 MiB')
  t.equal(refused.length, 1)
  t.match(refused[0], { code: 'BWN_ERR_STORAGE_FULL', statusCode: 507, extensions: { needed_bytes: 2 * MIB, free_bytes: 10 * MIB, reserved_bytes: 6 * MIB } })
  t.match(refused[0]?.message, /writes in progress hold 6.0 MiB of it/)
  t.equal(guard.reservedBytes, 6 * MIB)
  await t.rejects(guard.room(1, 'a create'), { code: 'BWN_ERR_STORAGE_FULL' }, 'room() counts what reservations hold')
  held[0]!()
  held[0]!()
  t.equal(guard.reservedBytes, 4 * MIB, 'a release gives its bytes back, a second call nothing')
  await guard.room(2 * MIB, 'a create')
  const again = await guard.reserve(2 * MIB, 'chunk 5')
  for (const release of [...held, again]) release()
  t.equal(guard.reservedBytes, 0)
})

t.test('a write that finishes while a check reads the free space is counted once, as held', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-reserve-race-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  // 10 MiB free before the first write lands, 4 MiB kept free: 6 MiB of room.
  let reading: ((v: { freeBytes: number, totalBytes: number }) => void) | null = null
  let gated = false
  const guard = new StorageGuard({
    dir, node: '5Node', logger: silentLogger(), minFreeBytes: 4 * MIB, probe: async () => {}, reopen: async () => {},
    space: async () => gated ? await new Promise(resolve => { reading = resolve }) : { freeBytes: 10 * MIB, totalBytes: 1024 }
  })
  await guard.open()
  t.teardown(() => guard.close())
  const first = await guard.reserve(4 * MIB, 'chunk 1')
  gated = true
  const second = guard.reserve(4 * MIB, 'chunk 2')
  await eventually(async () => reading !== null, 5000, 'the second check reading the free space', 5)
  first() // the first write lands (its 4 MiB now on disk) while the reading, taken before, says 10 MiB
  reading!({ freeBytes: 10 * MIB, totalBytes: 1024 })
  await t.rejects(second, { code: 'BWN_ERR_STORAGE_FULL' }, 'the landed write is counted: 2 MiB of room, not 6')
})

t.test('the ballast is released for a retry when a write fails for space, and put back when it fits', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-ballast-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const guard = new StorageGuard({ dir, node: '5Node', logger: silentLogger(), minFreeBytes: 0, probe: async () => {}, reopen: async () => {} })
  await guard.open()
  t.teardown(() => guard.close())
  const ballast = join(dir, 'storage-ballast')
  t.ok((await stat(ballast)).size > 0, 'the ballast is held')
  let tries = 0
  const store = guardStore({
    table: () => { throw new Error('unused') },
    batch: async () => { if (tries++ === 0) throw Object.assign(new Error('write'), { code: 'ENOSPC' }) }
  }, guard)
  await store.batch([{ type: 'put', table: 'transfers', key: 'k', value: 1 }])
  t.equal(tries, 2, 'the write was tried again')
  await t.rejects(stat(ballast), 'after the ballast was released')
  await eventually(async () => guard.problem() === null, 10_000, 'the probe to clear the failing state')
  await guard.room(1, 'a chunk')
  await eventually(async () => (await stat(ballast).catch(() => null))?.size !== undefined, 10_000, 'the ballast to be put back')

  // A synced batch stays synced through the guard (a create, a chunk or a revocation is answered once on disk).
  const seen: Array<{ sync?: boolean } | undefined> = []
  const passing = guardStore({ table: () => { throw new Error('unused') }, batch: async (_ops, opts) => { seen.push(opts) } }, guard)
  await passing.batch([{ type: 'put', table: 'transfers', key: 'k', value: 1 }], { sync: true })
  await passing.batch([{ type: 'put', table: 'transfers', key: 'k', value: 2 }])
  t.same(seen, [{ sync: true }, undefined], 'the sync option reaches the store')

  let always = 0
  const full = guardStore({ table: () => { throw new Error('unused') }, batch: async () => { always++; throw Object.assign(new Error('write'), { code: 'ENOSPC' }) } }, guard)
  await t.rejects(full.batch([{ type: 'put', table: 'transfers', key: 'k', value: 1 }]), { code: 'BWN_ERR_STORAGE_FULL', statusCode: 507 }, 'a write that fails again is a 507')
  t.equal(always, 2)
})

t.test('LevelDB after a failed compaction refuses writes until reopened; the guard reopens it', { skip: tmpfsSkipReason() ?? false }, async t => {
  const mnt = await mountTmpfs(t, 32, 'bwnet-leveldb-full-')
  const db = new Level<string, string>(join(mnt, 'db'))
  await db.open()
  t.teardown(() => db.close())
  const tables = new LevelStore(db as never)
  const guard = new StorageGuard({
    dir: mnt, node: '5Node', logger: silentLogger(), minFreeBytes: 0,
    probe: async () => { await db.put(STORAGE_PROBE_KEY, 'probe', { sync: true }) },
    reopen: async () => { await tables.reopen() }
  })
  await guard.open()
  t.teardown(() => guard.close())
  const store = guardStore(tables, guard)
  // Leave room for the write-ahead log but not for the table a memtable flush writes (4 MiB).
  await rm(join(mnt, 'storage-ballast'), { force: true })
  const { bavail, bsize } = await statfs(mnt)
  await writeFile(join(mnt, 'filler'), Buffer.alloc(bavail * bsize - 5.5 * MIB))
  const value = 'x'.repeat(1000)
  let written = 0
  let failure: unknown = null
  for (let i = 0; i < 40_000 && failure === null; i++) {
    try { await store.batch([{ type: 'put', table: 'transfers', key: `k${i}`, value: `${value}${i}` }]); written++ } catch (err) { failure = err }
  }
  t.match(failure, { code: 'BWN_ERR_STORAGE_FULL' }, `a write failed for space after ${written} writes`)
  await rm(join(mnt, 'filler'))
  await eventually(async () => guard.problem() === null, 15_000, 'the guard to clear the failing store')
  await store.batch([{ type: 'put', table: 'transfers', key: 'after', value: 'ok' }])
  t.equal(await store.table<string>('transfers').get('after'), 'ok', 'writes land again without a restart')
  t.equal(await store.table<string>('transfers').get('k0'), `${value}0`, 'what was written before is there')
})
