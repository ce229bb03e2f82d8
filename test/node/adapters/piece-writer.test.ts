// PieceWriter: pieces reach the file in order, at the right offsets, byte for byte; one write runs at a
// time and takes everything that queued behind it, as soon as it may; the caller waits only when the
// queue is full; a short writev is finished; a failed write fails the next write or flush, even one
// that failed with nothing queued behind it, and settle() never throws.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdtemp, open, readFile, rm, type FileHandle } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PieceWriter } from '../../../node/adapters/piece-writer.ts'

interface Test {
  teardown: (fn: () => Promise<void>) => void
}

async function tempFile (t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bwn-piece-writer-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  return join(dir, 'f')
}

/** Pieces of random sizes (1 B .. 100 KiB) that add up to `total` bytes of `bytes`. */
function piecesOf (bytes: Buffer): Buffer[] {
  const out: Buffer[] = []
  for (let at = 0; at < bytes.length;) {
    const n = Math.min(bytes.length - at, 1 + Math.floor(Math.random() * 100 * 1024))
    out.push(bytes.subarray(at, at + n))
    at += n
  }
  return out
}

t.test('appends pieces in order to a real file', async t => {
  const path = await tempFile(t)
  const bytes = randomBytes(5 * 1024 * 1024 + 17)
  const fh = await open(path, 'w')
  try {
    const w = new PieceWriter(fh, null, 256 * 1024)
    for (const p of piecesOf(bytes)) await w.write(p)
    await w.flush()
  } finally { await fh.close() }
  t.ok(bytes.equals(await readFile(path)), 'the file is the body, byte for byte')
})

t.test('writes at an offset, next to other writers of the same file', async t => {
  const path = await tempFile(t)
  const a = randomBytes(3 * 1024 * 1024)
  const b = randomBytes(2 * 1024 * 1024 + 5)
  const fh = await open(path, 'w+')
  try {
    // Two writers into disjoint regions at once, the way the sink writes chunks of one file.
    await Promise.all([[0, a], [a.length, b]].map(async ([offset, bytes]) => {
      const w = new PieceWriter(fh, offset as number, 128 * 1024)
      for (const p of piecesOf(bytes as Buffer)) await w.write(p)
      await w.flush()
    }))
  } finally { await fh.close() }
  t.ok(Buffer.concat([a, b]).equals(await readFile(path)), 'both regions, byte for byte')
})

/** A FileHandle whose writev calls wait until the test lets them finish. */
class HeldFile {
  readonly calls: Array<{ pieces: Uint8Array[], position: number | undefined, done: (bytes: number) => void, fail: (err: Error) => void }> = []
  readonly written: Array<{ position: number | undefined, bytes: Buffer }> = []
  running = 0
  maxRunning = 0
  shortBy = 0

  async writev (pieces: Uint8Array[], position?: number): Promise<{ bytesWritten: number }> {
    this.running++
    this.maxRunning = Math.max(this.maxRunning, this.running)
    try {
      const size = pieces.reduce((n, p) => n + p.byteLength, 0)
      const bytes = await new Promise<number>((resolve, reject) => { this.calls.push({ pieces, position, done: resolve, fail: reject }) })
      const kept = Math.min(bytes, size)
      this.written.push({ position, bytes: Buffer.concat(pieces).subarray(0, kept) })
      return { bytesWritten: kept }
    } finally { this.running-- }
  }

  async write (buf: Buffer, offset: number, length: number, position: number | null): Promise<{ bytesWritten: number }> {
    this.written.push({ position: position ?? undefined, bytes: Buffer.from(buf.subarray(offset, offset + length)) })
    return { bytesWritten: length }
  }
}

const asHandle = (f: HeldFile): FileHandle => f as unknown as FileHandle
const settled = async (): Promise<void> => { for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve)) }

