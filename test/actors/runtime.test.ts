import t from 'tap'
import { startSystem, stopActor, spawnSupervised, tell, ask, type Reply } from '../../actors/runtime.ts'
import { ManualClock } from '../helpers/clock.ts'
import { capturingLogger } from '../helpers/logger.ts'

type Msg = { type: 'add', n: number } | { type: 'boom' } | { type: 'get', reply: Reply<number> }

t.test('an actor that throws is restarted with fresh state and keeps serving', async t => {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const clock = new ManualClock()
  const { logger, lines } = capturingLogger()
  const ref = spawnSupervised<number, Msg>(system, 'counter', { clock, logger }, () => 0, (state, msg) => {
    if (msg.type === 'add') return state + msg.n
    if (msg.type === 'boom') throw new Error('boom')
    msg.reply.resolve(state)
    return state
  })
  const get = () => ask<Msg, number>(ref, clock, 1000, reply => ({ type: 'get', reply }))
  tell(ref, { type: 'add', n: 2 })
  t.equal(await get(), 2)
  tell(ref, { type: 'boom' })
  tell(ref, { type: 'add', n: 5 })
  t.equal(await get(), 5, 'state reset, later messages still handled')
  t.ok(lines.some(l => l.msg.includes('restarting') && l.actor === 'counter'), 'the crash is logged')
})

t.test('an actor that crashes too often is never stopped: its restart waits, doubling, and health hears it', async t => {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const clock = new ManualClock()
  const { logger, lines } = capturingLogger()
  const events: string[] = []
  const health = { down: (actor: string, _err: unknown, ms: number) => { events.push(`down ${actor} ${ms}`) }, up: (actor: string) => { events.push(`up ${actor}`) } }
  const ref = spawnSupervised<number, Msg>(system, 'fragile', { clock, logger, health }, () => 0, (state, msg) => {
    if (msg.type === 'boom') throw new Error('boom')
    if (msg.type === 'add') return state + msg.n
    msg.reply.resolve(state)
    return state
  }, { maxRestarts: 2, withinMs: 1_000_000 })
  const get = () => ask<Msg, number>(ref, clock, 60_000, reply => ({ type: 'get', reply }))
  const settle = async (): Promise<void> => { for (let i = 0; i < 50; i++) await new Promise(resolve => setImmediate(resolve)) }
  for (let i = 0; i < 2; i++) tell(ref, { type: 'boom' })
  t.equal(await get(), 0, 'two crashes are immediate restarts')
  await settle()
  t.same(events, ['down fragile 0', 'down fragile 0', 'up fragile'])
  clock.advance(2_000_000) // the window slides: old crashes no longer count
  tell(ref, { type: 'boom' })
  tell(ref, { type: 'boom' })
  t.equal(await get(), 0, 'crashes outside the window are forgotten')
  await settle()
  events.length = 0
  tell(ref, { type: 'boom' })
  tell(ref, { type: 'add', n: 7 })
  const held = get()
  let answered = false
  void held.then(() => { answered = true })
  await settle()
  t.same(events, ['down fragile 1000'], 'past the intensity the restart waits 1 s')
  t.ok(lines.some(l => l.msg.includes('after a backoff')), 'the backoff is logged')
  clock.advance(999)
  await settle()
  t.equal(answered, false, 'the mailbox holds during the backoff')
  clock.advance(1)
  t.equal(await held, 7, 'then the actor serves again, nothing dropped')
  await settle()
  t.same(events, ['down fragile 1000', 'up fragile'])
  tell(ref, { type: 'boom' })
  const again = get()
  await settle()
  t.same(events.at(-1), 'down fragile 2000', 'the next crash in the window waits twice as long')
  clock.advance(2000)
  t.equal(await again, 0)
  for (let i = 0; i < 8; i++) {
    tell(ref, { type: 'boom' })
    const p = get()
    await settle()
    clock.advance(30_000)
    await p
  }
  t.same(events.filter(e => e.startsWith('down')).at(-1), 'down fragile 30000', 'the wait is capped at 30 s')
})

t.test('ask times out on the injected clock', async t => {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const clock = new ManualClock()
  const { logger } = capturingLogger()
  const ref = spawnSupervised<number, Msg>(system, 'mute', { clock, logger }, () => 0, (s) => s)
  const p = ask<Msg, number>(ref, clock, 500, reply => ({ type: 'get', reply }), 'mute actor')
  clock.advance(499)
  let settled = false
  void p.catch(() => { settled = true })
  await new Promise(resolve => setImmediate(resolve))
  t.equal(settled, false)
  clock.advance(1)
  await t.rejects(p, { code: 'BWN_ERR_ACTOR_TIMEOUT' })
})

t.test('a crash after the node began to stop is not a fault: no warning, no health report, no restart', async t => {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const clock = new ManualClock()
  const { logger, lines } = capturingLogger()
  const events: string[] = []
  const health = { down: (actor: string) => { events.push(`down ${actor}`) }, up: (actor: string) => { events.push(`up ${actor}`) } }
  let stopping = false
  let handled = 0
  const ref = spawnSupervised<number, Msg>(system, 'closing', { clock, logger, health, stopping: () => stopping }, () => 0, (state, msg) => {
    handled++
    if (msg.type === 'boom') throw new Error('Database is not open')
    if (msg.type === 'add') return state + msg.n
    msg.reply.resolve(state)
    return state
  })
  const settle = async (): Promise<void> => { for (let i = 0; i < 50; i++) await new Promise(resolve => setImmediate(resolve)) }
  tell(ref, { type: 'boom' })
  await settle()
  t.same(events, ['down closing'], 'before the stop a crash is reported')
  t.ok(lines.some(l => l.level >= 40 && l.actor === 'closing'), 'and warned about')
  stopping = true
  events.length = 0
  const warned = lines.filter(l => l.level >= 40).length
  tell(ref, { type: 'boom' })
  await settle()
  t.same(events, [], 'health hears nothing once the node stops')
  t.equal(lines.filter(l => l.level >= 40).length, warned, 'no warning either')
  t.ok(lines.some(l => l.msg.includes('while the node stops')), 'the failure is kept at debug level')
  const before = handled
  try { tell(ref, { type: 'add', n: 1 }) } catch { /* a stopped actor refuses messages */ }
  await settle()
  t.equal(handled, before, 'the actor stopped instead of restarting')
})
