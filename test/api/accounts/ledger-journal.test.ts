// The ledger's journal (api/accounts/journal.ts, docs/telemetry.md#charges-and-the-ledger): a paid read
// is answered once its charge is appended to the journal, in the same turn, without waiting for the
// store; a node stopped before its store caught up replays the journal on start, once; a damaged tail is
// ignored; an append that fails refuses the read and charges nothing; a store write that fails keeps the
// answers and is tried again; commits that do not follow the store's are set aside, not replayed.
import t, { type Test } from 'tap'
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { LevelStore } from '../../../actors/store.ts'
import { AccountsService, compactLedgerOps, JOURNAL_RESET_BYTES, JOURNAL_STORE_RETRY_MS } from '../../../api/accounts/service.ts'
import { LedgerJournal, type JournalRecord } from '../../../api/accounts/journal.ts'
import { gatedStore, storedLedger } from '../../helpers/gated-store.ts'

const READ = { amount: 1, keyId: '0123456789abcdef', memo: 'GET /v1/telemetry/network' }
let now = Date.parse('2030-01-01T00:00:00Z')
const clock = { now: () => now }

function dir (t: Test): string {
  const d = mkdtempSync(join(tmpdir(), 'bwnet-journal-'))
  t.teardown(() => rmSync(d, { recursive: true, force: true }))
  return d
}

/** A service with a journal on a gated store, an organization holding `credits`, the store caught up. */
async function setup (t: Test, credits: number) {
  const g = gatedStore()
  const path = join(dir(t), 'ledger.journal')
  const journal = new LedgerJournal(path)
  t.teardown(() => journal.close())
  const accounts = new AccountsService({ store: g.store, clock, journal })
  t.same(await accounts.start(), { replayed: 0, ignoredBytes: 0, setAside: null }, 'a new journal: nothing to replay')
  const org = await accounts.createOrganization({ name: 'o' })
  await accounts.grantCredits(org.id, credits, 'start')
  await accounts.flush()
  return { ...g, path, journal, accounts, org }
}

/** The stored balance and entries (runs expanded), oldest first: what a node started on this store lists. */
async function stored (store: LevelStore, organizationId: string) {
  const ledger = (await storedLedger(store, organizationId)).map(({ seq, amount }) => ({ seq, amount }))
  const balance = (await store.table<{ balance: number }>('credit_ledger').get(`balance/${organizationId}`))?.balance
  return { balance, ledger }
}

/** Charges `n` reads through chargeThen and counts the answers; resolves after the turn's commit. */
function chargeMany (accounts: AccountsService, organizationId: string, n: number): { answered: () => number, refused: () => unknown[], done: Promise<void> } {
  let answered = 0
  const refused: unknown[] = []
  for (let i = 0; i < n; i++) {
    accounts.chargeThen(organizationId, READ, err => { if (err === null) answered++; else refused.push(err) })
  }
  return { answered: () => answered, refused: () => refused, done: new Promise(resolve => setImmediate(resolve)) }
}

t.test('reads are answered once journaled, in the same turn, while the store has not written them', async t => {
  const { accounts, org, hold, release, writes, store, path, journal } = await setup(t, 100)
  hold() // the store's disk stalls
  const before = writes.length
  const lines = readFileSync(path, 'utf8').split('\n').length
  const c = chargeMany(accounts, org.id, 10)
  t.equal(c.answered(), 0, 'not answered inside the handler: the commit is cut at the end of the turn')
  await c.done
  t.equal(c.answered(), 10, 'all 10 answered at the end of the turn, with the store stalled')
  t.equal(writes.length, before + 1, 'the store was handed one batch of them')
  t.equal(readFileSync(path, 'utf8').split('\n').length, lines + 1, 'one journal line for the turn')
  t.equal((await stored(store, org.id)).balance, 100, 'the store does not hold them yet')
  t.equal((await accounts.balance(org.id)).balance, 90, 'the balance served counts them')
  const listing = accounts.ledger(org.id)
  let listed = false
  void listing.then(() => { listed = true })
  await new Promise(resolve => setImmediate(resolve))
  t.notOk(listed, 'a ledger listing waits for the store to hold every answered read')
  release()
  t.equal((await listing).filter(e => e.kind === 'read').length, 10, 'then lists all 10')
  t.equal((await stored(store, org.id)).balance, 90)
})

t.test('without a journal, the same reads wait for the store (the contrast)', async t => {
  const g = gatedStore()
  const accounts = new AccountsService({ store: g.store, clock })
  const org = await accounts.createOrganization({ name: 'o' })
  await accounts.grantCredits(org.id, 100, 'start')
  g.hold()
  const c = chargeMany(accounts, org.id, 10)
  await c.done
  await new Promise(resolve => setImmediate(resolve))
  t.equal(c.answered(), 0, 'none answered while the store stalls')
  g.release()
  await accounts.flush()
  t.equal(c.answered(), 10)
})

