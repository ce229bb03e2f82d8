// Requests per minute per key, by the key's plan (seed §8: Free 60, Pro 300, Enterprise unlimited).
// Counted per key id, after authentication (preHandler), so refused keys and public routes are not
// counted here. Over the limit: 429 problem+json with Retry-After.
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { PLAN_REQUESTS_PER_MINUTE, type Plan } from '../accounts/model.ts'
import { RateLimited } from '../errors.ts'

export const RATE_WINDOW_MS = 60_000 // 1 min

export interface RateLimitOptions {
  /** Requests per minute by plan; null is unlimited. Defaults to PLAN_REQUESTS_PER_MINUTE. */
  perMinute?: Partial<Record<Plan, number | null>>
}

export default fp(async function rateLimitPlugin (app: FastifyInstance, opts: RateLimitOptions) {
  const perMinute = { ...PLAN_REQUESTS_PER_MINUTE, ...opts.perMinute }
  const limitOf = (req: FastifyRequest): number | null => req.principal === null ? null : perMinute[req.principal.plan]
  await app.register(rateLimit, {
    global: true,
    hook: 'preHandler',
    timeWindow: RATE_WINDOW_MS,
    keyGenerator: (req) => req.principal?.keyId ?? 'anonymous',
    allowList: (req) => limitOf(req) === null,
    max: (req) => limitOf(req) ?? Number.MAX_SAFE_INTEGER,
    errorResponseBuilder: (_req, ctx) => new RateLimited(`At most ${ctx.max} requests per minute on this key's plan; retry in ${ctx.after}`)
  })
}, { name: 'bwnet-rate-limit', dependencies: ['bwnet-problem'] })
