// The typed API client (api/client) over app.inject: tests call routes through the same generated
// types the CLI uses, without a port.
import type { FastifyInstance } from 'fastify'
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../api/client/index.ts'

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304])

/** A fetch that answers from `app.inject`. */
export function injectFetch (app: FastifyInstance): typeof globalThis.fetch {
  return async (input, init) => {
    const req = input instanceof Request ? input : new Request(input, init)
    const url = new URL(req.url)
    const body = req.body === null ? undefined : Buffer.from(await req.arrayBuffer())
    const res = await app.inject({ method: req.method as never, url: url.pathname + url.search, headers: Object.fromEntries(req.headers), ...(body !== undefined ? { payload: body } : {}) })
    const headers = new Headers()
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : String(v))
    return new Response(NULL_BODY_STATUSES.has(res.statusCode) ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, headers })
  }
}

/** The typed client of an app under test. */
export function injectClient (app: FastifyInstance, opts: Omit<ApiClientOptions, 'fetch'> = {}): ApiClient {
  return createApiClient('http://bwnet.test', { ...opts, fetch: injectFetch(app) })
}
