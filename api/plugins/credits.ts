// Paid reads. Order on a paid route: auth (onRequest) → the read's version and a matching
// If-None-Match answered 304 (api/telemetry/read.ts: free, before any limit) → rate limit (429) →
// balance pre-check (402) → the read → the charge. Only a success (2xx) is charged: 304 Not Modified,
// errors and refusals cost nothing.
//
// A paid conditional read (`config.read` served by `serveResolvedRead`) gets one handler that does the
// pre-check, the read and the charge in a row, synchronously when the body is already serialized and
// the organization's balance row is in memory. Other paid routes (the realtime stream's upgrade) get a
// pre-check preHandler and a route-level onSend hook that charges a 2xx (route-level onSend runs after
// every app-level one, so it sees the final status).
//
// A charge is checked against the balance and applied in memory in one step, so concurrent reads can
// never overdraw; it is written to the ledger by group commit (AccountsService.charge: the reads of one
// event-loop turn, or of one write's duration, share a store batch), and the read is answered once its
// charge is written, never before.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod, RouteOptions } from 'fastify'
import type { AccountsService, PriceName } from '../accounts/service.ts'
import { PROBLEM_CONTENT_TYPE, toProblem } from '../problem.ts'
import { resolveAuth } from './auth.ts'
import { ifNoneMatch, isPromise, JSON_CONTENT_TYPE, quoteEtag, resolveReadFirst, serveResolvedRead } from '../telemetry/read.ts'

export const CHARGED_HEADER = 'x-credits-charged'
export const REMAINING_HEADER = 'x-credits-remaining'

function append<T> (current: T | T[] | undefined, hook: T): T[] {
  return current === undefined ? [hook] : Array.isArray(current) ? [...current, hook] : [current, hook]
}
function prepend<T> (current: T | T[] | undefined, hook: T): T[] {
  return current === undefined ? [hook] : Array.isArray(current) ? [hook, ...current] : [hook, current]
}

/**
 * True, and the reply already sent as 304, when If-None-Match names `etag` (or is `*`, except on a paid
 * read). Sets the ETag header either way. For routes without `config.read` that answer 304 from their handler.
 */
export function replyNotModified (req: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  const quoted = quoteEtag(etag)
  void reply.header('etag', quoted)
  const match = ifNoneMatch(req, quoted, req.routeOptions.config.auth?.telemetry === undefined)
  if (match) void reply.code(304).send()
  return match
}

/**
 * The handler of a paid conditional read, in place of `serveResolvedRead`: the balance pre-check
 * (402), the error the resolution held (404, bad cursor), the body, the charge, the answer with its
 * credit headers. A refusal carries no ETag.
 */
export function paidReadHandler (accounts: AccountsService, priceName: PriceName, memo: string): RouteHandlerMethod {
  let price = -1
  let charged = ''
  const refuse = (reply: FastifyReply, err: unknown): never => { void reply.removeHeader('etag'); throw err }

  // The answer goes once the charge is written: the handler returns without sending, and `done` sends
  // (Fastify waits for a reply that a synchronous handler has not sent).
  function send (req: FastifyRequest, reply: FastifyReply, body: string | Buffer): undefined {
    const principal = req.principal!
    try {
      accounts.chargeThen(principal.organizationId, { amount: price, keyId: principal.keyId, memo }, (err, left) => {
        if (err !== null) { void reply.removeHeader('etag'); reply.send(err as Error); return }
        answer(reply, body, left!)
      })
    } catch (err) { return refuse(reply, err) }
    return undefined
  }
  function answer (reply: FastifyReply, body: string | Buffer, left: number): FastifyReply {
    return reply.header(CHARGED_HEADER, charged).header(REMAINING_HEADER, String(left)).type(JSON_CONTENT_TYPE).send(body)
  }
  function read (req: FastifyRequest, reply: FastifyReply): undefined | Promise<FastifyReply> {
    const r = req.resolvedRead
    if (r === null) throw new Error('conditional route without a resolved read')
    if ('error' in r) return refuse(reply, r.error)
    const body = r.body()
    if (isPromise(body)) return body.then(b => send(req, reply, b) ?? reply)
    return send(req, reply, body)
  }
  return function servePaidRead (req: FastifyRequest, reply: FastifyReply) {
    const p = accounts.price(priceName)
    if (p !== price) { price = p; charged = String(p) }
    let checked: void | Promise<void>
    try {
      checked = accounts.checkCredits(req.principal!.organizationId, price)
    } catch (err) { return refuse(reply, err) }
    if (isPromise(checked)) return checked.then(() => read(req, reply) ?? reply, (err: unknown) => refuse(reply, err))
    return read(req, reply)
  }
}

export default fp(async function creditsPlugin (app: FastifyInstance, opts: { accounts: AccountsService }) {
  const { accounts } = opts
  app.decorateRequest('resolvedRead', null)
  // Charges still being collected are written before the store can close.
  app.addHook('onClose', async () => { await accounts.flush() })
  app.addHook('onRoute', (route: RouteOptions) => {
    const read = route.config?.read
    const auth = route.config?.auth
    // Runs before every other preHandler (the rate limit's included): a 304 is answered first. Unless
    // its ETag costs the read itself (readAfterLimits): then after the rate limit, which counts the 304.
    // On a paid read `If-None-Match: *` matches nothing (api/telemetry/read.ts, ifNoneMatch).
    if (read !== undefined) {
      const first = resolveReadFirst(read, { paid: auth?.telemetry !== undefined })
      route.preHandler = route.config?.readAfterLimits === true ? append(route.preHandler, first) : prepend(route.preHandler, first)
    }
    if (auth?.telemetry === undefined) return
    // Paid reads are GET only (`exposeHeadRoute: false`): a HEAD would be charged for headers.
    if ((Array.isArray(route.method) ? route.method : [route.method]).includes('HEAD')) throw new Error(`${route.url} is a paid read: give it exposeHeadRoute: false (paid reads are not served by HEAD)`)
    const rule = resolveAuth(auth)
    const priceName = rule.telemetry!.price ?? (rule.telemetry!.realtime === true ? 'realtime' : 'snapshot')
    const memo = `${String(route.method)} ${route.url}`

    if (read !== undefined && route.handler === serveResolvedRead) {
      route.handler = paidReadHandler(accounts, priceName, memo)
      return
    }

    route.preHandler = append(route.preHandler, async function checkCredits (req: FastifyRequest) {
      await accounts.checkCredits(req.principal!.organizationId, accounts.price(priceName))
    })

    route.onSend = append(route.onSend, async function chargeRead (req: FastifyRequest, reply: FastifyReply, payload: unknown) {
      const principal = req.principal
      if (principal === null || reply.statusCode < 200 || reply.statusCode > 299) return payload
      const price = accounts.price(priceName)
      try {
        const left = await accounts.charge(principal.organizationId, { amount: price, keyId: principal.keyId, memo })
        void reply.header(CHARGED_HEADER, String(price)).header(REMAINING_HEADER, String(left))
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
