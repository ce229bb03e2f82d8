// The API's description: OpenAPI 3.1 generated from the route schemas (@fastify/swagger) at
// /openapi.json, Swagger UI at /docs and ReDoc at /redoc. Every asset is served from this host
// (the UI's files from @fastify/swagger-ui, ReDoc's standalone bundle from the redoc package); the
// pages load nothing from elsewhere.
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
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
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
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
