// Balances stay exact: a grant that would take an organization past MAX_BALANCE (2^53 − 1) is refused
// (409 BWN_ERR_BALANCE_LIMIT), so a balance never reaches where a debit of 1 is lost in rounding; a
// balance at the maximum debits exactly, in the balance and in the ledger.
import t from 'tap'
import { buildApp } from '../../../api/app.ts'
import { bootstrapDevnetKeys } from '../../../api/accounts/devnet.ts'
import { MAX_BALANCE } from '../../../api/accounts/service.ts'
import { testDeps } from '../../helpers/api.ts'

t.equal(MAX_BALANCE, 2 ** 53 - 1)

t.test('a grant past the maximum is refused and changes nothing', async t => {
  const env = testDeps()
  const devnet = await bootstrapDevnetKeys(env.accounts)
  const app = await buildApp(env.deps)
  t.teardown(() => app.close())
  const org = await env.accounts.createOrganization({ name: 'rich' })
  const grant = async (amount: number) => await app.inject({ method: 'POST', url: `/admin/organizations/${org.id}/credits`, headers: { authorization: `Bearer ${devnet.admin}` }, payload: { amount } })
  t.equal((await grant(MAX_BALANCE)).statusCode, 201)
  const over = await grant(MAX_BALANCE)
  t.equal(over.statusCode, 409, 'a second grant of 2^53 − 1 would pass the maximum')
  t.equal(over.headers['content-type'], 'application/problem+json; charset=utf-8')
  t.equal(over.json().code, 'BWN_ERR_BALANCE_LIMIT')
  t.equal(over.json().balance, MAX_BALANCE)
  t.equal(over.json().maxBalance, MAX_BALANCE)
  const one = await grant(1)
  t.equal(one.statusCode, 409, 'even one credit past the maximum')
  const balance = await env.accounts.balance(org.id)
  t.same(balance, { organizationId: org.id, balance: MAX_BALANCE, entries: 1 }, 'nothing was granted')
  t.equal((await env.accounts.ledger(org.id)).length, 1)
})

t.test('a balance at the maximum debits exactly, entry by entry', async t => {
  const env = testDeps()
  const org = await env.accounts.createOrganization({ name: 'rich' })
  await env.accounts.grantCredits(org.id, MAX_BALANCE - 10)
  await env.accounts.grantCredits(org.id, 10)
  for (let i = 0; i < 5; i++) await env.accounts.debit(org.id, 1, { keyId: '0123456789abcdef', memo: `read ${i}` })
  const balance = await env.accounts.balance(org.id)
  t.equal(balance.balance, MAX_BALANCE - 5, 'five debits of 1 took five credits')
  const ledger = await env.accounts.ledger(org.id)
  const reads = ledger.filter(e => e.kind === 'read')
  t.equal(reads.length, 5)
  t.same(reads.map(e => e.balanceAfter), [MAX_BALANCE - 5, MAX_BALANCE - 4, MAX_BALANCE - 3, MAX_BALANCE - 2, MAX_BALANCE - 1], 'each entry records its exact balance')
  t.equal(ledger.reduce((sum, e) => sum + e.amount, 0), balance.balance, 'the balance is the exact sum of the ledger')
  await t.rejects(env.accounts.grantCredits(org.id, 6), { code: 'BWN_ERR_BALANCE_LIMIT' })
  t.same(await env.accounts.grantCredits(org.id, 5), { organizationId: org.id, balance: MAX_BALANCE, entries: 8 }, 'up to the maximum is fine')
})
