// Which URLs and headers a client-created destination may name, and the guard that keeps the
// orchestrator and its workers from being pointed at the operator's own network (SSRF).
//
// At create (POST /destinations): the URL must be http(s), carry no userinfo, and every address its
// host resolves to must be public: loopback, private (RFC 1918, CGNAT, ULA), link-local (cloud metadata
// at 169.254.169.254), multicast, unspecified and reserved ranges are refused unless the operator allows
// them (`allowPrivateDestinations`, flag --allow-private-destinations, env BWN_ALLOW_PRIVATE_DESTINATIONS;
// the devnet sets it). Headers a client may set are limited to HEADER_ALLOWLIST. The orchestrator's
// policy for its tenants' destinations also refuses its own host's addresses (`own`: its interfaces and
// its public URL's), which are public but reach services bound on the host (hostAddresses); so does a
// worker's, for targets other than its coordinator's own node (node/adapters/chunk-mover.ts).
// At connection: a DNS answer can change after the check (rebinding), so every connection a destination
// driver or a worker opens resolves through `guardedLookup`, which refuses the same ranges on the
// address actually connected to; IP literals are checked by the connector; redirects are not followed.
// docs/security.md describes the policy; docs/errors.md the codes.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { isIP, BlockList, type LookupFunction } from 'node:net'
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type RequestOptions } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { Agent, buildConnector, fetch as undiciFetch } from 'undici'
import ipaddr from 'ipaddr.js'
import { networkInterfaces } from 'node:os'
import { DestinationPolicyError, AddressRefused, describeClass, type AddressClass } from '../../errors.ts'
export { DestinationPolicyError, AddressRefused }

export interface AddressPolicy {
  /** Allow loopback, private, link-local and the other refused ranges (devnet, tests, private networks). */
  allowPrivate: boolean
  /**
   * This host's own addresses, refused too (reason `own`) unless `allowPrivate`: a tenant's destination
   * at the node's public address would reach services bound there (a metrics port on 0.0.0.0). Not for
   * the node's own sink and data endpoint, which a worker or validator beside its orchestrator reaches at
   * that address. A function is asked at every check: a host's addresses change while it runs (IPv6
   * temporary addresses rotate, DHCP renumbers); `liveAddresses` keeps such a list fresh.
   */
  own?: readonly string[] | (() => readonly string[])
  /**
   * Which ranges are refused besides `own`: all (true, the default), none (false), or only these classes
   * (a worker's reads of other coordinators' data endpoints, node/adapters/chunk-mover.ts).
   */
  ranges?: boolean | readonly AddressClass[]
  /**
   * Classes refused even when `allowPrivate` (and whatever `ranges` says): a worker's reads of
   * coordinators' data endpoints refuse link-local (cloud metadata at 169.254.169.254) on every node.
   */
  always?: readonly AddressClass[]
}

/** Every address of this host's interfaces, of any range (zone ids dropped). */
export function interfaceAddresses (): string[] {
  const out = new Set<string>()
  for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) out.add(i.address.replace(/%.*$/, ''))
  return [...out]
}

/** How long a live address list (`liveAddresses`) is kept before the interfaces are read again. */
export const OWN_ADDRESSES_TTL_MS = 60_000

/**
 * `read()` as a list kept for `ttlMs` (a monotonic clock: a wall clock stepped back would hold it) and
 * read again after: the same array while kept, so each check against it reuses one lookup structure. A
 * read that fails (os.networkInterfaces can, out of file descriptors) keeps the last list until the next
 * try: it runs inside connection checks, where a throw would reach no one.
 */
export function liveAddresses (read: () => readonly string[], ttlMs = OWN_ADDRESSES_TTL_MS, now: () => number = () => performance.now()): () => readonly string[] {
  let list = read()
  let at = now()
  return () => {
    if (now() - at >= ttlMs) {
      at = now()
      let next: readonly string[]
      try { next = read() } catch { return list }
      // Unchanged: the same array, so its lookup structure is kept.
      if (next.length !== list.length || next.some((a, i) => a !== list[i])) list = next
    }
    return list
  }
}

/**
 * Two lists as one: the same array while both give the same arrays (each kept by its own `liveAddresses`),
 * so neither is read more often than its own time says.
 */
