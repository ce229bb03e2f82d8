// Organizations, projects, environments, API keys and the prepaid credit ledger, kept in the Store.
//
// Tables (level sublevels):
//   accounts       org/<id>, project/<id>, env/<id>, plus listing indexes org-project/<org>/<project>
//                  and project-env/<project>/<env>
//   api_keys       key/<keyId> (the row, with sha256 of the key), org-key/<org>/<keyId> (index)
//   credit_ledger  entry/<org>/<seq> (append-only), balance/<org> (cached sum, same batch as the entries)
//   proof_nonces   nonce/<hotkey>/<nonce> → { expiresAt } and exp/<expiresAt, 15 digits>/<hotkey>/<nonce>
//                  (its expiry index): the nonces of hotkey proofs already accepted (binding.ts)
//
// Credits (docs/telemetry.md, "Charges and the ledger"): this service is the ledger's only writer (the
// store is held by one process), so each organization's balance row, once read, lives in memory and
// every change is applied to it synchronously: checked and applied in one step, a burst of reads can
// never overdraw. Changes are written by group commit: one batch in flight at a time, and every change
// made while it is written goes into the next one (cut as soon as the write ends, or at the end of the
// event-loop turn when none is in flight), so the store always holds a prefix of the changes in order.
// A grant and a paid read are both answered only once their batch is written: a crash forgets only
// changes no one was told of, and never records a read twice. With a journal (journal.ts; a node's
// API has one), "written" is one synchronous append to it, in the same event-loop turn, and the store
// gets the same changes right after, in batches of its own; start() replays what the store lacks.
import { randomUUID } from 'node:crypto'
import type { Store, StoreOp } from '../../actors/ports.ts'
import { collect, prefixRange } from '../../actors/store.ts'
import { BadRequest, BalanceLimit, EnvironmentNotFound, InsufficientCredits, KeyNotFound, OrganizationNotFound, ProjectNotFound } from '../errors.ts'
import { generateKey, hashMatches, keyIdOf, visiblePrefix } from './keys.ts'
import type { LedgerJournal } from './journal.ts'
import { BINDABLE_ROLES } from './model.ts'
import type {
  ApiKeyRecord, ApiKeyView, Balance, CreatedKey, Environment, LedgerEntry, NewKey, Organization, Principal, Project
} from './model.ts'

/** Credits each paid read costs. A realtime read always costs twice its snapshot read (seed §8). */
export interface Pricing {
  /** A telemetry snapshot (history) read. */
  snapshotRead: number
  /** The paid sell-allowance read. */
  sellAllowanceRead: number
}
export const DEFAULT_PRICING: Pricing = { snapshotRead: 1, sellAllowanceRead: 1 }
export type PriceName = 'snapshot' | 'realtime' | 'sellAllowance'

export const LEDGER_PAGE_MAX = 1000 // entries per ledger read
/** Expired proof nonces forgotten per new claim (bounded work per request). */
export const PROOF_NONCE_PRUNE = 64
const SEQ_DIGITS = 12
const BALANCE_CACHE_MAX = 10_000 // organizations whose balance row is kept in memory
/**
 * The largest balance an organization may hold (2^53 − 1 credits): balances, amounts and balanceAfter
 * are JavaScript numbers, exact only up to here. A grant that would pass it is refused
 * (409 BWN_ERR_BALANCE_LIMIT) and debits only lower a balance, so every ledger sum stays exact.
 */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER
/**
 * A commit batch holds at most this many read charges; while one batch is being written and the next is
 * this full, further charges wait for the write, so one store batch stays small however many reads wait.
 */
export const LEDGER_BATCH_MAX_READS = 512
/** The journal is emptied once the store holds all of it and it has grown past this. */
export const JOURNAL_RESET_BYTES = 1024 * 1024
/** A store batch of journaled changes that failed is tried again after this long (the journal holds them). */
export const JOURNAL_STORE_RETRY_MS = 1000
/**
 * Journaled changes reach the store at most once per this interval under load (the first after a quiet
 * spell at once): nothing waits on them but listings, which ask for them at once, so one batch carries
 * many commits, compacted (compactLedgerOps) to a run and a balance row per organization and key.
 */
export const JOURNAL_STORE_INTERVAL_MS = 20
/** credit_ledger key of the last journal commit the store holds. */
const JOURNAL_APPLIED_KEY = 'journal/applied'

export interface AccountsOptions {
  store: Store
  /** Milliseconds since the epoch; injected so expiry is testable. */
  clock?: { now (): number }
  pricing?: Partial<Pricing>
  /**
   * Commits are written here synchronously and answered at once; the store follows (call start()
   * before use, to replay what it lacks). Without one, answers wait for the store batch.
   */
  journal?: LedgerJournal
}

