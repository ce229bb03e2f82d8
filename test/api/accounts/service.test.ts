// The accounts service on its own: key material, grants, expiry, ledger, devnet bootstrap.
import t from 'tap'
import { collect, LevelStore } from '../../../actors/store.ts'
import { MemoryLevel } from 'memory-level'
import { bootstrapDevnetKeys, DEVNET_CREDITS } from '../../../api/accounts/devnet.ts'
import { generateKey, hashMatches, keyIdOf, KEY_SECRET_BYTES } from '../../../api/accounts/keys.ts'
import { AccountsService } from '../../../api/accounts/service.ts'
import { testDeps } from '../../helpers/api.ts'

t.test('key material: 32 random bytes, id inside, hash compared', async t => {
  const a = generateKey()
  const b = generateKey()
  t.match(a.key, /^bwn_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/)
  t.equal(Buffer.from(a.key.slice(21), 'base64url').length, KEY_SECRET_BYTES)
  t.not(a.key, b.key)
  t.equal(keyIdOf(a.key), a.id)
  t.equal(keyIdOf('bwn_short_x'), null)
  t.ok(hashMatches(a.key, a.hash))
  t.notOk(hashMatches(b.key, a.hash))
  t.notOk(hashMatches(a.key, 'abcd'), 'a malformed stored hash never matches')
})

t.test('grants and what a key may be', async t => {
  const { accounts } = testDeps()
  const org = await accounts.createOrganization({ name: 'o' })
  const other = await accounts.createOrganization({ name: 'other' })
  const p = await accounts.createProject(org.id, { name: 'p' })
  const e = await accounts.createEnvironment(p.id, { name: 'e' })
  const foreign = await accounts.createProject(other.id, { name: 'x' })

  t.equal((await accounts.createKey(org.id, { role: 'client' })).apiKey.grant, 'organization')
  t.match((await accounts.createKey(org.id, { role: 'client', projectId: p.id })).apiKey, { grant: 'project', projectId: p.id, environmentId: null })
  t.match((await accounts.createKey(org.id, { role: 'client', environmentId: e.id })).apiKey, { grant: 'environment', projectId: p.id, environmentId: e.id })
  await t.rejects(accounts.createKey(org.id, { role: 'client', projectId: foreign.id }), { code: 'BWN_ERR_BAD_REQUEST' })
  await t.rejects(accounts.createKey(org.id, { role: 'client', environmentId: e.id, projectId: foreign.id }), { code: 'BWN_ERR_BAD_REQUEST' })
  await t.rejects(accounts.createKey(org.id, { role: 'client', scopes: ['telemetry:read'] }), { code: 'BWN_ERR_BAD_REQUEST' })
  await t.rejects(accounts.createKey(org.id, { role: 'client', expiresAt: '2000-01-01T00:00:00Z' }), { code: 'BWN_ERR_BAD_REQUEST' })
  await t.rejects(accounts.createKey('00000000-0000-4000-8000-000000000000', { role: 'client' }), { code: 'BWN_ERR_ORGANIZATION_NOT_FOUND', statusCode: 404 })
  await t.rejects(accounts.createProject(other.id + 'x', { name: 'n' }), { code: 'BWN_ERR_ORGANIZATION_NOT_FOUND' })
  await t.rejects(accounts.revokeKey('nope'), { code: 'BWN_ERR_API_KEY_NOT_FOUND' })
  t.same((await accounts.listProjects(org.id)).map(x => x.id), [p.id])
  t.same((await accounts.listEnvironments(p.id)).map(x => x.id), [e.id])
  t.equal((await accounts.listKeys(org.id)).length, 3)
  t.equal((await accounts.listKeys(other.id)).length, 0)
})

t.test('expiry is exact to the millisecond on the injected clock', async t => {
  const { accounts, clock } = testDeps()
  const org = await accounts.createOrganization({ name: 'o' })
  const { key } = await accounts.createKey(org.id, { role: 'client', expiresAt: new Date(clock.now() + 1000).toISOString() })
  clock.advance(999)
  t.equal((await accounts.authenticate(key)).ok, true)
  clock.advance(1)
  t.same(await accounts.authenticate(key), { ok: false, reason: 'expired' })
})

t.test('the ledger is append-only and the balance its sum', async t => {
  const { accounts, store } = testDeps()
  const org = await accounts.createOrganization({ name: 'o' })
  const { apiKey } = await accounts.createKey(org.id, { role: 'console', scopes: ['telemetry:read'] })
  await accounts.grantCredits(org.id, 5, 'first')
  await accounts.debit(org.id, 2, { keyId: apiKey.id, memo: 'GET /x' })
  await t.rejects(accounts.debit(org.id, 4, { keyId: apiKey.id, memo: 'GET /x' }), { code: 'BWN_ERR_INSUFFICIENT_CREDITS', statusCode: 402, extensions: { balance: 3, price: 4 } })
  await accounts.debit(org.id, 3, { keyId: apiKey.id, memo: 'GET /x' })
  await t.rejects(accounts.grantCredits(org.id, 0), { code: 'BWN_ERR_BAD_REQUEST' })
  await t.rejects(accounts.grantCredits(org.id, 1.5), { code: 'BWN_ERR_BAD_REQUEST' })
  t.same(await accounts.balance(org.id), { organizationId: org.id, balance: 0, entries: 3 })
  const rows = await collect(store.table('credit_ledger'))
  t.same(rows.map(([k]) => k.replace(org.id, 'ORG')), ['balance/ORG', 'entry/ORG/000000000001', 'entry/ORG/000000000002', 'entry/ORG/000000000003'])
  t.same((await accounts.ledger(org.id)).map(e => [e.kind, e.amount, e.balanceAfter, e.keyId]), [['read', -3, 0, apiKey.id], ['read', -2, 3, apiKey.id], ['grant', 5, 5, null]])
})