export function joinedAddresses (a: () => readonly string[], b: () => readonly string[]): () => readonly string[] {
  let parts: [readonly string[], readonly string[]] | null = null
  let joined: readonly string[] = []
  return () => {
    const x = a(); const y = b()
    if (parts === null || parts[0] !== x || parts[1] !== y) { parts = [x, y]; joined = [...x, ...y] }
    return joined
  }
}

/**
 * The public address other hosts see this one at, as an own list: `read()` gives it (the swarm's DHT
 * reports it: hyperdht's NAT sampler keeps the address most of the DHT nodes it talked to saw), [] until
 * it is known and when it is not a public address. A host behind a 1:1 NAT (most cloud hosts) has that
 * address on none of its interfaces, and `--public-url` is often a name. The same array while the
 * address is unchanged (`onChange` is told when the list changes); a read that throws keeps the last list.
 */
export function reportedAddresses (read: () => string | null | undefined, onChange?: (list: readonly string[]) => void): () => readonly string[] {
  let seen: string | null | undefined
  let list: readonly string[] = []
  return () => {
    let host: string | null | undefined
    try { host = read() } catch { return list }
    if (host !== seen) {
      seen = host
      const address = typeof host === 'string' ? host.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '') : ''
      const next = isIP(address) !== 0 && addressClass(address) === null ? [address] : []
      if (next.length !== list.length || next[0] !== list[0]) { list = next; onChange?.(list) }
    }
    return list
  }
}

/**
 * This host's public addresses: every interface's, and the `publicUrl` host when it is an address. A named
 * public URL is not resolved: behind a CDN or a shared load balancer, its addresses are other hosts' too.
 */
export function hostAddresses (publicUrl: string | null): string[] {
  const out = new Set<string>(interfaceAddresses())
  if (publicUrl !== null) {
    const host = new URL(publicUrl).hostname.replace(/^\[(.*)\]$/, '$1')
    if (isIP(host) !== 0) out.add(host)
  }
  // The other ranges are refused as what they are (loopback, private, ...): only public ones are kept.
  return [...out].filter(a => addressClass(a) === null)
}

const ownLists = new WeakMap<readonly string[], BlockList>()
function ownList (own: readonly string[]): BlockList {
  let list = ownLists.get(own)
  if (list === undefined) {
    list = new BlockList()
    for (const a of own) list.addAddress(a, isIP(a) === 6 ? 'ipv6' : 'ipv4')
    ownLists.set(own, list)
  }
  return list
}

/** Whether `address` (or an IPv4 address it embeds) is one of `own`. */
function isOwn (address: string, ownOrLive: AddressPolicy['own']): boolean {
  const own = typeof ownOrLive === 'function' ? ownOrLive() : ownOrLive ?? []
  if (own.length === 0) return false
  const list = ownList(own)
  const family = isIP(address)
  if (family === 4) return list.check(address, 'ipv4')
  if (family !== 6) return false
  if (list.check(address, 'ipv6')) return true
  const embedded = embeddedIPv4(address)
  return Array.isArray(embedded) && embedded.some(v4 => list.check(v4, 'ipv4'))
}

/** Why `policy` refuses a connection to `address`, or null when it allows it. */
export function refusedClass (address: string, policy: AddressPolicy): AddressClass | null {
  if (policy.always !== undefined && policy.always.length > 0) {
    const cls = addressClass(address)
    if (cls !== null && policy.always.includes(cls)) return cls
  }
  if (policy.allowPrivate) return null
  if (isOwn(address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, ''), policy.own)) return 'own'
  if (policy.ranges === false) return null
  const cls = addressClass(address)
  if (cls === null || policy.ranges === undefined || policy.ranges === true) return cls
  return policy.ranges.includes(cls) ? cls : null
}

export const PUBLIC_ONLY: AddressPolicy = { allowPrivate: false }

/** Why an address is refused; a stable reason, also in the problem's `reason` member. */
export type { AddressClass }

