// A connection that stops sending mid-body is closed once it has been silent for the idle timeout (a
// chunk upload's socket, temp file and hash are not held for ever); one that keeps sending is not.
import t from 'tap'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { once } from 'node:events'
import { buildApp, SOCKET_IDLE_TIMEOUT_MS } from '../../api/app.ts'
import { BODY_DEADLINE_MS } from '../../api/body-pace.ts'
import { testDeps } from '../helpers/api.ts'
import { eventually } from '../helpers/proc.ts'

const IDLE_MS = 300

t.test('a body that stops coming is cut off after the idle timeout; a slow steady one is not', async t => {
  t.ok(SOCKET_IDLE_TIMEOUT_MS >= 60_000, 'the default leaves a slow client room')
  const env = testDeps()
  const app = await buildApp({ ...env.deps, socketIdleTimeoutMs: IDLE_MS })
  t.teardown(() => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const open = async (): Promise<{ socket: Socket, closed: () => boolean }> => {
    const socket = connect(port, '127.0.0.1')
    await once(socket, 'connect')
    let closed = false
    socket.on('close', () => { closed = true }).on('error', () => {}).resume()
    socket.write('POST /transfers/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":')
    return { socket, closed: () => closed }
  }
  const stalled = await open()
  const t0 = Date.now()
  await eventually(async () => stalled.closed(), 10_000, 'the stalled upload to be cut off', 50)
  t.ok(Date.now() - t0 >= IDLE_MS - 50, `not before the timeout (${Date.now() - t0} ms)`)
  // A body sent a byte at a time, each well inside the timeout, is still open after several timeouts.
  const steady = await open()
  let sent = 0
  const pace = setInterval(() => { steady.socket.write(' '); sent++ }, IDLE_MS / 3)
  t.teardown(() => clearInterval(pace))
  await eventually(async () => sent >= 8 || steady.closed(), 10_000, 'eight bytes, a third of the timeout apart', 20)
  clearInterval(pace)
  t.notOk(steady.closed(), 'the steady one is open after ~2.7 timeouts')
  steady.socket.destroy()
})

/** A raw connection to `port` that records what it reads and when it closes. */
async function rawConnection (port: number): Promise<{ socket: Socket, answer: () => string, reset: () => void, closed: () => boolean }> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  let answer = ''
  let closed = false
  socket.on('data', (d: Buffer) => { answer += d.toString() }).on('close', () => { closed = true }).on('error', () => {})
  return { socket, answer: () => answer, reset: () => { answer = '' }, closed: () => closed }
}

t.test('a body sent a byte at a time is cut off at its deadline, however steady, JSON or text; a whole one is answered and its connection kept', async t => {
  const DEADLINE_MS = 400
  t.ok(BODY_DEADLINE_MS >= 60_000, 'the default leaves a slow client room for a body of a few KiB')
  const env = testDeps()
  const app = await buildApp({ ...env.deps, bodyDeadlineMs: DEADLINE_MS })
  app.post('/echo', async (req) => ({ got: req.body }))
  t.teardown(() => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  for (const type of ['application/json', 'text/plain']) {
    const c = await rawConnection(port)
    c.socket.write(`POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: 1000\r\n\r\n{"a":`)
    const t0 = Date.now()
    const pace = setInterval(() => { c.socket.write(' ') }, 50)
    t.teardown(() => clearInterval(pace))
    await eventually(async () => c.closed(), 10_000, `the trickled ${type} body to be cut off`, 20)
    clearInterval(pace)
    const took = Date.now() - t0
    t.ok(took >= DEADLINE_MS - 50 && took < DEADLINE_MS + 3_000, `${type}: cut off at its deadline (${took} ms), though never idle`)
    t.equal(c.answer(), '', 'with no answer: the route never had its body')
  }
  // A whole body is answered, and the connection serves the next request.
  const whole = await rawConnection(port)
  whole.socket.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}')
  await eventually(async () => whole.answer().includes('{"got":{"a":1}}') ? true : undefined, 10_000, 'the answer', 20)
  t.match(whole.answer(), /^HTTP\/1\.1 200 /)
  whole.reset()
  whole.socket.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"b":2}')
  await eventually(async () => whole.answer().includes('{"got":{"b":2}}') ? true : undefined, 10_000, 'the second answer on the same connection', 20)
  t.notOk(whole.closed())
  whole.socket.destroy()
})

t.test('a body answered before it was read (no such route) closes its connection after the answer, instead of being read for as long as it trickles', async t => {
  const env = testDeps()
  // The deadline far off: what closes the connection here is the answer.
  const app = await buildApp({ ...env.deps, bodyDeadlineMs: 60_000 })
  t.teardown(() => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const c = await rawConnection(port)
  c.socket.write('POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-anything\r\nContent-Length: 100000\r\n\r\nabc')
  const pace = setInterval(() => { c.socket.write(' ') }, 50)
  t.teardown(() => clearInterval(pace))
  await eventually(async () => c.answer().includes('\r\n\r\n') ? true : undefined, 10_000, 'the 404', 20)
  t.match(c.answer(), /^HTTP\/1\.1 404 /)
  const t0 = Date.now()
  await eventually(async () => c.closed(), 15_000, 'the connection closed after the answer', 20)
  clearInterval(pace)
  t.ok(Date.now() - t0 < 10_000, `closed ${Date.now() - t0} ms after the answer, the body still trickling`)
})
