// Signed, expiring URLs: like an S3 presigned URL, but signed with a node's sr25519 hotkey. A holder of
// the URL may make exactly that one request (method + authority + path + every query parameter) at the
// one endpoint it was minted for (its audience) until it expires; any change breaks the signature.
//
// The signer adds four query parameters:
//   X-Bwn-Audience   the kind of endpoint the URL is for (AUDIENCES below)
//   X-Bwn-Expires    expiry, milliseconds since the Unix epoch
//   X-Bwn-Signer     the signer's SS58 hotkey address
//   X-Bwn-Signature  base64url of the 64-byte sr25519 signature over the canonical string
// Canonical string (UTF-8), lines joined by '\n':
//   bwnet-signed-url/v2
//   <audience>
//   <METHOD upper-case>
//   <authority: lower-case host ':' port, the port always written (80/443 for a scheme's default);
//    an IPv6 host in brackets>
//   <path as the WHATWG URL parser normalises it, percent-encoded>
//   <every query parameter except X-Bwn-Signature, each `encodeURIComponent(name)=encodeURIComponent(value)`,
//    sorted by name then value, joined by '&'>
// A verifier never takes the authority or the audience from the request (a Host header is the
// client's to choose): it checks against the authority it serves under and its own audience, so a URL
// minted for another host, port or kind of endpoint never verifies there. Scheme is not signed (a
// TLS-terminating proxy in front keeps host and port). See docs/security.md for every token's fields.
import { createHash } from 'node:crypto'
import { sign, verify, type KeyPair } from './keys.ts'

export const SIGNED_URL_VERSION = 'bwnet-signed-url/v2'
export const AUDIENCE_PARAM = 'X-Bwn-Audience'
export const EXPIRES_PARAM = 'X-Bwn-Expires'
export const SIGNER_PARAM = 'X-Bwn-Signer'
export const SIGNATURE_PARAM = 'X-Bwn-Signature'
const RESERVED = [AUDIENCE_PARAM, EXPIRES_PARAM, SIGNER_PARAM, SIGNATURE_PARAM]
const ENCODER = new TextEncoder()
const BASE = 'http://signed.invalid' // lets path-only request targets ('/a/b?c=d') parse

/**
 * Who a signed URL is for. `bwnet-data`: a coordinator's chunk data endpoint (and its swarm bulk twin);
 * `bwnet-sink`: a node sink; `http-destination`: a third-party http destination server, which no bwnet
 * endpoint accepts.
 */
export const AUDIENCES = ['bwnet-data', 'bwnet-sink', 'http-destination'] as const
export type Audience = typeof AUDIENCES[number]

export interface SignUrlOptions {
  method: string
  /** Absolute URL (its authority is signed); its query parameters are all signed. */
  url: string | URL
  audience: Audience
  /** Milliseconds since the Unix epoch. */
  expiresAt: number
  key: KeyPair
}

export type SignedUrlRefusal = 'unsigned' | 'malformed' | 'expired' | 'untrusted_signer' | 'wrong_audience' | 'bad_signature'

export type SignedUrlCheck =
  | { ok: true, signer: string, expiresAt: number, params: URLSearchParams }
  | { ok: false, reason: SignedUrlRefusal }

export interface VerifyUrlOptions {
  method: string
  /** The request target (`req.url`: path and query); an absolute URL's own host is ignored. */
  url: string | URL
  /** The authority this endpoint serves under (`authorityOf(publicUrl)`), never the request's Host. */
  authority: string
  /** The audience this endpoint is. */
  audience: Audience
  /** Milliseconds since the Unix epoch; a URL is refused from `expiresAt` on. */
  now: number
  /** Addresses allowed to sign, or a predicate over an address. */
  trustedSigners: ReadonlySet<string> | ((address: string) => boolean)
  /**
   * Told before a full signature check (the curve arithmetic: a URL this process did not mint); it may
   * throw to refuse the request unchecked (a limit on failed checks, node/adapters/bad-signatures.ts).
   */
  beforeFullCheck?: () => void
  /** Told when a full check ran and the URL is refused all the same: its signature, or its expiry. */
  fullCheckFailed?: () => void
}

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' }

/** `host:port` of a URL, lower-case, the port always written. */
export function authorityOf (url: string | URL): string {
  const u = typeof url === 'string' ? new URL(url) : url
  const port = u.port !== '' ? u.port : DEFAULT_PORTS[u.protocol]
  if (port === undefined) throw new TypeError(`no default port for ${u.protocol}`)
  return `${u.hostname.toLowerCase()}:${port}`
}

/** The URL with audience, expiry, signer and signature added (any earlier X-Bwn-* parameters are replaced). */
export function signUrl (options: SignUrlOptions): string {
  if (!Number.isSafeInteger(options.expiresAt) || options.expiresAt <= 0) throw new RangeError('expiresAt must be a positive integer of milliseconds')
  if (!(AUDIENCES as readonly string[]).includes(options.audience)) throw new TypeError(`unknown audience ${String(options.audience)}`)
  const url = new URL(options.url) // throws on a path without scheme and host: the authority is signed
  for (const name of RESERVED) url.searchParams.delete(name)
  url.searchParams.set(AUDIENCE_PARAM, options.audience)
  url.searchParams.set(EXPIRES_PARAM, String(options.expiresAt))
  url.searchParams.set(SIGNER_PARAM, options.key.address)
  const canonical = canonicalText(options.method, authorityOf(url), options.audience, url)
  const signature = Buffer.from(sign(options.key, ENCODER.encode(canonical))).toString('base64url')
  url.searchParams.set(SIGNATURE_PARAM, signature)
  // Only URLs a bwnet endpoint checks; one for a third-party server is never checked here.
  if (options.audience !== 'http-destination') minted.remember(signature, options.key.address, canonical)
  return url.toString()
}

