// Group commit of the credit ledger: charges of paid reads are applied in memory at once (checked
// and debited in one step, never below zero) and written by group commit, one batch in flight and the
// charges made meanwhile in the next. A read is answered only once its charge is written, so a crash
// forgets no answered read; a failed write refuses the reads and grants it held, and the balance is
// read from the store again.
import t from 'tap'
import { collect, LevelStore } from '../../../actors/store.ts'
import { AccountsService, LEDGER_BATCH_MAX_READS } from '../../../api/accounts/service.ts'
import { buildApp } from '../../../api/app.ts'
import { testDeps } from '../../helpers/api.ts'
import { PROBES, registerProbes } from '../../helpers/probes.ts'
import { gatedStore, storedLedger } from '../../helpers/gated-store.ts'

const READ = { amount: 1, keyId: '0123456789abcdef', memo: 'GET /v1/telemetry/network' }
const clock = { now: () => Date.parse('2030-01-01T00:00:00Z') }

async function setup (credits: number) {
  const g = gatedStore()
  const accounts = new AccountsService({ store: g.store, clock })
  const org = await accounts.createOrganization({ name: 'o' })
  await accounts.grantCredits(org.id, credits, 'start')
  return { ...g, accounts, org }
}

/** What a node restarted on this store sees: the stored balance and every stored entry (runs expanded), oldest first. */
async function restartedOn (store: LevelStore, organizationId: string) {
  const fresh = new AccountsService({ store, clock })
  const ledger = await storedLedger(store, organizationId)
  return { balance: (await fresh.balance(organizationId)).balance, ledger }
}

t.test('concurrent charges never overdraw; each served read is one entry, written once', async t => {
  const { store, org } = await setup(100)
  // A service that has not read the row yet: the first charges wait for one row read, then all are checked in order.
  const accounts = new AccountsService({ store, clock })
  const prices = Array.from({ length: 250 }, (_, i) => 1 + (i % 3))
  const results = await Promise.allSettled(prices.map(amount => accounts.charge(org.id, { ...READ, amount })))
  const served = prices.filter((_p, i) => results[i]!.status === 'fulfilled')
  for (const r of results) {
    if (r.status === 'rejected') t.equal((r.reason as { code: string }).code, 'BWN_ERR_INSUFFICIENT_CREDITS')
    else t.ok(r.value >= 0, 'no read is answered with a negative balance')
  }
  const spent = served.reduce((a, b) => a + b, 0)
  t.ok(spent <= 100 && spent >= 98, `spent ${spent} of 100: refused only when short`)
  t.equal((await accounts.balance(org.id)).balance, 100 - spent)
  await accounts.flush()
  const { balance, ledger } = await restartedOn(store, org.id)
  t.equal(balance, 100 - spent, 'the store agrees')
  t.same(ledger.map(e => e.seq), ledger.map((_e, i) => i + 1), 'seqs 1..n: no gap, no duplicate')
  t.same(ledger.slice(1).map(e => -e.amount), served, 'one entry per served read, in order, at its price')
  t.ok(ledger.every(e => e.balanceAfter >= 0), 'never below zero at any step')
  t.equal(ledger[ledger.length - 1]!.balanceAfter, balance)
})

t.test('charges interleaved with grants: every credit is spent once, none twice', async t => {
  const { accounts, org } = await setup(10)
  let served = 0
  let refused = 0
  const written: Array<number | Promise<number>> = []
  const burst = (): void => {
    for (let i = 0; i < 30; i++) {
      try { written.push(accounts.charge(org.id, READ)); served++ } catch (err) { t.equal((err as { code: string }).code, 'BWN_ERR_INSUFFICIENT_CREDITS'); refused++ }
    }
  }
  for (let round = 0; round < 4; round++) {
    const grant = accounts.grantCredits(org.id, 20, 'top-up') // applied while the burst runs or right after it
    burst()
    await grant
  }
  burst()
  await Promise.all(written)
  t.equal(served, 10 + 4 * 20, 'exactly the credits granted were spent')
  t.equal(served + refused, 5 * 30)
  t.equal((await accounts.balance(org.id)).balance, 0)
  const ledger = (await accounts.ledger(org.id)).reverse()
  t.equal(ledger.reduce((sum, e) => sum + e.amount, 0), 0, 'the ledger sums to the balance')
  t.ok(ledger.every(e => e.balanceAfter >= 0))
  t.same(ledger.map(e => e.seq), ledger.map((_e, i) => i + 1))
})

