// Every error the HTTP API returns, with its stable code and status. Documented in docs/errors.md.
// Branch on `err.code`, never on the message.
import createError from '@fastify/error'

export const NotFound = createError('BWN_ERR_NOT_FOUND', 'No route %s %s', 404)
export const BadRequest = createError('BWN_ERR_BAD_REQUEST', '%s', 400)
export const ValidationFailed = createError('BWN_ERR_VALIDATION', '%s', 400)
export const Unavailable = createError('BWN_ERR_UNAVAILABLE', '%s', 503)
export const Timeout = createError('BWN_ERR_TIMEOUT', '%s', 504)
export const Internal = createError('BWN_ERR_INTERNAL', 'Internal error', 500)
// The node's data directory is at its free-space watermark or out of space (node/storage.ts).
export const StorageFull = createError('BWN_ERR_STORAGE_FULL', '%s', 507)

// Signed URLs (protocol/signed-url.ts): the node sink and the chunk data endpoint.
export const SignedUrlRequired = createError('BWN_ERR_SIGNED_URL_REQUIRED', 'This request needs a signed URL', 403)
export const SignedUrlInvalid = createError('BWN_ERR_SIGNED_URL_INVALID', 'The URL signature is not valid here: %s', 403)
export const SignedUrlExpired = createError('BWN_ERR_SIGNED_URL_EXPIRED', 'The signed URL has expired', 403)
export const RangeNotSatisfiable = createError('BWN_ERR_RANGE_NOT_SATISFIABLE', '%s', 416)

// Node sink (node/adapters/destinations/node-sink.ts).
export const SinkUploadNotFound = createError('BWN_ERR_SINK_UPLOAD_NOT_FOUND', 'No upload %s on this sink', 404)
export const SinkBadFilename = createError('BWN_ERR_SINK_BAD_FILENAME', 'Filename refused: %s', 400)
export const SinkConflict = createError('BWN_ERR_SINK_CONFLICT', '%s', 409)
export const SinkChunkSize = createError('BWN_ERR_SINK_CHUNK_SIZE', '%s', 400)
export const SinkEtagMismatch = createError('BWN_ERR_SINK_ETAG_MISMATCH', '%s', 409)
// Authentication (401): the caller is not known.
export const KeyMissing = createError('BWN_ERR_KEY_MISSING', '%s', 401)
export const KeyInvalid = createError('BWN_ERR_KEY_INVALID', 'The API key is not known', 401)
export const KeyRevoked = createError('BWN_ERR_KEY_REVOKED', 'The API key was revoked', 401)
export const KeyExpired = createError('BWN_ERR_KEY_EXPIRED', 'The API key expired', 401)
// Authorisation (403): the caller is known but may not do this.
export const RoleForbidden = createError('BWN_ERR_ROLE_FORBIDDEN', '%s', 403)
export const ScopeMissing = createError('BWN_ERR_SCOPE_MISSING', '%s', 403)
export const GrantTooNarrow = createError('BWN_ERR_GRANT_TOO_NARROW', '%s', 403)
export const OperatorOnly = createError('BWN_ERR_OPERATOR_ONLY', '%s', 403)
// Credits and limits.
export const InsufficientCredits = createError('BWN_ERR_INSUFFICIENT_CREDITS', '%s', 402)
export const BalanceLimit = createError('BWN_ERR_BALANCE_LIMIT', '%s', 409)
// Orchestrators' workers (/admin/workers): a hotkey registered on the chain stands by that registration.
export const WorkerRegistered = createError('BWN_ERR_WORKER_REGISTERED', '%s', 409)
export const RateLimited = createError('BWN_ERR_RATE_LIMITED', '%s', 429)
export const UpgradeRequired = createError('BWN_ERR_UPGRADE_REQUIRED', '%s', 426)
// Admin API.
export const OrganizationNotFound = createError('BWN_ERR_ORGANIZATION_NOT_FOUND', 'No organization %s', 404)
export const ProjectNotFound = createError('BWN_ERR_PROJECT_NOT_FOUND', 'No project %s', 404)
export const EnvironmentNotFound = createError('BWN_ERR_ENVIRONMENT_NOT_FOUND', 'No environment %s', 404)
export const KeyNotFound = createError('BWN_ERR_API_KEY_NOT_FOUND', 'No API key %s', 404)
export const HotkeyProofInvalid = createError('BWN_ERR_HOTKEY_PROOF', '%s', 400)
export const HotkeyProofStale = createError('BWN_ERR_HOTKEY_PROOF_STALE', '%s', 400)
export const HotkeyProofReplayed = createError('BWN_ERR_HOTKEY_PROOF_REPLAYED', '%s', 409)

