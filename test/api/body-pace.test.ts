// A request body must keep a minimum rate (api/body-pace.ts): 16 KiB, or its rest, every window. A steady
// body passes whatever its length; one that trickles is destroyed, and its reader meets a BODY_STALLED error.
import t from 'tap'
import { PassThrough } from 'node:stream'
import { paced, isBodyStalled, BODY_PROGRESS_BYTES } from '../../api/body-pace.ts'

async function drain (it: AsyncIterable<Uint8Array>): Promise<number> {
  let n = 0
  for await (const p of it) n += p.byteLength
  return n
}

t.test('a steady body passes; one that stops bringing its minimum is cut off', async t => {
  const steady = new PassThrough()
  const total = 3 * BODY_PROGRESS_BYTES + 5
  const read = drain(paced(steady, steady.iterator({ destroyOnReturn: false }), total, 200))
  let sent = 0
  const send = (): void => {
    const n = Math.min(BODY_PROGRESS_BYTES, total - sent)
    steady.write(Buffer.alloc(n)); sent += n
    if (sent < total) setTimeout(send, 100); else steady.end() // a window's minimum every 100 ms of a 200 ms window
  }
  send()
  t.equal(await read, total, 'a body that keeps its minimum arrives whole, however long it takes')

  const trickle = new PassThrough()
  const cut = drain(paced(trickle, trickle.iterator({ destroyOnReturn: false }), total, 200))
  trickle.write(Buffer.alloc(BODY_PROGRESS_BYTES)) // one window's worth, then a byte now and then
  const drip = setInterval(() => { if (!trickle.destroyed) trickle.write(Buffer.alloc(1)) }, 20)
  t.teardown(() => clearInterval(drip))
  const err = await cut.then(() => null, (e: unknown) => e)
  t.ok(isBodyStalled(err), 'a trickle below the minimum is cut off')
  t.match(err, { code: 'BODY_STALLED', received: Number })
  t.ok(trickle.destroyed, 'and its stream destroyed')

  const short = new PassThrough()
  const rest = drain(paced(short, short.iterator({ destroyOnReturn: false }), 100, 200))
  short.end(Buffer.alloc(100))
  t.equal(await rest, 100, 'a body smaller than the minimum only has to bring its rest')
})

t.test('the server\'s own time with a piece is not the client\'s: a slow reader does not cut a body off', async t => {
  // A clock the test moves: the reader "takes" time with each piece, far past the window.
  let now = 0
  const timers: Array<{ at: number, fn: () => void }> = []
  const clock = {
    now: () => now,
    after: (ms: number, fn: () => void) => { const timer = { at: now + ms, fn }; timers.push(timer); return () => { const i = timers.indexOf(timer); if (i >= 0) timers.splice(i, 1) } }
  }
  const advance = (ms: number): void => {
    now += ms
    for (const timer of timers.filter(x => x.at <= now)) { timers.splice(timers.indexOf(timer), 1); timer.fn() }
  }
  const body = new PassThrough()
  const pieces = 6
  const it = paced(body, body.iterator({ destroyOnReturn: false }), pieces * BODY_PROGRESS_BYTES + 1, 200, clock)
  for (let i = 0; i < pieces; i++) body.write(Buffer.alloc(BODY_PROGRESS_BYTES))
  body.end(Buffer.alloc(1))
  let n = 0
  for await (const p of it) {
    n += p.byteLength
    advance(150) // the disk is slow: 150 ms a piece
    if (n === BODY_PROGRESS_BYTES) advance(1_000) // and once stalls for five windows, holding a piece
  }
  t.equal(n, pieces * BODY_PROGRESS_BYTES + 1, 'every piece read, though the reading took far longer than the window')
  t.notOk(body.errored, 'not cut off')
  // The same clock, a client that stops: cut off once its own time passes the window.
  const quiet = new PassThrough()
  const cut = paced(quiet, quiet.iterator({ destroyOnReturn: false }), 10 * BODY_PROGRESS_BYTES, 200, clock)
  quiet.write(Buffer.alloc(BODY_PROGRESS_BYTES))
  const first = await cut.next()
  t.equal(first.value?.byteLength, BODY_PROGRESS_BYTES)
  const next = cut.next() // waits for the client, which sends nothing more
  advance(199)
  t.notOk(quiet.destroyed, 'not before the window ends')
  advance(1)
  t.ok(isBodyStalled(await next.then(() => null, (e: unknown) => e)), 'cut off at the window\'s end')
})
