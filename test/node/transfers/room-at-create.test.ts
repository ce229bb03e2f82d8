// A create asks for room for what the transfer will hold on this node's disk: the staged file, and a
// second copy when it is delivered to this node's own sink (the built-in destination).
import t from 'tap'
import { buildApp } from '../../../api/app.ts'
import { testDeps } from '../../helpers/api.ts'
import { NodeTransferService } from '../../../node/transfers/service.ts'
import { startSystem, stopActor } from '../../../actors/runtime.ts'
import { systemClock } from '../../../node/clock.ts'
import { storingCoordinator } from '../../helpers/transfer-service.ts'

const HOTKEY = '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY'
const env = testDeps()
const system = startSystem()
t.teardown(() => stopActor(system as never))
const coordinator = storingCoordinator(system, env.store)
const rooms: Array<{ bytes: number, what: string }> = []
const storage = { room: async (bytes: number, what: string) => { rooms.push({ bytes, what }) }, failed: () => false, refusal: () => new Error('full') }
const destinations = {
  defaultId: async () => 'builtin',
  visible: async (id: string) => ({ id, kind: 'node', builtin: id === 'builtin' }),
  driverFor: async () => ({ checkName: async () => {} })
}
const transfers = new NodeTransferService({ store: env.store, blobs: {} as never, clock: systemClock, coordinator, destinations: destinations as never, storage: storage as never })
const app = await buildApp({ ...env.deps, transfers })
await app.ready()
t.teardown(() => app.close())
const org = await env.accounts.createOrganization({ name: 'o' })
const key = (await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise' })).key

t.test('the built-in sink: room for two copies; another destination: one', async t => {
  const create = async (destination: string | undefined) => await app.inject({ method: 'POST', url: '/transfers/create', headers: { authorization: `Bearer ${key}` }, payload: { sender_hotkey: HOTKEY, total_size: 1_000_000, filename: `f-${destination ?? 'default'}.bin`, tier: 'STANDARD', ...(destination !== undefined ? { destination_id: destination } : {}) } })
  t.equal((await create(undefined)).statusCode, 201)
  t.equal((await create('elsewhere')).statusCode, 201)
  t.same(rooms.map(r => r.bytes), [2_000_000, 1_000_000])
  t.match(rooms[0]!.what, /delivered to this node's sink/)
})