// Transfers and destinations (api/routes/transfers.ts, api/routes/destinations.ts).
export const TransferNotFound = createError('BWN_ERR_TRANSFER_NOT_FOUND', '%s', 404)
export const TransferClosed = createError('BWN_ERR_TRANSFER_CLOSED', '%s', 409)
export const ChunkConflict = createError('BWN_ERR_CHUNK_CONFLICT', '%s', 409)
export const ChunksMissing = createError('BWN_ERR_CHUNKS_MISSING', '%s', 409)
export const ChunkIndexInvalid = createError('BWN_ERR_CHUNK_INDEX', '%s', 400)
export const ChunkSizeInvalid = createError('BWN_ERR_CHUNK_SIZE', '%s', 400)
export const ChunkDigestMismatch = createError('BWN_ERR_CHUNK_DIGEST', '%s', 400)
export const ChunkTooLarge = createError('BWN_ERR_CHUNK_TOO_LARGE', '%s', 413)
export const HotkeyInvalid = createError('BWN_ERR_INVALID_HOTKEY', '%s', 400)
export const TierUnknown = createError('BWN_ERR_UNKNOWN_TIER', '%s', 400)
export const SizeInvalid = createError('BWN_ERR_INVALID_SIZE', '%s', 400)
export const FilenameInvalid = createError('BWN_ERR_BAD_FILENAME', '%s', 400)
export const FilenameTaken = createError('BWN_ERR_FILENAME_TAKEN', '%s', 409)
export const FileTooLarge = createError('BWN_ERR_FILE_TOO_LARGE', '%s', 413)
export const TooManyTransfers = createError('BWN_ERR_CONCURRENT_TRANSFERS', '%s', 429)
export const DestinationNotFound = createError('BWN_ERR_DESTINATION_NOT_FOUND', '%s', 404)
export const DestinationInUse = createError('BWN_ERR_DESTINATION_IN_USE', '%s', 409)
export const DestinationBuiltin = createError('BWN_ERR_DESTINATION_BUILTIN', '%s', 409)
export const DestinationInvalid = createError('BWN_ERR_DESTINATION_INVALID', '%s', 400)
export const DestinationLimit = createError('BWN_ERR_DESTINATION_LIMIT', '%s', 409)
// Destination policy (node/adapters/destinations/url-policy.ts): problem member `reason` says why.
export const DestinationUrlRefused = createError('BWN_ERR_DESTINATION_URL_REFUSED', '%s', 400)
export const DestinationHeaderRefused = createError('BWN_ERR_DESTINATION_HEADER_REFUSED', '%s', 400)

// Telemetry and audit (api/routes/telemetry.ts, api/routes/audit.ts).
export const CursorInvalid = createError('BWN_ERR_CURSOR_INVALID', '%s', 400)
export const CursorMismatch = createError('BWN_ERR_CURSOR_MISMATCH', '%s', 400)
export const SnapshotNotFound = createError('BWN_ERR_SNAPSHOT_NOT_FOUND', '%s', 404)
export const SellAllowanceNotFound = createError('BWN_ERR_SELL_ALLOWANCE_NOT_FOUND', '%s', 404)
export const AuditTransferNotFound = createError('BWN_ERR_AUDIT_NOT_FOUND', '%s', 404)

/** Attaches problem extension members (and response headers) to a coded error. */
export function withExtensions<E extends Error> (err: E, extensions: Record<string, unknown>, headers?: Record<string, string>): E {
  return Object.assign(err, { extensions, ...(headers ? { headers } : {}) })
}
// Chain errors (api/routes/chain.ts), one per ChainError code of actors/chain/ports.ts.
export const ChainNotRegistered = createError('BWN_ERR_CHAIN_NOT_REGISTERED', '%s', 404)
export const ChainNotValidator = createError('BWN_ERR_CHAIN_NOT_VALIDATOR', '%s', 403)
export const ChainBadWeights = createError('BWN_ERR_CHAIN_BAD_WEIGHTS', '%s', 400)
export const ChainBadBlock = createError('BWN_ERR_CHAIN_BAD_BLOCK', '%s', 400)
export const ChainBadAmount = createError('BWN_ERR_CHAIN_BAD_AMOUNT', '%s', 400)
export const ChainInsufficientAlpha = createError('BWN_ERR_CHAIN_INSUFFICIENT_ALPHA', '%s', 409)
export const ChainForbidden = createError('BWN_ERR_CHAIN_FORBIDDEN', '%s', 403)
export const ChainUnavailable = createError('BWN_ERR_CHAIN_UNAVAILABLE', '%s', 503)
export const ChainTimeout = createError('BWN_ERR_CHAIN_TIMEOUT', '%s', 504)
export const ChainRejected = createError('BWN_ERR_CHAIN_REJECTED', '%s', 502)
