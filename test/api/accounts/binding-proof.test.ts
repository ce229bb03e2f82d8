// A participant key is bound to a hotkey by that hotkey's signature over the very request that issues it
// (method, path, body digest, timestamp, nonce; api/accounts/binding.ts), never by whoever asks: an admin
// (an organization's, or the operator) without a valid proof gets no key, so it cannot read that
// participant's audit rows. Issue 32 point 3: wrong signer, replayed nonce and stale timestamp refused.
import t from 'tap'
import { buildApp } from '../../../api/app.ts'
import { bootstrapDevnetKeys } from '../../../api/accounts/devnet.ts'
import { AccountsService } from '../../../api/accounts/service.ts'
import { proveBinding, proofMessage, keysPath, PROOF_MAX_SKEW_MS, type ProvedBody } from '../../../api/accounts/binding.ts'
import { cryptoReady, newHotkey, sign, toHex } from '../../../protocol/index.ts'
import { testDeps } from '../../helpers/api.ts'

await cryptoReady()
const env = testDeps()
const devnet = await bootstrapDevnetKeys(env.accounts)
const app = await buildApp(env.deps)
await app.ready()
t.teardown(() => app.close())
type Call = (payload: object, org: string) => Promise<{ status: number, body: any }>
const callerOn = (server: typeof app) => (key: string): Call => async (payload, org) => {
  const res = await server.inject({ method: 'POST', url: `/admin/organizations/${org}/keys`, headers: { authorization: `Bearer ${key}` }, payload })
  return { status: res.statusCode, body: res.json() }
}
const as = callerOn(app)
const operator = as(devnet.admin)
const org = await env.accounts.createOrganization({ name: 'b' })
const other = await env.accounts.createOrganization({ name: 'a' })
const orgAdminKey = (await env.accounts.createKey(org.id, { role: 'admin' })).key
const orgAdmin = as(orgAdminKey)
const participant = newHotkey()
const stranger = newHotkey()
const keysOf = async (id: string) => (await env.accounts.listKeys(id)).length
const now = (): number => env.clock.now()
const prove = (fields: Record<string, unknown>, opts: { organizationId?: string, at?: number, key?: typeof participant } = {}): ProvedBody =>
  proveBinding(opts.key ?? participant, opts.organizationId ?? org.id, fields, { now: opts.at ?? now() })

t.test('the bytes signed: six lines over method, path, body digest, timestamp and nonce', async t => {
  const body = { role: 'orchestrator', hotkey: participant.address, hotkeyProof: { timestamp: 1_900_000_000_000, nonce: 'n0nce-n0nce-n0nce', signature: 'ff'.repeat(64) } }
  const text = new TextDecoder().decode(proofMessage('post', '/admin/organizations/x/keys', body, 1_900_000_000_000, 'n0nce-n0nce-n0nce'))
  const lines = text.split('\n')
  t.same(lines.slice(0, 3), ['bwnet-hotkey-proof-v2', 'POST', '/admin/organizations/x/keys'])
  t.match(lines[3], /^[0-9a-f]{64}$/, 'sha256 of the body')
  t.same(lines.slice(4), ['1900000000000', 'n0nce-n0nce-n0nce'])
  const resigned = { ...body, hotkeyProof: { ...body.hotkeyProof, signature: '00'.repeat(64) } }
  t.equal(new TextDecoder().decode(proofMessage('POST', '/admin/organizations/x/keys', resigned, 1_900_000_000_000, 'n0nce-n0nce-n0nce')), text, 'the signature is not part of the digest')
  const reordered = { hotkeyProof: body.hotkeyProof, hotkey: body.hotkey, role: body.role }
  t.equal(new TextDecoder().decode(proofMessage('POST', '/admin/organizations/x/keys', reordered, 1_900_000_000_000, 'n0nce-n0nce-n0nce')), text, 'canonical JSON: key order does not matter')
})

t.test('a proof that is not this hotkey\'s signature over this request: 400 BWN_ERR_HOTKEY_PROOF, no key', async t => {
  const before = await keysOf(org.id)
  const byStranger = prove({ role: 'orchestrator' }, { key: stranger })
  const signedRole = prove({ role: 'worker' })
  const cases: Array<[string, object]> = [
    ['no proof', { role: 'orchestrator', hotkey: participant.address }],
    ['signed by another hotkey (wrong signer)', { ...byStranger, hotkey: participant.address }],
    ['a proof for another organization\'s path', prove({ role: 'orchestrator' }, { organizationId: other.id })],
    ['a body changed after signing (the role)', { ...signedRole, role: 'orchestrator' }],
    ['a body changed after signing (a field added)', { ...prove({ role: 'orchestrator' }), name: 'renamed' }],
    ['a changed timestamp', (() => { const b = prove({ role: 'orchestrator' }); return { ...b, hotkeyProof: { ...b.hotkeyProof!, timestamp: b.hotkeyProof!.timestamp + 1 } } })()],
    ['a malformed signature', { ...prove({ role: 'orchestrator' }), hotkeyProof: { timestamp: now(), nonce: 'abcdefghijklmnop', signature: 'ab'.repeat(64) } }]
  ]
  for (const [who, call] of [['organization admin', orgAdmin], ['operator', operator]] as const) {
    for (const [what, body] of cases) {
      const res = await call(body, org.id)
      t.equal(res.status, 400, `${who}: ${what}`)
      t.equal(res.body.code, 'BWN_ERR_HOTKEY_PROOF', `${who}: ${what}`)
    }
  }
  t.equal(await keysOf(org.id), before, 'no key was issued')
})

