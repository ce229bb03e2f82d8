// The HTTP API as a Fastify instance, built without listening (tests use app.inject()).
import Fastify, { type FastifyInstance } from 'fastify'
import { randomUUID } from 'node:crypto'
import problem from './problem.ts'
import healthRoutes from './routes/health.ts'
import type { ApiDeps } from './deps.ts'

export const BODY_LIMIT = 1024 * 1024 // 1 MiB for JSON bodies; chunk routes set their own

export async function buildApp (deps: ApiDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger,
    genReqId: () => randomUUID(),
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } }
  })
  await app.register(problem)
  await app.register(healthRoutes, { deps })
  return app
}
