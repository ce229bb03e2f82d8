import t from 'tap'
import { mkdtemp, rm, readdir, open } from 'node:fs/promises'
import { readlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { FileBlobStore } from '../../node/adapters/blob-store.ts'

t.test('content-addressed put/get/has/delete', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-blobs-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const blobs = new FileBlobStore(dir)
  await blobs.open()
  const bytes = Buffer.from('hello chunk')
  const sha = createHash('sha256').update(bytes).digest('hex')
  t.equal(await blobs.put(bytes), sha)
  t.equal(await blobs.put(bytes, sha), sha, 'idempotent')
  t.ok(await blobs.has(sha))
  t.same(await blobs.get(sha), bytes)
  await t.rejects(blobs.put(bytes, '0'.repeat(64)), { code: 'BWN_ERR_DIGEST_MISMATCH' })
  t.same(await readdir(join(dir, 'tmp')), [], 'no temp files left behind')
  await blobs.delete(sha)
  t.equal(await blobs.has(sha), false)
  t.equal(await blobs.get(sha), undefined)
  await t.rejects(blobs.get('../etc/passwd'), TypeError, 'only digests name blobs')
})

t.test('ingest: one pass hashes and writes; too long, too short and wrong digest leave nothing behind', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-blobs-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const blobs = new FileBlobStore(dir)
  await blobs.open()
  const bytes = Buffer.alloc(3 * 1024 * 1024 + 7, 9)
  const sha = createHash('sha256').update(bytes).digest('hex')
  const md5 = createHash('md5').update(bytes).digest('hex')
  async function * pieces (b: Buffer, size = 64 * 1024): AsyncGenerator<Uint8Array> { for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size) }

  const staged = await blobs.ingest(pieces(bytes), { length: bytes.length, md5: true, sha256: sha })
  t.same([staged.sha256, staged.md5, staged.bytes], [sha, md5, bytes.length], 'sha256 and md5 in the same pass')
  t.equal(await blobs.has(sha), false, 'not under its name before commit')
  await staged.commit()
  t.same(await blobs.get(sha), bytes, 'committed')
  const again = await blobs.ingest(pieces(bytes), { length: bytes.length })
  t.equal(again.md5, null, 'md5 only when asked')
  await again.discard()

  let pulled = 0
  async function * endless (): AsyncGenerator<Uint8Array> { for (;;) { pulled++; yield Buffer.alloc(64 * 1024) } }
  await t.rejects(blobs.ingest(endless(), { length: 1024 * 1024 }), { code: 'BWN_ERR_BODY_TOO_LONG' })
  t.equal(pulled, 17, 'refused at the first piece past the length, nothing more read')
  await t.rejects(blobs.ingest(pieces(bytes.subarray(1)), { length: bytes.length }), { code: 'BWN_ERR_BODY_TOO_SHORT' })
  await t.rejects(blobs.ingest(pieces(bytes), { length: bytes.length, sha256: '0'.repeat(64) }), { code: 'BWN_ERR_DIGEST_MISMATCH' })
  t.same(await readdir(join(dir, 'tmp')), [], 'no temp file left behind')
})

t.test('a commit replaces a damaged blob of the same name', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-blobs-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const blobs = new FileBlobStore(dir)
  await blobs.open()
  const bytes = Buffer.from('the same content twice')
  const sha = await blobs.put(bytes)
  const { writeFile } = await import('node:fs/promises')
  await writeFile(blobs.pathOf(sha), 'damaged')
  t.equal(await blobs.put(bytes, sha), sha)
  t.same(await blobs.get(sha), bytes, 'healed')
})

t.test('a blob in a new shard: the shard directory and the blobs directory holding it are fsynced', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-blobs-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const blobs = new FileBlobStore(dir)
  await blobs.open()
  // What each fsync reached, by the path its descriptor names (Linux: /proc/self/fd).
  const probe = await open(join(dir, 'probe'), 'w')
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> }
  await probe.close()
  const original = proto.sync
  const synced: string[] = []
  proto.sync = async function (this: { fd: number }) { synced.push(readlinkSync(`/proc/self/fd/${this.fd}`)); return await original.call(this) }
  t.teardown(() => { proto.sync = original })
  const first = Buffer.from('first blob')
  const sha = createHash('sha256').update(first).digest('hex')
  await blobs.put(first)
  t.ok(synced.includes(join(dir, sha.slice(0, 2))), 'the new shard')
  t.ok(synced.includes(dir), 'and the directory that now names it')
  synced.length = 0
  // Another blob in the same shard: the shard exists, only it is synced.
  let other = Buffer.from('x')
  for (let i = 0; createHash('sha256').update(other).digest('hex').slice(0, 2) !== sha.slice(0, 2); i++) other = Buffer.from(`other ${i}`)
  await blobs.put(other)
  t.ok(synced.includes(join(dir, sha.slice(0, 2))))
  t.notOk(synced.includes(dir), 'no second sync of the blobs directory for an existing shard')
})