const RANGES: Array<[AddressClass, string, number, 'ipv4' | 'ipv6']> = [
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '100.64.0.0', 10, 'ipv4'],
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['link_local', '169.254.0.0', 16, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  ['multicast', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['loopback', '::1', 128, 'ipv6'],
  ['reserved', '100::', 64, 'ipv6'],
  ['reserved', '2001:db8::', 32, 'ipv6'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['link_local', 'fe80::', 10, 'ipv6'],
  ['multicast', 'ff00::', 8, 'ipv6']
]
const LISTS = new Map<AddressClass, BlockList>()
for (const [cls, net, prefix, family] of RANGES) {
  const list = LISTS.get(cls) ?? new BlockList()
  list.addSubnet(net, prefix, family)
  LISTS.set(cls, list)
}

/**
 * The IPv4 addresses an IPv6 address embeds and reaches, by its special range (ipaddr.js `range()`):
 * IPv4-mapped ::ffff:0:0/96 and SIIT ::ffff:0:0:0/96 (RFC 6145), IPv4-compatible ::/96 (deprecated,
 * RFC 4291; `::` and `::1` excepted, they are judged as themselves), NAT64 64:ff9b::/96 (RFC 6052),
 * 6to4 2002::/16 (RFC 3056: bits 16-47) and Teredo 2001::/32 (RFC 4380: the server in bits 32-63, the
 * client, inverted, in the last 32). Null for an address that embeds none. 'local' for NAT64's
 * local-use prefix 64:ff9b:1::/48 (RFC 8215), whose embedding depends on the operator's prefix length.
 */
export function embeddedIPv4 (address: string): string[] | 'local' | null {
  if (!ipaddr.IPv6.isValid(address)) return null
  const v6 = ipaddr.IPv6.parse(address)
  const p = v6.parts
  const v4 = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
  const range = v6.range()
  switch (range) {
    case 'ipv4Mapped': case 'rfc6145': return [v4(p[6]!, p[7]!)]
    case 'rfc6052': return p[2] === 0 ? [v4(p[6]!, p[7]!)] : 'local'
    case '6to4': return [v4(p[1]!, p[2]!)]
    case 'teredo': return [v4(p[2]!, p[3]!), v4(p[6]! ^ 0xffff, p[7]! ^ 0xffff)]
  }
  if (p.slice(0, 6).every(x => x === 0) && !(p[6] === 0 && p[7]! <= 1)) return [v4(p[6]!, p[7]!)]
  return null
}

function listedClass (ip: string, family: 'ipv4' | 'ipv6'): AddressClass | null {
  for (const [cls, list] of LISTS) if (list.check(ip, family)) return cls
  return null
}

/**
 * The refused class of an IP address, or null when it is public. An IPv6 address that embeds IPv4
 * addresses (embeddedIPv4) is judged by them: it is refused with the class of the first refused one.
 */
export function addressClass (address: string): AddressClass | null {
  const ip = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '')
  const family = isIP(ip)
  if (family === 0) return 'reserved'
  if (family === 4) return listedClass(ip, 'ipv4')
  const own = listedClass(ip, 'ipv6')
  if (own !== null) return own
  const embedded = embeddedIPv4(ip)
  if (embedded === 'local') return 'private'
  for (const v4 of embedded ?? []) {
    const cls = listedClass(v4, 'ipv4')
    if (cls !== null) return cls
  }
  return null
}

export interface UrlCheckOptions {
  policy: AddressPolicy
  /** Resolves a host name to its addresses (tests inject one); default: the system resolver. */
  resolve?: (host: string) => Promise<string[]>
}

/**
 * Name lookups (`dns.lookup`, getaddrinfo) run on libuv's thread pool, 4 threads that file I/O and the
 * store share. A tenant naming hosts whose name server never answers would hold each thread for the
 * resolver's whole timeout, and the node's disk work would wait behind them: at most LOOKUPS_AT_ONCE
 * run at once, the rest wait in order (at most LOOKUPS_WAITING; more fail at once, as a name server
 * that does not answer would).
 */
export const LOOKUPS_AT_ONCE = 2
const LOOKUPS_WAITING = 256
let lookupsRunning = 0
const lookupsWaiting: Array<() => void> = []
/** Lookups running and waiting now (tests). */
export const lookupLoad = (): { running: number, waiting: number } => ({ running: lookupsRunning, waiting: lookupsWaiting.length })

function boundedLookup (hostname: string, options: object, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void): void {
  if (lookupsRunning >= LOOKUPS_AT_ONCE) {
    if (lookupsWaiting.length >= LOOKUPS_WAITING) {
      callback(Object.assign(new Error(`getaddrinfo EAI_AGAIN ${hostname}: too many name lookups waiting`), { code: 'EAI_AGAIN', hostname }), [])
      return
    }
    lookupsWaiting.push(() => { boundedLookup(hostname, options, callback) })
    return
  }
  lookupsRunning++
  const done = (): void => {
    lookupsRunning--
    // The next waiting one starts now, in order (a throw of its own lookup is caught below, in its call).
    lookupsWaiting.shift()?.()
  }
  try {
    dnsLookup(hostname, { ...options, all: true } as never, (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      done()
      callback(err, addresses)
    })
  } catch (err) {
    // A lookup that throws at once (a malformed name or option) gives its place back.
    done()
    callback(err as NodeJS.ErrnoException, [])
  }
}

export const systemResolve = async (host: string): Promise<string[]> => await new Promise((resolve, reject) => {
  boundedLookup(host, { verbatim: true }, (err, addresses) => { if (err) reject(err); else resolve(addresses.map(a => a.address)) })
})

/** Throws DestinationPolicyError unless `raw` is a URL a destination may name under `policy`. */
export async function checkDestinationUrl (raw: string, what: string, opts: UrlCheckOptions): Promise<URL> {
  let url: URL
  try { url = new URL(raw) } catch { throw new DestinationPolicyError('url', 'malformed', `${what} is not a URL`) }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DestinationPolicyError('url', 'scheme', `${what} must be http or https, not ${url.protocol.replace(/:$/, '')}`)
  if (url.username !== '' || url.password !== '') throw new DestinationPolicyError('url', 'credentials', `${what} must not carry credentials (user:password@); use the destination's headers or keys`)
  if (opts.policy.allowPrivate) return url
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  let addresses: string[]
  if (isIP(host) !== 0) addresses = [host]
  else {
    try { addresses = await (opts.resolve ?? systemResolve)(host) } catch {
      throw new DestinationPolicyError('url', 'unresolvable', `${what}: host ${host} does not resolve`)
    }
    if (addresses.length === 0) throw new DestinationPolicyError('url', 'unresolvable', `${what}: host ${host} does not resolve`)
  }
  for (const address of addresses) {
    const cls = refusedClass(address, opts.policy)
    if (cls === 'own') throw new DestinationPolicyError('url', cls, `${what}: ${host} is ${describeClass(cls)} (${address}); a destination must be another host`)
    if (cls !== null) {
      throw new DestinationPolicyError('url', cls, `${what}: ${host} is ${describeClass(cls)} (${address}); this node refuses such destinations unless its operator sets allowPrivateDestinations`)
    }
  }
  return url
}

/** What an http destination's `url` may hold, filled per transfer (node/adapters/destinations/http.ts). */
export const URL_PLACEHOLDERS: readonly string[] = ['{transferId}', '{filename}']

/** `template` with every placeholder replaced by `value`. */
export const fillPlaceholders = (template: string, value: string): string =>
  URL_PLACEHOLDERS.reduce((out, p) => out.replaceAll(p, value), template)

/**
 * Throws unless every placeholder of `template` is in its path or query: the host the policy checked (with
 * the placeholders as `x`) must be the host every transfer's URL names. A placeholder in the host would
 * let a filename choose it (`http://{filename}.example/`), past the check at create.
 */
export function checkPlaceholders (template: string, what: string): void {
  let a: URL, b: URL
  try { a = new URL(fillPlaceholders(template, 'x')); b = new URL(fillPlaceholders(template, 'y.z')) } catch {
    throw new DestinationPolicyError('url', 'malformed', `${what} is not a URL once its placeholders are filled`)
  }
  if (a.origin !== b.origin || a.username !== b.username || a.password !== b.password) {
    throw new DestinationPolicyError('url', 'placeholder', `${what}: ${URL_PLACEHOLDERS.join(' and ')} may appear only in the path or the query`)
  }
}

/**
 * Headers a client may give a destination (upload and control headers alike): credentials for the
 * destination server and nothing that steers the request (Host, Content-*, Range, Transfer-Encoding,
 * Cookie, Forwarded, X-Forwarded-*, X-Bwn-*). Names are case-insensitive.
 */
export const HEADER_ALLOWLIST: readonly string[] = ['authorization', 'x-api-key', 'x-auth-token', 'x-upload-token']
/** Any header with one of these prefixes is allowed too (object metadata). */
export const HEADER_ALLOWED_PREFIXES: readonly string[] = ['x-meta-', 'x-amz-meta-']
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const VALUE = /^[\t\x20-\x7e\x80-\xff]*$/

export function checkHeaders (headers: Record<string, string> | undefined, what: string): void {
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase()
    if (!TOKEN.test(name)) throw new DestinationPolicyError('header', 'malformed', `${what}: header name ${JSON.stringify(name)} is not a valid token`)
    if (!HEADER_ALLOWLIST.includes(lower) && !HEADER_ALLOWED_PREFIXES.some(p => lower.startsWith(p))) {
      throw new DestinationPolicyError('header', 'not_allowed', `${what}: header ${name} is not allowed; allowed: ${[...HEADER_ALLOWLIST, ...HEADER_ALLOWED_PREFIXES.map(p => `${p}*`)].join(', ')}`)
    }
    if (typeof value !== 'string' || !VALUE.test(value)) throw new DestinationPolicyError('header', 'malformed', `${what}: the value of ${name} holds a control character`)
  }
}

