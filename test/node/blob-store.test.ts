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
