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

export interface OpenApiOptions { title?: string, version?: string, description?: string }

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An OpenAPI requestBody for a body the route reads itself (raw bytes), keyed by media type. */
    openapiRequestBody?: { description?: string, required?: boolean, content: Record<string, { schema: Record<string, unknown> }> }
  }
}

type Json = Record<string, any>
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
 * summary on every operation, `security: []` on public ones, declared raw request bodies, and named
 * component schemas for every titled schema.
 */
export function finalizeDocument (source: Json, requestBodies: Map<string, NonNullable<import('fastify').FastifyContextConfig['openapiRequestBody']>>): Json {
  const doc = structuredClone(source) // the generated objects may share schemas with the routes
  doc.servers = [{ url: '/', description: 'The node serving this document (an orchestrator; port 8000 by default)' }]
  for (const [path, item] of Object.entries(doc.paths ?? {}) as Array<[string, Json]>) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined
      if (op === undefined) continue
      op.operationId ??= operationIdOf(method, path)
      op.summary ??= `${method.toUpperCase()} ${path}`
      op.security ??= []
      const body = requestBodies.get(`${method.toUpperCase()} ${path}`)
      if (body !== undefined && op.requestBody === undefined) op.requestBody = body
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
  const requestBodies = new Map<string, NonNullable<import('fastify').FastifyContextConfig['openapiRequestBody']>>()
  app.addHook('onRoute', (route: RouteOptions) => {
    const body = route.config?.openapiRequestBody
    if (body === undefined) return
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) requestBodies.set(`${m} ${openapiPath(route.url)}`, body)
  })
  await app.register(swagger, {
    transformObject: (documentObject) => finalizeDocument((documentObject as { openapiObject: Json }).openapiObject, requestBodies) as never,
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
  await app.register(swaggerUi, { routePrefix: SWAGGER_UI_PATH, staticCSP: true })

  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger())

  const require = createRequire(import.meta.url)
  let bundle: string | undefined
  app.get(REDOC_PATH, { schema: { hide: true } }, async (_req, reply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', REDOC_CSP).send(REDOC_HTML))
  app.get(`${REDOC_PATH}/redoc.standalone.js`, { schema: { hide: true } }, async (_req, reply) => {
    bundle ??= (await readFile(require.resolve(REDOC_BUNDLE), 'utf8')).replaceAll(REDOC_REMOTE_LOGO, EMPTY_SVG)
    return reply.type('application/javascript; charset=utf-8').header('cache-control', `public, max-age=${ASSET_MAX_AGE_S}`).send(bundle)
  })
}, { name: 'bwnet-openapi' })
