// Who may call a route. A route opts in with `config.auth`; this plugin's onRoute hook turns that
// into an onRequest hook (before the body is read) and the route's OpenAPI `security`.
//
//   config: { auth: { roles: ['client'] } }                       Bearer or X-Api-Key, role client
//   config: { auth: { roles: ['client'], headers: 'x-api-key' } }  X-Api-Key only (destinations)
//   config: { auth: { telemetry: {} } }                            console key, telemetry:read,
//                                                                   org/project grant, paid snapshot read
//   config: { auth: { telemetry: { realtime: true } } }            + telemetry:realtime:read, 2x price
//   config: { auth: { telemetry: { orgOnly: true, price: 'sellAllowance' } } }  organization grant only
//
// Order of refusals: 401 (no/unknown/revoked/expired key) → 403 role → 403 scope → 403 grant;
// credits (402) and rate limits (429) follow in plugins/credits.ts and plugins/rate-limit.ts.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler, RouteOptions } from 'fastify'
import type { AccountsService, PriceName } from '../accounts/service.ts'
import type { KeyRole, Principal, Scope } from '../accounts/model.ts'
import { BadRequest, GrantTooNarrow, KeyExpired, KeyInvalid, KeyMissing, KeyRevoked, OperatorOnly, RoleForbidden, ScopeMissing } from '../errors.ts'

export type KeyHeaders = 'bearer-or-x-api-key' | 'x-api-key'

export interface TelemetryAuth {
  /** A realtime read: needs telemetry:realtime:read too, and costs twice the snapshot read. */
  realtime?: boolean
  /** Only an organization grant will do (the paid sell-allowance read); else org or project. */
  orgOnly?: boolean
  /** Which price the read costs; default 'realtime' when realtime, else 'snapshot'. */
  price?: PriceName
}

export interface RouteAuth {
  /** Key roles allowed; a telemetry route implies ['console']. */
  roles?: KeyRole[]
  /** Where the key may travel; default 'bearer-or-x-api-key', telemetry routes 'x-api-key'. */
  headers?: KeyHeaders
  /** Only the network operator's admin key (docs/security.md); 403 BWN_ERR_OPERATOR_ONLY otherwise. */
  operator?: boolean
  telemetry?: TelemetryAuth
  /** A WebSocket route: the key may also come as the subprotocol `bwnet.key.<key>` (browsers cannot set headers). */
  websocket?: boolean
}

declare module 'fastify' {
  interface FastifyContextConfig { auth?: RouteAuth }
  interface FastifyRequest {
    /** The caller's key, set by the auth guard; null on public routes. */
    principal: Principal | null
  }
}

export const TELEMETRY_SCOPE: Scope = 'telemetry:read'
export const REALTIME_SCOPE: Scope = 'telemetry:realtime:read'
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i
const BEARER_CHALLENGE = { 'www-authenticate': 'Bearer realm="bwnet"' }

/** The effective auth of a route, with telemetry defaults filled in. */
export function resolveAuth (auth: RouteAuth): Required<Pick<RouteAuth, 'roles' | 'headers'>> & RouteAuth {
  if (auth.telemetry !== undefined) return { ...auth, roles: ['console'], headers: 'x-api-key' }
  if (auth.roles === undefined || auth.roles.length === 0) throw new TypeError('config.auth needs roles or telemetry')
  return { ...auth, roles: auth.roles, headers: auth.headers ?? 'bearer-or-x-api-key' }
}

/** Subprotocol prefix that carries a key on WebSocket upgrades; `bwnet.v1` is the protocol the server picks. */
export const WS_KEY_PROTOCOL_PREFIX = 'bwnet.key.'
export const WS_PROTOCOL = 'bwnet.v1'

/** The key offered as a `bwnet.key.<key>` subprotocol, if any. */
export function keyFromProtocols (header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header.join(',') : header
  if (value === undefined) return undefined
  for (const p of value.split(',')) {
    const t = p.trim()
    if (t.startsWith(WS_KEY_PROTOCOL_PREFIX) && t.length > WS_KEY_PROTOCOL_PREFIX.length) return t.slice(WS_KEY_PROTOCOL_PREFIX.length)
  }
  return undefined
}

/** The key a request presents, by the route's header rule; throws 401/400 problems. */
export function presentedKey (req: FastifyRequest, headers: KeyHeaders, websocket = false): string {
  const apiKey = req.headers['x-api-key']
  const fromProtocol = websocket ? keyFromProtocols(req.headers['sec-websocket-protocol']) : undefined
  const fromHeader = typeof apiKey === 'string' && apiKey.length > 0 ? apiKey : fromProtocol
  if (headers === 'x-api-key') {
    if (fromHeader === undefined) throw new KeyMissing('Send the API key in the X-Api-Key header')
    return fromHeader
  }
  const authorization = req.headers.authorization
  const bearer = typeof authorization === 'string' ? BEARER.exec(authorization)?.[1] : undefined
  if (fromHeader !== undefined && bearer !== undefined && fromHeader !== bearer) throw new BadRequest('Authorization and X-Api-Key carry different keys')
  const key = fromHeader ?? bearer
  if (key === undefined) throw Object.assign(new KeyMissing('Send the API key as Authorization: Bearer <key> or in X-Api-Key'), { headers: BEARER_CHALLENGE })
  return key
}

export const KEY_CACHE_ENTRIES = 10_000 // authenticated keys remembered (cleared when full)

/**
 * Remembers keys that authenticated, so a hot key costs a map lookup instead of a store read and a
 * hash. An entry is used only while the accounts' key generation is unchanged (any revocation
 * empties the cache, so the next request with a revoked key is refused) and the key is not expired.
 * Refusals are never cached.
 */