export type AuthResult =
  | { ok: true, principal: Principal }
  | { ok: false, reason: 'invalid' | 'revoked' | 'expired' }

interface BalanceRow { balance: number, seq: number }

/**
 * A stored ledger row: one entry, or a run of `reads` consecutive read debits of one key and memo at one
 * price, ending at `seq` (its fields are the last read's; `at` is the first's). Listing expands a run
 * into its reads, each with its own seq and balanceAfter, so the ledger reads as one entry per read.
 */
interface StoredEntry extends LedgerEntry { reads?: number }
interface PendingEntry { entry: LedgerEntry, reads: number }

/** The changes of one commit batch, by organization, and who waits for it to be written. */
interface Commit {
  orgs: Map<string, PendingEntry[]>
  reads: number
  promise: Promise<void>
  resolve: () => void
  reject: (err: unknown) => void
  /** Called once the batch is written (null) or refused (the error): the paid reads waiting on it. */
  waiters: Array<(err: unknown) => void>
}

function newCommit (): Commit {
  let resolve!: () => void
  let reject!: (err: unknown) => void
  const promise = new Promise<void>((res, rej) => { resolve = res; reject = rej })
  promise.catch(() => {}) // a failure is reported to the callers that await it, not as unhandled
  return { orgs: new Map(), reads: 0, promise, resolve, reject, waiters: [] }
}

const entryKey = (organizationId: string, seq: number): string => `entry/${organizationId}/${String(seq).padStart(SEQ_DIGITS, '0')}`

/** What start() found in the journal: commits replayed into the store, a damaged tail, a file set aside. */
export interface JournalReplay { replayed: number, ignoredBytes: number, setAside: string | null }

/** One read's debit in a batch. */
export interface DebitItem { amount: number, keyId: string, memo: string }
export type DebitOutcome = { ok: true, balance: Balance } | { ok: false, error: Error }

export class AccountsService {
  readonly pricing: Pricing
  readonly #store: Store
  readonly #clock: { now (): number }
  /**
   * Balance rows: the stored row plus the changes not yet written (they are in #collecting or
   * #writing). The store is held by this one process (LevelDB's lock) and every change goes through
   * here, so a row once read stays right. Dropped when a batch holding its changes fails.
   */
  readonly #balances = new Map<string, BalanceRow>()
  readonly #loading = new Map<string, Promise<void>>()
  /** The batch collecting changes, and the one being written (at most one). */
  #collecting: Commit | null = null
  #writing: Commit | null = null
  /** A cut is scheduled for the end of this event-loop turn. */
  #cutScheduled = false
  /** Charges waiting for room (the collecting batch is full while another is written). */
  #room: Array<() => void> = []
  #keyGeneration = 0
  /** Nonce claims run one at a time: check and record are one step for this process (the store's only writer). */
  #nonceClaims: Promise<unknown> = Promise.resolve()
  readonly #journal: LedgerJournal | null
  /** The last commit number appended to the journal. */
  #journaled = 0
  /** Journaled changes the store does not hold yet, in order, and whether a store batch of them is out. */
  #toStore: StoreOp[] = []
  #storing = false
  /** The next store batch of journaled changes, when one waits for the interval or a retry. */
  #storeTimer: NodeJS.Timeout | null = null
  /** Waiting for the store to hold every journaled change (a load, a listing, stop). */
  #caughtUp: Array<(err: unknown) => void> = []

