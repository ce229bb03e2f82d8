// Telemetry routes ({telemetry_url}, /v1): seed §4.4 and §4.5. Paid reads are guarded and charged by
// the auth and credits plugins from `config.auth.telemetry`. Every route is a conditional read
// (`config.read`, api/telemetry/read.ts): its version and ETag are resolved first, and a matching
// If-None-Match is answered 304 before the rate limit and the credit check, costing nothing. Paid
// reads are served by GET only: a HEAD would be charged for headers (or, free, be a read of the
// version and size for nothing); it answers 404 like any method a route does not serve. ETags
// come from version ids, never from serialising a body; bodies of immutable versions (published
// network snapshots, live versions, sell-allowance proofs) are serialized once. docs/telemetry.md.
import type { FastifyRequest, RouteGenericInterface } from 'fastify'
import type { Static } from '@sinclair/typebox'
import type { TypedApp } from '../typed-app.ts'
import { createHash } from 'node:crypto'
import type { ApiDeps } from '../deps.ts'
import { freeReadResponses, paidReadResponses } from '../responses.ts'
import { BodyCache, serveResolvedRead, type ReadResult } from '../telemetry/read.ts'
import { RateLimited, SellAllowanceNotFound, SnapshotNotFound } from '../errors.ts'
import { decodeCursor, encodeCursor, filtersHash } from '../telemetry/cursor.ts'
import {
  ConditionalHeaders, Envelope, EnvelopeList, EpochQuery, EpochSummary, HotkeyParams, ListQuery, NetworkSummary, SellAllowanceFree, SellAllowancePaid,
  SingleQuery, TaskEvidence, TaskListQuery
} from '../telemetry/schemas.ts'
import { pageOf, type Envelope as Env, type ListFilter, type ListItem, type Page, type TelemetryReader, type EpochSnapshot } from '../../actors/telemetry/index.ts'

import { addressKey } from '../client-address.ts'
export const EPOCH_RETENTION_MS = 30 * 24 * 3_600_000 // seed §8: epoch sets kept 30 days
export const SELL_PAID_RETENTION_MS = 7 * 24 * 3_600_000 // seed §8: paid sell allowance kept 7 days
export const SELL_FREE_RETENTION_MS = 30 * 24 * 3_600_000 // seed §8: free audit kept 30 days

export const FREE_AUDIT_REQUESTS_PER_MINUTE = 60 // per source address on the free audit route (the Free plan's rate)
/** The free audit route has no key: it is limited per source address (429 problem+json, Retry-After). */
const FREE_AUDIT_RATE_LIMIT = {
  max: FREE_AUDIT_REQUESTS_PER_MINUTE,
  keyGenerator: (req: FastifyRequest) => `ip:${addressKey(req.ip ?? '')}`, // an IPv6 client by its /64
  allowList: () => false,
  errorResponseBuilder: (_req: FastifyRequest, ctx: { max: number, after: string }) => new RateLimited(`At most ${ctx.max} requests per minute from one address on the free audit route; retry in ${ctx.after}`)
}
const SNAPSHOT = { auth: { telemetry: {} } }
const REALTIME = { auth: { telemetry: { realtime: true } } }
const SELL = { auth: { telemetry: { orgOnly: true, price: 'sellAllowance' as const } } }
const TAGS = ['telemetry']

interface ListParams { limit?: number, cursor?: string, snapshotId?: string, since?: string, until?: string, transferId?: string, participantId?: string }
/** Requests as the routes' schemas type them (a conditional read's resolver gets the route's own request). */
type ListRequest = FastifyRequest<{ Querystring: ListParams }>
type SingleRequest = FastifyRequest<{ Querystring: Static<typeof SingleQuery> }>
type SellRequest = FastifyRequest<{ Params: Static<typeof HotkeyParams>, Querystring: Static<typeof EpochQuery> }>

const etagOf = (...parts: Array<string | number>): string => createHash('sha256').update(parts.join('|')).digest('base64url').slice(0, 27)

function filterOf (q: ListParams): ListFilter {
  return {
    snapshotId: q.snapshotId,
    sinceMs: q.since === undefined ? undefined : Date.parse(q.since),
    untilMs: q.until === undefined ? undefined : Date.parse(q.until),
    transferId: q.transferId,
    participantId: q.participantId
  }
}