/** A dns lookup for net/tls connections that refuses the policy's ranges on the very addresses used. */
export function guardedLookup (policy: AddressPolicy): LookupFunction {
  return ((hostname: string, options: { all?: boolean, family?: number | string, hints?: number }, callback: (...args: any[]) => void) => {
    boundedLookup(hostname, options, (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (err) { callback(err); return }
      for (const a of addresses) {
        const cls = refusedClass(a.address, policy)
        if (cls !== null) { callback(new AddressRefused(hostname, a.address, cls)); return }
      }
      if (options.all === true) callback(null, addresses)
      else callback(null, addresses[0]!.address, addresses[0]!.family)
    })
  }) as LookupFunction
}

/** An undici dispatcher whose every connection passes the policy (names at lookup, IP literals here). */
export function guardedDispatcher (policy: AddressPolicy): Agent {
  const base = buildConnector({ lookup: guardedLookup(policy) } as never)
  const connect: buildConnector.connector = (options, callback) => {
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1')
    if (isIP(host) !== 0) {
      const cls = refusedClass(host, policy)
      if (cls !== null) { callback(new AddressRefused(host, host, cls), null); return }
    }
    base(options, callback)
  }
  return new Agent({ connect })
}

/**
 * fetch through the guard, never following a redirect (a 3xx could point anywhere). It is undici's own
 * fetch, of the same release as the dispatcher: Node's global fetch bundles another undici (8.x in
 * Node 26), whose handlers the package's Agent refuses ("invalid onError method").
 */
