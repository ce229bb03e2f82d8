import t from 'tap'
import {
  planChunks, chunkSizeFor, checkTotalSize, partNumber, chunkOfPart,
  MIB, GIB, TIB, MIN_CHUNK_SIZE, MAX_CHUNKS, MAX_TOTAL_SIZE, MAX_CHUNK_SIZE, MULTIPART_MAX_PARTS
} from '../../../actors/domain/index.ts'

t.test('small objects use the 16 MiB minimum, last chunk shorter', async t => {
  const plan = planChunks(40 * MIB + 5)
  t.equal(plan.chunkSize, MIN_CHUNK_SIZE)
  t.equal(plan.totalChunks, 3)
  t.same(plan.chunk(0), { index: 0, offset: 0, length: 16 * MIB })
  t.same(plan.chunk(2), { index: 2, offset: 32 * MIB, length: 8 * MIB + 5 })
  t.same(planChunks(1).chunk(0), { index: 0, offset: 0, length: 1 })
  t.equal(planChunks(16 * MIB).totalChunks, 1)
  t.equal(planChunks(16 * MIB + 1).totalChunks, 2)
  t.throws(() => plan.chunk(3), RangeError)
  t.throws(() => plan.chunk(-1), RangeError)
  t.throws(() => plan.chunk(1.5), RangeError)
})

t.test('chunk size doubles once 3333 chunks of the current size are not enough', async t => {
  t.equal(chunkSizeFor(3333 * 16 * MIB), 16 * MIB)
  t.equal(chunkSizeFor(3333 * 16 * MIB + 1), 32 * MIB)
  t.equal(chunkSizeFor(100 * GIB), 32 * MIB) // 100 GiB / 3333 ≈ 30.7 MiB
  t.equal(chunkSizeFor(1 * TIB), 512 * MIB)
  t.equal(chunkSizeFor(MAX_TOTAL_SIZE), 2 * GIB)
  t.ok(chunkSizeFor(MAX_TOTAL_SIZE) <= MAX_CHUNK_SIZE)
})

t.test('no object ever needs more than 3333 chunks, chunks tile the object exactly', async t => {
  for (const size of [1, 16 * MIB - 1, 3333 * 16 * MIB, 3333 * 16 * MIB + 1, 777 * GIB + 3, MAX_TOTAL_SIZE]) {
    const plan = planChunks(size)
    t.ok(plan.totalChunks <= MAX_CHUNKS, `${size}: ${plan.totalChunks} chunks`)
    const last = plan.chunk(plan.totalChunks - 1)
    t.equal(last.offset + last.length, size)
    t.ok(last.length > 0 && last.length <= plan.chunkSize)
    t.equal(Math.log2(plan.chunkSize / MIB) % 1, 0, 'power-of-two MiB')
  }
})

t.test('sizes outside 1 byte .. 5 TiB are refused', async t => {
  t.equal(checkTotalSize(0), 'too_small')
  t.equal(checkTotalSize(-1), 'too_small')
  t.equal(checkTotalSize(1.5), 'not_an_integer')
  t.equal(checkTotalSize(MAX_TOTAL_SIZE + 1), 'too_large')
  t.equal(checkTotalSize(MAX_TOTAL_SIZE), null)
  t.throws(() => planChunks(0), RangeError)
  t.throws(() => planChunks(MAX_TOTAL_SIZE + 1), RangeError)
})

t.test('part numbers: 3 slots per chunk, never reused, within 10,000', async t => {
  t.equal(partNumber(0, 0), 1)
  t.equal(partNumber(0, 2), 3)
  t.equal(partNumber(1, 0), 4)
  t.equal(partNumber(MAX_CHUNKS - 1, 2), 9999)
  t.ok(partNumber(MAX_CHUNKS - 1, 2) <= MULTIPART_MAX_PARTS)
  t.same(chunkOfPart(partNumber(1234, 1)), { chunkIndex: 1234, attemptSlot: 1 })
  t.throws(() => partNumber(0, 3), RangeError)
  t.throws(() => partNumber(MAX_CHUNKS, 0), RangeError)
  t.throws(() => chunkOfPart(0), RangeError)
  t.throws(() => chunkOfPart(10_000), RangeError)
})