const filterKey = (q: ListParams): string => filtersHash({ snapshotId: q.snapshotId, since: q.since, until: q.until, transferId: q.transferId, participantId: q.participantId })

/**
 * One page of a pinned listing. `pinNow` gives the pin of a fresh walk; `page` reads one page at a
 * pin after a position; the cursor carries both, bound to the route and the filters.
 */
async function listing<D, V extends number | string, P extends number | string> (
  reader: TelemetryReader, req: ListRequest, route: string,
  pinNow: () => V | Promise<V>, start: P,
  page: (pin: V, after: P, limit: number) => Page<D> | Promise<Page<D>>, positionOf: (last: number | string) => P = (l) => l as P
): Promise<ReadResult> {
  const q = req.query
  const limit = q.limit ?? 100
  const filters = filterKey(q)
  let pin: V
  let after: P
  if (q.cursor !== undefined && q.cursor !== '') {
    const c = decodeCursor(reader.cursorKey, q.cursor, route, filters)
    pin = c.pinned as V
    after = c.position as P
  } else {
    pin = await pinNow()
    after = start
  }
  return {
    etag: etagOf(route, filters, pin, after, limit),
    body: async () => {
      const p = await page(pin, after, limit)
      const nextCursor = p.more && p.last !== null ? encodeCursor(reader.cursorKey, { route, filters, pinned: pin, position: positionOf(p.last) }) : ''
      return JSON.stringify({ nextCursor, items: p.items })
    }
  }
}

const sortKey = (e: EpochSnapshot): string => `${String(Date.parse(e.publishedAt)).padStart(16, '0')}/${String(e.data.epoch).padStart(10, '0')}/${String(e.data.revision).padStart(6, '0')}`