/**
 * The URLs this process signed, the latest 8,192: a URL signed here and checked here (a coordinator's
 * own sink or data endpoint, the usual case on one node) is checked against the exact text that was
 * signed, without the curve arithmetic (about a third of the sr25519 work of a small transfer). An entry
 * is keyed by its signature and matches only the same signer and byte-for-byte the same canonical text,
 * which that signature verifies over by construction; anything else, a forged or altered URL included,
 * goes through `verify` as before. Bounded in count; the oldest go first.
 */
class MintedUrls {
  // signature → sha256 of `signer\ncanonical text` (the text can be kilobytes: a filename of 1,024
  // characters, percent-encoded).
  readonly #entries = new Map<string, string>()
  hits = 0
  readonly max: number
  constructor (max: number) { this.max = max }

  remember (signature: string, signer: string, canonical: string): void {
    if (this.#entries.size >= this.max) {
      const oldest = this.#entries.keys().next()
      if (oldest.done !== true) this.#entries.delete(oldest.value)
    }
    this.#entries.set(signature, digestOf(signer, canonical))
  }

  /**
   * True only for a signature this process made, by `signer`, over exactly `canonical`; expired or not
   * (the caller checks expiry): an expired URL this process minted is refused without the curve
   * arithmetic too. Entries leave by count only.
   */
  vouches (signature: string, signer: string, canonical: string): boolean {
    const digest = this.#entries.get(signature)
    if (digest === undefined) return false
    const same = digest === digestOf(signer, canonical)
    if (same) this.hits++
    return same
  }

  get size (): number { return this.#entries.size }
  clear (): void { this.#entries.clear() }
}

function digestOf (signer: string, canonical: string): string {
  return createHash('sha256').update(signer).update('\n').update(canonical).digest('base64url')
}
// 8,192 entries of ~0.3 KB (a signature and a digest): ~2.5 MiB at most; a coordinator mints a
// handful of URLs per chunk, each for minutes.
const minted = new MintedUrls(8192)
/** How many signed URLs are remembered, how many checks they answered, and forgetting them (tests). */
export const mintedUrls = {
  get size (): number { return minted.size },
  get hits (): number { return minted.hits },
  clear: (): void => minted.clear(),
  max: minted.max
}

/** Path and query of a signed URL (what a request target or a swarm bulk read carries). */
export function requestTarget (url: string): string {
  const u = new URL(url)
  return u.pathname + u.search
}

/** Checks audience, signature over this endpoint's authority, signer and expiry; never throws on bad input. */
export function verifySignedUrl (options: VerifyUrlOptions): SignedUrlCheck {
  let url: URL
  try { url = new URL(options.url, BASE) } catch { return { ok: false, reason: 'malformed' } }
  const params = url.searchParams
  const audiences = params.getAll(AUDIENCE_PARAM)
  const expires = params.getAll(EXPIRES_PARAM)
  const signers = params.getAll(SIGNER_PARAM)
  const signatures = params.getAll(SIGNATURE_PARAM)
  if (audiences.length === 0 && expires.length === 0 && signers.length === 0 && signatures.length === 0) return { ok: false, reason: 'unsigned' }
  if (audiences.length !== 1 || expires.length !== 1 || signers.length !== 1 || signatures.length !== 1) return { ok: false, reason: 'malformed' }
  // 64 bytes are 86 base64url characters whose last carries 4 unused bits: only the spelling with them
  // zero (last character A, Q, g or w) is taken, so one signature has one spelling (a key for caps).
  if (!/^[0-9]{1,16}$/.test(expires[0]!) || !/^[A-Za-z0-9_-]{85}[AQgw]$/.test(signatures[0]!)) return { ok: false, reason: 'malformed' }
  if (audiences[0] !== options.audience) return { ok: false, reason: 'wrong_audience' }
  const expiresAt = Number(expires[0])
  const signer = signers[0]!
  const trusted = typeof options.trustedSigners === 'function' ? options.trustedSigners(signer) : options.trustedSigners.has(signer)
  if (!trusted) return { ok: false, reason: 'untrusted_signer' }
  const canonical = canonicalText(options.method, options.authority, options.audience, url)
  const vouched = minted.vouches(signatures[0]!, signer, canonical)
  if (!vouched) {
    options.beforeFullCheck?.()
    if (!verify(signer, ENCODER.encode(canonical), Buffer.from(signatures[0]!, 'base64url'))) {
      options.fullCheckFailed?.()
      return { ok: false, reason: 'bad_signature' }
    }
  }
  // Expiry last: an attacker learns nothing about freshness from a URL it could not have signed. An
  // expired URL that took a full check cost as much as a forged one, and counts as one.
  if (options.now >= expiresAt) {
    if (!vouched) options.fullCheckFailed?.()
    return { ok: false, reason: 'expired' }
  }
  return { ok: true, signer, expiresAt, params }
}

/** The bytes a signed URL's signature covers (see the top of this file). */
export function canonicalRequest (method: string, authority: string, audience: string, url: URL): Uint8Array {
  return ENCODER.encode(canonicalText(method, authority, audience, url))
}

function canonicalText (method: string, authority: string, audience: string, url: URL): string {
  const pairs: Array<[string, string]> = []
  for (const [name, value] of url.searchParams) {
    if (name !== SIGNATURE_PARAM) pairs.push([encodeURIComponent(name), encodeURIComponent(value)])
  }
  pairs.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)
  const query = pairs.map(([n, v]) => `${n}=${v}`).join('&')
  return `${SIGNED_URL_VERSION}\n${audience}\n${method.toUpperCase()}\n${authority.toLowerCase()}\n${url.pathname}\n${query}`
}
