// A transfer from before organizations (its row holds no org_id) belongs to the key that created it:
// another key, of any organization, gets 404 as for a missing transfer. Its id is not secret: every
// worker it was offered to saw it in a data URL.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { testDeps } from '../../helpers/api.ts'
import { NodeTransferService } from '../../../node/transfers/service.ts'
import { startSystem, stopActor } from '../../../actors/runtime.ts'
import { systemClock } from '../../../node/clock.ts'
import { storingCoordinator } from '../../helpers/transfer-service.ts'
import { transferRow } from '../../helpers/transfer-state.ts'

t.test('a transfer without an organization answers only the key that created it', async t => {
  const env = testDeps()
  const system = startSystem()
  t.teardown(() => stopActor(system as never))
  const coordinator = storingCoordinator(system, env.store)
  const destinations = { defaultId: async () => 'd1', visible: async (id: string) => ({ id, kind: 'http', builtin: false }), driverFor: async () => ({ readableBeforeComplete: true }) }
  const service = new NodeTransferService({ store: env.store, blobs: {} as never, clock: systemClock, coordinator, destinations: destinations as never })
  const principalOf = async (orgId: string) => {
    const { key } = await env.accounts.createKey(orgId, { role: 'client', plan: 'enterprise' })
    const auth = await env.accounts.authenticate(key)
    if (!auth.ok) throw new Error('the key did not authenticate')
    return auth.principal
  }
  const org = await env.accounts.createOrganization({ name: 'o' })
  const creator = await principalOf(org.id)
  const sameOrg = await principalOf(org.id)
  const other = await principalOf((await env.accounts.createOrganization({ name: 'p' })).id)
  const id = randomUUID()
  await env.store.table('transfers').put(id, transferRow(id, 1, { api_key_id: creator.keyId, org_id: null }))
  t.equal((await service.get(id, creator)).id, id, 'the key that created it reads it')
  await t.rejects(service.get(id, other), { code: 'BWN_ERR_TRANSFER_NOT_FOUND' }, 'another organization\'s key: not found')
  await t.rejects(service.get(id, sameOrg), { code: 'BWN_ERR_TRANSFER_NOT_FOUND' }, 'another key of its organization too: it was never the organization\'s')
  await t.rejects(service.cancel(id, other), { code: 'BWN_ERR_TRANSFER_NOT_FOUND' }, 'nor can it cancel it')
  const orphan = randomUUID()
  await env.store.table('transfers').put(orphan, transferRow(orphan, 1, { api_key_id: null, org_id: null }))
  await t.rejects(service.get(orphan, creator), { code: 'BWN_ERR_TRANSFER_NOT_FOUND' }, 'one with neither an organization nor a key belongs to no one')
})
