// The API's description: OpenAPI 3.1 generated from the route schemas (@fastify/swagger) at
// /openapi.json, Swagger UI at /docs and ReDoc at /redoc. Every asset is served from this host
// (the UI's files from @fastify/swagger-ui, ReDoc's standalone bundle from the redoc package); the
// pages load nothing from elsewhere.
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { createRequire } from 'node:module'
import { readFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { STATUS_CODES } from 'node:http'
import { ProblemSchema } from '../responses.ts'

export const OPENAPI_PATH = '/openapi.json'
export const SWAGGER_UI_PATH = '/docs'
export const REDOC_PATH = '/redoc'
const REDOC_BUNDLE = 'redoc/bundles/redoc.standalone.js'
const ASSET_MAX_AGE_S = 3600 // 1 h
// The bundle's attribution footer loads its logo from the vendor's CDN; served here it points at an
// empty inline image instead, so the page makes no request to another host.
const REDOC_REMOTE_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg'
const EMPTY_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E"
// Belt and braces: the browser itself refuses anything from another origin.
const REDOC_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'self'"
const SWAGGER_UI_PRESET = '@fastify/swagger-ui/static/swagger-ui-standalone-preset.js'
/**
 * Swagger UI's policy. The package's own (`staticCSP: true`) forbids the one `<style>` element the UI
 * renders (the logo's SVG, in the standalone preset), so the browser logged a violation on every load
 * of /docs; it also allowed fonts and styles from any https host and the public validator's images,
 * and upgraded requests to https, which breaks the page served over plain http to another host than
 * loopback. Here: scripts and style sheets from this host only, the preset's own `<style>` texts by
 * their sha256 (read from the installed package, so an upgrade keeps them true), no style attribute
 * in markup (the UI sets styles through the DOM, which the policy does not govern), nothing from elsewhere.
 */
export function swaggerUiCsp (): string {
  const preset = readFileSync(createRequire(import.meta.url).resolve(SWAGGER_UI_PRESET), 'utf8')
  const hashes = [...preset.matchAll(/createElement\("style",null,("(?:[^"\\]|\\.)*")\)/g)]
    .map(m => `'sha256-${createHash('sha256').update(JSON.parse(m[1]!) as string).digest('base64')}'`)
  return [
    "default-src 'self'", "base-uri 'self'", "font-src 'self' data:", "frame-ancestors 'self'", "img-src 'self' data:",
    "object-src 'none'", "script-src 'self'", "script-src-attr 'none'", "style-src 'self'",
    ["style-src-elem 'self'", ...new Set(hashes)].join(' '), "style-src-attr 'none'", "connect-src 'self'", "form-action 'self'"
  ].join('; ')
}
// The page's icon, served next to it: without one the browser asks for /favicon.ico and logs its 404.
const REDOC_ICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f6feb"/></svg>'

export interface OpenApiOptions { title?: string, version?: string, description?: string }

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An OpenAPI requestBody for a body the route reads itself (raw bytes), keyed by media type. */
    openapiRequestBody?: { description?: string, required?: boolean, content: Record<string, { schema: Record<string, unknown> }> }
  }
}

type Json = Record<string, any>
type RequestBody = NonNullable<import('fastify').FastifyContextConfig['openapiRequestBody']>

/** What the plugin learns from each route's config (not its schema) for the document. */
export interface RouteFacts {
  /** Raw request bodies, by `METHOD /path`. */
  requestBodies: Map<string, RequestBody>
  /** Conditional reads (`config.read`): their 200 and 304 carry an ETag. By `GET /path`. */
  conditional: Set<string>
  /** Paid reads (`config.auth.telemetry`, not WebSocket): credit headers on 200 (GET only; no HEAD is served). */
  paid: Set<string>
}

export const emptyFacts = (): RouteFacts => ({ requestBodies: new Map(), conditional: new Set(), paid: new Set() })

const ETAG_HEADER = { description: 'The version of the answer; send it back in If-None-Match for a 304', schema: { type: 'string' } }
const CREDIT_HEADERS = {
  'X-Credits-Charged': { description: 'Credits this read cost the organization', schema: { type: 'string', pattern: '^[0-9]+$' } },
  'X-Credits-Remaining': { description: 'The organization\'s balance after the charge', schema: { type: 'string', pattern: '^-?[0-9]+$' } }
}
const RETRY_AFTER_HEADER = { description: 'Seconds to wait before trying again', schema: { type: 'string', pattern: '^[0-9]+$' } }

/** Declares the headers the server sends: ETag, the credit headers, Retry-After on every 429. */
function declareHeaders (op: Json, key: string, facts: RouteFacts): void {
  const add = (status: string, headers: Json): void => {
    const r = op.responses?.[status] as Json | undefined
    if (r !== undefined) r.headers = { ...r.headers, ...headers }
  }
  // @fastify/swagger describes a response schema without a description as 'Default Response': name the status instead.
  for (const [status, r] of Object.entries((op.responses ?? {}) as Json)) {
    if (r.description === 'Default Response') r.description = STATUS_CODES[Number(status)] ?? 'Response'
  }
  add('429', { 'Retry-After': RETRY_AFTER_HEADER })
  if (facts.conditional.has(key)) { add('200', { ETag: ETAG_HEADER }); add('304', { ETag: ETAG_HEADER }) }
  if (facts.paid.has(key)) add('200', CREDIT_HEADERS)
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']
const COMPONENT_NAME = /^[A-Z][A-Za-z0-9]*$/

/** getV1TelemetryNetworkHistory, postTransfersByIdChunks: unique and stable per method and path. */
export function operationIdOf (method: string, path: string): string {
  const words = path.split('/').filter(Boolean).map(seg => {
    const param = /^\{(.+)\}$/.exec(seg)
    const text = param !== null ? `by-${param[1]}` : seg
    return text.split(/[^A-Za-z0-9]+/).filter(Boolean).map(w => w[0]!.toUpperCase() + w.slice(1)).join('')
  })
  return method.toLowerCase() + words.join('')
}

const sameIgnoringDescription = (a: Json, b: Json): boolean => {
  const { description: _a, ...ra } = a
  const { description: _b, ...rb } = b
  return JSON.stringify(ra) === JSON.stringify(rb)
}

/** Moves every schema with a component-like `title` to components.schemas and refers to it. */
function hoistTitled (doc: Json): void {
  const schemas: Json = (doc.components.schemas ??= {})
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit)
    if (node === null || typeof node !== 'object') return node
    const obj = node as Json
    for (const k of Object.keys(obj)) obj[k] = visit(obj[k])
    if (typeof obj.title === 'string' && COMPONENT_NAME.test(obj.title) && obj.$ref === undefined && (obj.type !== undefined || obj.anyOf !== undefined || obj.oneOf !== undefined)) {
      let name = obj.title as string
      for (let i = 2; schemas[name] !== undefined && !sameIgnoringDescription(schemas[name], obj); i++) name = `${obj.title}${i}`
      schemas[name] ??= obj
      return { $ref: `#/components/schemas/${name}` }
    }
    return obj
  }
  doc.paths = visit(doc.paths)
}

