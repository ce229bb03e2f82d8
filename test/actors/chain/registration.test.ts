// An orchestrator registers itself on the chain, retried every 2 s on the clock until the chain answers.
import t from 'tap'
import { ManualClock } from '../../helpers/clock.ts'
import { silentLogger } from '../../helpers/logger.ts'
import { keepRegistered, REGISTER_RETRY_MS } from '../../../actors/chain/registration.ts'

const settle = async (): Promise<void> => { for (let i = 0; i < 5; i++) await Promise.resolve() }

t.test('retried on the clock until the chain answers, then never again', async t => {
  const clock = new ManualClock()
  const calls: Array<[string, string]> = []
  let failures = 2
  const chain = {
    register: async (hotkey: string, role: string) => {
      calls.push([hotkey, role])
      if (failures-- > 0) throw new Error('chain host not connected')
      return { hotkey, uid: 1, role } as never
    }
  }
  const reg = keepRegistered({ chain, clock, logger: silentLogger(), hotkey: 'orch', role: 'orchestrator' })
  await settle()
  t.same(calls, [['orch', 'orchestrator']], 'tried at once')
  t.notOk(reg.registered())
  clock.advance(REGISTER_RETRY_MS - 1)
  await settle()
  t.equal(calls.length, 1, 'not before the retry interval')
  clock.advance(1)
  await settle()
  t.equal(calls.length, 2, 'retried after 2 s')
  t.notOk(reg.registered())
  clock.advance(REGISTER_RETRY_MS)
  await settle()
  t.equal(calls.length, 3)
  t.ok(reg.registered(), 'registered once the chain answers')
  clock.advance(10 * REGISTER_RETRY_MS)
  await settle()
  t.equal(calls.length, 3, 'no registration after success')
})

t.test('a slow chain is not asked again while a request is open; stop ends the retries', async t => {
  const clock = new ManualClock()
  let calls = 0
  let answer: (() => void) | null = null
  const chain = { register: async () => { calls++; await new Promise<void>(resolve => { answer = resolve }); throw new Error('refused') } }
  const reg = keepRegistered({ chain, clock, logger: silentLogger(), hotkey: 'orch', role: 'orchestrator' })
  clock.advance(3 * REGISTER_RETRY_MS)
  await settle()
  t.equal(calls, 1, 'one request in flight at a time')
  answer!()
  await settle()
  clock.advance(REGISTER_RETRY_MS)
  await settle()
  t.equal(calls, 2, 'retried once the first failed')
  answer!()
  await settle()
  reg.stop()
  clock.advance(10 * REGISTER_RETRY_MS)
  await settle()
  t.equal(calls, 2, 'stopped')
  t.notOk(reg.registered())
})