t.test('a node stopped before its store caught up: the next start replays the journal, once', async t => {
  const { accounts, org, hold, crash, store, path, journal } = await setup(t, 1000)
  hold() // the store never gets these batches (the process dies with them in flight)
  let answered = 0
  for (let turn = 0; turn < 5; turn++) {
    const c = chargeMany(accounts, org.id, 40 + turn)
    await c.done
    answered += c.answered()
  }
  t.equal(answered, 210, 'every read answered')
  t.equal((await stored(store, org.id)).balance, 1000, 'and none of them in the store')
  journal.close()
  crash()

  // A restart on the same store (its writes go through now) and the same journal file.
  const journal2 = new LedgerJournal(path)
  t.teardown(() => journal2.close())
  const restarted = new AccountsService({ store, clock, journal: journal2 })
  const replay = await restarted.start()
  t.same(replay, { replayed: 5, ignoredBytes: 0, setAside: null }, 'five commits replayed')
  const after = await stored(store, org.id)
  t.equal(after.balance, 1000 - 210, 'the store holds every answered read')
  t.same(after.ledger.map(e => e.seq), after.ledger.map((_e, i) => i + 1), 'entries 1..n, no gap, none twice')
  t.equal(after.ledger.filter(e => e.amount === -1).length, 210, 'one entry per answered read')
  t.equal(journal2.bytes, 0, 'the journal is emptied once replayed')
  t.equal((await restarted.balance(org.id)).balance, 790)

  // New reads go on from there; a second restart replays nothing twice.
  const c = chargeMany(restarted, org.id, 7)
  await c.done
  await restarted.flush()
  journal2.close()
  const journal3 = new LedgerJournal(path)
  t.teardown(() => journal3.close())
  const again = new AccountsService({ store, clock, journal: journal3 })
  t.same(await again.start(), { replayed: 0, ignoredBytes: 0, setAside: null }, 'the store held them: nothing replayed')
  const last = await stored(store, org.id)
  t.equal(last.balance, 783)
  t.equal(last.ledger.length, 1 + 217, 'the grant and 217 reads, each once')
})

t.test('a replay after the store took some of the commits applies only the rest', async t => {
  const { accounts, org, store, path, journal, hold, crash } = await setup(t, 100)
  const first = chargeMany(accounts, org.id, 3)
  await first.done
  await accounts.flush() // the store holds the first commit
  hold()
  const second = chargeMany(accounts, org.id, 4)
  await second.done
  t.equal(second.answered(), 4)
  journal.close()
  crash()
  const journal2 = new LedgerJournal(path)
  t.teardown(() => journal2.close())
  // The journal was not emptied (under JOURNAL_RESET_BYTES): it holds both commits, the store the first.
  t.equal(journal2.read().records.length, 3, 'the grant\'s, the first and the second commit')
  const replay = await new AccountsService({ store, clock, journal: journal2 }).start()
  t.equal(replay.replayed, 1, 'only the commit the store lacked')
  const s = await stored(store, org.id)
  t.equal(s.balance, 93)
  t.equal(s.ledger.length, 8, 'the grant and 7 reads, none twice')
})

t.test('a damaged tail is ignored: only whole, checked lines are replayed', async t => {
  const { accounts, org, store, path, journal, hold, crash } = await setup(t, 100)
  hold()
  const c = chargeMany(accounts, org.id, 5)
  await c.done
  journal.close()
  crash()
  const whole = statSync(path).size
  appendFileSync(path, '0badc0de {"n":99,"ops":[]}\n') // a line whose checksum is wrong
  appendFileSync(path, '1234') // and a line cut short
  const journal2 = new LedgerJournal(path)
  t.teardown(() => journal2.close())
  const contents = journal2.read()
  t.equal(contents.ignoredBytes, statSync(path).size - whole, 'everything after the last good line is ignored')
  const replay = await new AccountsService({ store, clock, journal: journal2 }).start()
  t.equal(replay.replayed, 1)
  t.equal((await stored(store, org.id)).balance, 95)
})

t.test('an append that fails refuses the read and charges nothing', async t => {
  const { accounts, org, journal, store } = await setup(t, 100)
  const ok = chargeMany(accounts, org.id, 2)
  await ok.done
  journal.close() // every append now throws, as a full disk would
  const bad = chargeMany(accounts, org.id, 3)
  await bad.done
  await new Promise(resolve => setImmediate(resolve))
  t.equal(bad.answered(), 0, 'none of the reads is answered')
  t.equal(bad.refused().length, 3, 'each hears the failure')
  t.equal((await accounts.balance(org.id)).balance, 98, 'the balance is read again from the store: only the 2 written reads are charged')
  t.equal((await stored(store, org.id)).balance, 98)
})

