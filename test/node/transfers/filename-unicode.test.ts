// At transfer create: the filename is NFC-normalized before it is checked, asked of the destination and
// stored, so `café.txt` in NFC and in NFD is one name; a name with U+202E (or another invisible format
// character) is refused with 400 BWN_ERR_BAD_FILENAME before anything else happens.
import t from 'tap'
import { buildApp } from '../../../api/app.ts'
import { testDeps } from '../../helpers/api.ts'
import { NodeTransferService } from '../../../node/transfers/service.ts'
import { startSystem, stopActor } from '../../../actors/runtime.ts'
import { systemClock } from '../../../node/clock.ts'
import type { TransferRow } from '../../../actors/transfer/model.ts'
import { storingCoordinator } from '../../helpers/transfer-service.ts'

const NFC = 'caf\u00e9.txt'
const NFD = 'cafe\u0301.txt'
const HOTKEY = '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY'

const env = testDeps()
const system = startSystem()
const created: TransferRow[] = []
// A coordinator that records what it is asked to create.
const coordinator = storingCoordinator(system, env.store, { created: (row) => created.push(row) })
t.teardown(() => stopActor(system as never))
const asked: string[] = []
const destinations = {
  defaultId: async () => 'builtin',
  visible: async () => {},
  driverFor: async () => ({ checkName: async (u: { filename: string }) => { asked.push(u.filename) } })
}
const transfers = new NodeTransferService({ store: env.store, blobs: {} as never, clock: systemClock, coordinator, destinations: destinations as never })
const app = await buildApp({ ...env.deps, transfers })
await app.ready()
t.teardown(() => app.close())
const org = await env.accounts.createOrganization({ name: 'o' })
const key = (await env.accounts.createKey(org.id, { role: 'client', plan: 'enterprise' })).key
const create = async (filename: string) => await app.inject({ method: 'POST', url: '/transfers/create', headers: { authorization: `Bearer ${key}` }, payload: { sender_hotkey: HOTKEY, total_size: 1000, filename, tier: 'STANDARD' } })

t.test('NFC and NFD spellings are one name: checked, stored and answered in NFC', async t => {
  const a = await create(NFC)
  const b = await create(NFD)
  t.equal(a.statusCode, 201)
  t.equal(b.statusCode, 201)
  t.same(asked, [NFC, NFC], 'the destination was asked about the NFC name both times')
  t.same(created.map(r => r.filename), [NFC, NFC], 'both rows hold the NFC name')
  t.same(created.map(r => r.metadata.name), [NFC, NFC])
  t.equal(b.json().metadata.name, NFC, 'the NFD request is answered with the NFC name')
})

t.test('U+202E and other invisible characters: 400 problem, nothing created', async t => {
  const before = created.length
  for (const name of ['invoice\u202Etxt.exe', 'a\u200Bb.txt', 'a\u2066b.txt', '\uFEFFa.txt']) {
    const res = await create(name)
    t.equal(res.statusCode, 400, JSON.stringify(name))
    t.match(res.headers['content-type'], /^application\/problem\+json/)
    t.equal(res.json().code, 'BWN_ERR_BAD_FILENAME')
    t.match(res.json().detail, /U\+[0-9A-F]{4}/, 'the detail names the character')
  }
  t.equal(created.length, before)
})
