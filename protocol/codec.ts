// Framing of control messages: msgpack, signed by the sender's hotkey, verified on receipt.
//
// wire frame  = msgpack [ payload: bin, signature: bin(64) ]
// payload     = msgpack { v, type, from, to, id, ts, body }
// The signature covers the payload bytes exactly as sent, so nothing is re-encoded before checking.
import { Packr } from 'msgpackr'
import { randomBytes } from 'node:crypto'
import { PROTOCOL_VERSION, MAX_FRAME_BYTES } from './version.ts'
import { MESSAGES, isMessageType, type MessageType, type MessageBody } from './messages/index.ts'
import { sign, verify, checkHotkey, type KeyPair } from './keys.ts'
import { validator, describeErrors } from './validate.ts'

const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true, variableMapSize: true })

/** A message whose signature and schema have been checked. */
export interface Envelope<T extends MessageType = MessageType> {
  v: number
  type: T
  /** Sender hotkey (SS58). */
  from: string
  /** Recipient hotkey, or null for a broadcast. */
  to: string | null
  /** Sender-chosen unique id: correlation and de-duplication. */
  id: string
  /** Sender clock, ms since epoch. */
  ts: number
  body: MessageBody<T>
  /** The signed frame as received (set by the messenger): evidence a peer can forward and others re-verify. */
  raw?: Uint8Array
}

export type DropReason =
  | 'oversized' | 'malformed' | 'unsigned' | 'bad_signature' | 'wrong_version'
  | 'unknown_type' | 'invalid_body' | 'stale' | 'not_for_us'
  | 'duplicate' | 'announce_unbound' | 'rate_limited' | 'banned' | 'unauthorized'

export type Decoded = { ok: true, msg: Envelope } | { ok: false, reason: DropReason, detail: string }

/** How far a sender's clock may be from ours before its messages are refused as replays. */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000 // 5 min

export function newMessageId (): string {
  return randomBytes(12).toString('base64url')
}

export function encodeFrame<T extends MessageType> (
  key: KeyPair, type: T, body: MessageBody<T>, opts: { ts: number, to?: string | null, id?: string }
): Uint8Array {
  const payload = packr.pack({ v: PROTOCOL_VERSION, type, from: key.address, to: opts.to ?? null, id: opts.id ?? newMessageId(), ts: opts.ts, body })
  return packr.pack([payload, sign(key, payload)])
}

const drop = (reason: DropReason, detail: string): Decoded => ({ ok: false, reason, detail })

/**
 * Decodes and verifies a frame. `seen` names frames already accepted (sender, id): a repeat is dropped
 * before its signature is checked (an accepted id was verified once; a frame reusing it is a replay or a forgery).
 */
export function decodeFrame (frame: Uint8Array, opts: { now?: number, self?: string, seen?: (from: string, id: string) => boolean } = {}): Decoded {
  if (frame.byteLength > MAX_FRAME_BYTES) return drop('oversized', `${frame.byteLength} bytes > ${MAX_FRAME_BYTES}`)
  let outer: unknown
  try { outer = packr.unpack(frame) } catch (err) { return drop('malformed', `frame: ${(err as Error).message}`) }
  if (!Array.isArray(outer) || !(outer[0] instanceof Uint8Array)) return drop('malformed', 'frame is not [payload, signature]')
  const [payload, signature] = outer as [Uint8Array, unknown]
  if (!(signature instanceof Uint8Array) || signature.byteLength === 0) return drop('unsigned', 'no signature')
  let p: Record<string, unknown>
  try { p = packr.unpack(payload) } catch (err) { return drop('malformed', `payload: ${(err as Error).message}`) }
  if (p === null || typeof p !== 'object' || Array.isArray(p)) return drop('malformed', 'payload is not a map')
  if (p.v !== PROTOCOL_VERSION) return drop('wrong_version', `version ${String(p.v)}, expected ${PROTOCOL_VERSION}`)
  if (typeof p.from !== 'string' || !checkHotkey(p.from).ok) return drop('malformed', 'sender is not a valid hotkey')
  // Cheap checks first: a flood of stale, misaddressed or repeated frames costs no signature check.
  if (typeof p.id !== 'string' || p.id.length === 0 || p.id.length > 64) return drop('malformed', 'bad id')
  if (typeof p.ts !== 'number' || !Number.isFinite(p.ts)) return drop('malformed', 'bad ts')
  if (p.to !== null && typeof p.to !== 'string') return drop('malformed', 'bad recipient')
  if (opts.now !== undefined && Math.abs(opts.now - p.ts) > MAX_CLOCK_SKEW_MS) return drop('stale', `ts ${p.ts} is ${opts.now - p.ts} ms from now`)
  if (opts.self !== undefined && p.to !== null && p.to !== opts.self) return drop('not_for_us', `addressed to ${String(p.to)}`)
  if (opts.seen?.(p.from, p.id) === true) return drop('duplicate', `${String(p.type)} ${p.id} already received`)
  if (!verify(p.from, payload, signature)) return drop('bad_signature', `signature does not match ${p.from}`)
  if (!isMessageType(p.type)) return drop('unknown_type', `type ${String(p.type)}`)
  const check = validator(MESSAGES[p.type])
  if (!check(p.body)) return drop('invalid_body', `${p.type}: ${describeErrors((check as unknown as { errors: [] }).errors)}`)
  return { ok: true, msg: p as unknown as Envelope }
}

/** Plain msgpack for values that are not signed frames (bulk channel headers, stored rows). */
export const pack = (value: unknown): Uint8Array => packr.pack(value)
export const unpack = <T = unknown>(bytes: Uint8Array): T => packr.unpack(bytes) as T
