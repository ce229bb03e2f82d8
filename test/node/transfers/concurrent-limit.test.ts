// The plan's limit on transfers in progress holds under parallel creates: a create takes its slot when
// it passes the check, before the coordinator answers, and gives it back if the create fails. A
// service that has not yet read the stored transfers counts them before any create passes.
import t from 'tap'
import { buildApp } from '../../../api/app.ts'
import { testDeps } from '../../helpers/api.ts'
import { NodeTransferService, PLAN_LIMITS } from '../../../node/transfers/service.ts'
import { startSystem, spawnSupervised, stopActor } from '../../../actors/runtime.ts'
import { systemClock } from '../../../node/clock.ts'
import type { CoordinatorMsg } from '../../../actors/transfer/coordinator.ts'
import type { TransferRow } from '../../../actors/transfer/model.ts'
import { silentLogger } from '../../helpers/logger.ts'

const HOTKEY = '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY'
const FREE_LIMIT = PLAN_LIMITS.free.concurrentTransfers!

const env = testDeps()
const system = startSystem()
t.teardown(() => stopActor(system as never))
/** What the coordinator does with a create: store it, or refuse it. */
let coordinatorRefuses = false
const asked: TransferRow[] = []
const coordinator = spawnSupervised<null, CoordinatorMsg>(system, 'coordinator', { clock: systemClock, logger: silentLogger() } as never, () => null, (state, msg) => {
  if (msg.type !== 'create') return state
  asked.push(msg.row)
  if (coordinatorRefuses) { msg.reply.resolve({ ok: false, code: 'BWN_ERR_TRANSFER_CLOSED', status: 409, detail: 'refused' }); return state }
  void env.store.table('transfers').put(msg.row.id, msg.row).then(() => msg.reply.resolve({ ok: true, value: msg.row }))
  return state
})

/**
 * Holds every create at the destination's name check until `size` creates are there, so all of them
 * run the rest of the create together (the widest window for a race).
 */
let barrier: { size: number, waiting: Array<() => void> } | null = null
const destinations = {
  defaultId: async () => 'builtin',
  visible: async () => {},
  driverFor: async () => ({
    checkName: async () => {
      if (barrier === null) return
      const b = barrier
      await new Promise<void>(resolve => { b.waiting.push(resolve); if (b.waiting.length === b.size) for (const r of b.waiting) r() })
    }
  })
}
const service = (): NodeTransferService => new NodeTransferService({ store: env.store, blobs: {} as never, clock: systemClock, coordinator, destinations: destinations as never })

async function appWith (transfers: NodeTransferService) {
  const app = await buildApp({ ...env.deps, transfers })
  await app.ready()
  t.teardown(() => app.close())
  return app
}
let orgs = 0
/** A Free key of a new organization (the limit is per organization and plan). */
const freeKey = async (orgId?: string) => await env.accounts.createKey(orgId ?? (await env.accounts.createOrganization({ name: `o${++orgs}` })).id, { role: 'client', plan: 'free' })

async function parallelCreates (app: Awaited<ReturnType<typeof appWith>>, key: string, n: number) {
  barrier = { size: n, waiting: [] }
  try {
    return await Promise.all(Array.from({ length: n }, async (_, i) => await app.inject({
      method: 'POST', url: '/transfers/create', headers: { authorization: `Bearer ${key}` },
      payload: { sender_hotkey: HOTKEY, total_size: 1000, filename: `race-${i}.bin`, tier: 'STANDARD' }
    })))
  } finally { barrier = null }
}

const transfers = service()
const app = await appWith(transfers)

