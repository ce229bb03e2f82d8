// Opaque list cursors: base64url(JSON {r, f, v, p}) + "." + HMAC-SHA256 (truncated), keyed by a node
// secret. `r` names the route, `f` hashes the filters, `v` is the pinned version, `p` the position
// after which the next page starts. A cursor that was altered, or is sent with other filters or to
// another route, is refused with a 400.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import canonicalize from 'canonicalize'
import { CursorInvalid, CursorMismatch } from '../errors.ts'

export const CURSOR_MAX_LENGTH = 1024 // seed §4.4
const MAC_BYTES = 16 // 128-bit tag

export interface CursorState<V = number | string, P = number | string | unknown[]> { route: string, filters: string, pinned: V, position: P }

/** A short stable hash of the filters a listing was started with (limit and cursor excluded). */
export function filtersHash (filters: Record<string, unknown>): string {
  const defined = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined))
  return createHash('sha256').update(canonicalize(defined) ?? '{}').digest('base64url').slice(0, 22)
}

const mac = (key: Uint8Array, body: string): Buffer => createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES)

export function encodeCursor (key: Uint8Array, state: CursorState): string {
  const body = Buffer.from(JSON.stringify({ r: state.route, f: state.filters, v: state.pinned, p: state.position })).toString('base64url')
  const cursor = `${body}.${mac(key, body).toString('base64url')}`
  if (cursor.length > CURSOR_MAX_LENGTH) throw new RangeError('cursor too long')
  return cursor
}

/** The state of a cursor issued for `route` with the same `filters`; throws 400 problems otherwise. */
export function decodeCursor (key: Uint8Array, cursor: string, route: string, filters: string): CursorState {
  const dot = cursor.indexOf('.')
  if (dot <= 0) throw new CursorInvalid('The cursor is not one this server issued.')
  const body = cursor.slice(0, dot)
  const tag = Buffer.from(cursor.slice(dot + 1), 'base64url')
  const expected = mac(key, body)
  if (tag.length !== expected.length || !timingSafeEqual(tag, expected)) throw new CursorInvalid('The cursor is not one this server issued, or it was altered.')
  let parsed: { r?: unknown, f?: unknown, v?: unknown, p?: unknown }
  try { parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) } catch { throw new CursorInvalid('The cursor is not one this server issued.') }
  if (parsed.r !== route) throw new CursorMismatch('This cursor belongs to another listing.')
  if (parsed.f !== filters) throw new CursorMismatch('The cursor was issued with other filters; keep the filters unchanged between pages or start without a cursor.')
  return { route, filters, pinned: parsed.v as number | string, position: parsed.p as number | string | unknown[] }
}