export default async function telemetryRoutes (app: TypedApp, opts: { deps: ApiDeps }): Promise<void> {
  const reader = opts.deps.telemetry as TelemetryReader
  const { projection } = reader
  const now = (): number => reader.clock.now()

  /**
   * Every version the source holds, in publication order: listed and sorted once per generation of the
   * source (when it has one), since the epoch routes pin their version on every request before the
   * rate limit and the credit check (a refused request, a 304), and the source lists the whole set.
   */
  let sorted: { generation: number, versions: Promise<Array<{ key: string, publishedMs: number, e: EpochSnapshot }>> } | null = null
  function sortedVersions (): Promise<Array<{ key: string, publishedMs: number, e: EpochSnapshot }>> {
    const source = reader.epochs!
    const generation = source.generation?.()
    if (generation !== undefined && sorted !== null && sorted.generation === generation) return sorted.versions
    const versions = source.list().then(all => all.map(e => ({ key: sortKey(e), publishedMs: Date.parse(e.publishedAt), e })).filter(v => !Number.isNaN(v.publishedMs)).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)))
    if (generation !== undefined) {
      const entry = { generation, versions }
      sorted = entry
      versions.catch(() => { if (sorted === entry) sorted = null }) // a failed listing is not kept
    }
    return versions
  }
  /** Retained epoch versions in publication order (published one epoch late by their source). */
  async function retainedVersions (): Promise<Array<{ key: string, e: EpochSnapshot }>> {
    if (reader.epochs === null) return []
    const all = await sortedVersions()
    const keep = now() - EPOCH_RETENTION_MS
    // Publication order is by publishedAt first: the expired ones are a prefix.
    let lo = 0
    let hi = all.length
    while (lo < hi) { const mid = (lo + hi) >>> 1; if (all[mid].publishedMs < keep) lo = mid + 1; else hi = mid }
    return lo === 0 ? all : all.slice(lo)
  }
  async function epochVersions (): Promise<EpochSnapshot[]> {
    return (await retainedVersions()).map(v => v.e)
  }
  const epochPin = async (): Promise<string> => {
    if (reader.epochs === null) return ''
    const all = await sortedVersions()
    const last = all[all.length - 1]
    return last === undefined || last.publishedMs < now() - EPOCH_RETENTION_MS ? '' : last.key.slice(0, 16)
  }
  const epochItem = (e: EpochSnapshot): ListItem<unknown> => ({ seq: 0, env: e, observedMs: Date.parse(e.observedAt) })
  const bodies = new BodyCache()
  const conditional = <R extends RouteGenericInterface>(path: string, config: object, schema: Record<string, unknown>, read: (req: FastifyRequest<R>) => Promise<ReadResult>): void => {
    app.get(path, { config: { ...config, read }, exposeHeadRoute: false, schema: { headers: ConditionalHeaders, ...schema } }, serveResolvedRead)
  }
  /** A single immutable version: its id is its ETag, its body is serialized once. */
  const single = (id: string, env: unknown): ReadResult => bodies.read(id, env)

  app.get('/v1/telemetry/network', {
    exposeHeadRoute: false,
    config: {
      ...SNAPSHOT,
      read: (req: SingleRequest) => {
        const { snapshotId } = req.query
        const item = snapshotId === undefined ? projection.latestNetwork(now()) : projection.publishedNetwork().find(i => i.env.snapshotId === snapshotId)
        if (item === undefined) throw new SnapshotNotFound(`No published network snapshot ${snapshotId}`)
        return single(item.env.snapshotId, item.env)
      }
    },
    schema: { tags: TAGS, summary: 'Latest published network summary, or the one named by snapshotId', headers: ConditionalHeaders, querystring: SingleQuery, response: paidReadResponses(Envelope(NetworkSummary, 'a network summary')) }
  }, serveResolvedRead)

  app.get('/v1/telemetry/realtime/network', {
    exposeHeadRoute: false,
    config: {
      ...REALTIME,
      read: (req: SingleRequest) => {
        const { snapshotId } = req.query
        const v = snapshotId === undefined ? projection.current(now()) : projection.version(snapshotId, now())
        if (v === null) throw new SnapshotNotFound(`No live version ${snapshotId}: unknown, or superseded more than 10 minutes ago`)
        return single(v.id, v.env)
      }
    },
    schema: { tags: TAGS, summary: 'Live network summary (transfers in progress included), or the live version named by snapshotId', headers: ConditionalHeaders, querystring: SingleQuery, response: paidReadResponses(Envelope(NetworkSummary, 'a live network summary')) }
  }, serveResolvedRead)

  conditional('/v1/telemetry/network/history', SNAPSHOT, { tags: TAGS, summary: 'Published network summaries, oldest first (at least one an hour)', querystring: ListQuery, response: paidReadResponses(EnvelopeList(NetworkSummary, 'a network summary')) }, async (req: ListRequest) => listing(reader, req, 'network/history', () => projection.networkSeq, 0,
    (pin, after, limit) => pageOf(projection.publishedNetwork(), after, pin, filterOf(req.query), limit)))

  conditional('/v1/telemetry/realtime/network/history', REALTIME, { tags: TAGS, summary: 'Live network summary versions still readable (current and superseded within 10 minutes), oldest first', querystring: ListQuery, response: paidReadResponses(EnvelopeList(NetworkSummary, 'a live network summary')) }, async (req: ListRequest) => listing(reader, req, 'realtime/network/history', () => projection.current(now()).no, 0,
    (pin, after, limit) => pageOf(projection.liveVersions(now()), after, pin, filterOf(req.query), limit)))

  conditional('/v1/telemetry/tasks', SNAPSHOT, { tags: TAGS, summary: 'Finished task evidence of published terminal transfers, in publication order', querystring: TaskListQuery, response: paidReadResponses(EnvelopeList(TaskEvidence, 'finished task evidence')) }, async (req: ListRequest) => listing(reader, req, 'tasks', () => projection.taskSeq, 0,
    (pin, after, limit) => pageOf(projection.publishedTasks(), after, pin, filterOf(req.query), limit)))

  conditional('/v1/telemetry/realtime/tasks', REALTIME, {
      tags: TAGS,
      summary: 'Live task evidence, transfers in progress included; pending_verification apart from verified',
      description: 'snapshotId pins the live version (from a realtime read) the listing shows; without it the current version is pinned.',
      querystring: TaskListQuery,
      response: paidReadResponses(EnvelopeList(TaskEvidence, 'live task evidence'))
    }, async (req: ListRequest) => {
    const q = req.query
    const filter = { ...filterOf(q), snapshotId: undefined }
    const resolve = (id: string): number => {
      const v = projection.version(id, now())
      if (v === null) throw new SnapshotNotFound(`Live version ${id} is no longer readable (superseded more than 10 minutes ago) or unknown`)
      return v.seq
    }
    return listing<unknown, string, number>(reader, req, 'realtime/tasks',
      () => { if (q.snapshotId !== undefined) resolve(q.snapshotId); return q.snapshotId ?? projection.current(now()).id }, 0,
      (pin, after, limit) => projection.liveTasks(resolve(pin), after, filter, limit))
  })

  conditional('/v1/telemetry/epochs', SNAPSHOT, { tags: TAGS, summary: 'Published closed-epoch versions (every revision), in publication order; one epoch late, kept 30 days', querystring: ListQuery, response: paidReadResponses(EnvelopeList(EpochSummary, 'a closed epoch')) }, async (req: ListRequest) => listing<unknown, string, string>(reader, req, 'epochs', epochPin, '',
    async (pin, after, limit) => {
      const filter = filterOf(req.query)
      const items: Array<Env<unknown>> = []
      let last: string | null = null
      for (const e of await epochVersions()) {
        const key = sortKey(e)
        if (key <= after || key.slice(0, 16) > pin || !matchesItem(epochItem(e), filter)) continue
        if (items.length === limit) return { items, last: last as never, more: true }
        items.push(e); last = key
      }
      return { items, last: last as never, more: false }
    }))

  conditional('/v1/telemetry/realtime/epochs', REALTIME, { tags: TAGS, summary: 'The current revision of every retained closed epoch, by epoch; one epoch late, kept 30 days', querystring: ListQuery, response: paidReadResponses(EnvelopeList(EpochSummary, 'a closed epoch')) }, async (req: ListRequest) => listing<unknown, string, number>(reader, req, 'realtime/epochs', epochPin, -1,
    async (pin, after, limit) => {
      const filter = filterOf(req.query)
      const latest = new Map<number, EpochSnapshot>()
      for (const e of await epochVersions()) if (sortKey(e).slice(0, 16) <= pin) latest.set(e.data.epoch, e) // publication order: later revisions win
      const items: Array<Env<unknown>> = []
      let last: number | null = null
      for (const e of [...latest.values()].sort((a, b) => a.data.epoch - b.data.epoch)) {
        if (e.data.epoch <= after || !matchesItem(epochItem(e), filter)) continue
        if (items.length === limit) return { items, last, more: true }
        items.push(e); last = e.data.epoch
      }
      return { items, last, more: false }
    }))

  async function sellAllowance (req: SellRequest, variant: 'paid' | 'free', retentionMs: number): Promise<ReadResult> {
    const { hotkey } = req.params
    const { epoch } = req.query
    const source = reader.sellAllowance
    const env = source === null ? null : variant === 'paid' ? await source.get(hotkey, 'paid', epoch === undefined ? undefined : Number(epoch)) : await source.get(hotkey, 'free', epoch === undefined ? undefined : Number(epoch))
    if (env === null || Date.parse(env.publishedAt) < now() - retentionMs) {
      throw new SellAllowanceNotFound(`No published sell allowance for ${hotkey}${epoch === undefined ? '' : ` at epoch ${epoch}`} within the last ${retentionMs / 86_400_000} days`)
    }
    return single(env.snapshotId, env)
  }

  conditional('/v1/telemetry/sell-allowance/:hotkey', SELL, { tags: TAGS, summary: 'Sell allowance proof of a miner hotkey (published one epoch late, kept 7 days)', params: HotkeyParams, querystring: EpochQuery, response: paidReadResponses(Envelope(SellAllowancePaid, 'a sell allowance'), 'sellAllowance') }, async (req: SellRequest) => sellAllowance(req, 'paid', SELL_PAID_RETENTION_MS))

  app.get('/v1/audit/sell-allowance/:hotkey', {
    config: { read: (req: SellRequest) => sellAllowance(req, 'free', SELL_FREE_RETENTION_MS), rateLimit: FREE_AUDIT_RATE_LIMIT },
    schema: { headers: ConditionalHeaders, tags: ['audit'], summary: 'Free audit of a sell allowance: latest published epoch or the given retained one (kept 30 days)', params: HotkeyParams, querystring: EpochQuery, response: freeReadResponses(Envelope(SellAllowanceFree, 'a free sell allowance audit')) }
  }, serveResolvedRead)
}

function matchesItem (item: ListItem<unknown>, f: ListFilter): boolean {
  return pageOf([{ ...item, seq: 1 }], 0, 1, f, 1).items.length === 1
}