export class KeyCache {
  readonly accounts: AccountsService
  readonly now: () => number
  readonly #entries = new Map<string, { principal: Principal, expiresAtMs: number }>()
  #generation: number
  constructor (accounts: AccountsService, now: () => number = () => Date.now()) {
    this.accounts = accounts
    this.now = now
    this.#generation = accounts.keyGeneration
  }

  /** The principal of a key that authenticated before and is still good, without any await; else undefined. */
  hit (key: string): Principal | undefined {
    if (this.accounts.keyGeneration !== this.#generation) {
      this.#entries.clear()
      this.#generation = this.accounts.keyGeneration
      return undefined
    }
    const hit = this.#entries.get(key)
    return hit !== undefined && hit.expiresAtMs > this.now() ? hit.principal : undefined
  }

  async authenticate (key: string): ReturnType<AccountsService['authenticate']> {
    const hit = this.hit(key)
    if (hit !== undefined) return { ok: true, principal: hit }
    const generation = this.accounts.keyGeneration
    const result = await this.accounts.authenticate(key)
    // A revocation that raced this lookup changed the generation: do not remember what was read.
    if (result.ok && generation === this.accounts.keyGeneration && generation === this.#generation) {
      if (this.#entries.size >= KEY_CACHE_ENTRIES) this.#entries.clear()
      const expires = result.principal.expiresAt == null ? Infinity : Date.parse(result.principal.expiresAt)
      this.#entries.set(key, { principal: result.principal, expiresAtMs: expires })
    }
    return result
  }
}

const keyCaches = new WeakMap<AccountsService, KeyCache>()
/** One cache per accounts service (every guard of an app shares it). */
export function keyCacheOf (accounts: AccountsService): KeyCache {
  let cache = keyCaches.get(accounts)
  if (cache === undefined) { cache = new KeyCache(accounts, () => accounts.now()); keyCaches.set(accounts, cache) }
  return cache
}

/**
 * The onRequest guard of a route. A key in the cache is admitted synchronously (no promise on the hot
 * path); any other is looked up in the store first.
 */
export function authGuard (accounts: AccountsService, auth: RouteAuth): onRequestHookHandler {
  const rule = resolveAuth(auth)
  const challenge = rule.headers === 'bearer-or-x-api-key' ? { headers: BEARER_CHALLENGE } : {}
  const cache = keyCacheOf(accounts)
  const roles = `${rule.roles.join(' or ')} key`
  /** Sets the principal, or throws the refusal of a key that authenticated but may not use the route. */
  function admit (req: FastifyRequest, p: Principal): void {
    if (!rule.roles.includes(p.role)) throw new RoleForbidden(`A ${p.role} key cannot use this route; it needs a ${roles}`)
    if (rule.operator === true && p.operator !== true) throw new OperatorOnly('Only the network operator\'s admin key may use this route')
    if (rule.telemetry !== undefined) {
      if (!p.scopes.includes(TELEMETRY_SCOPE)) throw new ScopeMissing(`This route needs the ${TELEMETRY_SCOPE} scope`)
      if (rule.telemetry.realtime === true && !p.scopes.includes(REALTIME_SCOPE)) throw new ScopeMissing(`This route needs the ${REALTIME_SCOPE} scope`)
      if (rule.telemetry.orgOnly === true && p.grant !== 'organization') throw new GrantTooNarrow('This route needs a key granted at organization level')
      if (p.grant === 'environment') throw new GrantTooNarrow('Telemetry needs a key granted at organization or project level; an environment grant is not enough')
    }
    req.principal = p
  }
  function lookUp (req: FastifyRequest, key: string, done: HookHandlerDoneFunction): void {
    cache.authenticate(key).then((result) => {
      if (!result.ok) {
        const err = result.reason === 'revoked' ? new KeyRevoked() : result.reason === 'expired' ? new KeyExpired() : new KeyInvalid()
        throw Object.assign(err, challenge)
      }
      admit(req, result.principal)
    }).then(() => done(), done)
  }
  return function authenticate (req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    let key: string
    let admitted = false
    try {
      key = presentedKey(req, rule.headers, rule.websocket === true)
      const cached = cache.hit(key)
      if (cached !== undefined) { admit(req, cached); admitted = true }
    } catch (err) {
      done(err as Error)
      return
    }
    if (admitted) done()
    else lookUp(req, key, done)
  }
}

/** OpenAPI security requirement of a route. */
export function securityOf (auth: RouteAuth): Array<Record<string, string[]>> {
  return resolveAuth(auth).headers === 'x-api-key' ? [{ consoleKey: [] }] : [{ bearerAuth: [] }, { apiKey: [] }]
}

function append<T> (current: T | T[] | undefined, hook: T): T[] {
  return current === undefined ? [hook] : Array.isArray(current) ? [...current, hook] : [current, hook]
}

export default fp(async function authPlugin (app: FastifyInstance, opts: { accounts: AccountsService }) {
  app.decorateRequest('principal', null)
  app.addHook('onRoute', (route: RouteOptions) => {
    const auth = route.config?.auth
    if (auth === undefined) {
      // A route that documents a key but does not declare `config.auth` would check it (if at all) in a
      // later hook, after its body is parsed and validated: a keyless bad body would get 400, not 401.
      if ((route.schema as { security?: unknown[] } | undefined)?.security?.length) throw new TypeError(`${String(route.method)} ${route.url} declares security without config.auth; declare its key in config.auth`)
      return
    }
    route.onRequest = append(route.onRequest, authGuard(opts.accounts, auth))
    route.schema = route.schema ?? {}
    ;(route.schema as Record<string, unknown>).security ??= securityOf(auth)
  })
}, { name: 'bwnet-auth', dependencies: ['bwnet-problem'] })
