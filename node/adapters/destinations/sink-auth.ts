// Who may make a request to a node sink: only the holder of a URL signed for this sink (audience
// `bwnet-sink`), at this sink's own authority (host:port), by one of its trusted signers, unexpired.
// The authority is the sink's configured one (public URL or listen address), never the request's Host
// header, so a URL minted for another server (say, an http destination a tenant pointed at a host of
// its own, with the sink's path) never verifies here. See docs/security.md.
import { verifySignedUrl } from '../../../protocol/index.ts'
import { SignedUrlRequired, SignedUrlInvalid, SignedUrlExpired } from '../../../api/errors.ts'
import type { BadSignatures } from '../bad-signatures.ts'

export const SINK_AUDIENCE = 'bwnet-sink'

export interface SinkAuthOptions {
  /** The authority the sink serves under (`authorityOf(publicUrl)`), or a getter read per request. */
  authority: string | (() => string)
  /** Coordinators allowed to write here (SS58 addresses), or a predicate. */
  trustedSigners: ReadonlySet<string> | ((address: string) => boolean)
  now: () => number
  /** Failed checks per remote address: past its limit an address is refused unchecked (429). */
  badSignatures?: BadSignatures
}

/**
 * Throws the 403 problem that refuses a sink request (or the 429 when a full signature check is not
 * to be made now: node/adapters/bad-signatures.ts), or returns when its URL is good here. `from`: the
 * request's remote address.
 */
export function verifySinkRequest (method: string, target: string, opts: SinkAuthOptions, from?: string): void {
  let authority: string
  try { authority = typeof opts.authority === 'function' ? opts.authority() : opts.authority } catch { throw new SignedUrlInvalid('sink authority unknown') }
  const bad = from !== undefined ? opts.badSignatures : undefined
  const check = verifySignedUrl({
    method, url: target, authority, audience: SINK_AUDIENCE, now: opts.now(), trustedSigners: opts.trustedSigners,
    ...(bad !== undefined ? { beforeFullCheck: () => { bad.admit(from!) }, fullCheckFailed: () => { bad.failed(from!) } } : {})
  })
  if (check.ok) return
  if (check.reason === 'unsigned') throw new SignedUrlRequired()
  if (check.reason === 'expired') throw new SignedUrlExpired()
  throw new SignedUrlInvalid(check.reason.replace('_', ' '))
}