t.test('a store write that fails keeps the answers and is tried again', async t => {
  const { accounts, org, store, failNextWrite } = await setup(t, 100)
  failNextWrite(new Error('EIO'))
  const c = chargeMany(accounts, org.id, 6)
  await c.done
  t.equal(c.answered(), 6, 'answered: the journal holds them')
  t.equal((await stored(store, org.id)).balance, 100, 'the store refused the batch')
  now += JOURNAL_STORE_RETRY_MS
  await accounts.flush() // asks for the retry now instead of after the timer
  t.equal((await stored(store, org.id)).balance, 94, 'the retry wrote them')
  t.equal((await accounts.ledger(org.id)).filter(e => e.kind === 'read').length, 6)
})

t.test('commits that do not follow the store\'s last one are set aside, not replayed', async t => {
  const { store } = gatedStore()
  await store.batch([{ type: 'put', table: 'credit_ledger', key: 'journal/applied', value: { n: 5 } }])
  const path = join(dir(t), 'ledger.journal')
  // Commits 8 and 9: the store holds up to 5 (say, restored from an older copy), 6 and 7 are nowhere.
  const j = new LedgerJournal(path)
  const put = (n: number): JournalRecord => ({ n, ops: [{ type: 'put', table: 'credit_ledger', key: `balance/org-${n}`, value: { balance: n, seq: n } }] })
  j.append(put(8))
  j.append(put(9))
  j.close()
  const journal = new LedgerJournal(path)
  t.teardown(() => journal.close())
  const accounts = new AccountsService({ store, clock, journal })
  const replay = await accounts.start()
  t.equal(replay.replayed, 0)
  t.ok(replay.setAside !== null && existsSync(replay.setAside), `kept in ${replay.setAside}`)
  t.equal(readFileSync(replay.setAside!, 'utf8').trim().split('\n').length, 2, 'both commits kept in it')
  t.equal(journal.bytes, 0, 'a new, empty journal in its place')
  t.equal(await store.table('credit_ledger').get('balance/org-8'), undefined, 'nothing replayed')
  // The next commit is numbered after the store's last: 6.
  const org = await accounts.createOrganization({ name: 'o' })
  await accounts.grantCredits(org.id, 5, 'after')
  t.same(journal.read().records.map(r => r.n), [6])
})

t.test('the journal is emptied once the store holds it and it has grown past JOURNAL_RESET_BYTES', async t => {
  const { accounts, org, journal } = await setup(t, 10_000_000)
  let turns = 0
  let answered = 0
  let most = 0
  // One read a turn, each turn's commit written to the store before the next: until the journal shrinks.
  while (turns < 10_000) {
    const c = chargeMany(accounts, org.id, 1)
    await c.done
    await accounts.flush()
    turns++
    answered += c.answered()
    if (journal.bytes < most) break
    most = journal.bytes
  }
  t.equal(answered, turns, 'every read answered')
  t.ok(most >= JOURNAL_RESET_BYTES - 1024 && most < JOURNAL_RESET_BYTES, `it held ${most} bytes, then was emptied at the next commit past ${JOURNAL_RESET_BYTES} (turn ${turns})`)
  t.equal(journal.bytes, 0, 'emptied once the store caught up')
})

t.test('the journal file: one line per commit, each with its checksum', async t => {
  const path = join(dir(t), 'j')
  const j = new LedgerJournal(path)
  t.teardown(() => j.close())
  j.append({ n: 1, ops: [{ type: 'put', table: 'credit_ledger', key: 'k', value: { a: 1 } }] })
  j.append({ n: 2, ops: [] })
  t.same(j.read(), { records: [{ n: 1, ops: [{ type: 'put', table: 'credit_ledger', key: 'k', value: { a: 1 } }] }, { n: 2, ops: [] }], ignoredBytes: 0 })
  t.match(readFileSync(path, 'utf8'), /^[0-9a-f]{8} \{"n":1,.*\}\n[0-9a-f]{8} \{"n":2,"ops":\[\]\}\n$/)
  j.reset()
  t.same(j.read(), { records: [], ignoredBytes: 0 })
  writeFileSync(path, 'not a journal\n')
  t.same(j.read().records, [], 'a line without a checksum stops the reading')
})

