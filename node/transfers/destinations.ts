// Destinations registered on this orchestrator. Credentials live only in the `destinations` rows of
// this node and in the drivers built from them; responses show public settings only.
import { randomUUID } from 'node:crypto'
import type { Store, StoreOp, Clock } from '../../actors/ports.ts'
import { backfillIndex, prefixRange } from '../../actors/store.ts'
import type { DestinationDriver } from '../../actors/destination.ts'
import type { KeyPair } from '../../protocol/index.ts'
import type { Principal } from '../../api/accounts/model.ts'
import { MAX_DESTINATIONS_PER_ORG, type CreateDestinationBody, type DestinationRecord, type DestinationService } from '../../api/transfers.ts'
import { DestinationNotFound, DestinationBuiltin, DestinationInUse, DestinationUrlRefused, DestinationHeaderRefused, DestinationLimit, withExtensions } from '../../api/errors.ts'
import { HttpDriver, NodeSinkDriver } from '../adapters/destinations/index.ts'
import {
  checkDestinationUrl, checkHeaders, checkPlaceholders, fillPlaceholders, guardedFetch, guardedAgents, DestinationPolicyError, PUBLIC_ONLY, type AddressPolicy
} from '../adapters/destinations/url-policy.ts'

export interface DestinationRow {
  id: string
  name: string
  kind: 'node' | 'http' | 's3'
  builtin: boolean
  org_id: string | null
  config: Record<string, unknown>
  created_at: string
}

/** Settings a response may show; every other config field is a secret or a control header. */
const PUBLIC_FIELDS: Record<DestinationRow['kind'], string[]> = {
  s3: ['endpoint', 'region', 'bucket', 'keyPrefix', 'sharedPartNumbers'],
  http: ['url', 'completeUrl', 'deleteOnAbort'],
  node: ['baseUrl']
}

export const DEFAULT_DESTINATION_KEY = 'default-destination'
/** Set in `meta` once destinations stored before the organization index have their keys. */
const DESTINATIONS_INDEXED = 'org_destinations_indexed'
/**
 * Each destination's key in the `index` table, by its organization (`-`: the built-in ones, for every
 * organization): a listing and a create's count read one organization's keys, not every destination.
 */
const orgDestinations = (org: string | null): string => `org-destinations/${org ?? '-'}/`
const orgDestination = (org: string | null, id: string): string => `${orgDestinations(org)}${id}`
const indexPut = (row: DestinationRow): StoreOp => ({ type: 'put', table: 'index', key: orgDestination(row.builtin ? null : row.org_id, row.id), value: 1 })

// The S3 driver loads the AWS SDK (~20 MiB per thread): only an orchestrator with an s3 destination
// needs it, so it is loaded on the first such destination's first use, once.
let s3Driver: Promise<typeof import('../adapters/destinations/s3.ts')> | undefined
const loadS3Driver = (): Promise<typeof import('../adapters/destinations/s3.ts')> =>
  (s3Driver ??= import('../adapters/destinations/s3.ts').catch((err: unknown) => { s3Driver = undefined; throw err }))

export class DestinationRegistry implements DestinationService {
  readonly #store: Store
  readonly #key: KeyPair
  readonly #clock: Clock
  readonly #policy: AddressPolicy
  readonly #resolve: ((host: string) => Promise<string[]>) | undefined
  readonly #drivers = new Map<string, DestinationDriver>()
  /**
   * Whether a transfer in progress writes to the destination (of organization `org`): a destination in use
   * cannot be removed. Wired by the node to its transfer service.
   */
  inUse: (destinationId: string, org: string | null) => Promise<boolean> = async () => false

  readonly #guardedFetch: typeof fetch
  readonly #agents: ReturnType<typeof guardedAgents>
  /**
   * Resolves once ensureDefault has set this run's URL of the node's own sink. A built-in row read before
   * that still holds the last run's URL (its port is picked at each start), and transfers recovered on
   * start may reach for their destination before the API listens: their driver waits for this.
   */
  readonly #ownUrlKnown: Promise<void>
  #indexing: Promise<void> | null = null
  #ownUrlSet: () => void = () => {}

