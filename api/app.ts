// The HTTP API as a Fastify instance, built without listening (tests use app.inject()).
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import { randomUUID } from 'node:crypto'
import problem, { clientErrorHandler, frameworkErrors } from './problem.ts'
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
import liveRoutes from './routes/live.ts'
import dashboardRoutes from './dashboard/index.ts'
import websocket from '@fastify/websocket'
import { WS_PROTOCOL, WS_KEY_PROTOCOL_PREFIX } from './plugins/auth.ts'
import { CLOSE_CODES } from '../protocol/index.ts'
import type { ApiDeps } from './deps.ts'
import { requestSerializer } from './log-redaction.ts'
import { buildValidator, lazySerializers } from './validation.ts'
import { closeStalledBodies, BODY_DEADLINE_MS } from './body-pace.ts'

export const BODY_LIMIT = 1024 * 1024 // 1 MiB for JSON bodies; chunk routes set their own
/**
 * A connection that sends and takes nothing for this long is closed: a body that stopped coming (a chunk
 * upload's socket, its temp file and its hash held for ever otherwise). Reads and sink writes have their
 * own 60 s stall cuts; WebSockets are exempt (ws clears the socket's timeout on upgrade).
 */
export const SOCKET_IDLE_TIMEOUT_MS = 120_000

/** Header values pino must never write: API keys travel in these. */
export const REDACTED_PATHS = ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers["sec-websocket-protocol"]', 'headers.authorization', 'headers["x-api-key"]', 'headers["sec-websocket-protocol"]']

/** Frames a client may send on a live socket (they are server → client; a larger one is closed with 1009). */
export const WS_MAX_PAYLOAD = 4096 // bytes

/**
 * The subprotocol the server answers an upgrade with: `bwnet.v1` when offered, else none. A browser
 * that sends its key as `bwnet.key.<key>` offers `bwnet.v1` beside it, so the key is never echoed.
 */
export function pickProtocol (protocols: Set<string>): string | false {
  if (protocols.has(WS_PROTOCOL)) return WS_PROTOCOL
  for (const p of protocols) if (!p.startsWith(WS_KEY_PROTOCOL_PREFIX)) return p
  return false
}

/** Grace (ms) a live socket gets to take its 1001 close frame on shutdown before it is cut. */
const WS_SHUTDOWN_GRACE_MS = 1_000

/** On app.close(): every live socket is told 1001 (going away), and cut if it does not close in time. */
function closeLiveSockets (this: FastifyInstance, done: () => void): void {
  const server = this.websocketServer
  for (const client of server.clients) {
    client.close(CLOSE_CODES.goingAway, 'server shutting down')
    setTimeout(() => client.terminate(), WS_SHUTDOWN_GRACE_MS).unref()
  }
  server.close()
  done()
}

/**
 * One access line per request, written when it is answered: method, redacted URL, peer, status and
 * response time together (Fastify's default writes two, one on arrival and one on answer, which on
 * a node moving small transfers was a tenth of every request's work: six internal requests per
 * transfer). A request that ends without an answer (the client went away, a streamed body was cut)
 * gets a `request aborted` line when its connection closes; a WebSocket is logged when it opens and
 * closes (api/routes/live.ts). A request still in flight shows in the metrics, not the log.
 */