export function guardedFetch (policy: AddressPolicy): typeof fetch {
  const dispatcher = guardedDispatcher(policy)
  return (async (input: string | URL | Request, init?: RequestInit) =>
    await undiciFetch(input as never, { ...init, redirect: 'error', dispatcher } as never)) as unknown as typeof fetch
}

/** node:http(s) agents for the S3 SDK that resolve through the guard. */
export function guardedAgents (policy: AddressPolicy): { httpAgent: HttpAgent, httpsAgent: HttpsAgent } {
  const lookup = guardedLookup(policy)
  return { httpAgent: new HttpAgent({ keepAlive: true, lookup } as never), httpsAgent: new HttpsAgent({ keepAlive: true, lookup } as never) }
}

/**
 * node:http(s) `request` through the guard, for streamed bodies: names resolve through the guarded
 * lookup, IP literals (which skip any lookup) are checked here; node:http never follows a redirect.
 */
export function guardedRequest (policy: AddressPolicy): (url: URL, options: RequestOptions) => ClientRequest {
  const lookup = guardedLookup(policy)
  return (url, options) => {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    if (isIP(host) !== 0) {
      const cls = refusedClass(host, policy)
      if (cls !== null) throw new AddressRefused(host, host, cls)
    }
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest
    return request(url, { ...options, lookup } as RequestOptions)
  }
}