t.test('compactLedgerOps: many commits in fewer operations, listed exactly as before', async t => {
  const { accounts, journal, hold, store } = await setup(t, 1)
  hold()
  const orgs = [await accounts.createOrganization({ name: 'a' }), await accounts.createOrganization({ name: 'b' })]
  for (const org of orgs) accounts.grantCredits(org.id, 100_000, 'budget').catch(() => {}) // held: journaled, not stored
  await new Promise(resolve => setImmediate(resolve))
  // 60 turns of reads over two organizations, two keys, two memos and two prices, with a grant between.
  let s = 7
  const rnd = (n: number): number => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return s % n }
  for (let turn = 0; turn < 60; turn++) {
    for (let i = 0; i < 1 + rnd(12); i++) {
      const org = orgs[rnd(4) === 0 ? 1 : 0]!
      accounts.chargeThen(org.id, { amount: 1 + rnd(2) * (rnd(3) === 0 ? 1 : 0), keyId: rnd(5) === 0 ? 'k2' : 'k1', memo: rnd(6) === 0 ? 'GET /b' : 'GET /a' }, () => {})
    }
    if (turn === 30) accounts.grantCredits(orgs[0]!.id, 5, 'top-up').catch(() => {})
    await new Promise(resolve => setImmediate(resolve))
  }
  const ops = journal.read().records.flatMap(r => r.ops)
  const compacted = compactLedgerOps(ops)
  t.ok(compacted.length < ops.length * 0.7, `${ops.length} operations → ${compacted.length}`)
  const raw = gatedStore().store
  const small = gatedStore().store
  const orgRows = await Promise.all(orgs.map(async o => ({ type: 'put' as const, table: 'accounts' as const, key: `org/${o.id}`, value: await store.table('accounts').get(`org/${o.id}`) })))
  await raw.batch([...orgRows, ...ops])
  await small.batch([...orgRows, ...compacted])
  for (const org of orgs) {
    const [a, b] = [await stored(raw, org.id), await stored(small, org.id)]
    t.ok(a.ledger.length > 20, `${org.name}: ${a.ledger.length} entries`)
    t.same(b, a, `${org.name}: the same balance and the same entries, seq by seq`)
    const lists = async (store: LevelStore) => (await new AccountsService({ store, clock }).ledger(org.id))
    t.same(await lists(small), await lists(raw), `${org.name}: the same listing, field by field`)
  }
})

t.test('compactLedgerOps: a steady stream of one key\'s reads is one run and one balance row', async t => {
  const entry = (seq: number, reads?: number) => ({ type: 'put' as const, table: 'credit_ledger' as const, key: `entry/o/${seq}`, value: { seq, organizationId: 'o', amount: -1, kind: 'read', memo: 'm', keyId: 'k', balanceAfter: 100 - seq, at: `t${seq}`, ...(reads === undefined ? {} : { reads }) } })
  const balance = (seq: number) => ({ type: 'put' as const, table: 'credit_ledger' as const, key: 'balance/o', value: { balance: 100 - seq, seq } })
  // A run of reads 1–3 (its time the first's, here 't3'), read 4, a run of 5–7: one run of 7 at seq 7.
  t.same(compactLedgerOps([entry(3, 3), balance(3), entry(4), balance(4), entry(7, 3), balance(7)]), [
    { ...entry(7), value: { ...entry(7).value, reads: 7, at: 't3' } }, balance(7)
  ], 'one run stored at seq 7 with the first run\'s time, and the last balance row')
  t.same(compactLedgerOps([entry(3, 3), entry(5)]).length, 2, 'a gap in the seqs (a grant between) is not merged')
})

t.test('an append that fails for space throws what the node makes of it (507)', { skip: process.platform !== 'linux' ? '/dev/full is Linux' : false }, async t => {
  // /dev/full takes no byte: every write fails with ENOSPC, as on a full disk.
  const mapped: unknown[] = []
  const full = new LedgerJournal('/dev/full', { appendError: err => { mapped.push(err); return Object.assign(new Error('the disk is full'), { statusCode: 507 }) } })
  t.teardown(() => full.close())
  t.throws(() => full.append({ n: 1, ops: [] }), { message: 'the disk is full', statusCode: 507 })
  t.match(mapped, [{ code: 'ENOSPC' }], 'given the filesystem\'s error')
  // Through the service: the grant's commit is refused with that error, and nothing is charged.
  const g = gatedStore()
  const accounts = new AccountsService({ store: g.store, clock, journal: new LedgerJournal(join(dir(t), 'j'), { appendError: () => new Error('mapped') }) })
  const org = await accounts.createOrganization({ name: 'o' })
  await accounts.grantCredits(org.id, 3, 'start')
  const onFull = new LedgerJournal('/dev/full', { appendError: () => Object.assign(new Error('the disk is full'), { statusCode: 507 }) })
  t.teardown(() => onFull.close())
  const broken = new AccountsService({ store: g.store, clock, journal: onFull })
  await t.rejects(broken.grantCredits(org.id, 5, 'more'), { message: 'the disk is full' })
  t.equal((await broken.balance(org.id)).balance, 3, 'the refused grant is not in the balance')
})
