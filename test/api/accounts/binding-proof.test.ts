// A participant key is bound to a hotkey by that hotkey's signature, never by whoever asks: an admin
// (an organization's, or the operator) binding a key to someone else's hotkey without its proof gets
// 400 BWN_ERR_HOTKEY_PROOF and no key, so it cannot read that participant's audit rows.
import t from 'tap'
import { buildApp } from '../../../api/app.ts'
import { bootstrapDevnetKeys } from '../../../api/accounts/devnet.ts'
import { proveBinding } from '../../../api/accounts/binding.ts'
import { cryptoReady, newHotkey } from '../../../protocol/index.ts'
import { testDeps } from '../../helpers/api.ts'

await cryptoReady()
const env = testDeps()
const devnet = await bootstrapDevnetKeys(env.accounts)
const app = await buildApp(env.deps)
await app.ready()
t.teardown(() => app.close())
const as = (key: string) => async (payload: object, org: string) => {
  const res = await app.inject({ method: 'POST', url: `/admin/organizations/${org}/keys`, headers: { authorization: `Bearer ${key}` }, payload })
  return { status: res.statusCode, body: res.json() }
}
const operator = as(devnet.admin)
const org = await env.accounts.createOrganization({ name: 'b' })
const other = await env.accounts.createOrganization({ name: 'a' })
const orgAdmin = as((await env.accounts.createKey(org.id, { role: 'admin' })).key)
const participant = newHotkey()
const stranger = newHotkey()
const keysOf = async (id: string) => (await env.accounts.listKeys(id)).length

t.test('no proof, or a proof that is not the hotkey\'s consent to this binding: 400, no key', async t => {
  const before = await keysOf(org.id)
  const cases: Array<[string, object]> = [
    ['no proof', {}],
    ['a proof by another hotkey', { hotkeyProof: proveBinding(stranger, org.id, 'orchestrator') }],
    ['a proof for another organization', { hotkeyProof: proveBinding(participant, other.id, 'orchestrator') }],
    ['a proof for another role', { hotkeyProof: proveBinding(participant, org.id, 'worker') }],
    ['a malformed proof', { hotkeyProof: 'ab'.repeat(64) }]
  ]
  for (const [who, call] of [['organization admin', orgAdmin], ['operator', operator]] as const) {
    for (const [what, extra] of cases) {
      const res = await call({ role: 'orchestrator', hotkey: participant.address, ...extra }, org.id)
      t.equal(res.status, 400, `${who}: ${what}`)
      t.equal(res.body.code, 'BWN_ERR_HOTKEY_PROOF', `${who}: ${what}`)
    }
  }
  t.equal(await keysOf(org.id), before, 'no key was issued')
})

t.test('the hotkey\'s own proof binds the key', async t => {
  for (const [role, call] of [['orchestrator', orgAdmin], ['worker', operator]] as const) {
    const res = await call({ role, hotkey: participant.address, hotkeyProof: proveBinding(participant, org.id, role) }, org.id)
    t.equal(res.status, 201, role)
    t.equal(res.body.apiKey.hotkey, participant.address)
  }
  const unbound = await orgAdmin({ role: 'orchestrator' }, org.id)
  t.equal(unbound.status, 201, 'an unbound key needs no proof')
  const stray = await orgAdmin({ role: 'orchestrator', hotkeyProof: proveBinding(participant, org.id, 'orchestrator') }, org.id)
  t.equal(stray.status, 400, 'a proof without a hotkey is refused')
  t.equal(stray.body.code, 'BWN_ERR_HOTKEY_PROOF')
})
