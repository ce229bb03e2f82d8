// `bwnet transfer put` waiting for completion: the poll interval backs off, but not past the predicted
// last delivery, and restarts short once every chunk is delivered (nextPollDelay is pure: no clock).
import t from 'tap'
import { nextPollDelay, POLL_START_MS, POLL_MAX_MS } from '../../../node/commands/transfer.ts'

t.test('backs off by 1.5 up to the cap while nothing is delivered', async (t) => {
  let delay = POLL_START_MS
  const seen: number[] = []
  for (let i = 0; i < 12; i++) {
    delay = nextPollDelay(delay, { delivered: 0, atMs: i * 1000 }, { delivered: 0, atMs: (i + 1) * 1000 }, 64)
    seen.push(delay)
  }
  t.equal(seen[0], POLL_START_MS * 1.5)
  t.equal(seen[1], POLL_START_MS * 1.5 * 1.5)
  t.equal(seen.at(-1), POLL_MAX_MS, 'capped')
  t.ok(seen.every((d, i) => i === 0 || d >= seen[i - 1]!), 'never shrinks without progress')
})

t.test('never waits past the moment the delivery rate predicts the last chunk', async (t) => {
  // 10 chunks per second, 5 to go: 500 ms, though the back-off would allow 5 s.
  t.equal(nextPollDelay(POLL_MAX_MS, { delivered: 40, atMs: 0 }, { delivered: 59, atMs: 1900 }, 64), 500)
  // Far from done the back-off decides.
  t.equal(nextPollDelay(1000, { delivered: 0, atMs: 0 }, { delivered: 1, atMs: 1000 }, 64), 1500)
  // A prediction shorter than the first interval waits the first interval.
  t.equal(nextPollDelay(POLL_MAX_MS, { delivered: 0, atMs: 0 }, { delivered: 63, atMs: 1000 }, 64), POLL_START_MS)
})

t.test('restarts short once every chunk is delivered, then backs off again', async (t) => {
  const first = nextPollDelay(POLL_MAX_MS, { delivered: 60, atMs: 0 }, { delivered: 64, atMs: 5000 }, 64)
  t.equal(first, POLL_START_MS, 'completion follows the last delivery closely')
  const second = nextPollDelay(first, { delivered: 64, atMs: 5000 }, { delivered: 64, atMs: 5250 }, 64)
  t.equal(second, POLL_START_MS * 1.5, 'and backs off if it does not come')
  t.equal(nextPollDelay(POLL_MAX_MS, { delivered: 64, atMs: 0 }, { delivered: 64, atMs: 9000 }, 64), POLL_MAX_MS)
})

t.test('a count that goes down or a clock that does not move falls back to the back-off', async (t) => {
  t.equal(nextPollDelay(1000, { delivered: 10, atMs: 0 }, { delivered: 8, atMs: 1000 }, 64), 1500)
  t.equal(nextPollDelay(1000, { delivered: 8, atMs: 1000 }, { delivered: 10, atMs: 1000 }, 64), 1500)
  t.equal(nextPollDelay(1000, null, { delivered: 10, atMs: 1000 }, 64), 1500)
})
