// The HTTP API as a Fastify instance, built without listening (tests use app.inject()).
import Fastify, { type FastifyInstance } from 'fastify'
import { randomUUID } from 'node:crypto'
import problem from './problem.ts'
import auth from './plugins/auth.ts'
import credits from './plugins/credits.ts'
import rateLimit from './plugins/rate-limit.ts'
import openapi from './plugins/openapi.ts'
import healthRoutes from './routes/health.ts'
import adminRoutes, { ADMIN_PREFIX } from './routes/admin.ts'
import transferRoutes from './routes/transfers.ts'
import destinationRoutes from './routes/destinations.ts'
import telemetryRoutes from './routes/telemetry.ts'
import auditRoutes from './routes/audit.ts'
import type { ApiDeps } from './deps.ts'
import { requestSerializer } from './log-redaction.ts'
import { buildValidator } from './validation.ts'

export const BODY_LIMIT = 1024 * 1024 // 1 MiB for JSON bodies; chunk routes set their own

/** Header values pino must never write: API keys travel in these. */
export const REDACTED_PATHS = ['req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]']

/**
 * Builds the app with its cross-cutting plugins registered. Route groups registered afterwards (here
 * or by the caller before `ready()`) get auth, credits, rate limits and OpenAPI from their
 * `config.auth` and `schema`.
 */
export async function buildApp (deps: ApiDeps): Promise<FastifyInstance> {
  const app = Fastify({
    // Request lines carry the URL with signatures and key-shaped values redacted (log-redaction.ts).
    loggerInstance: deps.logger.child({}, { redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, serializers: { req: requestSerializer } }),
    genReqId: () => randomUUID(),
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    // Path ids up to 128 characters (audit orchestratorId/workerId) must reach validation, not 404.
    routerOptions: { maxParamLength: 256 },
    // Bodies are validated without type coercion, querystrings and params with it (validation.ts).
    schemaController: { compilersFactory: { buildValidator: buildValidator as never } }
  })
  await app.register(problem)
  await app.register(openapi)
  // Order matters: the rate limit's preHandler runs before the credit check; auth runs onRequest.
  await app.register(rateLimit, { perMinute: deps.planRequestsPerMinute })
  await app.register(auth, { accounts: deps.accounts })
  await app.register(credits, { accounts: deps.accounts })
  await app.register(healthRoutes, { deps })
  await app.register(adminRoutes, { deps, prefix: ADMIN_PREFIX })
  if (deps.transfers) await app.register(transferRoutes, { deps })
  if (deps.destinations) await app.register(destinationRoutes, { deps })
  if (deps.telemetry) await app.register(telemetryRoutes, { deps })
  if (deps.audit) await app.register(auditRoutes, { deps })
  return app
}