t.test('one write at a time; it takes everything queued behind it; the caller waits only on a full queue', async t => {
  const f = new HeldFile()
  const w = new PieceWriter(asHandle(f), 1000, 10)
  const piece = (n: number, fill: number): Buffer => Buffer.alloc(n, fill)

  await w.write(piece(4, 1)) // no write running: it starts at once
  t.equal(f.calls.length, 1, 'the first piece is written at once')
  t.equal(f.calls[0]!.position, 1000, 'at the given offset')

  await w.write(piece(3, 2)) // queued behind the running write, 3 < 10: returns without waiting
  await w.write(piece(3, 3)) // 6 < 10
  t.equal(f.calls.length, 1, 'still one write running')

  let third = false
  const full = w.write(piece(5, 4)).then(() => { third = true }) // 11 >= 10: waits for the running write
  await settled()
  t.equal(third, false, 'a full queue makes the caller wait')
  t.equal(f.calls.length, 1, 'no second write while the first runs')

  f.calls[0]!.done(4)
  await full
  t.equal(f.calls.length, 2, 'then one write takes the whole queue')
  t.equal(f.calls[1]!.pieces.length, 3, 'the three queued pieces in one writev')
  t.equal(f.calls[1]!.position, 1004, 'right after the first write')
  t.equal(f.maxRunning, 1, 'never two writes at once')

  const flushed = w.flush()
  await settled()
  f.calls[1]!.done(11)
  await flushed
  t.same(f.written.map(x => [x.position, [...x.bytes]]), [
    [1000, [1, 1, 1, 1]],
    [1004, [2, 2, 2, 3, 3, 3, 4, 4, 4, 4, 4]]
  ], 'the bytes in order at their offsets')
})

t.test('a short writev is finished where it stopped', async t => {
  const f = new HeldFile()
  const w = new PieceWriter(asHandle(f), 50, 1024)
  await w.write(Buffer.from('hello '))
  const flushed = w.flush()
  await settled()
  f.calls[0]!.done(2) // the kernel took "he"
  await settled()
  await w.write(Buffer.from('world'))
  const second = w.flush()
  await settled()
  f.calls[1]!.done(5)
  await Promise.all([flushed, second])
  t.same(f.written.map(x => [x.position, x.bytes.toString()]), [[50, 'he'], [52, 'llo '], [56, 'world']], 'the rest written right after what was taken; the next piece after that')
})

t.test('a failed write fails the next write and flush; settle() does not throw', async t => {
  const f = new HeldFile()
  const w = new PieceWriter(asHandle(f), null, 1024)
  await w.write(Buffer.from('abc'))
  await w.write(Buffer.from('def'))
  f.calls[0]!.fail(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }))
  await w.settle()
  t.pass('settle resolves after a failed write')
  await t.rejects(w.write(Buffer.from('ghi')), { code: 'ENOSPC' }, 'the next write rejects with it')
  await t.rejects(w.flush(), { code: 'ENOSPC' }, 'so does flush')
  t.equal(f.calls.length, 1, 'nothing more is written after a failure')
})

t.test('what queued behind a write goes out as soon as that write ends, with no further call', async t => {
  const f = new HeldFile()
  const w = new PieceWriter(asHandle(f), 0, 1024)
  await w.write(Buffer.from('a'))
  await w.write(Buffer.from('b')) // queued, far below the limit: nothing waits
  f.calls[0]!.done(1)
  await settled()
  t.equal(f.calls.length, 2, 'the queued piece is being written')
  t.same(f.calls[1]!.pieces.map(p => Buffer.from(p).toString()), ['b'])
  t.equal(f.calls[1]!.position, 1)
  f.calls[1]!.done(1)
  await w.flush()
})

t.test('a write that fails with nothing queued behind it still fails flush', async t => {
  const f = new HeldFile()
  const w = new PieceWriter(asHandle(f), null, 1024)
  await w.write(Buffer.from('last piece'))
  f.calls[0]!.fail(Object.assign(new Error('I/O error'), { code: 'EIO' }))
  await w.settle()
  await t.rejects(w.flush(), { code: 'EIO' }, 'the body is not reported written')
})
