// The one inbound routing table the node and the simulator share: each transfer message reaches its actor,
// only from the senders its route allows; a task result goes by its sender's role.
import t from 'tap'
import { startSystem, stopActor, spawnSupervised, type Ref } from '../../../actors/runtime.ts'
import { ORCHESTRATOR_INBOUND, WORKER_INBOUND, inboundByType, deliverInbound, type Inbound } from '../../../actors/transfer/inbound.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { silentLogger } from '../../helpers/logger.ts'

function recorder (system: Ref<any>, name: string, seen: Array<[string, any]>): Ref<any> {
  return spawnSupervised<null, any>(system, name, { clock: new ManualClock(), logger: silentLogger() }, () => null, (s, msg) => { seen.push([name, msg]); return s })
}
/** Waits for the actors' mailboxes to drain (nact delivers on later turns); a bounded number of turns. */
const until = async (cond: () => boolean): Promise<void> => {
  for (let turn = 0; !cond(); turn++) {
    if (turn > 1000) throw new Error('message not delivered')
    await new Promise(resolve => setImmediate(resolve))
  }
}

t.test('orchestrator side', async t => {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const seen: Array<[string, any]> = []
  const to = { router: recorder(system, 'router', seen), coordinator: recorder(system, 'coordinator', seen) }
  const routes = inboundByType(ORCHESTRATOR_INBOUND)
  const frame = new Uint8Array([1, 2, 3])
  const m = (type: Inbound['type'], role: Inbound['role']): Inbound => ({ type, from: 'peer', body: { b: type }, role, raw: frame, ts: 1234 })
  const cases: Array<[Inbound, string | null, string | null]> = [
    [m('worker_attach', 'worker'), 'router', 'attach'],
    [m('worker_attach', 'orchestrator'), null, null],
    [m('task_offer_batch', 'orchestrator'), 'router', 'batch'],
    [m('task_offer_batch', 'worker'), null, null],
    [m('task_result_ack', 'orchestrator'), 'router', 'ack'],
    [m('task_cancel', 'orchestrator'), 'router', 'cancel'],
    [m('task_assigned', 'orchestrator'), 'coordinator', 'assigned'],
    [m('verify_verdict', 'validator'), 'coordinator', 'verdict'],
    [m('verify_verdict', 'orchestrator'), null, null],
    [m('task_accepted', 'worker'), 'router', 'accepted'],
    [m('task_accepted', 'orchestrator'), null, null],
    [m('task_accepts', 'worker'), null, null],
    [m('task_result', 'worker'), 'router', 'result'],
    [m('task_result', 'orchestrator'), 'coordinator', 'result'],
    [m('task_result', 'validator'), null, null],
    [m('heartbeat', 'orchestrator'), null, null]
  ]
  let expected = 0
  for (const [msg, actor, type] of cases) {
    const delivered = deliverInbound(routes, to, msg)
    if (msg.type !== 'task_result' && msg.type !== 'task_accepted') t.equal(delivered, actor !== null, `${msg.type} from a ${msg.role}: ${actor ?? 'refused'}`)
    if (actor !== null) {
      expected++
      await until(() => seen.length === expected)
      const [name, got] = seen.at(-1)!
      t.same([name, got.type, got.from, got.body], [actor, type, 'peer', { b: msg.type }], `${msg.type} from a ${msg.role} reaches the ${actor}`)
      if (msg.type === 'task_accepted') t.equal(got.word, actor === 'router' ? frame : undefined, 'the worker\'s signed frame goes with its accept to its orchestrator\'s router, not further')
      if (msg.type === 'task_result') {
        t.equal(got.evidence, actor === 'coordinator' ? frame : undefined, 'the orchestrator\'s signed frame is evidence for the settling coordinator')
        t.equal(got.claim, actor === 'router' ? frame : undefined, 'the worker\'s signed frame is its claim, relayed by its orchestrator')
        t.equal(got.relayedAt, actor === 'coordinator' ? 1234 : undefined, 'the relaying frame\'s time, which a claim is held to')
      }
    }
  }
  t.equal(seen.length, expected, 'nothing else delivered')

  // Accepts relayed by an orchestrator reach the coordinator one by one.
  const accepts = [{ a: 1 }, { a: 2 }]
  t.ok(deliverInbound(routes, to, { type: 'task_accepts', from: 'orch', body: { accepts }, role: 'orchestrator', raw: frame }))
  await until(() => seen.length === expected + 2)
  t.same(seen.slice(-2).map(([name, got]) => [name, got.type, got.from, got.body, got.word]), accepts.map(b => ['coordinator', 'accepted', 'orch', b, undefined]), 'each relayed accept, as relayed')
})

t.test('worker side: only orchestrators reach the worker', async t => {
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const seen: Array<[string, any]> = []
  const to = { worker: recorder(system, 'worker', seen) }
  const routes = inboundByType(WORKER_INBOUND)
  const send = (type: Inbound['type'], role: Inbound['role'], body: unknown = { session: 's1' }): boolean => deliverInbound(routes, to, { type, from: 'orch', body, role })
  t.ok(send('announce', 'orchestrator'))
  t.ok(send('announce', 'worker'), 'any registered node announces; only an orchestrator is one to attach to')
  t.ok(send('worker_attached', 'orchestrator'))
  t.ok(send('session_displaced', 'orchestrator'))
  t.ok(send('task_offer', 'orchestrator', { o: 1 }))
  t.ok(send('task_result_ack', 'orchestrator', { a: 1 }))
  t.ok(send('task_cancel', 'orchestrator', { c: 1 }))
  t.notOk(send('task_offer', 'worker', { o: 2 }), 'a worker cannot offer work')
  t.notOk(send('task_offer', 'validator', { o: 3 }))
  await until(() => seen.length === 6)
  t.same(seen.map(([, m]) => m), [
    { type: 'orchestrator-up', hotkey: 'orch' },
    { type: 'attached', from: 'orch', session: 's1' },
    { type: 'displaced', from: 'orch', session: 's1' },
    { type: 'offer', from: 'orch', body: { o: 1 } },
    { type: 'ack', from: 'orch', body: { a: 1 } },
    { type: 'cancel', from: 'orch', body: { c: 1 } }
  ])
})