/** Counts the charges settled so far. */
function watch (charges: Array<number | Promise<number>>) {
  const settled = { n: 0 }
  for (const c of charges) void Promise.resolve(c).finally(() => { settled.n++ })
  return settled
}
const turn = (): Promise<void> => new Promise(resolve => setImmediate(resolve))

t.test('the reads of one turn share one batch, and each is answered once it is written', async t => {
  const { accounts, org, writes, nextWrite, store, hold, release } = await setup(1000)
  const before = writes.length
  hold() // the disk is slow: the write starts and does not end until released
  const started = nextWrite()
  const charges = Array.from({ length: 100 }, () => accounts.charge(org.id, READ))
  const settled = watch(charges)
  t.ok(charges.every(c => typeof c !== 'number'), 'no charge is answered from memory alone')
  t.equal((await accounts.balance(org.id)).balance, 900, 'applied at once: the balance already counts them')
  await started // cut at the end of the turn, without anyone asking
  await turn(); await turn()
  t.equal(settled.n, 0, 'no read is answered while its batch is being written')
  t.equal((await restartedOn(store, org.id)).balance, 1000, 'and a crash now would have charged none of them')
  release()
  t.same(await Promise.all(charges), Array.from({ length: 100 }, (_v, i) => 999 - i), 'each answered with the balance its charge left')
  t.equal(writes.length, before + 1, 'one batch for the hundred reads')
  t.equal(writes[before]!.length, 2, 'one stored run and the balance row')
  t.equal((await restartedOn(store, org.id)).balance, 900)
})

t.test('reads charged while a batch is written go into the next, which is written when the first ends', async t => {
  const { accounts, org, writes, nextWrite, hold, release } = await setup(1000)
  const before = writes.length
  hold()
  const first = nextWrite()
  const a = accounts.charge(org.id, READ)
  await first
  const b = Array.from({ length: 10 }, () => accounts.charge(org.id, READ))
  await turn(); await turn()
  t.equal(writes.length, before + 1, 'the second batch waits for the first')
  const second = nextWrite()
  release()
  t.equal(await a, 999)
  await second
  t.same(await Promise.all(b), Array.from({ length: 10 }, (_v, i) => 998 - i))
  t.equal(writes.length, before + 2, 'the ten reads in one batch')
})

t.test('with a stalled disk no read is answered, a batch stays bounded, and every read is charged once', async t => {
  const { accounts, org, store, writes, hold, release } = await setup(10 * LEDGER_BATCH_MAX_READS)
  const before = writes.length
  hold() // the disk stalls: the first batch cannot finish
  const charges: Array<number | Promise<number>> = []
  for (let i = 0; i < 3 * LEDGER_BATCH_MAX_READS; i++) charges.push(accounts.charge(org.id, READ))
  const settled = watch(charges)
  await turn(); await turn()
  t.equal(settled.n, 0, 'none answered while nothing is written')
  t.equal(writes.length, before + 1, 'a full batch is written at once; the next collects while it is')
  // A crash now: the restarted node has none of the reads, and none was answered.
  const crashed = await restartedOn(store, org.id)
  t.equal(crashed.balance, 10 * LEDGER_BATCH_MAX_READS)
  t.equal(crashed.ledger.length, 1, 'only the grant')
  release()
  t.equal((await Promise.all(charges)).length, 3 * LEDGER_BATCH_MAX_READS, 'all served once written')
  const reads = writes.slice(before).map(ops => ops.reduce((n, op) => n + (op.type === 'put' && (op.value as { kind?: string }).kind === 'read' ? ((op.value as { reads?: number }).reads ?? 1) : 0), 0))
  t.same(reads, [LEDGER_BATCH_MAX_READS, LEDGER_BATCH_MAX_READS, LEDGER_BATCH_MAX_READS], 'three batches of LEDGER_BATCH_MAX_READS')
  const after = await restartedOn(store, org.id)
  t.equal(after.balance, 7 * LEDGER_BATCH_MAX_READS, 'every read charged exactly once')
  t.same(after.ledger.map(e => e.seq), after.ledger.map((_e, i) => i + 1))
  t.equal(after.ledger.length, 1 + 3 * LEDGER_BATCH_MAX_READS)
})

