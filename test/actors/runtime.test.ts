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

t.test('an actor that crashes too often within the window is stopped', async t => {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const clock = new ManualClock()
  const { logger, lines } = capturingLogger()
  const ref = spawnSupervised<number, Msg>(system, 'fragile', { clock, logger }, () => 0, (state, msg) => {
    if (msg.type === 'boom') throw new Error('boom')
    if (msg.type === 'get') msg.reply.resolve(state)
    return state
  }, { maxRestarts: 2, withinMs: 10_000 })
  for (let i = 0; i < 2; i++) tell(ref, { type: 'boom' })
  t.equal(await ask<Msg, number>(ref, clock, 1000, reply => ({ type: 'get', reply })), 0, 'two crashes are restarts')
  clock.advance(20_000) // the window slides: old crashes no longer count
  tell(ref, { type: 'boom' })
  tell(ref, { type: 'boom' })
  t.equal(await ask<Msg, number>(ref, clock, 1000, reply => ({ type: 'get', reply })), 0, 'crashes outside the window are forgotten')
  tell(ref, { type: 'boom' })
  for (let i = 0; i < 1000 && !lines.some(l => l.msg.includes('stopping')); i++) await new Promise(resolve => setImmediate(resolve))
  t.ok(lines.some(l => l.msg.includes('stopping')), 'the stop is logged')
  const pending = ask<Msg, number>(ref, clock, 1000, reply => ({ type: 'get', reply }))
  for (let i = 0; i < 20; i++) await new Promise(resolve => setImmediate(resolve))
  clock.advance(1000)
  await t.rejects(pending, { code: 'BWN_ERR_ACTOR_TIMEOUT' }, 'stopped actor no longer answers')
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