  /** Changes whenever a key is revoked: caches of authenticated keys compare it on every use. */
  get keyGeneration (): number { return this.#keyGeneration }

  constructor (opts: AccountsOptions) {
    this.#store = opts.store
    this.#clock = opts.clock ?? { now: () => Date.now() }
    this.#journal = opts.journal ?? null
    this.pricing = { ...DEFAULT_PRICING, ...opts.pricing }
    for (const [name, v] of Object.entries(this.pricing)) {
      if (!Number.isSafeInteger(v) || v < 0) throw new TypeError(`price ${name} must be a non-negative integer`)
    }
  }

  /** The service's clock (expiry is judged on it). */
  now (): number { return this.#clock.now() }

  /**
   * Replays into the store the journal's commits it does not hold yet (a node stopped before its store
   * caught up), then empties the journal. Call once, before any other use, when there is a journal.
   */
  async start (): Promise<JournalReplay> {
    if (this.#journal === null) return { replayed: 0, ignoredBytes: 0, setAside: null }
    const applied = (await this.#ledger.get(JOURNAL_APPLIED_KEY) as { n: number } | undefined)?.n ?? 0
    const { records, ignoredBytes } = this.#journal.read()
    const missing = records.filter(r => r.n > applied)
    let last = applied
    for (const r of missing) {
      // Only commits that follow the store's last one, without a gap: anything else (the store restored
      // from an older copy, or replaced) is not this store's history, and is kept aside, not replayed.
      if (r.n !== last + 1) {
        this.#journaled = applied
        return { replayed: 0, ignoredBytes, setAside: this.#journal.setAside(`unreplayed-${this.#clock.now()}`) }
      }
      last = r.n
    }
    if (missing.length > 0) await this.#store.batch([...missing.flatMap(r => r.ops), appliedOp(last)])
    this.#journaled = last
    this.#journal.reset()
    return { replayed: missing.length, ignoredBytes, setAside: null }
  }

  price (name: PriceName): number {
    if (name === 'realtime') return 2 * this.pricing.snapshotRead
    if (name === 'sellAllowance') return this.pricing.sellAllowanceRead
    return this.pricing.snapshotRead
  }

  /** The clock as ISO 8601, kept for the millisecond it was made in (many reads share one under load). */
  #iso (): string {
    const now = this.#clock.now()
    if (now !== this.#isoAt) { this.#isoAt = now; this.#isoText = new Date(now).toISOString() }
    return this.#isoText
  }
  #isoAt = Number.NaN
  #isoText = ''
  get #accounts () { return this.#store.table<unknown>('accounts') }
  get #keys () { return this.#store.table<ApiKeyRecord | ''>('api_keys') }
  get #ledger () { return this.#store.table<LedgerEntry | BalanceRow>('credit_ledger') }

  // --- organizations, projects, environments ---

  async createOrganization (input: { name: string }): Promise<Organization> {
    const org: Organization = { id: randomUUID(), name: input.name, createdAt: this.#iso() }
    await this.#accounts.put(`org/${org.id}`, org)
    return org
  }

  async getOrganization (id: string): Promise<Organization> {
    const org = await this.#accounts.get(`org/${id}`) as Organization | undefined
    if (org === undefined) throw new OrganizationNotFound(id)
    return org
  }

  async listOrganizations (): Promise<Organization[]> {
    return (await collect(this.#accounts, prefixRange('org/'))).map(([, v]) => v as Organization)
  }

  async createProject (organizationId: string, input: { name: string }): Promise<Project> {
    await this.getOrganization(organizationId)
    const project: Project = { id: randomUUID(), organizationId, name: input.name, createdAt: this.#iso() }
    await this.#store.batch([
      { type: 'put', table: 'accounts', key: `project/${project.id}`, value: project },
      { type: 'put', table: 'accounts', key: `org-project/${organizationId}/${project.id}`, value: '' }
    ])
    return project
  }

  async getProject (id: string): Promise<Project> {
    const project = await this.#accounts.get(`project/${id}`) as Project | undefined
    if (project === undefined) throw new ProjectNotFound(id)
    return project
  }

  async listProjects (organizationId: string): Promise<Project[]> {
    await this.getOrganization(organizationId)
    const ids = await collect(this.#accounts, prefixRange(`org-project/${organizationId}/`))
    return Promise.all(ids.map(([k]) => this.getProject(k.slice(k.lastIndexOf('/') + 1))))
  }

  async createEnvironment (projectId: string, input: { name: string }): Promise<Environment> {
    const project = await this.getProject(projectId)
    const env: Environment = { id: randomUUID(), organizationId: project.organizationId, projectId, name: input.name, createdAt: this.#iso() }
    await this.#store.batch([
      { type: 'put', table: 'accounts', key: `env/${env.id}`, value: env },
      { type: 'put', table: 'accounts', key: `project-env/${projectId}/${env.id}`, value: '' }
    ])
    return env
  }

  async getEnvironment (id: string): Promise<Environment> {
    const env = await this.#accounts.get(`env/${id}`) as Environment | undefined
    if (env === undefined) throw new EnvironmentNotFound(id)
    return env
  }

  async listEnvironments (projectId: string): Promise<Environment[]> {
    await this.getProject(projectId)
    const ids = await collect(this.#accounts, prefixRange(`project-env/${projectId}/`))
    return Promise.all(ids.map(([k]) => this.getEnvironment(k.slice(k.lastIndexOf('/') + 1))))
  }

  // --- keys ---

  /** Issues a key. The plain key is in the result and nowhere else, ever. */
  async createKey (organizationId: string, input: NewKey): Promise<CreatedKey> {
    await this.getOrganization(organizationId)
    const scopes = [...new Set(input.scopes ?? [])]
    if (scopes.length > 0 && input.role !== 'console') throw new BadRequest('scopes are given only to console keys')
    if (input.hotkey !== undefined && !BINDABLE_ROLES.includes(input.role)) throw new BadRequest('only orchestrator and worker keys are bound to a hotkey')
    if (input.operator === true && input.role !== 'admin') throw new BadRequest('operator is given only to admin keys')
    let projectId: string | null = null
    let environmentId: string | null = null
    if (input.environmentId !== undefined) {
      const env = await this.getEnvironment(input.environmentId)
      if (env.organizationId !== organizationId) throw new BadRequest(`environment ${env.id} belongs to another organization`)
      if (input.projectId !== undefined && input.projectId !== env.projectId) throw new BadRequest(`environment ${env.id} is not in project ${input.projectId}`)
      projectId = env.projectId
      environmentId = env.id
    } else if (input.projectId !== undefined) {
      const project = await this.getProject(input.projectId)
      if (project.organizationId !== organizationId) throw new BadRequest(`project ${project.id} belongs to another organization`)
      projectId = project.id
    }
    let expiresAt: string | null = null
    if (input.expiresAt !== undefined) {
      const at = Date.parse(input.expiresAt)
      if (!(at > this.#clock.now())) throw new BadRequest('expiresAt must be in the future')
      expiresAt = new Date(at).toISOString()
    }
    const material = generateKey()
    const record: ApiKeyRecord = {
      id: material.id,
      prefix: visiblePrefix(material.id),
      name: input.name ?? null,
      organizationId,
      projectId,
      environmentId,
      grant: environmentId !== null ? 'environment' : projectId !== null ? 'project' : 'organization',
      role: input.role,
      operator: input.operator === true,
      scopes,
      plan: input.plan ?? 'free',
      createdAt: this.#iso(),
      expiresAt,
      revokedAt: null,
      ...(input.hotkey !== undefined ? { hotkey: input.hotkey } : {}),
      hash: material.hash
    }
    await this.#store.batch([
      { type: 'put', table: 'api_keys', key: `key/${record.id}`, value: record },
      { type: 'put', table: 'api_keys', key: `org-key/${organizationId}/${record.id}`, value: '' }
    ])
    return { key: material.key, apiKey: toView(record) }
  }

  async getKey (keyId: string): Promise<ApiKeyView> {
    return toView(await this.#keyRecord(keyId))
  }

  async #keyRecord (keyId: string): Promise<ApiKeyRecord> {
    const row = /^[0-9a-f]{16}$/.test(keyId) ? await this.#keys.get(`key/${keyId}`) : undefined
    if (row === undefined || row === '') throw new KeyNotFound(keyId)
    return row
  }

  async listKeys (organizationId: string): Promise<ApiKeyView[]> {
    await this.getOrganization(organizationId)
    const ids = await collect(this.#keys, prefixRange(`org-key/${organizationId}/`))
    return Promise.all(ids.map(([k]) => this.getKey(k.slice(k.lastIndexOf('/') + 1))))
  }

  /**
   * Records that `hotkey` used `nonce` in a proof, remembered durably until `expiresAt` (ms since the
   * epoch; after it the proof's timestamp is stale anyway). False when the nonce was used before and is
   * still remembered: a replay. Nonces past their expiry are forgotten as new ones arrive
   * (at most PROOF_NONCE_PRUNE per claim).
   */
  async claimProofNonce (hotkey: string, nonce: string, expiresAt: number): Promise<boolean> {
    const claim = this.#nonceClaims.then(async () => {
      const table = this.#store.table<{ expiresAt: number } | ''>('proof_nonces')
      const key = `nonce/${hotkey}/${nonce}`
      if (await table.get(key) !== undefined) return false
      const ops: StoreOp[] = [
        { type: 'put', table: 'proof_nonces', key, value: { expiresAt } },
        { type: 'put', table: 'proof_nonces', key: `exp/${String(expiresAt).padStart(15, '0')}/${hotkey}/${nonce}`, value: '' }
      ]
      const now = this.#clock.now()
      for await (const [k] of table.entries({ gte: 'exp/', lt: `exp/${String(now).padStart(15, '0')}`, limit: PROOF_NONCE_PRUNE })) {
        const [, , oldHotkey, oldNonce] = k.split('/')
        ops.push({ type: 'del', table: 'proof_nonces', key: k }, { type: 'del', table: 'proof_nonces', key: `nonce/${oldHotkey}/${oldNonce}` })
      }
      await this.#store.batch(ops)
      return true
    })
    this.#nonceClaims = claim.catch(() => {})
    return await claim
  }

  /** Revokes a key; the next request with it is refused. Revoking twice keeps the first time. */
  async revokeKey (keyId: string): Promise<ApiKeyView> {
    const record = await this.#keyRecord(keyId)
    if (record.revokedAt === null) {
      record.revokedAt = this.#iso()
      this.#keyGeneration++ // before the write: a cache never outlives the revocation
      await this.#keys.put(`key/${keyId}`, record)
      this.#keyGeneration++
    }
    return toView(record)
  }

  /** Looks a presented key up. Read from the store on every request, so revocation is immediate. */
  async authenticate (key: string): Promise<AuthResult> {
    const id = keyIdOf(key)
    if (id === null) return { ok: false, reason: 'invalid' }
    const record = await this.#keys.get(`key/${id}`)
    if (record === undefined || record === '' || !hashMatches(key, record.hash)) return { ok: false, reason: 'invalid' }
    if (record.revokedAt !== null) return { ok: false, reason: 'revoked' }
    if (record.expiresAt !== null && Date.parse(record.expiresAt) <= this.#clock.now()) return { ok: false, reason: 'expired' }
    return {
      ok: true,
      principal: {
        keyId: record.id,
        organizationId: record.organizationId,
        projectId: record.projectId,
        environmentId: record.environmentId,
        grant: record.grant,
        role: record.role,
        operator: record.role === 'admin' && record.operator === true,
        scopes: record.scopes,
        plan: record.plan,
        expiresAt: record.expiresAt,
        hotkey: record.hotkey ?? null
      }
    }
  }

  // --- credits ---

  /** The balance, including charges still being written. */
  async balance (organizationId: string): Promise<Balance> {
    await this.getOrganization(organizationId)
    while (!this.#balances.has(organizationId)) await this.#load(organizationId)
    const row = this.#balances.get(organizationId)!
    return { organizationId, balance: row.balance, entries: row.seq }
  }

  /** Newest first, one entry per grant and per read (runs expanded); pending charges are written first. */
  async ledger (organizationId: string, opts: { limit?: number } = {}): Promise<LedgerEntry[]> {
    await this.getOrganization(organizationId)
    await this.flush()
    const limit = Math.min(opts.limit ?? LEDGER_PAGE_MAX, LEDGER_PAGE_MAX)
    const rows = await collect(this.#ledger, { ...prefixRange(`entry/${organizationId}/`), reverse: true, limit })
    const out: LedgerEntry[] = []
    for (const [, value] of rows) {
      const { reads = 1, ...entry } = value as StoredEntry
      for (let i = 0; i < reads && out.length < limit; i++) out.push(i === 0 ? entry : { ...entry, seq: entry.seq - i, balanceAfter: entry.balanceAfter - entry.amount * i })
    }
    return out
  }

  /** Adds credits; answered once the entry is written. */
  async grantCredits (organizationId: string, amount: number, memo: string | null = null): Promise<Balance> {
    if (!Number.isSafeInteger(amount) || amount <= 0) throw new BadRequest('amount must be a positive integer')
    await this.getOrganization(organizationId)
    while (!this.#balances.has(organizationId)) await this.#load(organizationId)
    const row = this.#balances.get(organizationId)!
    if (amount > MAX_BALANCE - row.balance) {
      throw Object.assign(new BalanceLimit(`A grant of ${amount} would take the balance (${row.balance}) past the maximum of ${MAX_BALANCE} credits`), { extensions: { balance: row.balance, maxBalance: MAX_BALANCE } })
    }
    row.balance += amount
    row.seq++
    const commit = this.#collect()
    this.#pendingOf(commit, organizationId).push({ entry: { seq: row.seq, organizationId, amount, kind: 'grant', memo, keyId: null, balanceAfter: row.balance, at: this.#iso() }, reads: 1 })
    const after = { organizationId, balance: row.balance, entries: row.seq }
    await this.#commitNow(commit)
    return after
  }

  /**
   * Charges one paid read: checked against the balance and applied in one synchronous step, so
   * concurrent reads never overdraw, and written by group commit. Resolves to the balance left once the
   * charge is written: the read may be answered then, never before. When the organization's row is in
   * memory and the batch has room, a short balance throws InsufficientCredits (402) at once and changes
   * nothing; otherwise the promise rejects with it. A zero price charges nothing and returns the balance.
   */
  charge (organizationId: string, item: DebitItem): number | Promise<number> {
    const row = this.#balances.get(organizationId)
    if (row === undefined || this.#full()) return this.#chargeLater(organizationId, item)
    if (item.amount === 0) return row.balance
    const commit = this.#applyRead(organizationId, row, item)
    const left = row.balance
    return commit.promise.then(() => left)
  }

  /**
   * `charge` for a hot path: the same check and charge, with `done(null, left)` called once the charge is
   * written (or `done(err)`), and no promise when the organization's row is in memory and the batch has
   * room. Throws InsufficientCredits at once in that case, like `charge`.
   */
  chargeThen (organizationId: string, item: DebitItem, done: (err: unknown, left?: number) => void): void {
    const row = this.#balances.get(organizationId)
    if (row === undefined || this.#full()) {
      this.#chargeLater(organizationId, item).then(left => done(null, left), done)
      return
    }
    if (item.amount === 0) { done(null, row.balance); return }
    const commit = this.#applyRead(organizationId, row, item)
    const left = row.balance
    commit.waiters.push(err => err === null ? done(null, left) : done(err))
  }

  async #chargeLater (organizationId: string, item: DebitItem): Promise<number> {
    for (;;) {
      if (this.#full()) await new Promise<void>(resolve => this.#room.push(resolve))
      else if (!this.#balances.has(organizationId)) await this.#load(organizationId)
      else {
        const row = this.#balances.get(organizationId)!
        if (item.amount === 0) return row.balance
        const commit = this.#applyRead(organizationId, row, item)
        const left = row.balance
        await commit.promise
        return left
      }
    }
  }

  /**
   * The check before a read's work (402 early; the charge decides). Synchronous (returns undefined, or
   * throws) when the organization's row is in memory, else a promise.
   */
  checkCredits (organizationId: string, amount: number): void | Promise<void> {
    if (amount === 0) return
    const row = this.#balances.get(organizationId)
    if (row === undefined) return this.ensureCredits(organizationId, amount)
    if (row.balance < amount) throw insufficient(row.balance, amount)
  }

  /** Throws InsufficientCredits unless the balance covers `amount` (a check before the work; the charge decides). */
  async ensureCredits (organizationId: string, amount: number): Promise<void> {
    if (amount === 0) return
    while (!this.#balances.has(organizationId)) await this.#load(organizationId)
    const balance = this.#balances.get(organizationId)!.balance
    if (balance < amount) throw insufficient(balance, amount)
  }

  /**
   * Takes `amount` credits for one read, atomically with the check, and answers once the entry is
   * written: throws InsufficientCredits (402) and writes nothing when the balance is short. A zero
   * price writes nothing.
   */
  async debit (organizationId: string, amount: number, what: { keyId: string, memo: string }): Promise<Balance> {
    if (amount === 0) return this.balance(organizationId)
    while (!this.#balances.has(organizationId)) await this.#load(organizationId)
    const row = this.#balances.get(organizationId)!
    const commit = this.#applyRead(organizationId, row, { amount, ...what })
    const after = { organizationId, balance: row.balance, entries: row.seq }
    await this.#commitNow(commit)
    return after
  }

  /**
   * Debits several reads of one organization, each checked in order against the running balance (an
   * item the balance cannot cover fails with InsufficientCredits and writes nothing), and answers once
   * they are written.
   */
  async debitBatch (organizationId: string, items: readonly DebitItem[]): Promise<DebitOutcome[]> {
    while (!this.#balances.has(organizationId)) await this.#load(organizationId)
    const row = this.#balances.get(organizationId)!
    let commit: Commit | null = null
    const outcomes: DebitOutcome[] = []
    for (const item of items) {
      try {
        if (item.amount !== 0) commit = this.#applyRead(organizationId, row, item)
        outcomes.push({ ok: true, balance: { organizationId, balance: row.balance, entries: row.seq } })
      } catch (error) {
        outcomes.push({ ok: false, error: error as Error })
      }
    }
    if (commit !== null) await this.#commitNow(commit)
    return outcomes
  }

  /** Writes every change made so far and waits for it (with a journal: until the store holds it too). */
  async flush (): Promise<void> {
    const last = this.#collecting ?? this.#writing
    if (last !== null) {
      this.#cut()
      await last.promise.catch(() => {}) // a failure is reported to the callers that wait for their change
    }
    await this.#storeCaughtUp()
  }

  /** Applies one read's debit to the in-memory row and the collecting batch; throws (changing nothing) when short. */
  #applyRead (organizationId: string, row: BalanceRow, item: DebitItem): Commit {
    if (!Number.isSafeInteger(item.amount) || item.amount < 0) throw new TypeError('a debit is a non-negative integer')
    if (row.balance < item.amount) throw insufficient(row.balance, item.amount)
    row.balance -= item.amount
    row.seq++
    const commit = this.#collect()
    const pending = this.#pendingOf(commit, organizationId)
    const last = pending[pending.length - 1]
    if (last !== undefined && last.entry.kind === 'read' && last.entry.keyId === item.keyId && last.entry.memo === item.memo && last.entry.amount === -item.amount) {
      last.reads++
      last.entry.seq = row.seq
      last.entry.balanceAfter = row.balance
    } else {
      pending.push({ entry: { seq: row.seq, organizationId, amount: -item.amount, kind: 'read', memo: item.memo, keyId: item.keyId, balanceAfter: row.balance, at: this.#iso() }, reads: 1 })
    }
    commit.reads++
    // Full: written now if none is in flight. A journal never has one in flight and is cut at the end of
    // the turn, as an answer registered after this call (chargeThen) must not miss its commit's end.
    if (commit.reads >= LEDGER_BATCH_MAX_READS && this.#journal === null) this.#cut()
    return commit
  }

  /** True while a charge has to wait: the collecting batch is full and another is being written. */
  #full (): boolean {
    return this.#writing !== null && this.#collecting !== null && this.#collecting.reads >= LEDGER_BATCH_MAX_READS
  }

  /**
   * The collecting batch, opened if there is none. A new batch is cut at the end of this event-loop
   * turn (setImmediate runs once the turn's I/O callbacks are done, so the requests parsed in one turn
   * share a batch) unless a write is in flight: then when that write ends.
   */
  #collect (): Commit {
    if (this.#collecting === null) {
      this.#collecting = newCommit()
      if (!this.#cutScheduled) {
        this.#cutScheduled = true
        setImmediate(() => { this.#cutScheduled = false; this.#cut() })
      }
    }
    return this.#collecting
  }

  #pendingOf (commit: Commit, organizationId: string): PendingEntry[] {
    let pending = commit.orgs.get(organizationId)
    if (pending === undefined) { pending = []; commit.orgs.set(organizationId, pending) }
    return pending
  }

  /** Asks for `commit` to be written without waiting for the end of the turn, and waits for it. */
  async #commitNow (commit: Commit): Promise<void> {
    if (commit === this.#collecting) this.#cut()
    await commit.promise
  }

  /** Starts writing the collecting batch unless one is being written (its end cuts the next). */
  #cut (): void {
    const commit = this.#collecting
    if (commit === null || this.#writing !== null) return
    this.#collecting = null
    const ops: StoreOp[] = []
    for (const [organizationId, pending] of commit.orgs) {
      for (const { entry, reads } of pending) ops.push({ type: 'put', table: 'credit_ledger', key: entryKey(organizationId, entry.seq), value: reads > 1 ? { ...entry, reads } : entry })
      const last = pending[pending.length - 1]!.entry
      ops.push({ type: 'put', table: 'credit_ledger', key: `balance/${organizationId}`, value: { balance: last.balanceAfter, seq: last.seq } satisfies BalanceRow })
    }
    if (this.#journal !== null) { this.#journalCommit(commit, ops); return }
    this.#writing = commit
    this.#store.batch(ops).then(() => {
      this.#writing = null
      commit.resolve()
      wake(commit.waiters, null)
    }, (err: unknown) => {
      this.#writing = null
      this.#failed(commit, err)
    }).finally(() => {
      const waiting = this.#room
      this.#room = []
      for (const wake of waiting) wake()
      this.#cut()
    })
  }

  /**
   * Appends a commit to the journal and answers its waiters in this turn; the store follows. An append
   * that fails refuses the commit as a failed store batch would.
   */
  #journalCommit (commit: Commit, ops: StoreOp[]): void {
    const n = this.#journaled + 1
    try {
      this.#journal!.append({ n, ops })
    } catch (err) {
      this.#failed(commit, err)
      return
    }
    this.#journaled = n
    for (const op of ops) this.#toStore.push(op)
    this.#storeJournaled()
    commit.resolve()
    wake(commit.waiters, null)
  }

  /** Writes the journaled changes the store lacks, one batch at a time, with the last commit number. */
  #storeJournaled (): void {
    if (this.#storing || this.#storeTimer !== null || this.#toStore.length === 0) return
    const ops = compactLedgerOps(this.#toStore)
    this.#toStore = []
    this.#storing = true
    this.#store.batch([...ops, appliedOp(this.#journaled)]).then(() => {
      this.#storing = false
      if (this.#toStore.length > 0) {
        if (this.#caughtUp.length > 0) { this.#storeJournaled(); return } // someone waits: at once
        this.#storeTimer = setTimeout(() => { this.#storeTimer = null; this.#storeJournaled() }, JOURNAL_STORE_INTERVAL_MS)
        this.#storeTimer.unref()
        return
      }
      // The store holds every journaled commit: the journal may be emptied (appends are synchronous on
      // this thread, so none comes in between).
      if (this.#journal!.bytes >= JOURNAL_RESET_BYTES) {
        try { this.#journal!.reset() } catch { /* kept: the next start replays what the store already holds, which changes nothing */ }
      }
      const waiting = this.#caughtUp
      this.#caughtUp = []
      wake(waiting, null)
    }, (err: unknown) => {
      // The answers stand (the journal holds them): keep the changes, in order, and try again later.
      this.#storing = false
      this.#toStore = [...ops, ...this.#toStore]
      const waiting = this.#caughtUp
      this.#caughtUp = []
      wake(waiting, err)
      this.#storeTimer = setTimeout(() => { this.#storeTimer = null; this.#storeJournaled() }, JOURNAL_STORE_RETRY_MS)
      this.#storeTimer.unref()
    })
  }

  /** Resolves once the store holds every journaled change; rejects if the store's write fails meanwhile. */
  #storeCaughtUp (): Promise<void> {
    if (this.#journal === null || (!this.#storing && this.#toStore.length === 0)) return Promise.resolve()
    return new Promise((resolve, reject) => {
      this.#caughtUp.push(err => { err === null ? resolve() : reject(err) })
      if (this.#storeTimer !== null) { clearTimeout(this.#storeTimer); this.#storeTimer = null; this.#storeJournaled() }
    })
  }

  /**
   * A batch could not be written. Its changes, and those collected since (they build on them), are
   * dropped: the rows they touched are read from the store again, and whoever waits for either batch
   * gets the error: none of those reads or grants was answered as done.
   */
  #failed (commit: Commit, err: unknown): void {
    const collected = this.#collecting
    this.#collecting = null
    for (const c of collected === null ? [commit] : [commit, collected]) {
      for (const organizationId of c.orgs.keys()) this.#balances.delete(organizationId)
      c.reject(err)
      wake(c.waiters, err)
    }
  }

  /** Reads an organization's balance row into memory (one read however many ask at once). */
  #load (organizationId: string): Promise<void> {
    let loading = this.#loading.get(organizationId)
    if (loading === undefined) {
      loading = (async () => {
        try {
          await this.#storeCaughtUp() // a journaled change to this row may not be in the store yet
          const stored = await this.#ledger.get(`balance/${organizationId}`) as BalanceRow | undefined
          if (!this.#balances.has(organizationId)) this.#remember(organizationId, { balance: stored?.balance ?? 0, seq: stored?.seq ?? 0 })
        } finally {
          this.#loading.delete(organizationId)
        }
      })()
      this.#loading.set(organizationId, loading)
    }
    return loading
  }

  #remember (organizationId: string, row: BalanceRow): void {
    if (this.#balances.size >= BALANCE_CACHE_MAX) {
      // Forget rows without unwritten changes (they are read again when needed); none while the store
      // has journaled changes still to take (a row read again now would miss them).
      const storeBehind = this.#storing || this.#toStore.length > 0
      for (const id of this.#balances.keys()) {
        if (!storeBehind && this.#collecting?.orgs.has(id) !== true && this.#writing?.orgs.has(id) !== true) this.#balances.delete(id)
      }
    }
    this.#balances.set(organizationId, row)
  }
}

/** Calls every waiter of a batch; one that throws does not keep the others waiting (its own error is its caller's). */
function wake (waiters: ReadonlyArray<(err: unknown) => void>, err: unknown): void {
  for (const w of waiters) {
    try { w(err) } catch { /* the waiter answers its own caller; the batch's outcome is unchanged */ }
  }
}

const appliedOp = (n: number): StoreOp => ({ type: 'put', table: 'credit_ledger', key: JOURNAL_APPLIED_KEY, value: { n } })

/**
 * The same ledger changes in fewer store operations, for a batch of several commits: an organization's
 * balance row only as last written, and consecutive runs of read debits (one organization, key, memo
 * and price, seqs following on) merged into one run, stored at the last one's seq with the first one's
 * time. A listing expands a run into its reads, so it lists exactly what the operations before would have.
 * Other operations are kept as they are, in order.
 */
export function compactLedgerOps (ops: readonly StoreOp[]): StoreOp[] {
  const out: Array<StoreOp | null> = []
  const balanceAt = new Map<string, number>() // key → its index in out
  const lastEntryAt = new Map<string, number>() // organization → index in out of its last entry
  for (const op of ops) {
    if (op.type !== 'put' || op.table !== 'credit_ledger') { out.push(op); continue }
    if (op.key.startsWith('balance/')) {
      const at = balanceAt.get(op.key)
      if (at !== undefined) out[at] = null
      balanceAt.set(op.key, out.length)
      out.push(op)
      continue
    }
    if (!op.key.startsWith('entry/')) { out.push(op); continue }
    const entry = op.value as StoredEntry
    const at = lastEntryAt.get(entry.organizationId)
    const prev = at === undefined ? null : (out[at]!.type === 'put' ? out[at]!.value as StoredEntry : null)
    const reads = entry.reads ?? 1
    if (prev !== null && prev.kind === 'read' && entry.kind === 'read' && prev.keyId === entry.keyId && prev.memo === entry.memo &&
        prev.amount === entry.amount && entry.seq - reads === prev.seq) {
      out[at!] = null
      const merged: StoredEntry = { ...entry, reads: (prev.reads ?? 1) + reads, at: prev.at }
      lastEntryAt.set(entry.organizationId, out.length)
      out.push({ ...op, value: merged })
      continue
    }
    lastEntryAt.set(entry.organizationId, out.length)
    out.push(op)
  }
  return out.filter((op): op is StoreOp => op !== null)
}

function insufficient (balance: number, price: number): Error {
  const err = new InsufficientCredits(`This read costs ${price} credits; the organization has ${balance}`)
  Object.assign(err, { extensions: { balance, price } })
  return err
}

function toView (record: ApiKeyRecord): ApiKeyView {
  const { hash: _hash, ...view } = record
  return { ...view, operator: record.operator === true }
}