t.test('a failed write refuses what was not written; the store stays a consistent prefix', async t => {
  const { accounts, org, store, hold, release, failNextWrite, nextWrite } = await setup(50)
  t.same(await Promise.all(Array.from({ length: 5 }, () => accounts.charge(org.id, READ))), [49, 48, 47, 46, 45])
  hold()
  failNextWrite(new Error('disk full'))
  const started = nextWrite()
  const failing = Array.from({ length: 5 }, () => accounts.charge(org.id, READ)) // this batch will fail
  await started
  const builtOn = Array.from({ length: 3 }, () => accounts.charge(org.id, READ)) // collected while the failing batch is written
  t.equal((await accounts.balance(org.id)).balance, 37)
  release()
  const outcomes = await Promise.allSettled([...failing, ...builtOn])
  t.same(outcomes.map(o => o.status === 'rejected' ? String((o.reason as Error).message) : 'served'), Array(8).fill('disk full'), 'none of the 8 reads is answered as served')
  t.equal((await accounts.balance(org.id)).balance, 45, 'the row is read again from the store: nothing charged for them')
  failNextWrite(new Error('disk full'))
  await t.rejects(accounts.grantCredits(org.id, 7, 'lost'), /disk full/, 'a grant is acknowledged only once written')
  t.equal((await accounts.balance(org.id)).balance, 45, 'and leaves nothing behind when it is not')
  const last = Array.from({ length: 45 }, () => accounts.charge(org.id, READ))
  t.throws(() => accounts.charge(org.id, READ), { code: 'BWN_ERR_INSUFFICIENT_CREDITS' }, 'never below zero')
  t.same(await Promise.all(last), Array.from({ length: 45 }, (_v, i) => 44 - i))
  const { balance, ledger } = await restartedOn(store, org.id)
  t.equal(balance, 0)
  t.same(ledger.map(e => e.seq), ledger.map((_e, i) => i + 1), 'no gap, no duplicate seq')
  t.equal(ledger.length, 1 + 5 + 45)
  t.equal(ledger[ledger.length - 1]!.balanceAfter, 0)
  const rows = await collect(store.table('credit_ledger'))
  t.equal(rows.filter(([k]) => k.startsWith(`entry/${org.id}/`)).length, 3, 'the grant and two runs of reads')
})

t.test('paid reads through the app are charged once each, and written when answered', async t => {
  const env = testDeps()
  const org = await env.accounts.createOrganization({ name: 'o' })
  await env.accounts.grantCredits(org.id, 10)
  const { key } = await env.accounts.createKey(org.id, { role: 'console', plan: 'enterprise', scopes: ['telemetry:read'] })
  const app = await buildApp(env.deps)
  await registerProbes(app)
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ url: PROBES.telemetry, headers: { 'x-api-key': key } })).statusCode, 200)
  t.equal((await restartedOn(env.store, org.id)).balance, 7, 'each read written before its answer')
  await app.close()
  t.equal((await restartedOn(env.store, org.id)).balance, 7)
})

t.test('chargeThen: every read of a batch hears the outcome, even when one of them throws', async t => {
  const { accounts, org, store } = await setup(10)
  const heard: Array<[unknown, number | undefined]> = []
  await new Promise<void>(resolve => {
    accounts.chargeThen(org.id, READ, (err, left) => { heard.push([err, left]) })
    accounts.chargeThen(org.id, READ, () => { throw new Error('a reply that failed to send') })
    accounts.chargeThen(org.id, READ, (err, left) => { heard.push([err, left]); resolve() })
  })
  t.same(heard, [[null, 9], [null, 7]], 'the first and the third are answered with what they left')
  t.throws(() => accounts.chargeThen(org.id, { ...READ, amount: 8 }, () => t.fail('a refused read is not called back')), { code: 'BWN_ERR_INSUFFICIENT_CREDITS' })
  t.equal((await restartedOn(store, org.id)).balance, 7, 'three reads charged and written')
})
