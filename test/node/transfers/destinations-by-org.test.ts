// GET /destinations and a create's count read the built-in destinations and the caller's organization's
// only (an index key per destination, written and deleted with its row); destinations stored before the
// index get their keys at the first use.
import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../../actors/store.ts'
import type { Store } from '../../../actors/ports.ts'
import { watchedTable } from '../../helpers/watched-store.ts'
import { DestinationRegistry, type DestinationRow } from '../../../node/transfers/destinations.ts'
import { MAX_DESTINATIONS_PER_ORG } from '../../../api/transfers.ts'
import { cryptoReady, newHotkey } from '../../../protocol/index.ts'

await cryptoReady()
const clock = { now: () => Date.UTC(2026, 10, 29) }

const principal = (org: string): never => ({ organizationId: org }) as never
const body = (name: string): never => ({ name, kind: 'http', config: { url: `http://example.com/${name}/{filename}` } }) as never

t.test('each organization lists the built-in destinations and its own; a create counts its own', async t => {
  const base = new LevelStore(new MemoryLevel({ valueEncoding: 'json' }) as never)
  // One stored before the index: the first use indexes it.
  const old: DestinationRow = { id: '00000000-0000-4000-8000-000000000000', name: 'old', kind: 'http', builtin: false, org_id: 'org-a', config: { url: 'http://example.com/old' }, created_at: new Date(clock.now()).toISOString() }
  await base.table('destinations').put(old.id, old)
  const w = watchedTable(base, 'destinations')
  const registry = new DestinationRegistry(w.store, newHotkey(), clock as never, { allowPrivate: true })
  const builtin = await registry.ensureDefault('http://127.0.0.1:8000')
  const a1 = await registry.create(body('a1'), principal('org-a'))
  w.strict.on = true
  const a2 = await registry.create(body('a2'), principal('org-a'))
  for (let i = 0; i < MAX_DESTINATIONS_PER_ORG - 1; i++) await registry.create(body(`b${i}`), principal('org-b'))
  const ids = (await registry.list(principal('org-a'))).map(d => d.id)
  t.same(ids, [builtin.id, old.id, a1.id, a2.id].sort(), 'the built-in one and its own, in id order')
  t.equal((await registry.list(principal('org-b'))).length, MAX_DESTINATIONS_PER_ORG, 'the other organization: the built-in one and its 99')
  t.equal((await registry.list(principal('org-c'))).length, 1, 'a new organization: the built-in one')
  await registry.create(body('b-last'), principal('org-b'))
  await t.rejects(registry.create(body('b-over'), principal('org-b')), { code: 'BWN_ERR_DESTINATION_LIMIT' }, 'its limit is its own')
  t.ok(await registry.create(body('a3'), principal('org-a')), 'another organization is not held to it')
  await registry.remove(a1.id, principal('org-a'))
  t.notOk((await registry.list(principal('org-a'))).some(d => d.id === a1.id), 'a removed one is listed no more')
  t.equal((await collectKeys(base)).filter(k => k.endsWith(a1.id)).length, 0, 'its index key went with it')
})

async function collectKeys (store: Store): Promise<string[]> {
  const out: string[] = []
  for await (const [key] of store.table('index').entries()) out.push(key)
  return out
}