t.test(`12 parallel creates on a Free key: ${FREE_LIMIT} created, the rest 429`, async t => {
  const { key } = await freeKey()
  const before = asked.length
  const res = await parallelCreates(app, key, 12)
  const statuses = res.map(r => r.statusCode)
  t.equal(statuses.filter(s => s === 201).length, FREE_LIMIT, JSON.stringify(statuses))
  t.equal(statuses.filter(s => s === 429).length, 12 - FREE_LIMIT)
  for (const r of res.filter(r => r.statusCode === 429)) {
    t.equal(r.json().code, 'BWN_ERR_CONCURRENT_TRANSFERS')
    t.ok(Number(r.headers['retry-after']) > 0, 'Retry-After')
  }
  t.equal(asked.length - before, FREE_LIMIT, 'the coordinator was asked to create only what the limit allows')
})

t.test('a create the coordinator refuses gives its slot back', async t => {
  const { key } = await freeKey()
  coordinatorRefuses = true
  try {
    const refused = await parallelCreates(app, key, 5)
    t.same(refused.map(r => r.statusCode).sort(), [409, 409, 409, 429, 429], 'three reached the coordinator, which refused them')
  } finally { coordinatorRefuses = false }
  const res = await parallelCreates(app, key, 5)
  t.equal(res.filter(r => r.statusCode === 201).length, FREE_LIMIT, 'every slot is free again')
})

t.test('a finished transfer frees its slot', async t => {
  const { key, apiKey } = await freeKey()
  const made = (await parallelCreates(app, key, FREE_LIMIT + 1)).filter(r => r.statusCode === 201)
  t.equal(made.length, FREE_LIMIT)
  const row = await env.store.table<TransferRow>('transfers').get(made[0]!.json().id)
  transfers.onTransferChanged({ ...row!, status: 'cancelled' })
  t.equal(row!.api_key_id, apiKey.id)
  const res = await parallelCreates(app, key, 3)
  t.same(res.map(r => r.statusCode).sort(), [201, 429, 429], 'one slot: one create')
})

t.test('keys of one organization on one plan share its limit: minting keys does not multiply it', async t => {
  const first = await freeKey()
  t.equal((await parallelCreates(app, first.key, FREE_LIMIT)).filter(r => r.statusCode === 201).length, FREE_LIMIT)
  const second = await freeKey(first.apiKey.organizationId)
  const res = await parallelCreates(app, second.key, 2)
  t.same(res.map(r => r.statusCode), [429, 429], 'a second key of the organization finds no slot')
  t.match(res[0]!.json().detail, /for all of an organization's keys on it/)
  const pro = await env.accounts.createKey(first.apiKey.organizationId, { role: 'client', plan: 'pro' })
  t.equal((await parallelCreates(app, pro.key, 1))[0]!.statusCode, 201, 'its keys on another plan count apart')
  const elsewhere = await freeKey()
  t.equal((await parallelCreates(app, elsewhere.key, 1))[0]!.statusCode, 201, 'another organization has its own')
})

t.test('a fresh service counts the stored transfers before the first creates pass, however many arrive at once', async t => {
  const { key, apiKey } = await freeKey()
  // Two transfers in progress from before a restart, and another organization's in front of them in the table.
  const now = new Date().toISOString()
  const stored = (id: string, keyId: string, orgId: string): TransferRow => ({ ...asked[0]!, id, api_key_id: keyId, org_id: orgId, plan: 'free', status: 'pending', created_at: now, updated_at: now })
  for (let i = 0; i < 200; i++) await env.store.table('transfers').put(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, stored(`other-${i}`, 'someone-else', 'another-org'))
  // One of the key's own, and one of an older version that recorded no plan (counted for its key).
  await env.store.table('transfers').put('ffffffff-0000-4000-8000-000000000001', stored('ffffffff-0000-4000-8000-000000000001', apiKey.id, apiKey.organizationId))
  const { plan: _, ...older } = stored('ffffffff-0000-4000-8000-000000000002', apiKey.id, apiKey.organizationId)
  await env.store.table('transfers').put('ffffffff-0000-4000-8000-000000000002', older)
  const restarted = await appWith(service())
  const res = await parallelCreates(restarted, key, 6)
  t.same(res.map(r => r.statusCode).sort(), [201, 429, 429, 429, 429, 429], `${FREE_LIMIT - 2} slot left`)
})
