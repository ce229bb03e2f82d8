// Paid telemetry reads are charged exactly: 10,000 concurrent reads through the API, at two prices, on
// a budget that runs out, reconcile with the ledger read by read; and no paid read is answered before
// its charge is written (docs/telemetry.md#charges-and-the-ledger).
import t from 'tap'
import { AccountsService } from '../../../api/accounts/service.ts'
import { CHARGED_HEADER, REMAINING_HEADER } from '../../../api/plugins/credits.ts'
import { telemetryApp } from '../../helpers/telemetry.ts'
import { storedLedger } from '../../helpers/gated-store.ts'

const READS = 10_000
const BUDGET = 12_000 // 5,000 reads at 1 credit and 5,000 at 2 would cost 15,000: about 2,000 are refused
const T = await telemetryApp()
t.teardown(() => T.app.close())
const { env } = T

async function paidKey (credits: number): Promise<{ orgId: string, key: string }> {
  const org = await env.accounts.createOrganization({ name: `reader-${credits}` })
  await env.accounts.grantCredits(org.id, credits, 'budget')
  const { key } = await env.accounts.createKey(org.id, { role: 'console', plan: 'enterprise', scopes: ['telemetry:read', 'telemetry:realtime:read'] })
  return { orgId: org.id, key }
}

t.test(`${READS} concurrent paid reads reconcile with the ledger, read by read`, async t => {
  const { orgId, key } = await paidKey(BUDGET)
  const urls = Array.from({ length: READS }, (_v, i) => i % 2 === 0 ? '/v1/telemetry/network' : '/v1/telemetry/realtime/network')
  const answers = await Promise.all(urls.map(url => T.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } })))
  const served = answers.filter(a => a.statusCode === 200)
  const refused = answers.filter(a => a.statusCode === 402)
  t.equal(served.length + refused.length, READS, 'every read is served or refused for credits, nothing else')
  t.ok(refused.every(a => a.json().code === 'BWN_ERR_INSUFFICIENT_CREDITS' && a.headers[CHARGED_HEADER] === undefined), 'a refusal charges nothing')
  t.ok(served.length > 6_000 && refused.length > 0, `${served.length} served, ${refused.length} refused: the budget ran out`)
  t.same(new Set(served.map(a => a.headers[CHARGED_HEADER])), new Set(['1', '2']), 'both prices were charged')

  // The answers form one chain: sorted by what was left, each read took exactly its price.
  const chain = served.map(a => ({ charged: Number(a.headers[CHARGED_HEADER]), left: Number(a.headers[REMAINING_HEADER]) })).sort((a, b) => b.left - a.left)
  let balance = BUDGET
  let breaks = 0
  for (const link of chain) { if (balance - link.charged !== link.left) breaks++; balance = link.left }
  t.equal(breaks, 0, 'no two reads saw the same balance, none skipped credits')
  const spent = chain.reduce((sum, l) => sum + l.charged, 0)
  t.equal(balance, BUDGET - spent)
  t.ok(balance < 2, `left ${balance}: refused only when short`)

  // The stored ledger is the same chain, before any flush: every answered read was written first.
  const stored = await storedLedger(env.store, orgId)
  const reads = stored.filter(e => e.kind === 'read')
  t.equal(reads.length, served.length, 'one stored entry per served read')
  t.same(stored.map(e => e.seq), stored.map((_e, i) => i + 1), 'seqs 1..n, no gap, no duplicate')
  t.same(reads.map(e => ({ charged: -e.amount, left: e.balanceAfter })), chain, 'entry by entry, the answers')
  const fresh = new AccountsService({ store: env.store })
  t.equal((await fresh.balance(orgId)).balance, balance, 'a node restarted on the store has the same balance')
  t.equal((await fresh.ledger(orgId, { limit: 1000 })).length, 1000, 'and lists the entries')
})

t.test('a paid read is answered only once its charge is written', async t => {
  const { orgId, key } = await paidKey(10)
  const write = env.store.batch.bind(env.store)
  let open!: () => void
  const held = new Promise<void>(resolve => { open = resolve })
  let writes = 0
  env.store.batch = async ops => { writes++; await held; return await write(ops) }
  t.teardown(() => { env.store.batch = write })
  let answered = false
  const reading = T.app.inject({ method: 'GET', url: '/v1/telemetry/network', headers: { 'x-api-key': key } }).then(r => { answered = true; return r })
  while (writes === 0) await new Promise(resolve => setImmediate(resolve))
  for (let i = 0; i < 5; i++) await new Promise(resolve => setImmediate(resolve))
  t.notOk(answered, 'not answered while the charge is being written')
  t.equal((await storedLedger(env.store, orgId)).length, 1, 'nothing stored but the grant yet')
  open()
  const res = await reading
  t.equal(res.statusCode, 200)
  t.equal(res.headers[REMAINING_HEADER], '9')
  t.equal((await storedLedger(env.store, orgId)).length, 2, 'the read is stored')
})
