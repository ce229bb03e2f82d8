// The blob sweep on a real blob store: an unreferenced blob older than the grace period goes; one that a
// chunk references, one still fresh, one an upload holds, and one a live transfer's chunk names stay.
import t from 'tap'
import { mkdir, mkdtemp, rm, stat, utimes, writeFile, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../../actors/store.ts'
import { blobRefKey, pinBlob, withBlobLock } from '../../../actors/transfer/blob-refs.ts'
import { FileBlobStore } from '../../../node/adapters/blob-store.ts'
import { sweepBlobs, SWEEP_BATCH } from '../../../node/adapters/blob-sweep.ts'

const HOUR = 3_600_000
/** Sets a file's times `ms` into the past. */
const age = async (path: string, ms: number): Promise<void> => { const when = new Date(Date.now() - ms); await utimes(path, when, when) }
const onDisk = async (path: string): Promise<number> => (await stat(path)).blocks * 512

async function setup (t: { teardown (fn: () => unknown): void }): Promise<{ store: LevelStore, blobs: FileBlobStore, dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-blob-sweep-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const blobs = new FileBlobStore(dir)
  await blobs.open()
  return { store: new LevelStore(new MemoryLevel() as never), blobs, dir }
}

t.test('an orphan older than the grace period is deleted; a referenced, a fresh and a live chunk\'s blob are kept', async t => {
  const { store, blobs } = await setup(t)
  const orphan = await blobs.put(randomBytes(5000))
  const referenced = await blobs.put(randomBytes(3000))
  const fresh = await blobs.put(randomBytes(2000))
  const named = await blobs.put(randomBytes(1000))
  for (const sha of [orphan, referenced, named]) await age(blobs.pathOf(sha), 2 * HOUR)
  await age(blobs.pathOf(fresh), HOUR / 2)
  await store.table('index').put(blobRefKey(referenced, 'tr-1', 0), 1)
  const orphanBytes = await onDisk(blobs.pathOf(orphan))

  const r = await sweepBlobs({ store, blobs, graceMs: HOUR, keep: new Set([named]) })
  t.same(r.blobs, { files: 1, bytes: orphanBytes }, 'one blob, its bytes on disk')
  t.equal(r.errors, 0)
  t.equal(await blobs.has(orphan), false, 'the orphan is gone')
  t.ok(await blobs.has(referenced), 'a referenced blob stays, however old')
  t.ok(await blobs.has(fresh), 'an unreferenced blob younger than the grace period stays (an ingest not yet recorded)')
  t.ok(await blobs.has(named), 'a blob a live transfer\'s chunk names stays, reference or not')

  const again = await sweepBlobs({ store, blobs, graceMs: HOUR, keep: new Set([named]) })
  t.same(again.blobs, { files: 0, bytes: 0 }, 'a second sweep finds nothing more')
})

t.test('temp files: an abandoned one goes, one an ingest is writing stays; strays in a shard are left', async t => {
  const { store, blobs, dir } = await setup(t)
  const abandoned = join(blobs.tmpDir, 'a'.repeat(24))
  const writing = join(blobs.tmpDir, 'b'.repeat(24))
  await writeFile(abandoned, randomBytes(4096))
  await writeFile(writing, randomBytes(100))
  await age(abandoned, 2 * HOUR)
  const sha = await blobs.put(Buffer.from('x'))
  await writeFile(join(dir, sha.slice(0, 2), 'notes.txt'), 'x')
  await age(join(dir, sha.slice(0, 2), 'notes.txt'), 2 * HOUR)
  const bytes = await onDisk(abandoned)
  const r = await sweepBlobs({ store, blobs, graceMs: HOUR })
  t.same(r.temps, { files: 1, bytes })
  t.same(await readdir(blobs.tmpDir), ['b'.repeat(24)])
  t.same(await readdir(join(dir, sha.slice(0, 2))), [sha, 'notes.txt'].sort(), 'a file not named by a digest is not the sweep\'s')
})

t.test('a body staged now keeps its temp file whatever its time says (a clock that jumped, a filesystem\'s own clock)', async t => {
  const { store, blobs } = await setup(t)
  const staged = await blobs.ingest([randomBytes(4096)], { length: 4096 })
  const [name] = await readdir(blobs.tmpDir)
  await age(join(blobs.tmpDir, name!), 3 * HOUR)
  t.same((await sweepBlobs({ store, blobs, graceMs: HOUR })).temps, { files: 0, bytes: 0 })
  await staged.commit()
  t.same(await readdir(blobs.tmpDir), [], 'committed: nothing left to sweep')
})

t.test('an upload of the same bytes holding its pin keeps the blob, even one whose file looks old', async t => {
  const { store, blobs } = await setup(t)
  const bytes = randomBytes(8192)
  const sha = await blobs.put(bytes)
  await age(blobs.pathOf(sha), 3 * HOUR) // orphaned by a crash long ago
  // The same content is uploaded again: staged, then committed as the service does (pinned in the rename's step).
  const staged = await blobs.ingest([bytes], { length: bytes.length, sha256: sha })
  let unpin: (opts?: { recheck?: boolean }) => void = () => {}
  const sweeping = sweepBlobs({ store, blobs, graceMs: HOUR })
  await staged.commit(async () => {
    unpin = pinBlob(blobs, sha)
    await age(blobs.pathOf(sha), 3 * HOUR) // a coarse clock, or a low grace: the pin alone must hold it
  })
  await sweeping
  const r = await sweepBlobs({ store, blobs, graceMs: HOUR })
  t.same(r.blobs, { files: 0, bytes: 0 }, 'pinned between the rename and the chunk\'s record: kept')
  t.ok(await blobs.has(sha))
  await store.table('index').put(blobRefKey(sha, 'tr-2', 0), 1) // the coordinator records the chunk
  unpin()
  await withBlobLock(blobs, sha, async () => {})
  t.same((await sweepBlobs({ store, blobs, graceMs: HOUR })).blobs.files, 0, 'then its reference keeps it')
  t.same(Buffer.from((await blobs.get(sha))!), bytes, 'and its bytes are the upload\'s')
})

t.test('a large store is swept in batches: other work runs between them', async t => {
  const { store, blobs } = await setup(t)
  const n = 2 * SWEEP_BATCH + 5
  for (let i = 0; i < n; i++) { // written straight under their names (no fsyncs): only the layout matters here
    const bytes = Buffer.from(`blob ${i}`)
    const path = blobs.pathOf(createHash('sha256').update(bytes).digest('hex'))
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, bytes)
    await age(path, 2 * HOUR)
  }
  let calls = 0
  const cut = await sweepBlobs({ store, blobs, graceMs: HOUR, stopped: () => ++calls > 1 })
  t.ok(cut.blobs.files <= 1, 'stopped (the node is stopping): the sweep ends where it is')
  let turns = 0
  let sweeping = true
  const tick = (): void => { turns++; if (sweeping) setImmediate(tick) }
  setImmediate(tick)
  const r = await sweepBlobs({ store, blobs, graceMs: HOUR })
  sweeping = false
  t.equal(r.blobs.files, n - cut.blobs.files)
  t.ok(turns >= 2, `the event loop turned ${turns} times during the sweep`)
})