t.test('prices: realtime is twice the snapshot read; bad prices are refused', async t => {
  const { store } = testDeps()
  const a = new AccountsService({ store, pricing: { snapshotRead: 7, sellAllowanceRead: 4 } })
  t.same([a.price('snapshot'), a.price('realtime'), a.price('sellAllowance')], [7, 14, 4])
  t.throws(() => new AccountsService({ store, pricing: { snapshotRead: -1 } }), TypeError)
  t.throws(() => new AccountsService({ store, pricing: { snapshotRead: 0.5 } }), TypeError)
})

t.test('bootstrapDevnetKeys: admin, an Enterprise and a Free client, console with both scopes and credits', async t => {
  const { accounts } = testDeps()
  const keys = await bootstrapDevnetKeys(accounts)
  const who = async (key: string) => { const r = await accounts.authenticate(key); if (!r.ok) throw new Error(r.reason); return r.principal }
  t.match(await who(keys.admin), { role: 'admin', grant: 'organization', operator: true })
  t.match(await who(keys.client), { role: 'client', plan: 'enterprise' })
  t.match(await who(keys.clientFree), { role: 'client', plan: 'free' })
  const c = await who(keys.console)
  t.match(c, { role: 'console', grant: 'organization', scopes: ['telemetry:read', 'telemetry:realtime:read'] })
  t.equal((await accounts.balance(c.organizationId)).balance, DEVNET_CREDITS)
})

t.test('bootstrapDevnetKeys again on the same store: one organization, the same keys; what is gone or revoked is issued anew', async t => {
  const { accounts } = testDeps()
  const first = await bootstrapDevnetKeys(accounts)
  const org = (await accounts.listOrganizations())[0]!
  await accounts.debit(org.id, 5, { keyId: 'k', memo: 'spent' })
  const again = await bootstrapDevnetKeys(accounts, first)
  t.same(again, first, 'the same keys')
  t.equal((await accounts.listOrganizations()).length, 1, 'one organization')
  t.equal((await accounts.balance(org.id)).balance, DEVNET_CREDITS - 5, 'no second grant')
  // An older devnet.json: its client was the Free one; its console key was revoked since.
  const consoleId = (await accounts.authenticate(first.console) as { principal: { keyId: string } }).principal.keyId
  await accounts.revokeKey(consoleId)
  const older = await bootstrapDevnetKeys(accounts, { admin: first.admin, client: first.clientFree, console: first.console })
  t.equal(older.admin, first.admin)
  t.equal(older.clientFree, first.clientFree, 'the Free client is kept under its own name')
  t.not(older.client, first.clientFree, 'an Enterprise client is issued')
  t.not(older.console, first.console, 'the revoked console key is replaced')
  t.match(await accounts.authenticate(older.client), { ok: true, principal: { plan: 'enterprise', organizationId: org.id } })
  t.equal((await accounts.listOrganizations()).length, 1, 'still one organization')
  t.equal((await bootstrapDevnetKeys(accounts, { client: 'bwn_0123456789abcdef_not-a-key' })).admin === first.admin, false, 'without the keys: new ones, in the same organization')
  t.equal((await accounts.listOrganizations()).length, 1)
})

t.test('a ledger write that fails leaves the balance where the store has it (the in-memory row is not ahead)', async t => {
  const store = new LevelStore(new MemoryLevel() as never)
  const accounts = new AccountsService({ store, clock: { now: () => Date.parse('2030-01-01T00:00:00Z') } })
  const org = await accounts.createOrganization({ name: 'o' })
  await accounts.grantCredits(org.id, 3, 'start')
  t.same((await accounts.debitBatch(org.id, [{ amount: 1, keyId: 'k', memo: 'm' }])).map(o => o.ok), [true])
  // The next batch is refused by the store: the debit must fail and change nothing, in memory too.
  const batch = store.batch.bind(store)
  let failNext = true
  store.batch = async (ops) => { if (failNext) { failNext = false; throw new Error('disk full') } return await batch(ops) }
  await t.rejects(accounts.debitBatch(org.id, [{ amount: 1, keyId: 'k', memo: 'm' }]), /disk full/)
  t.equal((await accounts.balance(org.id)).balance, 2, 'still 2 after the failed write')
  // Two more reads fit, the third does not: never overdrawn.
  const outcomes = await accounts.debitBatch(org.id, [1, 2, 3].map(() => ({ amount: 1, keyId: 'k', memo: 'm' })))
  t.same(outcomes.map(o => o.ok), [true, true, false])
  const fresh = new AccountsService({ store, clock: { now: () => 0 } })
  t.equal((await fresh.balance(org.id)).balance, 0, 'what the store holds agrees')
  t.same((await fresh.ledger(org.id)).map(e => [e.seq, e.amount, e.balanceAfter]), [[4, -1, 0], [3, -1, 1], [2, -1, 2], [1, 3, 3]], 'one grant and three debits written')
  t.equal((await collect(store.table('credit_ledger'))).filter(([k]) => k.startsWith(`entry/${org.id}/`)).length, 3, 'the two debits of one batch are one stored run')
})
