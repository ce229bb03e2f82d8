// Conditional reads: a route that declares `config.read` has its version resolved (ETag + a lazily
// built body) in the first preHandler, before the rate limit (429) and the credit check (402), so a
// matching If-None-Match is answered 304 whatever the balance or the request rate (seed §4.4 rule 1:
// "the answer is 304 and no charge is made"). Errors of the resolution (bad cursor, unknown
// snapshot) are held and thrown by the handler, so the limits keep their order in front of them.
//
// Bodies of immutable versions are serialized once: `BodyCache` keeps the encoded JSON per ETag, so a
// 200 of a published version costs a header write and a socket write of bytes already encoded.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction, preHandlerHookHandler, RouteHandlerMethod } from 'fastify'

export const BODY_CACHE_ENTRIES = 512 // serialized immutable versions kept (LRU)
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** One resolved read: its ETag and its JSON body (text, built only for a 200). */
export interface ReadResult {
  etag: string
  /** The ETag as sent (`quoteEtag(etag)`), when the resolver has it already. */
  quoted?: string
  body: () => string | Buffer | Promise<string | Buffer>
}

/** Called with the route's own request, so a resolver may take it as the route's schemas type it (method syntax: bivariant). */
export type ReadResolver = { resolve (req: FastifyRequest<any>): ReadResult | Promise<ReadResult> }['resolve']

declare module 'fastify' {
  interface FastifyContextConfig {
    read?: ReadResolver
    /**
     * Resolve the read after authentication and the plan's rate limit, not before them, and so count a
     * 304: for reads whose ETag costs the whole read (audit rows), where answering 304 first would give
     * unlimited full-cost reads.
     */
    readAfterLimits?: boolean
  }
  interface FastifyRequest {
    /** The resolved read of a conditional route (set by the first preHandler). */
    resolvedRead: ReadResult | { error: unknown } | null
  }
}

/** `"tag"` as sent in ETag headers. */
export const quoteEtag = (etag: string): string => (etag.startsWith('"') || etag.startsWith('W/"') ? etag : `"${etag}"`)

/**
 * True when the request's If-None-Match names `quoted` (weak comparison), or is `*` unless `wildcard`
 * is false: a paid read's (a client holding no version has nothing to revalidate, and a free 304 with
 * the current ETag would tell it every version change at no charge and past every limit).
 */
export function ifNoneMatch (req: FastifyRequest, quoted: string, wildcard = true): boolean {
  const header = req.headers['if-none-match']
  if (typeof header !== 'string') return false
  if (header === quoted) return true
  const strip = (t: string): string => { const s = t.trim(); return s.startsWith('W/') ? s.slice(2) : s }
  if (header.trim() === '*') return wildcard
  return header.split(',').some(t => strip(t) === strip(quoted))
}

/** True for a promise (or any thenable): results that may come synchronously or not. */
export const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => typeof (v as { then?: unknown } | null)?.then === 'function'

/**
 * The first preHandler of a conditional route: resolves the version and answers 304 on a match (the
 * chain stops there; on a `paid` route `*` is no match). Synchronous when the resolver is (single versions), so a hot read awaits nothing.
 */
export function resolveReadFirst (resolve: ReadResolver, opts: { paid?: boolean } = {}): preHandlerHookHandler {
  const wildcard = opts.paid !== true
  /** True when the reply went out as 304. */
  function settle (req: FastifyRequest, reply: FastifyReply, r: ReadResult): boolean {
    req.resolvedRead = r
    const quoted = r.quoted ?? quoteEtag(r.etag)
    void reply.header('etag', quoted)
    if (!ifNoneMatch(req, quoted, wildcard)) return false
    void reply.code(304).send()
    return true
  }
  return function notModifiedFirst (req: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    let r: ReadResult | Promise<ReadResult>
    try {
      r = resolve(req)
    } catch (error) {
      req.resolvedRead = { error }
      done()
      return
    }
    if (isPromise(r)) {
      r.then((v) => settle(req, reply, v), (error: unknown) => { req.resolvedRead = { error }; return false })
        .then((sent) => { if (!sent) done() }, done)
    } else if (!settle(req, reply, r)) {
      done()
    }
  }
}

/** The handler of a conditional route: throws the held error, or sends the body as JSON text. */
export const serveResolvedRead: RouteHandlerMethod = async function serveResolvedRead (req, reply) {
  const r = req.resolvedRead
  if (r === null) throw new Error('conditional route without a resolved read')
  if ('error' in r) throw r.error
  const body = await r.body()
  return reply.type(JSON_CONTENT_TYPE).send(body)
}

/**
 * A small LRU of the reads of immutable versions, keyed by ETag: one ReadResult per version (its
 * quoted ETag computed once, its body serialized to UTF-8 bytes on first use), so a hot read allocates
 * nothing here.
 */
export class BodyCache {
  readonly size: number
  readonly #entries = new Map<string, ReadResult>()
  #newest: string | null = null
  constructor (size = BODY_CACHE_ENTRIES) { this.size = size }

  /** The read of the version `etag`, whose body is `value` as JSON. */
  read (etag: string, value: unknown): ReadResult {
    const hit = this.#entries.get(etag)
    if (hit !== undefined) {
      if (this.#newest !== etag) { this.#entries.delete(etag); this.#entries.set(etag, hit); this.#newest = etag }
      return hit
    }
    let bytes: Buffer | null = null
    const result: ReadResult = { etag, quoted: quoteEtag(etag), body: () => (bytes ??= Buffer.from(JSON.stringify(value))) }
    this.#entries.set(etag, result)
    this.#newest = etag
    if (this.#entries.size > this.size) this.#entries.delete(this.#entries.keys().next().value as string)
    return result
  }
}
