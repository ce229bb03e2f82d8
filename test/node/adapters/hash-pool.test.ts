// Hashes on worker threads: the digests node:crypto computes, whatever the piece sizes; pieces copied (the
// caller may reuse them at once); memory per hash bounded; aborts and closed pools leave no hash pending;
// an idle pool lets the process exit; BWN_HASH_THREADS parsed strictly.
import t from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { HashPool, hashThreadsFrom, BUFFER_BYTES, BUFFERS_PER_HASH, type HashAlgorithm } from '../../../node/adapters/hash-pool.ts'

const direct = (data: Uint8Array, algorithm: HashAlgorithm): string => createHash(algorithm).update(data).digest('hex')

async function hashInPieces (pool: HashPool, data: Uint8Array, sizes: number[], algorithms: HashAlgorithm[]): Promise<string[]> {
  const h = pool.create(algorithms)
  for (let at = 0, k = 0; at < data.byteLength; k++) {
    const n = Math.min(sizes[k % sizes.length]!, data.byteLength - at)
    await h.update(data.subarray(at, at + n))
    at += n
  }
  return await h.digest()
}

for (const threads of [0, 1, 2]) {
  t.test(`${threads} thread(s): the digests of node:crypto, for any piece sizes`, async t => {
    const pool = new HashPool({ threads })
    t.teardown(() => pool.close())
    const data = randomBytes(3 * BUFFER_BYTES * BUFFERS_PER_HASH + 12345)
    const cases: Array<[string, number, number[]]> = [
      ['empty', 0, [1]],
      ['one byte', 1, [1]],
      ['exactly one buffer', BUFFER_BYTES, [BUFFER_BYTES]],
      ['odd small pieces', 200_001, [1, 7, 4096, 65536, 3]],
      ['pieces larger than a buffer', data.byteLength, [BUFFER_BYTES * 3 + 1]],
      ['socket-sized pieces', data.byteLength, [65536]]
    ]
    for (const [name, length, sizes] of cases) {
      const slice = data.subarray(0, length)
      t.same(await hashInPieces(pool, slice, sizes, ['sha256', 'md5']), [direct(slice, 'sha256'), direct(slice, 'md5')], name)
    }
    // Many at once, interleaved piece by piece, each on its own bytes.
    const inputs = Array.from({ length: 12 }, (_, i) => randomBytes(BUFFER_BYTES + i * 9973))
    const got = await Promise.all(inputs.map(async (d, i) => await hashInPieces(pool, d, [1000 + i * 77], ['sha256'])))
    t.same(got, inputs.map(d => [direct(d, 'sha256')]), 'twelve concurrent hashes')
    if (threads > 0) t.equal(pool.stats().openHashes, 0, 'none left open on the threads')
  })
}

t.test('a piece may be reused as soon as update resolves; memory per hash is bounded', async t => {
  const pool = new HashPool({ threads: 1 })
  t.teardown(() => pool.close())
  const h = pool.create(['sha256'])
  const reference = createHash('sha256')
  const piece = Buffer.alloc(100_000)
  let maxOwned = 0
  for (let i = 0; i < 200; i++) {
    piece.fill(i) // the same buffer, rewritten every time, as a file read loop does
    reference.update(piece)
    await h.update(piece)
    maxOwned = Math.max(maxOwned, pool.stats().buffersInUse)
  }
  t.same(await h.digest(), [reference.digest('hex')], 'every version of the piece was hashed as it was')
  t.ok(maxOwned <= BUFFERS_PER_HASH, `at most ${BUFFERS_PER_HASH} buffers held (${maxOwned})`)
  t.ok(pool.stats().spareBuffers > 0, 'a finished hash leaves its buffers for the next')
})

t.test('abort, misuse and a closed pool: errors, never a hash left pending', async t => {
  const pool = new HashPool({ threads: 1 })
  const a = pool.create()
  await a.update(randomBytes(BUFFER_BYTES * 2))
  a.abort()
  await t.rejects(a.update(Buffer.from('x')), /aborted/, 'no update after abort')
  await t.rejects(a.digest(), /aborted/, 'no digest after abort')
  t.equal(pool.stats().openHashes, 0, 'the aborted hash is gone from its thread')

  const b = pool.create()
  await b.update(Buffer.from('abc'))
  t.same(await b.digest(), [direct(Buffer.from('abc'), 'sha256')], 'the pool goes on after an abort')
  await t.rejects(b.digest(), /after digest/, 'one digest per hash')

  const waiting = pool.create()
  const stalled = waiting.update(randomBytes(BUFFER_BYTES * (BUFFERS_PER_HASH + 2))) // waits for buffers to come back
  await t.rejects(waiting.digest(), /one call at a time/, 'no digest while an update is under way')
  waiting.abort()
  await t.rejects(stalled, /aborted/, 'an update waiting for a buffer fails when its hash is aborted')

  const unknown = pool.create(['sha999' as HashAlgorithm])
  await unknown.update(Buffer.from('abc'))
  await t.rejects(unknown.digest(), { code: 'BWN_ERR_HASH' }, 'an algorithm the thread cannot make fails that hash')
  const after = pool.create()
  await after.update(Buffer.from('abc'))
  t.same(await after.digest(), [direct(Buffer.from('abc'), 'sha256')], 'and only that hash: the thread goes on')

  const c = pool.create()
  const big = randomBytes(BUFFER_BYTES * (BUFFERS_PER_HASH + 2))
  const pending = c.update(big) // needs buffers back from the thread
  await t.rejects(c.update(Buffer.from('y')), /one update at a time/)
  const closing = pool.close()
  await t.rejects((async () => { await pending; await c.digest() })(), { code: 'BWN_ERR_HASH_THREAD' }, 'a pending hash rejects when its thread stops')
  await closing
  t.throws(() => pool.create(), /closed/)
})

t.test('an unused hash holds nothing; an idle pool lets the process exit, a pending digest keeps it alive', async t => {
  const pool = new HashPool({ threads: 1 })
  t.teardown(() => pool.close())
  pool.create(['sha256'])
  t.same(pool.stats(), { threads: 1, openHashes: 0, buffersInUse: 0, spareBuffers: 0 })

  const script = `
    import { HashPool } from ${JSON.stringify(new URL('../../../node/adapters/hash-pool.ts', import.meta.url).href)}
    const pool = new HashPool({ threads: 1 })
    const h = pool.create(['sha256'])
    await h.update(Buffer.alloc(${BUFFER_BYTES * 3}, 7))
    console.log((await h.digest())[0])
  `
  const started = Date.now()
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 })
  t.equal(r.status, 0, r.stderr)
  t.equal(r.stdout.trim(), direct(Buffer.alloc(BUFFER_BYTES * 3, 7), 'sha256'), 'the digest arrived before the process ended')
  t.ok(Date.now() - started < 30_000, 'and the process then exited on its own')
})

t.test('BWN_HASH_THREADS', async t => {
  t.equal(hashThreadsFrom({ BWN_HASH_THREADS: '0' }), 0)
  t.equal(hashThreadsFrom({ BWN_HASH_THREADS: '3' }), 3)
  // Default: one thread per core beyond two, at most four.
  t.same([1, 2, 3, 4, 6, 8, 64].map(cores => hashThreadsFrom({}, cores)), [0, 0, 1, 2, 4, 4, 4])
  t.equal(hashThreadsFrom({ BWN_HASH_THREADS: '2' }, 2), 2, 'the variable wins')
  for (const bad of ['-1', '1.5', 'two', '65']) t.throws(() => hashThreadsFrom({ BWN_HASH_THREADS: bad }), { code: 'BWN_ERR_CONFIG' }, bad)
})