class AccessLog extends LogController {
  override incomingRequest (request: FastifyRequest, reply: FastifyReply): void {
    // Nothing to watch for when the line could not be written (a quieter level: no per-request listener).
    if (this.isLogDisabled(request) || !enabled(request.log, 'info') || request.headers.upgrade?.toLowerCase() === 'websocket') return
    const raw = reply.raw
    raw.once('close', () => {
      if (raw.writableFinished || ANSWERED.has(request)) return
      reply.log.info({ req: request, res: { statusCode: raw.headersSent ? raw.statusCode : null }, responseTime: reply.elapsedTime }, 'request aborted')
    })
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return
    const log = reply.log
    if (error) { ANSWERED.add(request); log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored'); return }
    // Above info nothing below is written, and no close listener waits (incomingRequest): done.
    if (!enabled(log, 'info')) return
    ANSWERED.add(request)
    // Node-to-node traffic (a node sink, staged chunk bytes: six requests per transfer) that went well
    // is at debug; a refusal there (a bad or expired signature, a conflict) stays at info.
    if (reply.statusCode < 400 && request.routeOptions.config?.internal === true) {
      if (enabled(log, 'debug')) log.debug({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
    } else log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
  }
}
const enabled = (log: FastifyBaseLogger, level: 'info' | 'debug'): boolean =>
  (log as FastifyBaseLogger & { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled?.(level) ?? true
/** Requests whose access line was written (a close after the answer writes none). */
const ANSWERED = new WeakSet<FastifyRequest>()

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A node-to-node signed route (docs/api.md#internal-signed-routes): its successful answers are logged at debug. */
    internal?: boolean
  }
}

/**
 * Builds the app with its cross-cutting plugins registered. Route groups registered afterwards (here
 * or by the caller before `ready()`) get auth, credits, rate limits and OpenAPI from their
 * `config.auth` and `schema`.
 */
export async function buildApp (deps: ApiDeps): Promise<FastifyInstance> {
  const app = Fastify({
    // Request lines carry the URL with signatures and key-shaped values redacted (log-redaction.ts).
    loggerInstance: deps.logger.child({}, { redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, serializers: { req: requestSerializer } }),
    logController: new AccessLog(),
    genReqId: () => randomUUID(),
    // A logger that writes nothing (level silent) gets no per-request child: the request id it would
    // bind could never be written, and a child costs a pino child per request on the hot read path.
    childLoggerFactory: (logger, bindings, opts) => (opts.level === undefined && logger.level === 'silent' ? logger : logger.child(bindings, opts)),
    bodyLimit: BODY_LIMIT,
    connectionTimeout: deps.socketIdleTimeoutMs ?? SOCKET_IDLE_TIMEOUT_MS,
    return503OnClosing: true,
    // Answers given before a route runs, and the HTTP parser's refusals, are problem+json too.
    frameworkErrors,
    clientErrorHandler,
    // Path ids up to 128 characters (audit orchestratorId/workerId) must reach validation, not 404.
    routerOptions: { maxParamLength: 256 },
    // Bodies are validated without type coercion, querystrings and params with it (validation.ts).
    // Each route's schemas are compiled on its first request, not at start (validation.ts).
    schemaController: { compilersFactory: { buildValidator: buildValidator as never, buildSerializer: lazySerializers(SerializerSelector() as never) as never } }
  })
  // Bodies that trickle, or that no one reads, do not hold their connection (body-pace.ts).
  app.addHook('onRequest', closeStalledBodies(deps.bodyDeadlineMs ?? BODY_DEADLINE_MS))
  await app.register(problem)
  await app.register(openapi)
  // Order matters: the rate limit's preHandler runs before the credit check; auth runs onRequest.
  await app.register(rateLimit, { perMinute: deps.planRequestsPerMinute })
  await app.register(auth, { accounts: deps.accounts })
  await app.register(credits, { accounts: deps.accounts })
  await app.register(websocket, { options: { maxPayload: WS_MAX_PAYLOAD, handleProtocols: pickProtocol }, preClose: closeLiveSockets })
  await app.register(healthRoutes, { deps })
  await app.register(adminRoutes, { deps, prefix: ADMIN_PREFIX })
  if (deps.transfers) await app.register(transferRoutes, { deps })
  if (deps.destinations) await app.register(destinationRoutes, { deps })
  if (deps.telemetry) await app.register(telemetryRoutes, { deps })
  if (deps.audit) await app.register(auditRoutes, { deps })
  if ((deps.transfers && deps.transferEvents) || deps.telemetry) await app.register(liveRoutes, { deps })
  // The web dashboard at {dashboard_url}/ (orchestrators: the node that holds transfers and audit rows).
  if (deps.transfers) await app.register(dashboardRoutes)
  return app
}
