// Signing and checking worker attachments (schema: protocol/messages/attachment.ts).
//
// Canonical string (UTF-8), lines joined by '\n', signed by the orchestrator's hotkey:
//   bwnet-attachment/v1
//   <worker hotkey>
//   <worker id (node UUID)>
//   <orchestrator hotkey>
//   <slots, or '-' when unlimited>
//   <issuedAt>
//   <expiresAt>
//   <serial>
// Every field is signed, so a changed worker, orchestrator, limit, time or serial breaks the signature.
// An attachment is admitted only when, besides the signature: the frame's sender is its worker, its
// issuer is a registered orchestrator now (a chain UID, not a validator: an orchestrator that lost its
// UID vouches for nobody), it is within its validity (lifetime at most ATTACHMENT_MAX_LIFETIME_MS), and
// the issuer has not revoked it (known at the issuer, and at the peers it tells: `attachments_revoked`;
// elsewhere the short lifetime bounds it).
import { randomBytes } from 'node:crypto'
import { sign, verify, toHex, fromHex, type KeyPair } from './keys.ts'
import { nodeIdOf } from './node-id.ts'
import { validator } from './validate.ts'
import { MAX_CLOCK_SKEW_MS } from './codec.ts'
import { Attachment } from './messages/attachment.ts'
import type { Role } from './messages/common.ts'

export const ATTACHMENT_VERSION = 'bwnet-attachment/v1'
/** How long an orchestrator's attachment is valid: a revoked one is honoured elsewhere at most this long. */
export const ATTACHMENT_TTL_MS = 10 * 60_000 // 10 min
/** An attachment is re-issued when less than this is left of it. */
export const ATTACHMENT_RENEW_BEFORE_MS = 5 * 60_000 // 5 min
/** No attachment lasting longer is accepted, whoever signed it. */
export const ATTACHMENT_MAX_LIFETIME_MS = 15 * 60_000 // 15 min

const ENCODER = new TextEncoder()

export type AttachmentRefusal =
  | 'malformed' | 'wrong_worker' | 'wrong_worker_id' | 'too_long' | 'not_yet_valid' | 'expired'
  | 'bad_signature' | 'issuer_unregistered' | 'issuer_not_orchestrator' | 'revoked'

export type AttachmentCheck = { ok: true, attachment: Attachment } | { ok: false, reason: AttachmentRefusal }

/** What is known of the issuer's registration: its role and UID (null for a trusted or self standing). */
export interface IssuerStanding { role: Role, uid: number | null, source: string }

function canonicalText (a: Omit<Attachment, 'signature'>): string {
  return [ATTACHMENT_VERSION, a.worker, a.workerId, a.orchestrator, a.limits.slots ?? '-', a.issuedAt, a.expiresAt, a.serial].join('\n')
}

function canonical (a: Omit<Attachment, 'signature'>): Uint8Array {
  return ENCODER.encode(canonicalText(a))
}

/**
 * Signatures already verified, by signature: an attachment travels with every verify request that names
 * its worker and is checked again at each standing lookup, so the same few are checked over and over
 * (two sr25519 verifications per verify request, a quarter of a validator's CPU on small transfers). A
 * hit needs the same signature over byte-for-byte the same canonical text, which names the issuer: that
 * triple verified once verifies forever. Only the signature is remembered; every other check (worker,
 * times, issuer standing, revocation) runs every time. Bounded; the oldest go first.
 */
const verifiedSignatures = new Map<string, string>()
const MAX_VERIFIED_SIGNATURES = 4096
let verifiedHits = 0

function verifiedBefore (signature: string, text: string): boolean {
  const hit = verifiedSignatures.get(signature) === text
  if (hit) verifiedHits++
  return hit
}

function rememberVerified (signature: string, text: string): void {
  if (verifiedSignatures.size >= MAX_VERIFIED_SIGNATURES) {
    const oldest = verifiedSignatures.keys().next()
    if (oldest.done !== true) verifiedSignatures.delete(oldest.value)
  }
  verifiedSignatures.set(signature, text)
}

/** How many attachment signatures are remembered as verified, how many checks they answered, and forgetting them (tests). */
export const verifiedAttachments = {
  get size (): number { return verifiedSignatures.size },
  get hits (): number { return verifiedHits },
  clear: (): void => verifiedSignatures.clear(),
  max: MAX_VERIFIED_SIGNATURES
}

/** Issues an attachment for `worker`, signed by the orchestrator's `key`. */
export function signAttachment (key: KeyPair, opts: { worker: string, issuedAt: number, ttlMs?: number, slots?: number, serial?: string }): Attachment {
  const body: Omit<Attachment, 'signature'> = {
    v: 1,
    worker: opts.worker,
    workerId: nodeIdOf(opts.worker),
    orchestrator: key.address,
    limits: opts.slots !== undefined ? { slots: opts.slots } : {},
    issuedAt: opts.issuedAt,
    expiresAt: opts.issuedAt + (opts.ttlMs ?? ATTACHMENT_TTL_MS),
    serial: opts.serial ?? randomBytes(16).toString('hex')
  }
  return { ...body, signature: toHex(sign(key, canonical(body))) }
}

/** The signature, schema and times of an attachment (no chain lookup): for the worker `worker`, at `now`. */
export function checkAttachmentSelf (value: unknown, opts: { worker: string, now: number }): AttachmentCheck {
  if (!validator(Attachment)(value)) return { ok: false, reason: 'malformed' }
  const a = value
  if (a.worker !== opts.worker) return { ok: false, reason: 'wrong_worker' }
  if (a.workerId !== nodeIdOf(a.worker)) return { ok: false, reason: 'wrong_worker_id' }
  if (a.expiresAt <= a.issuedAt || a.expiresAt - a.issuedAt > ATTACHMENT_MAX_LIFETIME_MS) return { ok: false, reason: 'too_long' }
  if (a.issuedAt > opts.now + MAX_CLOCK_SKEW_MS) return { ok: false, reason: 'not_yet_valid' }
  if (a.expiresAt <= opts.now) return { ok: false, reason: 'expired' }
  const { signature, ...body } = a
  const text = canonicalText(body)
  if (!verifiedBefore(signature, text)) {
    if (!verify(a.orchestrator, ENCODER.encode(text), fromHex(signature))) return { ok: false, reason: 'bad_signature' }
    rememberVerified(signature, text)
  }
  return { ok: true, attachment: a }
}

/**
 * The whole check: `checkAttachmentSelf`, then the issuer's standing now (a registered orchestrator with
 * a UID; a trusted or self standing on a test network) and the issuer's revocations, when known.
 */
export function checkAttachment (value: unknown, opts: { worker: string, now: number, issuer: IssuerStanding | null, revoked?: (a: Attachment) => boolean }): AttachmentCheck {
  const self = checkAttachmentSelf(value, opts)
  if (!self.ok) return self
  if (opts.issuer === null) return { ok: false, reason: 'issuer_unregistered' }
  if (opts.issuer.role !== 'orchestrator') return { ok: false, reason: 'issuer_not_orchestrator' }
  if (opts.issuer.source === 'chain' && opts.issuer.uid === null) return { ok: false, reason: 'issuer_unregistered' }
  if (opts.revoked?.(self.attachment) === true) return { ok: false, reason: 'revoked' }
  return self
}