  /**
   * `policy`: which addresses client-created destinations may reach (url-policy.ts); checked when a
   * destination is created and again on every connection its driver opens. Built-in destinations are
   * the operator's own configuration and are not subject to it.
   */
  constructor (store: Store, key: KeyPair, clock: Clock, policy: AddressPolicy = PUBLIC_ONLY, resolve?: (host: string) => Promise<string[]>) {
    this.#store = store
    this.#key = key
    this.#clock = clock
    this.#policy = policy
    this.#resolve = resolve
    this.#guardedFetch = guardedFetch(policy)
    this.#agents = guardedAgents(policy)
    this.#ownUrlKnown = new Promise(resolve => { this.#ownUrlSet = resolve })
  }

  /** The node's own `node` destination (its sink), created once and kept across restarts. */
  async ensureDefault (baseUrl: string): Promise<DestinationRow> {
    const meta = this.#store.table<string>('meta')
    const id = await meta.get(DEFAULT_DESTINATION_KEY)
    if (id !== undefined) {
      const row = await this.#store.table<DestinationRow>('destinations').get(id)
      if (row !== undefined) {
        if (row.config.baseUrl !== baseUrl) { row.config.baseUrl = baseUrl; await this.#store.table('destinations').put(id, row); this.#drivers.delete(id) }
        this.#ownUrlSet()
        return row
      }
    }
    const row: DestinationRow = { id: randomUUID(), name: 'node sink (default)', kind: 'node', builtin: true, org_id: null, config: { baseUrl }, created_at: new Date(this.#clock.now()).toISOString() }
    await this.#store.batch([{ type: 'put', table: 'destinations', key: row.id, value: row }, { type: 'put', table: 'meta', key: DEFAULT_DESTINATION_KEY, value: row.id }, indexPut(row)])
    this.#ownUrlSet()
    return row
  }

  async defaultId (): Promise<string | undefined> { return this.#store.table<string>('meta').get(DEFAULT_DESTINATION_KEY) }

  async row (id: string): Promise<DestinationRow | undefined> { return this.#store.table<DestinationRow>('destinations').get(id) }

  /** The destination a principal may use: its organization's, or a built-in one. */
  async visible (id: string, principal: Principal): Promise<DestinationRow> {
    const row = await this.row(id)
    if (row === undefined || (!row.builtin && row.org_id !== principal.organizationId)) throw new DestinationNotFound(`No destination ${id}.`)
    return row
  }

  async driverFor (id: string): Promise<DestinationDriver> {
    const cached = this.#drivers.get(id)
    if (cached) return cached
    let row = await this.row(id)
    if (row?.builtin === true) { await this.#ownUrlKnown; row = await this.row(id) }
    if (row === undefined) throw new DestinationNotFound(`No destination ${id}.`)
    const s3 = row.kind === 's3' ? await loadS3Driver() : null
    const built = this.#drivers.get(id) // by a call that went first while this one waited
    if (built) return built
    const c = row.config as any
    const guarded = !row.builtin
    const driver: DestinationDriver = s3 !== null
      ? new s3.S3Driver(c, { now: () => this.#clock.now(), ...(guarded ? { agents: this.#agents } : {}) })
      : row.kind === 'http'
        ? new HttpDriver(c, { signer: this.#key, ...(guarded ? { fetch: this.#guardedFetch } : {}) })
        // Only the built-in sink is this node's own: a tenant's `node` destination may point anywhere.
        : new NodeSinkDriver({ baseUrl: c.baseUrl, key: this.#key, now: () => this.#clock.now(), own: row.builtin, ...(guarded ? { fetch: this.#guardedFetch } : {}) })
    this.#drivers.set(id, driver)
    return driver
  }

  toRecord (row: DestinationRow): DestinationRecord {
    const config: Record<string, string | boolean | null> = {}
    for (const f of PUBLIC_FIELDS[row.kind]) if (row.config[f] !== undefined) config[f] = row.config[f] as string | boolean
    return { id: row.id, name: row.name, kind: row.kind, builtin: row.builtin, config, created_at: row.created_at }
  }

  /** Refuses (400 problem, stable code, `reason`) URLs and headers the destination policy does not allow. */
  async checkPolicy (body: CreateDestinationBody): Promise<void> {
    const opts = { policy: this.#policy, resolve: this.#resolve }
    try {
      if (body.kind === 's3') await checkDestinationUrl(body.config.endpoint, 'config.endpoint', opts)
      else if (body.kind === 'node') await checkDestinationUrl(body.config.baseUrl, 'config.baseUrl', opts)
      else {
        checkPlaceholders(body.config.url, 'config.url')
        await checkDestinationUrl(fillPlaceholders(body.config.url, 'x'), 'config.url', opts)
        if (body.config.completeUrl !== undefined) await checkDestinationUrl(body.config.completeUrl, 'config.completeUrl', opts)
        checkHeaders(body.config.uploadHeaders, 'config.uploadHeaders')
        checkHeaders(body.config.controlHeaders, 'config.controlHeaders')
      }
    } catch (err) {
      if (!(err instanceof DestinationPolicyError)) throw err
      const Refused = err.kind === 'url' ? DestinationUrlRefused : DestinationHeaderRefused
      throw withExtensions(new Refused(err.message), { reason: err.reason })
    }
  }

  async create (body: CreateDestinationBody, principal: Principal): Promise<DestinationRecord> {
    await this.checkPolicy(body)
    await this.#indexed()
    let held = 0
    for await (const entry of this.#store.table('index').entries(prefixRange(orgDestinations(principal.organizationId)))) { held++; void entry }
    if (held >= MAX_DESTINATIONS_PER_ORG) {
      throw withExtensions(new DestinationLimit(`This organization has ${held} destinations, as many as one may register; remove one it no longer uses first.`), { limit: MAX_DESTINATIONS_PER_ORG })
    }
    const row: DestinationRow = { id: randomUUID(), name: body.name, kind: body.kind, builtin: false, org_id: principal.organizationId, config: { ...body.config }, created_at: new Date(this.#clock.now()).toISOString() }
    await this.#store.batch([{ type: 'put', table: 'destinations', key: row.id, value: row }, indexPut(row)])
    return this.toRecord(row)
  }

  /** The built-in destinations and the organization's, in id order: their index keys, then their rows. */
  async list (principal: Principal): Promise<DestinationRecord[]> {
    await this.#indexed()
    const ids: string[] = []
    for (const org of [null, principal.organizationId]) {
      for await (const [key] of this.#store.table('index').entries(prefixRange(orgDestinations(org)))) ids.push(key.slice(key.lastIndexOf('/') + 1))
    }
    ids.sort()
    const out: DestinationRecord[] = []
    for (const id of ids) {
      const row = await this.row(id)
      if (row !== undefined && (row.builtin || row.org_id === principal.organizationId)) out.push(this.toRecord(row))
    }
    return out
  }

  /**
   * Destinations stored before the organization index get their keys once (DESTINATIONS_INDEXED marks
   * it); every later one's key is written with its row.
   */
  async #indexed (): Promise<void> {
    this.#indexing ??= backfillIndex<DestinationRow>(this.#store, DESTINATIONS_INDEXED, 'destinations', row => orgDestination(row.builtin ? null : row.org_id, row.id))
      .catch((err: unknown) => { this.#indexing = null; throw err })
    await this.#indexing
  }

  async get (id: string, principal: Principal): Promise<DestinationRecord> {
    return this.toRecord(await this.visible(id, principal))
  }

  async remove (id: string, principal: Principal): Promise<void> {
    await this.#indexed() // a remove during the first indexing would have its key written back
    const row = await this.visible(id, principal)
    if (row.builtin) throw new DestinationBuiltin('The node\'s built-in destination cannot be removed.')
    if (await this.inUse(id, row.org_id)) throw new DestinationInUse('Transfers in progress still write to this destination; cancel or finish them first.')
    await this.#store.batch([{ type: 'del', table: 'destinations', key: id }, { type: 'del', table: 'index', key: orgDestination(row.builtin ? null : row.org_id, id) }])
    const driver = this.#drivers.get(id) as (DestinationDriver & { destroy?: () => void }) | undefined
    driver?.destroy?.()
    this.#drivers.delete(id)
  }
}
