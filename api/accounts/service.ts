// Organizations, projects, environments, API keys and the prepaid credit ledger, kept in the Store.
//
// Tables (level sublevels):
//   accounts       org/<id>, project/<id>, env/<id>, plus listing indexes org-project/<org>/<project>
//                  and project-env/<project>/<env>
//   api_keys       key/<keyId> (the row, with sha256 of the key), org-key/<org>/<keyId> (index)
//   credit_ledger  entry/<org>/<seq> (append-only), balance/<org> (cached sum, same batch as the entry)
//
// Every change to one organization's credits runs through that organization's queue (concurrency 1),
// so a burst of reads is checked and debited one after another and can never overdraw.
import PQueue from 'p-queue'
import { randomUUID } from 'node:crypto'
import type { Store, StoreOp } from '../../actors/ports.ts'
import { collect, prefixRange } from '../../actors/store.ts'
import { BadRequest, EnvironmentNotFound, InsufficientCredits, KeyNotFound, OrganizationNotFound, ProjectNotFound } from '../errors.ts'
import { generateKey, hashMatches, keyIdOf, visiblePrefix } from './keys.ts'
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
const SEQ_DIGITS = 12
const BALANCE_CACHE_MAX = 10_000 // organizations whose balance row is kept in memory

export interface AccountsOptions {
  store: Store
  /** Milliseconds since the epoch; injected so expiry is testable. */
  clock?: { now (): number }
  pricing?: Partial<Pricing>
}

export type AuthResult =
  | { ok: true, principal: Principal }
  | { ok: false, reason: 'invalid' | 'revoked' | 'expired' }

interface BalanceRow { balance: number, seq: number }

/** One read's debit in a batch. */
export interface DebitItem { amount: number, keyId: string, memo: string }
export type DebitOutcome = { ok: true, balance: Balance } | { ok: false, error: Error }

export class AccountsService {
  readonly pricing: Pricing
  readonly #store: Store
  readonly #clock: { now (): number }
  readonly #queues = new Map<string, PQueue>()
  /**
   * Balance rows as last written by this service. Every balance change goes through `#serial` here and
   * the store is held by this one process (LevelDB's lock), so the cached row is the stored row: a
   * paid read's debit costs one batch write, not a read and a write. Dropped when a write fails.
   */
  readonly #balances = new Map<string, BalanceRow>()
  #keyGeneration = 0

