// The coordinator's data endpoint tells it of every read of a staged chunk under a valid signed path
// (node/transfers/data-endpoint.ts `onRead`): its own evidence that the attempt's worker acted on the
// offer, whatever the worker's orchestrator relays of its progress (docs/transfers.md#worker-standing).
// A path that is unsigned, forged, expired or of a chunk no longer staged tells it nothing.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../../actors/store.ts'
import { keys } from '../../../actors/transfer/model.ts'
import { cryptoReady, newHotkey } from '../../../protocol/index.ts'
import { signChunkSource, signedChunkSha, type ChunkSource } from '../../../node/transfers/data-endpoint.ts'
import { ManualClock } from '../../helpers/clock.ts'

await cryptoReady()

t.test('a valid read of a staged chunk is reported with its transfer and attempt; no other is', async t => {
  const store = new LevelStore(new MemoryLevel({ valueEncoding: 'json' }) as never)
  const clock = new ManualClock()
  const reads: Array<[string, string]> = []
  const src: ChunkSource = { key: newHotkey(), store, blobs: {} as never, clock, baseUrl: () => 'http://127.0.0.1:8000', onRead: (transfer, attempt) => { reads.push([transfer, attempt]) } }
  const transferId = randomUUID(); const attemptId = randomUUID()
  const SHA = 'ab'.repeat(32)
  await store.table('chunks').put(keys.chunk(transferId, 3), { transfer_id: transferId, chunk_index: 3, sha256: SHA } as never)
  const { path } = signChunkSource(src, transferId, 3, attemptId, clock.now() + 60_000)
  t.equal(await signedChunkSha(src, path), SHA)
  t.same(reads, [[transferId, attemptId]], 'the read is reported')

  const other = { ...src, key: newHotkey() }
  const forged = signChunkSource(other, transferId, 3, attemptId, clock.now() + 60_000).path
  await t.rejects(signedChunkSha(src, forged), 'signed by another key')
  await t.rejects(signedChunkSha(src, path.replace(attemptId, randomUUID())), 'moved to another attempt')
  await t.rejects(signedChunkSha(src, path.split('?')[0]!), 'unsigned')
  const gone = signChunkSource(src, transferId, 4, randomUUID(), clock.now() + 60_000).path
  await t.rejects(signedChunkSha(src, gone), 'a chunk not staged')
  clock.advance(61_000)
  await t.rejects(signedChunkSha(src, path), 'expired')
  t.same(reads, [[transferId, attemptId]], 'none of them is reported')
})
