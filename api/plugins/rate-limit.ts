// Requests per minute by plan (seed §8: Free 60, Pro 300, Enterprise unlimited), counted per
// organization and plan: all of an organization's keys on one plan share its rate, so minting keys does
// not multiply it. Counted after authentication (preHandler), so refused keys and public routes are not
// counted here. Over the limit: 429 problem+json with Retry-After.
//
// @fastify/rate-limit keeps the counters; this plugin puts its check on every route that has no
// `config.rateLimit` of its own (those get the plugin's own hook, e.g. the free audit route per
// address), and skips it synchronously for requests no plan limits (public routes, Enterprise keys).
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify'
import { PLAN_REQUESTS_PER_MINUTE, type Plan } from '../accounts/model.ts'
import { RateLimited } from '../errors.ts'

export const RATE_WINDOW_MS = 60_000 // 1 min

export interface RateLimitOptions {
  /** Requests per minute by plan; null is unlimited. Defaults to PLAN_REQUESTS_PER_MINUTE. */
  perMinute?: Partial<Record<Plan, number | null>>
}

function append<T> (current: T | T[] | undefined, hook: T): T[] {
  return current === undefined ? [hook] : Array.isArray(current) ? [...current, hook] : [current, hook]
}

export default fp(async function rateLimitPlugin (app: FastifyInstance, opts: RateLimitOptions) {
  const perMinute = { ...PLAN_REQUESTS_PER_MINUTE, ...opts.perMinute }
  const limitOf = (req: FastifyRequest): number | null => req.principal === null ? null : perMinute[req.principal.plan]
  await app.register(rateLimit, {
    global: false,
    hook: 'preHandler',
    timeWindow: RATE_WINDOW_MS,
    keyGenerator: (req) => req.principal == null ? 'anonymous' : `${req.principal.organizationId}/${req.principal.plan}`,
    allowList: (req) => limitOf(req) === null,
    max: (req) => limitOf(req) ?? Number.MAX_SAFE_INTEGER,
    errorResponseBuilder: (_req, ctx) => new RateLimited(`At most ${ctx.max} requests per minute on this key's plan, for all of its organization's keys on that plan; retry in ${ctx.after}`)
  })
  const counted = app.rateLimit()
  app.addHook('onRoute', (route: RouteOptions) => {
    if (route.config?.rateLimit != null) return // its own limit (or none: false), applied by @fastify/rate-limit
    route.preHandler = append(route.preHandler, function planRateLimit (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
      if (limitOf(req) === null) { done(); return }
      counted.call(app, req, reply).then(() => done(), done)
    })
  })
}, { name: 'bwnet-rate-limit', dependencies: ['bwnet-problem'] })
