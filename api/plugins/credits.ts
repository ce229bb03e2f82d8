// Paid reads. Order on a paid route: auth (onRequest) → the read's version and a matching
// If-None-Match answered 304 (api/telemetry/read.ts: free, before any limit) → rate limit (429) →
// balance pre-check (402) → handler. A route-level onSend hook debits the price only when the answer
// is a success (2xx): 304 Not Modified, errors and refusals cost nothing. Route-level onSend runs
// after every app-level onSend hook, so it sees the final status.
//
// Debits are batched per organization (DebitBatcher): the debits of concurrent reads are written as
// one ledger batch, each checked against the balance in order inside the organization's queue, so a
// burst is never overdrawn; a read whose debit fails answers 402 instead of its payload. A read is
// answered only after its ledger entry is written.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { AccountsService, DebitItem, DebitOutcome } from '../accounts/service.ts'
import type { Balance } from '../accounts/model.ts'
import { PROBLEM_CONTENT_TYPE, toProblem } from '../problem.ts'
import { resolveAuth } from './auth.ts'
import { ifNoneMatch, quoteEtag, resolveReadFirst } from '../telemetry/read.ts'

export const CHARGED_HEADER = 'x-credits-charged'
export const REMAINING_HEADER = 'x-credits-remaining'

function append<T> (current: T | T[] | undefined, hook: T): T[] {
  return current === undefined ? [hook] : Array.isArray(current) ? [...current, hook] : [current, hook]
}
function prepend<T> (current: T | T[] | undefined, hook: T): T[] {
  return current === undefined ? [hook] : Array.isArray(current) ? [hook, ...current] : [hook, current]
}

/**
 * True, and the reply already sent as 304, when If-None-Match names `etag` (or is `*`). Sets the
 * ETag header either way. For routes without `config.read` that answer 304 from their handler.
 */
export function replyNotModified (req: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  const quoted = quoteEtag(etag)
  void reply.header('etag', quoted)
  const match = ifNoneMatch(req, quoted)
  if (match) void reply.code(304).send()
  return match
}

interface Pending { item: DebitItem, resolve: (b: Balance) => void, reject: (e: unknown) => void }

/**
 * Groups the debits of concurrent reads per organization: while one batch is being written, the next
 * collects; each batch is one `debitBatch` call (checked in order, one store batch).
 */
export const KNOWN_BALANCES_MAX = 10_000 // organizations whose last balance is remembered

export class DebitBatcher {
  readonly #accounts: AccountsService
  readonly #orgs = new Map<string, { waiting: Pending[], running: boolean }>()
  /** The balance each organization had after its last batch: the pre-check's answer without a read. */
  readonly #known = new Map<string, number>()
  constructor (accounts: AccountsService) { this.#accounts = accounts }

  /**
   * The pre-check before a read (402 early). A balance known to cover the price passes without a store
   * read: grants only raise it, and the debit itself is checked again, atomically, in `debitBatch`.
   * Otherwise (unknown, or short: a grant may have come since) the stored balance decides.
   */
  async ensure (organizationId: string, price: number): Promise<void> {
    const known = this.#known.get(organizationId)
    if (known !== undefined && known >= price) return
    await this.#accounts.ensureCredits(organizationId, price)
  }

  debit (organizationId: string, item: DebitItem): Promise<Balance> {
    return new Promise((resolve, reject) => {
      let org = this.#orgs.get(organizationId)
      if (org === undefined) { org = { waiting: [], running: false }; this.#orgs.set(organizationId, org) }
      org.waiting.push({ item, resolve, reject })
      if (!org.running) this.#flush(organizationId, org)
    })
  }

  #flush (organizationId: string, org: { waiting: Pending[], running: boolean }): void {
    const batch = org.waiting
    if (batch.length === 0) { org.running = false; this.#orgs.delete(organizationId); return }
    org.waiting = []
    org.running = true
    this.#accounts.debitBatch(organizationId, batch.map(p => p.item)).then((outcomes: DebitOutcome[]) => {
      let last: number | undefined
      batch.forEach((p, i) => {
        const o = outcomes[i]!
        if (o.ok) { p.resolve(o.balance); last = o.balance.balance } else { p.reject(o.error); last = (o.error as { extensions?: { balance?: number } }).extensions?.balance ?? last }
      })
      if (last !== undefined) {
        if (this.#known.size >= KNOWN_BALANCES_MAX && !this.#known.has(organizationId)) this.#known.clear()
        this.#known.set(organizationId, last)
      }
    }, (err: unknown) => { for (const p of batch) p.reject(err) }).finally(() => this.#flush(organizationId, org))
  }
}

export default fp(async function creditsPlugin (app: FastifyInstance, opts: { accounts: AccountsService }) {
  const { accounts } = opts
  const batcher = new DebitBatcher(accounts)
  app.decorateRequest('resolvedRead', null)
  app.addHook('onRoute', (route: RouteOptions) => {
    const read = route.config?.read
    // Runs before every other preHandler (the rate limit's included): a 304 is answered first.
    if (read !== undefined) route.preHandler = prepend(route.preHandler, resolveReadFirst(read))
    const auth = route.config?.auth
    if (auth?.telemetry === undefined) return
    const rule = resolveAuth(auth)
    const priceName = rule.telemetry!.price ?? (rule.telemetry!.realtime === true ? 'realtime' : 'snapshot')
    const memo = `${String(route.method)} ${route.url}`

    route.preHandler = append(route.preHandler, async function checkCredits (req: FastifyRequest) {
      await batcher.ensure(req.principal!.organizationId, accounts.price(priceName))
    })

    route.onSend = append(route.onSend, async function chargeRead (req: FastifyRequest, reply: FastifyReply, payload: unknown) {
      const principal = req.principal
      if (principal === null || reply.statusCode < 200 || reply.statusCode > 299) return payload
      const price = accounts.price(priceName)
      try {
        const after = price === 0 ? await accounts.balance(principal.organizationId) : await batcher.debit(principal.organizationId, { amount: price, keyId: principal.keyId, memo })
        void reply.header(CHARGED_HEADER, String(price)).header(REMAINING_HEADER, String(after.balance))
        return payload
      } catch (err) {
        const problem = toProblem(err as never, req.id)
        if (problem.status >= 500) req.log.error({ err }, 'charging a read failed')
        else req.log.info({ code: problem.code, status: problem.status }, 'request refused')
        void reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).removeHeader('etag')
        return JSON.stringify(problem)
      }
    })
  })
}, { name: 'bwnet-credits', dependencies: ['bwnet-auth'] })
