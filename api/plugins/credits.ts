// Paid reads. For a route with `config.auth.telemetry`, a preHandler refuses early (402) when the
// balance cannot cover the price, and a route-level onSend hook debits the price only when the answer
// is a success (2xx): 304 Not Modified, errors and refusals cost nothing. Route-level onSend runs after
// every app-level onSend hook (e.g. @fastify/etag), so it sees the final status. The debit is
// atomic with its balance check per organization; if a concurrent read spent the credits in
// between, the answer becomes 402 instead of the payload.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { AccountsService } from '../accounts/service.ts'
import { PROBLEM_CONTENT_TYPE, toProblem } from '../problem.ts'
import { resolveAuth } from './auth.ts'

export const CHARGED_HEADER = 'x-credits-charged'
export const REMAINING_HEADER = 'x-credits-remaining'

function append<T> (current: T | T[] | undefined, hook: T): T[] {
  return current === undefined ? [hook] : Array.isArray(current) ? [...current, hook] : [current, hook]
}

/**
 * True, and the reply already sent as 304, when If-None-Match names `etag` (or is `*`). Sets the
 * ETag header either way. Routes that answer 304 themselves call this before building a payload.
 */
export function replyNotModified (req: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  const quoted = etag.startsWith('"') || etag.startsWith('W/"') ? etag : `"${etag}"`
  void reply.header('etag', quoted)
  const header = req.headers['if-none-match']
  if (typeof header !== 'string') return false
  const strip = (t: string): string => t.trim().replace(/^W\//, '')
  const match = header.trim() === '*' || header.split(',').some(t => strip(t) === strip(quoted))
  if (match) void reply.code(304).send()
  return match
}

export default fp(async function creditsPlugin (app: FastifyInstance, opts: { accounts: AccountsService }) {
  const { accounts } = opts
  app.addHook('onRoute', (route: RouteOptions) => {
    const auth = route.config?.auth
    if (auth?.telemetry === undefined) return
    const rule = resolveAuth(auth)
    const priceName = rule.telemetry!.price ?? (rule.telemetry!.realtime === true ? 'realtime' : 'snapshot')
    const memo = `${String(route.method)} ${route.url}`

    route.preHandler = append(route.preHandler, async function checkCredits (req: FastifyRequest) {
      await accounts.ensureCredits(req.principal!.organizationId, accounts.price(priceName))
    })

    route.onSend = append(route.onSend, async function chargeRead (req: FastifyRequest, reply: FastifyReply, payload: unknown) {
      const principal = req.principal
      if (principal === null || reply.statusCode < 200 || reply.statusCode > 299) return payload
      const price = accounts.price(priceName)
      try {
        const after = await accounts.debit(principal.organizationId, price, { keyId: principal.keyId, memo })
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