t.test('the hotkey\'s own fresh proof binds the key', async t => {
  for (const [role, call] of [['orchestrator', orgAdmin], ['worker', operator]] as const) {
    const res = await call(prove({ role, name: `${role} of the participant` }), org.id)
    t.equal(res.status, 201, role)
    t.equal(res.body.apiKey.hotkey, participant.address)
  }
  const unbound = await orgAdmin({ role: 'orchestrator' }, org.id)
  t.equal(unbound.status, 201, 'an unbound key needs no proof')
  const { hotkey: _hotkey, ...stray } = prove({ role: 'orchestrator' })
  const res = await orgAdmin(stray, org.id)
  t.equal(res.status, 400, 'a proof without a hotkey is refused')
  t.equal(res.body.code, 'BWN_ERR_HOTKEY_PROOF')
})

t.test('a stale or future timestamp: 400 BWN_ERR_HOTKEY_PROOF_STALE', async t => {
  const before = await keysOf(org.id)
  for (const [what, at] of [['signed 5 min 1 s ago', now() - PROOF_MAX_SKEW_MS - 1000], ['dated 5 min 1 s ahead', now() + PROOF_MAX_SKEW_MS + 1000]] as const) {
    const res = await orgAdmin(prove({ role: 'orchestrator' }, { at }), org.id)
    t.equal(res.status, 400, what)
    t.equal(res.body.code, 'BWN_ERR_HOTKEY_PROOF_STALE', what)
  }
  t.equal(await keysOf(org.id), before, 'no key was issued')
  // Held back (an admin sitting on it): good within the window, stale after it.
  const held = prove({ role: 'orchestrator' })
  env.clock.advance(PROOF_MAX_SKEW_MS + 1)
  t.equal((await orgAdmin(held, org.id)).body.code, 'BWN_ERR_HOTKEY_PROOF_STALE', 'a proof held past the window')
  t.equal((await orgAdmin(prove({ role: 'orchestrator' }, { at: now() - PROOF_MAX_SKEW_MS + 1000 }), org.id)).status, 201, 'signed 4 min 59 s ago: fresh')
})

t.test('a replayed nonce: 409 BWN_ERR_HOTKEY_PROOF_REPLAYED, also after a restart', async t => {
  const body = prove({ role: 'orchestrator', name: 'once' })
  t.equal((await orgAdmin(body, org.id)).status, 201, 'first use')
  const before = await keysOf(org.id)
  const again = await orgAdmin(body, org.id)
  t.equal(again.status, 409, 'the same request again')
  t.equal(again.body.code, 'BWN_ERR_HOTKEY_PROOF_REPLAYED')
  t.equal((await operator(body, org.id)).body.code, 'BWN_ERR_HOTKEY_PROOF_REPLAYED', 'by another admin')
  // The same nonce in a new, validly signed request (another name): still that nonce.
  const { nonce, timestamp } = body.hotkeyProof!
  const renamed: ProvedBody = { role: 'orchestrator', name: 'twice', hotkey: participant.address, hotkeyProof: { timestamp, nonce, signature: '' } }
  renamed.hotkeyProof!.signature = toHex(sign(participant, proofMessage('POST', keysPath(org.id), renamed, timestamp, nonce)))
  t.equal((await orgAdmin(renamed, org.id)).body.code, 'BWN_ERR_HOTKEY_PROOF_REPLAYED', 'a new signature with a used nonce')
  // Another process over the same store (a restart within the window) remembers it.
  const restartedAccounts = new AccountsService({ store: env.store, clock: env.clock })
  const restarted = await buildApp({ ...env.deps, accounts: restartedAccounts })
  await restarted.ready()
  t.teardown(() => restarted.close())
  const replayed = await callerOn(restarted)(orgAdminKey)(body, org.id)
  t.equal(replayed.status, 409, 'after a restart')
  t.equal(replayed.body.code, 'BWN_ERR_HOTKEY_PROOF_REPLAYED')
  t.equal(await keysOf(org.id), before, 'no second key')
  // Concurrent replays: exactly one wins.
  const race = prove({ role: 'worker', name: 'race' })
  const answers = await Promise.all(Array.from({ length: 8 }, async () => (await orgAdmin(race, org.id)).status))
  t.same(answers.sort(), [201, 409, 409, 409, 409, 409, 409, 409], 'eight at once: one key')
})

t.test('nonces are forgotten once their proofs could no longer be fresh', async t => {
  const accounts = new AccountsService({ store: env.store, clock: env.clock })
  const expiresAt = now() + PROOF_MAX_SKEW_MS
  t.equal(await accounts.claimProofNonce(participant.address, 'forget-me-soon-0', expiresAt), true)
  t.equal(await accounts.claimProofNonce(participant.address, 'forget-me-soon-0', expiresAt), false, 'remembered')
  env.clock.advance(PROOF_MAX_SKEW_MS + 1)
  t.equal(await accounts.claimProofNonce(stranger.address, 'another-nonce-01', now() + PROOF_MAX_SKEW_MS), true)
  t.equal(await env.store.table('proof_nonces').get(`nonce/${participant.address}/forget-me-soon-0`), undefined, 'the expired nonce is gone')
})
