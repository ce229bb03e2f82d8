// A connection that stops sending mid-body is closed once it has been silent for the idle timeout (a
// chunk upload's socket, temp file and hash are not held for ever); one that keeps sending is not.
import t from 'tap'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { once } from 'node:events'
import { buildApp, SOCKET_IDLE_TIMEOUT_MS, JSON_BODY_DEADLINE_MS } from '../../api/app.ts'
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

t.test('a JSON body sent a byte at a time is cut off at its deadline, however steady; a whole one is answered', async t => {
  const DEADLINE_MS = 400
  t.ok(JSON_BODY_DEADLINE_MS >= 60_000, 'the default leaves a slow client room for a body of a few KiB')
  const env = testDeps()
  const app = await buildApp({ ...env.deps, jsonBodyDeadlineMs: DEADLINE_MS })
  t.teardown(() => app.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  let closed = false
  socket.on('close', () => { closed = true }).on('error', () => {}).resume()
  socket.write('POST /transfers/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":')
  const t0 = Date.now()
  const pace = setInterval(() => { socket.write(' ') }, 50)
  t.teardown(() => clearInterval(pace))
  await eventually(async () => closed, 10_000, 'the trickled body to be cut off', 20)
  clearInterval(pace)
  const took = Date.now() - t0
  t.ok(took >= DEADLINE_MS - 50 && took < DEADLINE_MS + 3_000, `cut off at its deadline (${took} ms), though never idle`)
  // A whole body, sent at once, is answered (404: this app has no routes), and its connection is not closed afterwards by the deadline.
  const whole = connect(port, '127.0.0.1')
  await once(whole, 'connect')
  let answer = ''
  let wholeClosed = false
  whole.on('data', (d: Buffer) => { answer += d.toString() }).on('close', () => { wholeClosed = true }).on('error', () => {})
  whole.write('POST /transfers/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}')
  await eventually(async () => answer.includes('\r\n\r\n'), 10_000, 'the answer', 20)
  t.match(answer, /^HTTP\/1\.1 404 /)
  // The same connection, past the first request's deadline: a second request is answered on it.
  const at = Date.now()
  await eventually(async () => Date.now() - at > DEADLINE_MS + 200 ? true : undefined, 10_000, 'the first request\'s deadline past', 50)
  answer = ''
  whole.write('GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n')
  await eventually(async () => answer.includes('\r\n\r\n') || wholeClosed ? true : undefined, 10_000, 'the second answer', 20)
  t.notOk(wholeClosed, 'kept alive past the deadline: the timer ended with its body')
  t.match(answer, /^HTTP\/1\.1 404 /)
  whole.destroy()
})
