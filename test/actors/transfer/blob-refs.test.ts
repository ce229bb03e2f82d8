// Blob references and pins: a release never deletes a blob that is pinned by an upload in flight or
// referenced by another chunk; critical sections on one digest run one at a time.
import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../../actors/store.ts'
import type { BlobStore } from '../../../actors/ports.ts'
import { blobRefKey, pinBlob, releaseBlobRef, withBlobLock, blobRefCount, reclaimOrphanBlob } from '../../../actors/transfer/blob-refs.ts'

function memoryBlobs (): BlobStore & { files: Set<string> } {
  const files = new Set<string>()
  return {
    files,
    put: async () => { throw new Error('unused') },
    get: async () => undefined,
    has: async (h) => files.has(h),
    delete: async (h) => { files.delete(h) }
  }
}

const SHA = 'a'.repeat(64)

t.test('a release keeps a blob that is pinned or referenced elsewhere, and deletes it with the last reference', async t => {
  const store = new LevelStore(new MemoryLevel() as never)
  const blobs = memoryBlobs()
  blobs.files.add(SHA)
  await store.table('index').put(blobRefKey(SHA, 'x', 0), 1)

  const unpin = await withBlobLock(blobs, SHA, async () => pinBlob(blobs, SHA)) // Y's upload, in flight
  t.equal(await releaseBlobRef(store, blobs, SHA, 'x', 0), false, 'X cancelled while Y is pinned: kept')
  t.ok(blobs.files.has(SHA))
  await store.table('index').put(blobRefKey(SHA, 'y', 0), 1) // the coordinator records Y's chunk
  unpin()
  unpin()
  t.equal(await blobRefCount(store, SHA), 1)
  t.equal(await releaseBlobRef(store, blobs, SHA, null, 0), false, 'referenced by Y: kept')
  t.equal(await releaseBlobRef(store, blobs, SHA, 'y', 0), true, 'last reference: deleted')
  t.notOk(blobs.files.has(SHA))
})

t.test('a release put off by a pin runs again at the last unpin: bytes whose every reference went meanwhile are deleted', async t => {
  const store = new LevelStore(new MemoryLevel() as never)
  const blobs = memoryBlobs()
  blobs.files.add(SHA)
  // X's upload made the blob and pinned it; the coordinator recorded X's chunk; X was cancelled and
  // cleaned up before the upload heard its answer and unpinned.
  const unpin = await withBlobLock(blobs, SHA, async () => pinBlob(blobs, SHA))
  const alsoPinned = await withBlobLock(blobs, SHA, async () => pinBlob(blobs, SHA)) // a second upload of the same bytes
  await store.table('index').put(blobRefKey(SHA, 'x', 0), 1)
  t.equal(await releaseBlobRef(store, blobs, SHA, 'x', 0), false, 'pinned: kept for now')
  unpin()
  await withBlobLock(blobs, SHA, async () => {})
  t.ok(blobs.files.has(SHA), 'another pin still holds it')
  await store.table('index').put(blobRefKey(SHA, 'y', 0), 1) // the second upload's chunk is recorded
  alsoPinned()
  await withBlobLock(blobs, SHA, async () => {})
  t.ok(blobs.files.has(SHA), 'referenced by y at the last unpin: kept')
  t.equal(await releaseBlobRef(store, blobs, SHA, 'y', 0), true, 'and deleted with its last reference')

  // The same race with no other reference: the last unpin deletes the bytes.
  blobs.files.add(SHA)
  const third = await withBlobLock(blobs, SHA, async () => pinBlob(blobs, SHA))
  await store.table('index').put(blobRefKey(SHA, 'z', 0), 1)
  t.equal(await releaseBlobRef(store, blobs, SHA, 'z', 0), false, 'pinned: kept for now')
  third()
  third() // a second unpin changes nothing
  await withBlobLock(blobs, SHA, async () => {})
  t.notOk(blobs.files.has(SHA), 'the last unpin deleted the unreferenced bytes')
  t.equal(await blobRefCount(store, SHA), 0)
})

