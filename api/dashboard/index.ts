// The web dashboard at {dashboard_url}/ (docs/dashboard.md): one static page and its assets, served
// from this package (uPlot from its npm package, never a CDN) under a strict Content-Security-Policy.
// The page holds no data of its own: it calls the API with keys the user pastes (kept in the tab's
// sessionStorage only) — REST routes for lists and reads, the live WebSocket routes for progress and
// the network summary. The assets are a fixed list (no path from the request ever reaches the
// filesystem), read once and kept in memory (about 80 KB).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

export const DASHBOARD_ASSETS_PREFIX = '/dashboard/'
const PUBLIC_DIR = join(import.meta.dirname, 'public')
const UPLOT_DIR = dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'))
const ASSET_MAX_AGE_S = 300 // 5 min: assets change with the package version

/** URL path → file and type. */
const ASSETS: Record<string, { file: string, type: string }> = {
  '/': { file: join(PUBLIC_DIR, 'index.html'), type: 'text/html; charset=utf-8' },
  [`${DASHBOARD_ASSETS_PREFIX}app.js`]: { file: join(PUBLIC_DIR, 'app.js'), type: 'text/javascript; charset=utf-8' },
  [`${DASHBOARD_ASSETS_PREFIX}app.css`]: { file: join(PUBLIC_DIR, 'app.css'), type: 'text/css; charset=utf-8' },
  [`${DASHBOARD_ASSETS_PREFIX}favicon.svg`]: { file: join(PUBLIC_DIR, 'favicon.svg'), type: 'image/svg+xml' },
  [`${DASHBOARD_ASSETS_PREFIX}vendor/uPlot.iife.min.js`]: { file: join(UPLOT_DIR, 'uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  [`${DASHBOARD_ASSETS_PREFIX}vendor/uPlot.min.css`]: { file: join(UPLOT_DIR, 'uPlot.min.css'), type: 'text/css; charset=utf-8' }
}

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
  const cache = new Map<string, Buffer>()
  app.addHook('onSend', async (req, reply, payload) => { secure(req, reply); return payload })
  for (const [path, asset] of Object.entries(ASSETS)) {
    app.get(path, { schema: { hide: true } }, async (_req, reply) => {
      let body = cache.get(path)
      if (body === undefined) { body = await readFile(asset.file); cache.set(path, body) }
      return reply.type(asset.type).header('cache-control', path === '/' ? 'no-cache' : `public, max-age=${ASSET_MAX_AGE_S}`).send(body)
    })
  }
}