  /** Changes whenever a key is revoked: caches of authenticated keys compare it on every use. */
  get keyGeneration (): number { return this.#keyGeneration }

  constructor (opts: AccountsOptions) {
    this.#store = opts.store
    this.#clock = opts.clock ?? { now: () => Date.now() }
    this.pricing = { ...DEFAULT_PRICING, ...opts.pricing }
    for (const [name, v] of Object.entries(this.pricing)) {
      if (!Number.isSafeInteger(v) || v < 0) throw new TypeError(`price ${name} must be a non-negative integer`)
    }
  }

  /** The service's clock (expiry is judged on it). */
  now (): number { return this.#clock.now() }

  price (name: PriceName): number {
    if (name === 'realtime') return 2 * this.pricing.snapshotRead
    if (name === 'sellAllowance') return this.pricing.sellAllowanceRead
    return this.pricing.snapshotRead
  }

  #iso (): string { return new Date(this.#clock.now()).toISOString() }
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

  async balance (organizationId: string): Promise<Balance> {
    await this.getOrganization(organizationId)
    const row = await this.#balanceRow(organizationId)
    return { organizationId, balance: row?.balance ?? 0, entries: row?.seq ?? 0 }
  }

  async ledger (organizationId: string, opts: { limit?: number } = {}): Promise<LedgerEntry[]> {
    await this.getOrganization(organizationId)
    const limit = Math.min(opts.limit ?? LEDGER_PAGE_MAX, LEDGER_PAGE_MAX)
    const rows = await collect(this.#ledger, { ...prefixRange(`entry/${organizationId}/`), reverse: true, limit })
    return rows.map(([, v]) => v as LedgerEntry)
  }

  async grantCredits (organizationId: string, amount: number, memo: string | null = null): Promise<Balance> {
    if (!Number.isSafeInteger(amount) || amount <= 0) throw new BadRequest('amount must be a positive integer')
    await this.getOrganization(organizationId)
    return this.#serial(organizationId, () => this.#append(organizationId, amount, 'grant', memo, null))
  }

  /**
   * Takes `amount` credits for one read, atomically with the check: throws InsufficientCredits
   * (402) and writes nothing when the balance is short. A zero price writes nothing.
   */
  async debit (organizationId: string, amount: number, what: { keyId: string, memo: string }): Promise<Balance> {
    if (amount === 0) return this.balance(organizationId)
    return this.#serial(organizationId, async () => {
      const row = await this.#balanceRow(organizationId)
      const balance = row?.balance ?? 0
      if (balance < amount) throw insufficient(balance, amount)
      return this.#append(organizationId, -amount, 'read', what.memo, what.keyId)
    })
  }

  /**
   * Debits several reads of one organization in one store batch, each checked in order against the
   * running balance: an item the balance cannot cover fails (InsufficientCredits) and writes nothing.
   */
  async debitBatch (organizationId: string, items: readonly DebitItem[]): Promise<DebitOutcome[]> {
    return this.#serial(organizationId, async () => {
      const row = await this.#balanceRow(organizationId)
      let balance = row?.balance ?? 0
      let seq = row?.seq ?? 0
      const at = this.#iso()
      const ops: StoreOp[] = []
      const outcomes: DebitOutcome[] = items.map(item => {
        if (item.amount === 0) return { ok: true, balance: { organizationId, balance, entries: seq } }
        if (balance < item.amount) return { ok: false, error: insufficient(balance, item.amount) }
        balance -= item.amount
        seq++
        const entry: LedgerEntry = { seq, organizationId, amount: -item.amount, kind: 'read', memo: item.memo, keyId: item.keyId, balanceAfter: balance, at }
        ops.push({ type: 'put', table: 'credit_ledger', key: `entry/${organizationId}/${String(seq).padStart(SEQ_DIGITS, '0')}`, value: entry })
        return { ok: true, balance: { organizationId, balance, entries: seq } }
      })
      if (ops.length > 0) {
        ops.push({ type: 'put', table: 'credit_ledger', key: `balance/${organizationId}`, value: { balance, seq } satisfies BalanceRow })
        await this.#writeBalance(organizationId, ops, { balance, seq })
      }
      return outcomes
    })
  }

  /** Throws InsufficientCredits unless the balance covers `amount` (a check before the work; `debit` decides). */
  async ensureCredits (organizationId: string, amount: number): Promise<void> {
    if (amount === 0) return
    const row = await this.#balanceRow(organizationId)
    const balance = row?.balance ?? 0
    if (balance < amount) throw insufficient(balance, amount)
  }

  async #append (organizationId: string, amount: number, kind: LedgerEntry['kind'], memo: string | null, keyId: string | null): Promise<Balance> {
    const row = await this.#balanceRow(organizationId)
    const seq = (row?.seq ?? 0) + 1
    const balance = (row?.balance ?? 0) + amount
    const entry: LedgerEntry = { seq, organizationId, amount, kind, memo, keyId, balanceAfter: balance, at: this.#iso() }
    const ops: StoreOp[] = [
      { type: 'put', table: 'credit_ledger', key: `entry/${organizationId}/${String(seq).padStart(SEQ_DIGITS, '0')}`, value: entry },
      { type: 'put', table: 'credit_ledger', key: `balance/${organizationId}`, value: { balance, seq } satisfies BalanceRow }
    ]
    await this.#writeBalance(organizationId, ops, { balance, seq })
    return { organizationId, balance, entries: seq }
  }

  async #balanceRow (organizationId: string): Promise<BalanceRow | undefined> {
    const hit = this.#balances.get(organizationId)
    if (hit !== undefined) return hit
    const row = await this.#ledger.get(`balance/${organizationId}`) as BalanceRow | undefined
    if (row !== undefined) this.#remember(organizationId, row)
    return row
  }

  async #writeBalance (organizationId: string, ops: StoreOp[], row: BalanceRow): Promise<void> {
    try {
      await this.#store.batch(ops)
    } catch (err) {
      this.#balances.delete(organizationId)
      throw err
    }
    this.#remember(organizationId, row)
  }

  #remember (organizationId: string, row: BalanceRow): void {
    if (this.#balances.size >= BALANCE_CACHE_MAX && !this.#balances.has(organizationId)) this.#balances.clear()
    this.#balances.set(organizationId, row)
  }

  #serial<T> (organizationId: string, fn: () => Promise<T>): Promise<T> {
    let queue = this.#queues.get(organizationId)
    if (queue === undefined) {
      queue = new PQueue({ concurrency: 1 })
      this.#queues.set(organizationId, queue)
      const q = queue
      // Drop idle queues so the map does not grow with every organization ever seen.
      q.on('idle', () => { if (this.#queues.get(organizationId) === q && q.size === 0 && q.pending === 0) this.#queues.delete(organizationId) })
    }
    return queue.add(fn) as Promise<T>
  }
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
