// The web dashboard at {dashboard_url}/ (docs/dashboard.md): one static page and its assets, served
// from this package (uPlot from its npm package, never a CDN) under a strict Content-Security-Policy.
// The page holds no data of its own: it calls the API with keys the user pastes (kept in the tab's
// sessionStorage only) — REST routes for lists and reads, the live WebSocket routes for progress and
// the network summary.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fastifyStatic from '@fastify/static'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

export const DASHBOARD_ASSETS_PREFIX = '/dashboard/'
const PUBLIC_DIR = join(import.meta.dirname, 'public')
const UPLOT_DIR = dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'))
const UPLOT_FILES = ['uPlot.iife.min.js', 'uPlot.min.css']
const ASSET_MAX_AGE_S = 300 // 5 min: assets change with the package version
/** Hosts the CSP names for the page's WebSocket (the request's own Host, when it is well formed). */
const HOST = /^[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?$/

/**
 * Only this origin, for everything: scripts and styles from files (no inline code), data only to the
 * API and its WebSockets, no frames, no forms posting elsewhere, no plugins.
 */
export function dashboardCsp (host: string | undefined): string {
  const ws = host !== undefined && HOST.test(host) ? ` ws://${host} wss://${host}` : ''
  return [
    "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "font-src 'self'",
    `connect-src 'self'${ws}`, "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'", "object-src 'none'"
  ].join('; ')
}

function secure (req: FastifyRequest, reply: FastifyReply): void {
  void reply.header('content-security-policy', dashboardCsp(req.headers.host))
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
}

export default async function dashboardRoutes (app: FastifyInstance): Promise<void> {
  app.addHook('onSend', async (req, reply, payload) => { secure(req, reply); return payload })
  await app.register(fastifyStatic, { root: PUBLIC_DIR, prefix: DASHBOARD_ASSETS_PREFIX, index: false, maxAge: ASSET_MAX_AGE_S * 1000, schemaHide: true, allowedPath: (path) => !path.includes('..') })
  app.get('/', { schema: { hide: true } }, async (_req, reply) => reply.header('cache-control', 'no-cache').sendFile('index.html', PUBLIC_DIR))
  for (const file of UPLOT_FILES) {
    app.get(`${DASHBOARD_ASSETS_PREFIX}vendor/${file}`, { schema: { hide: true } }, async (_req, reply) => reply.sendFile(file, UPLOT_DIR, { maxAge: ASSET_MAX_AGE_S * 1000 }))
  }
}
