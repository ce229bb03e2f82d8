// Response maps for route schemas: the shared problem+json schema and the error entries each kind
// of route documents. Telemetry routes document eight JSON entries, the paid sell-allowance read
// seven, the free audit route five (seed §7); docs/api.md explains the choice of codes.
import { Type } from '@sinclair/typebox'

export const PROBLEM_SCHEMA_ID = 'Problem'

/** RFC 9457 problem details; extension members (e.g. `errors`, `balance`, `price`) may follow. */
export const ProblemSchema = Type.Object({
  type: Type.String({ description: 'urn:bwnet:problem:<code>' }),
  title: Type.String(),
  status: Type.Integer({ minimum: 400, maximum: 599 }),
  detail: Type.String(),
  instance: Type.String({ description: 'The request id' }),
  code: Type.String({ pattern: '^BWN_ERR_[A-Z0-9_]+$', description: 'Stable machine code, see docs/errors.md' }),
  errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), { description: 'Validation failures (400)' })),
  // Extension members some codes carry (docs/errors.md).
  balance: Type.Optional(Type.Integer({ description: 'BWN_ERR_INSUFFICIENT_CREDITS (402): the organization\'s balance' })),
  price: Type.Optional(Type.Integer({ description: 'BWN_ERR_INSUFFICIENT_CREDITS (402): the price of the read' })),
  missing_chunks: Type.Optional(Type.Array(Type.Integer(), { maxItems: 1000, description: 'BWN_ERR_CHUNKS_MISSING (409): the first missing chunk indices' })),
  missing_count: Type.Optional(Type.Integer({ description: 'BWN_ERR_CHUNKS_MISSING (409): how many chunks are missing' }))
}, { $id: PROBLEM_SCHEMA_ID, additionalProperties: true, description: 'RFC 9457 problem details' })

const PROBLEM_REF = { $ref: `${PROBLEM_SCHEMA_ID}#` }

export const STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: a parameter, header or body failed validation (BWN_ERR_VALIDATION, BWN_ERR_BAD_REQUEST)',
  401: 'No key, or the key is unknown, revoked or expired (BWN_ERR_KEY_*)',
  402: 'The organization has too few prepaid credits for this read (BWN_ERR_INSUFFICIENT_CREDITS)',
  403: 'The key may not use this route: wrong role, missing scope, or a grant narrower than required',
  404: 'Not found',
  409: 'Conflict with the current state',
  410: 'Gone: the version asked for is no longer retained',
  429: 'Too many requests for the key\'s plan; see Retry-After (BWN_ERR_RATE_LIMITED)',
  426: 'Upgrade required: a WebSocket route asked for without an upgrade (BWN_ERR_UPGRADE_REQUIRED)',
  500: 'Internal error (BWN_ERR_INTERNAL)',
  503: 'Unavailable (BWN_ERR_UNAVAILABLE)',
  507: 'The node\'s data directory is at its free-space watermark or out of space; final for this request, retry once space is freed (BWN_ERR_STORAGE_FULL)'
}

/** One error entry: the problem schema, under application/json and application/problem+json. */
export function problemResponse (status: number, description = STATUS_DESCRIPTIONS[status] ?? 'Error'): Record<string, unknown> {
  return {
    description,
    content: { 'application/json': { schema: PROBLEM_REF }, 'application/problem+json': { schema: PROBLEM_REF } }
  }
}

export const NOT_MODIFIED_RESPONSE = {
  description: 'Not Modified: If-None-Match matches the current ETag. No body, no charge.',
  type: 'null'
} as const

/** Error statuses (besides the 200) of each kind of read route. */
export const TELEMETRY_ERROR_STATUSES = [400, 401, 402, 403, 404, 429, 500] as const
export const SELL_ALLOWANCE_ERROR_STATUSES = [400, 401, 402, 403, 404, 429] as const
export const FREE_AUDIT_ERROR_STATUSES = [400, 404, 429, 500] as const
/** What every key-guarded route adds to its own statuses. */
export const GUARDED_ERROR_STATUSES = [401, 403, 429] as const

export type ReadKind = 'telemetry' | 'sellAllowance'

function withErrors (success: Record<number, unknown>, statuses: readonly number[]): Record<number, unknown> {
  const out: Record<number, unknown> = { ...success }
  for (const status of statuses) out[status] ??= problemResponse(status)
  return out
}

/**
 * The response map of a paid read: 200 with `success`, 304 (no body) and the error entries of its
 * kind — telemetry: 8 JSON entries (200, 400, 401, 402, 403, 404, 429, 500); sellAllowance: 7
 * (no 500 entry: it serves a retained proof as stored).
 */
export function paidReadResponses (success: unknown, kind: ReadKind = 'telemetry'): Record<number, unknown> {
  const statuses = kind === 'sellAllowance' ? SELL_ALLOWANCE_ERROR_STATUSES : TELEMETRY_ERROR_STATUSES
  return withErrors({ 200: success, 304: NOT_MODIFIED_RESPONSE }, statuses)
}

/** The free audit read: 200, 304 (no body), 400, 404, 429, 500 — five JSON entries. */
export function freeReadResponses (success: unknown): Record<number, unknown> {
  return withErrors({ 200: success, 304: NOT_MODIFIED_RESPONSE }, FREE_AUDIT_ERROR_STATUSES)
}

/** A key-guarded route: its own entries plus 400, 401, 403, 429 and any `extra` statuses. */
export function guardedResponses (own: Record<number, unknown>, extra: readonly number[] = []): Record<number, unknown> {
  return withErrors(own, [400, ...GUARDED_ERROR_STATUSES, ...extra])
}