/**
 * What the generated document needs for linters and client generators: servers, an operationId and a
 * summary on every operation, `security: []` on public ones, declared raw request bodies, the response
 * headers the server sends, and named component schemas for every titled schema.
 */
export function finalizeDocument (source: Json, facts: RouteFacts): Json {
  const doc = structuredClone(source) // the generated objects may share schemas with the routes
  doc.servers = [{ url: '/', description: 'The node serving this document (an orchestrator; port 8000 by default)' }]
  for (const [path, item] of Object.entries(doc.paths ?? {}) as Array<[string, Json]>) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined
      if (op === undefined) continue
      op.operationId ??= operationIdOf(method, path)
      op.summary ??= `${method.toUpperCase()} ${path}`
      op.security ??= []
      const key = `${method.toUpperCase()} ${path}`
      const body = facts.requestBodies.get(key)
      if (body !== undefined && op.requestBody === undefined) op.requestBody = body
      declareHeaders(op, key, facts)
    }
  }
  hoistTitled(doc)
  return doc
}

/** /transfers/:id/chunks → /transfers/{id}/chunks */
const openapiPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

// Relative URLs keep the page working behind a path prefix.
const REDOC_HTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bwnet API</title>
<link rel="icon" type="image/svg+xml" href="redoc/favicon.svg">
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="openapi.json"></redoc>
<script src="redoc/redoc.standalone.js"></script>
</body>
</html>
`

export default fp(async function openapiPlugin (app: FastifyInstance, opts: OpenApiOptions) {
  app.addSchema(ProblemSchema)
  const facts = emptyFacts()
  app.addHook('onRoute', (route: RouteOptions) => {
    const config = route.config
    if (config === undefined || route.schema?.hide === true) return
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) {
      const key = `${m} ${openapiPath(route.url)}`
      if (config.openapiRequestBody !== undefined) facts.requestBodies.set(key, config.openapiRequestBody)
      if (m !== 'GET') continue
      if (config.read !== undefined) facts.conditional.add(key)
      const websocket = config.auth?.websocket === true || (route as { wsHandler?: unknown }).wsHandler !== undefined
      if (config.auth?.telemetry !== undefined && !websocket) facts.paid.add(key)
    }
  })
  await app.register(swagger, {
    transformObject: (documentObject) => finalizeDocument((documentObject as { openapiObject: Json }).openapiObject, facts) as never,
    openapi: {
      openapi: '3.1.0',
      info: {
        license: { name: 'MIT', identifier: 'MIT' },
        title: opts.title ?? 'bwnet API',
        version: opts.version ?? '0.1.0',
        description: opts.description ?? 'Transfers, destinations, telemetry and administration of a bwnet network. Errors are RFC 9457 problem+json with a stable `code`.'
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'The same API key in X-Api-Key' },
          consoleKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'Telemetry and destination routes: the key in X-Api-Key' }
        }
      }
    },
    // Shared schemas keep their $id as component name (e.g. #/components/schemas/Problem).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}` }
  })
  await app.register(swaggerUi, { routePrefix: SWAGGER_UI_PATH, staticCSP: swaggerUiCsp() })

  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger())

  const require = createRequire(import.meta.url)
  let bundle: string | undefined
  app.get(REDOC_PATH, { schema: { hide: true } }, async (_req, reply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', REDOC_CSP).send(REDOC_HTML))
  app.get(`${REDOC_PATH}/favicon.svg`, { schema: { hide: true } }, async (_req, reply) =>
    reply.type('image/svg+xml').header('cache-control', `public, max-age=${ASSET_MAX_AGE_S}`).send(REDOC_ICON))
  app.get(`${REDOC_PATH}/redoc.standalone.js`, { schema: { hide: true } }, async (_req, reply) => {
    bundle ??= (await readFile(require.resolve(REDOC_BUNDLE), 'utf8')).replaceAll(REDOC_REMOTE_LOGO, EMPTY_SVG)
    return reply.type('application/javascript; charset=utf-8').header('cache-control', `public, max-age=${ASSET_MAX_AGE_S}`).send(bundle)
  })
}, { name: 'bwnet-openapi' })
