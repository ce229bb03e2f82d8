// Signed, expiring URLs: like an S3 presigned URL, but signed with a node's sr25519 hotkey. A holder of
// the URL may make exactly that request (method + path + every query parameter) until it expires; any
// change to the method, path or a parameter breaks the signature.
//
// The signer adds three query parameters:
//   X-Bwn-Expires    expiry, milliseconds since the Unix epoch
//   X-Bwn-Signer     the signer's SS58 hotkey address
//   X-Bwn-Signature  base64url of the 64-byte sr25519 signature over the canonical string
// Canonical string (UTF-8), lines joined by '\n':
//   bwnet-signed-url/v1
//   <METHOD upper-case>
//   <path as the WHATWG URL parser normalises it, percent-encoded>
//   <every query parameter except X-Bwn-Signature, each `encodeURIComponent(name)=encodeURIComponent(value)`,
//    sorted by name then value, joined by '&'>
// Scheme, host and port are not signed, so the same URL verifies behind a proxy or on another
// interface; bind a request to a resource with path segments and parameters (task, chunk, worker).
// Used by the node sink (node/adapters/destinations/node-sink.ts) and the coordinator's chunk data endpoint.
import { sign, verify, type KeyPair } from './keys.ts'

export const SIGNED_URL_VERSION = 'bwnet-signed-url/v1'
export const EXPIRES_PARAM = 'X-Bwn-Expires'
export const SIGNER_PARAM = 'X-Bwn-Signer'
export const SIGNATURE_PARAM = 'X-Bwn-Signature'
const RESERVED = [EXPIRES_PARAM, SIGNER_PARAM, SIGNATURE_PARAM]
const ENCODER = new TextEncoder()
const BASE = 'http://signed.invalid' // lets path-only URLs ('/a/b?c=d') parse

export interface SignUrlOptions {
  method: string
  /** Absolute URL or a path with query ('/sink/uploads/x?y=1'); its query parameters are all signed. */
  url: string | URL
  /** Milliseconds since the Unix epoch. */
  expiresAt: number
  key: KeyPair
}

export type SignedUrlRefusal = 'unsigned' | 'malformed' | 'expired' | 'untrusted_signer' | 'bad_signature'

export type SignedUrlCheck =
  | { ok: true, signer: string, expiresAt: number, params: URLSearchParams }
  | { ok: false, reason: SignedUrlRefusal }

export interface VerifyUrlOptions {
  method: string
  /** The URL as requested; for a server, the request target (`req.url`: path and query) is enough. */
  url: string | URL
  /** Milliseconds since the Unix epoch; a URL is refused from `expiresAt` on. */
  now: number
  /** Addresses allowed to sign, or a predicate over an address. */
  trustedSigners: ReadonlySet<string> | ((address: string) => boolean)
}

/** The URL with expiry, signer and signature added (any earlier X-Bwn-* parameters are replaced). */
export function signUrl (options: SignUrlOptions): string {
  if (!Number.isSafeInteger(options.expiresAt) || options.expiresAt <= 0) throw new RangeError('expiresAt must be a positive integer of milliseconds')
  const absolute = typeof options.url === 'string' && !/^[a-z][a-z0-9+.-]*:/i.test(options.url) ? null : new URL(options.url)
  const url = absolute ?? new URL(options.url, BASE)
  for (const name of RESERVED) url.searchParams.delete(name)
  url.searchParams.set(EXPIRES_PARAM, String(options.expiresAt))
  url.searchParams.set(SIGNER_PARAM, options.key.address)
  const signature = sign(options.key, canonicalRequest(options.method, url))
  url.searchParams.set(SIGNATURE_PARAM, Buffer.from(signature).toString('base64url'))
  return absolute ? url.toString() : url.pathname + url.search
}

/** Checks signature, signer and expiry; never throws on bad input. */
export function verifySignedUrl (options: VerifyUrlOptions): SignedUrlCheck {
  let url: URL
  try { url = new URL(options.url, BASE) } catch { return { ok: false, reason: 'malformed' } }
  const params = url.searchParams
  const expires = params.getAll(EXPIRES_PARAM)
  const signers = params.getAll(SIGNER_PARAM)
  const signatures = params.getAll(SIGNATURE_PARAM)
  if (expires.length === 0 && signers.length === 0 && signatures.length === 0) return { ok: false, reason: 'unsigned' }
  if (expires.length !== 1 || signers.length !== 1 || signatures.length !== 1) return { ok: false, reason: 'malformed' }
  if (!/^[0-9]{1,16}$/.test(expires[0]!) || !/^[A-Za-z0-9_-]{86}$/.test(signatures[0]!)) return { ok: false, reason: 'malformed' }
  const expiresAt = Number(expires[0])
  const signer = signers[0]!
  const trusted = typeof options.trustedSigners === 'function' ? options.trustedSigners(signer) : options.trustedSigners.has(signer)
  if (!trusted) return { ok: false, reason: 'untrusted_signer' }
  const signature = Buffer.from(signatures[0]!, 'base64url')
  if (!verify(signer, canonicalRequest(options.method, url), signature)) return { ok: false, reason: 'bad_signature' }
  // Expiry last: an attacker learns nothing about freshness from a URL it could not have signed.
  if (options.now >= expiresAt) return { ok: false, reason: 'expired' }
  return { ok: true, signer, expiresAt, params }
}

/** The bytes a signed URL's signature covers (see the top of this file). */
export function canonicalRequest (method: string, url: URL): Uint8Array {
  const pairs: Array<[string, string]> = []
  for (const [name, value] of url.searchParams) {
    if (name !== SIGNATURE_PARAM) pairs.push([encodeURIComponent(name), encodeURIComponent(value)])
  }
  pairs.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0)
  const query = pairs.map(([n, v]) => `${n}=${v}`).join('&')
  return ENCODER.encode(`${SIGNED_URL_VERSION}\n${method.toUpperCase()}\n${url.pathname}\n${query}`)
}