t.test('an upload that timed out unpins without the put-off check: its chunk may still be recorded, so the bytes stay', async t => {
  const store = new LevelStore(new MemoryLevel() as never)
  const blobs = memoryBlobs()
  blobs.files.add(SHA)
  await store.table('index').put(blobRefKey(SHA, 'x', 0), 1)
  const unpin = await withBlobLock(blobs, SHA, async () => pinBlob(blobs, SHA)) // Y's upload
  t.equal(await releaseBlobRef(store, blobs, SHA, 'x', 0), false, 'X released while Y is pinned: put off')
  unpin({ recheck: false }) // Y's coordinator did not answer in time: its reference may still come
  await withBlobLock(blobs, SHA, async () => {})
  t.ok(blobs.files.has(SHA), 'the bytes stay')
  await store.table('index').put(blobRefKey(SHA, 'y', 0), 1) // the coordinator records Y's chunk after all
  t.equal(await blobRefCount(store, SHA), 1, 'and back the chunk recorded late')
  // A later upload's last unpin does not run the dropped check either.
  const again = await withBlobLock(blobs, SHA, async () => pinBlob(blobs, SHA))
  again()
  await withBlobLock(blobs, SHA, async () => {})
  t.ok(blobs.files.has(SHA))
})

t.test('critical sections on one digest run one at a time, in order; other digests do not wait', async t => {
  const blobs = memoryBlobs()
  const order: string[] = []
  let releaseFirst!: () => void
  const first = withBlobLock(blobs, SHA, async () => { order.push('a:start'); await new Promise<void>(resolve => { releaseFirst = resolve }); order.push('a:end') })
  const second = withBlobLock(blobs, SHA, async () => { order.push('b') })
  const other = withBlobLock(blobs, 'b'.repeat(64), async () => { order.push('other') })
  await other
  await new Promise(resolve => setImmediate(resolve))
  t.same(order, ['a:start', 'other'], 'the second waits; another digest does not')
  releaseFirst()
  await Promise.all([first, second])
  t.same(order, ['a:start', 'other', 'a:end', 'b'])
  const failing = withBlobLock(blobs, SHA, async () => { throw new Error('boom') })
  await t.rejects(failing, /boom/)
  t.equal(await withBlobLock(blobs, SHA, async () => 'next'), 'next', 'a failed section does not block the next')
})

t.test('the sweep reclaims a blob only with no reference, no pin and its re-check passing', async t => {
  const store = new LevelStore(new MemoryLevel() as never)
  const blobs = memoryBlobs()
  let asked = 0
  const old = async (): Promise<number> => { asked++; return 42 }
  blobs.files.add(SHA)
  await store.table('index').put(blobRefKey(SHA, 'x', 0), 1)
  t.equal(await reclaimOrphanBlob(store, blobs, SHA, old), null, 'referenced: kept')
  t.ok(blobs.files.has(SHA))
  await store.table('index').del(blobRefKey(SHA, 'x', 0))
  const unpin = await withBlobLock(blobs, SHA, async () => pinBlob(blobs, SHA)) // an upload between its rename and its record
  t.equal(await reclaimOrphanBlob(store, blobs, SHA, old), null, 'pinned: kept')
  t.ok(blobs.files.has(SHA))
  unpin({ recheck: false })
  t.equal(asked, 0, 'the file is not even looked at while something holds it')
  t.equal(await reclaimOrphanBlob(store, blobs, SHA, async () => null), null, 'the re-check says fresh: kept')
  t.ok(blobs.files.has(SHA))
  t.equal(await reclaimOrphanBlob(store, blobs, SHA, old), 42, 'orphaned: deleted, its size answered')
  t.notOk(blobs.files.has(SHA))
})

t.test('an upload of the same bytes that renames while the sweep checks lands after the delete: its blob stays', async t => {
  const store = new LevelStore(new MemoryLevel() as never)
  const blobs = memoryBlobs()
  blobs.files.add(SHA) // orphaned long ago
  let checking!: () => void
  const checked = new Promise<void>(resolve => { checking = resolve })
  let release!: () => void
  const gate = new Promise<void>(resolve => { release = resolve })
  const sweep = reclaimOrphanBlob(store, blobs, SHA, async () => { checking(); await gate; return 1 })
  await checked // the sweep has found no reference and no pin, and re-checks the file's age
  // The same content arrives meanwhile: its commit renames over the name and pins, as FileBlobStore does.
  let unpin: (() => void) | null = null
  const upload = withBlobLock(blobs, SHA, async () => { blobs.files.add(SHA); unpin = pinBlob(blobs, SHA) })
  release()
  t.equal(await sweep, 1, 'the orphan was deleted')
  await upload
  t.ok(blobs.files.has(SHA), 'the upload\'s copy, made after the delete, is there')
  await store.table('index').put(blobRefKey(SHA, 'y', 0), 1) // its chunk is recorded
  unpin!()
  t.equal(await reclaimOrphanBlob(store, blobs, SHA, async () => 1), null, 'and the next sweep keeps it')
  t.ok(blobs.files.has(SHA))
})
