// Binding an orchestrator or worker key to its participant's hotkey takes the hotkey's consent: an
// sr25519 signature by that hotkey over the request that issues the key, in the spirit of Bittensor's
// Epistula request signing — the method, the path, the sha256 of the body (everything but the
// signature), a timestamp and a nonce. A proof is good once, for a few minutes, for exactly that request:
//  - signed by another key than the body's `hotkey`, or over other bytes → 400 BWN_ERR_HOTKEY_PROOF
//  - a timestamp further than PROOF_MAX_SKEW_MS from the server's clock  → 400 BWN_ERR_HOTKEY_PROOF_STALE
//  - a nonce this hotkey used before (remembered in the accounts store,
//    across restarts, until the proof could no longer be fresh)          → 409 BWN_ERR_HOTKEY_PROOF_REPLAYED
// Whoever asks for a binding without it is refused, the operator included (DESIGN §10: participant keys
// are bound by proof, never by whoever asks). `bwnet keys prove-binding` makes the proof on the
// participant's side; docs/api.md#binding-proof shows the exact bytes signed.
import { createHash, randomBytes } from 'node:crypto'
import canonicalize from 'canonicalize'
import { fromHex, toHex, sign, verify, type KeyPair } from '../../protocol/index.ts'

/** How far a proof's timestamp may be from the server's clock, either way: 5 minutes, in milliseconds. */
export const PROOF_MAX_SKEW_MS = 5 * 60 * 1000
/** The first line of every signed message: the scheme and its version. */
export const PROOF_SCHEME = 'bwnet-hotkey-proof-v2'
export const PROOF_SIGNATURE_PATTERN = '^(0x)?[0-9a-fA-F]{128}$'
export const PROOF_NONCE_PATTERN = '^[A-Za-z0-9_-]{16,64}$'
/** The path of the route that issues keys, for an organization (what a proof signs). */
export const keysPath = (organizationId: string): string => `/admin/organizations/${organizationId}/keys`

export interface HotkeyProof {
  /** Milliseconds since the epoch when the participant signed. */
  timestamp: number
  /** Unique per proof (16–64 characters of A–Z a–z 0–9 _ -): a proof is accepted once. */
  nonce: string
  /** The hotkey's sr25519 signature over proofMessage, hex. */
  signature: string
}

/** The body of a key request, its proof included. */
export type ProvedBody = Record<string, unknown> & { hotkeyProof?: HotkeyProof }

/**
 * The sha256 (hex) of a request body as signed: the body without `hotkeyProof.signature`, as RFC 8785
 * canonical JSON (keys sorted, no whitespace), UTF-8.
 */
export function bodyDigest (body: ProvedBody): string {
  const { hotkeyProof, ...rest } = body
  const unsigned = hotkeyProof === undefined ? rest : { ...rest, hotkeyProof: { timestamp: hotkeyProof.timestamp, nonce: hotkeyProof.nonce } }
  return createHash('sha256').update(canonicalize(unsigned) ?? '').digest('hex')
}

/** The bytes a hotkey signs: six lines, UTF-8, no trailing newline. */
export function proofMessage (method: string, path: string, body: ProvedBody, timestamp: number, nonce: string): Uint8Array {
  return new TextEncoder().encode([PROOF_SCHEME, method.toUpperCase(), path, bodyDigest(body), String(timestamp), nonce].join('\n'))
}

/**
 * The body of a request that issues a key of `organizationId` bound to `key`'s hotkey, with its proof:
 * `fields` (role, and any name, expiresAt, projectId, environmentId, scopes, plan) and `hotkey` are signed
 * as they are; the request must send exactly this body.
 */
export function proveBinding (key: KeyPair, organizationId: string, fields: Record<string, unknown>, opts: { now?: number, nonce?: string } = {}): ProvedBody {
  const timestamp = opts.now ?? Date.now()
  const nonce = opts.nonce ?? randomBytes(16).toString('base64url')
  const body: ProvedBody = { ...fields, hotkey: key.address, hotkeyProof: { timestamp, nonce, signature: '' } }
  body.hotkeyProof!.signature = toHex(sign(key, proofMessage('POST', keysPath(organizationId), body, timestamp, nonce)))
  return body
}

export type ProofCheck = { ok: true } | { ok: false, reason: 'bad_signature' | 'stale' }

/**
 * Whether `body.hotkeyProof` is `body.hotkey`'s signature over this request, made within
 * PROOF_MAX_SKEW_MS of `now`. The signature is checked first: a proof nobody signed says nothing about time.
 * The nonce is the caller's to claim once (AccountsService.claimProofNonce).
 */
export function checkProof (method: string, path: string, body: ProvedBody, now: number): ProofCheck {
  const proof = body.hotkeyProof
  const hotkey = body.hotkey
  if (proof === undefined || typeof hotkey !== 'string' || !new RegExp(PROOF_SIGNATURE_PATTERN).test(proof.signature)) return { ok: false, reason: 'bad_signature' }
  let signed: boolean
  try { signed = verify(hotkey, proofMessage(method, path, body, proof.timestamp, proof.nonce), fromHex(proof.signature)) } catch { signed = false }
  if (!signed) return { ok: false, reason: 'bad_signature' }
  if (Math.abs(now - proof.timestamp) > PROOF_MAX_SKEW_MS) return { ok: false, reason: 'stale' }
  return { ok: true }
}
