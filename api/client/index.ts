// The typed client of the bwnet API: openapi-fetch over the types openapi-typescript generated from
// the live /openapi.json (schema.ts; `npm run client:generate` rewrites it, and a test fails when the
// committed file differs from what the live document generates). The CLI and the tests call the API
// through it, so a route whose schema changes breaks their compilation instead of drifting silently.
import createClient, { type Client, type Middleware } from 'openapi-fetch'
import type { paths } from './schema.ts'

export type { paths, components, operations } from './schema.ts'
export type ApiClient = Client<paths>

export interface ApiClientOptions {
  /** The API key; sent as `Authorization: Bearer` (transfer routes) or `X-Api-Key` (telemetry, destinations). */
  key?: string
  keyHeader?: 'bearer' | 'x-api-key'
  /** A fetch to use instead of the global one (tests inject app.inject-backed ones). */
  fetch?: typeof globalThis.fetch
}

/** A typed client of the API at `baseUrl` (e.g. http://127.0.0.1:8000). */
export function createApiClient (baseUrl: string, opts: ApiClientOptions = {}): ApiClient {
  const client = createClient<paths>({ baseUrl: baseUrl.replace(/\/+$/, ''), ...(opts.fetch !== undefined ? { fetch: opts.fetch } : {}) })
  if (opts.key !== undefined) {
    const key = opts.key
    const auth: Middleware = {
      onRequest ({ request }) {
        if (opts.keyHeader === 'x-api-key') request.headers.set('x-api-key', key)
        else request.headers.set('authorization', `Bearer ${key}`)
        return request
      }
    }
    client.use(auth)
  }
  return client
}

// Following a transfer's live events (GET /transfers/{id}/events), for progress bars.
export { followTransferEvents, FollowError, eventsUrl, type FollowOptions, type FollowResult } from './events.ts'
