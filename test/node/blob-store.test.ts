import t from 'tap'
import { mkdtemp, rm, readdir } from 'node:fs/promises'
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
