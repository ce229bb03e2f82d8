// The progress rate after a resume: chunks already there (and deliveries already made) count as done,
// not as bytes moved in this run, so the rate is what this run sends (a fake clock).
import t from 'tap'
import { ProgressReporter, newTotals } from '../../../node/transfers/progress.ts'

t.test('a resume\'s chunks already there do not inflate the rate', async t => {
  let now = 0
  const out: string[] = []
  const stream = { isTTY: false, write: (s: string) => { out.push(s); return true } } as unknown as NodeJS.WriteStream
  const totals = newTotals()
  const r = new ProgressReporter(totals, { mode: 'plain', stream, intervalMs: 1000, now: () => now })
  Object.assign(totals.upload, { chunksTotal: 19, bytesTotal: 300 * 1024 * 1024 })
  r.tick() // planned: the first sample, nothing done yet
  // A resume finds 14 chunks (224 MiB) there at once, then sends 40 MiB in 1 s.
  totals.upload.chunksDone += 14; totals.upload.bytesDone += 224 * 1024 * 1024; totals.upload.bytesSkipped += 224 * 1024 * 1024
  r.tick()
  now = 1000
  totals.upload.bytesDone += 40 * 1024 * 1024
  r.tick()
  t.match(out.at(-1), /^upload: 14\/19 chunks, 264 MiB\/300 MiB, 40\.0 MiB\/s, ETA 1 s\n$/, 'done shows 264 MiB, the rate 40 MiB/s')

  // Deliveries made before this run: done, not part of the rate.
  r.phase('deliver')
  Object.assign(totals.deliver, { chunksTotal: 19, bytesTotal: 300 * 1024 * 1024 })
  r.tick()
  totals.deliver.chunksDone = 10; totals.deliver.bytesDone = 160 * 1024 * 1024; totals.deliver.bytesSkipped = 160 * 1024 * 1024
  now = 2000
  r.tick()
  now = 4000
  totals.deliver.chunksDone = 12; totals.deliver.bytesDone = 192 * 1024 * 1024
  r.tick()
  // The window runs from the first sample (t = 0): 32 MiB in 4 s. Counting the 160 MiB found would read 48 MiB/s.
  t.match(out.at(-1), /^deliver: 12\/19 chunks \(verified 0\), 192 MiB\/300 MiB, 8\.0 MiB\/s/, 'delivery rate: 32 MiB in 4 s')
  r.stop()
})
