// Every error the HTTP API returns, with its stable code and status. Documented in docs/errors.md.
// Branch on `err.code`, never on the message.
import createError from '@fastify/error'

export const NotFound = createError('BWN_ERR_NOT_FOUND', 'No route %s %s', 404)
export const BadRequest = createError('BWN_ERR_BAD_REQUEST', '%s', 400)
export const ValidationFailed = createError('BWN_ERR_VALIDATION', '%s', 400)
export const Unavailable = createError('BWN_ERR_UNAVAILABLE', '%s', 503)
export const Timeout = createError('BWN_ERR_TIMEOUT', '%s', 504)
export const Internal = createError('BWN_ERR_INTERNAL', 'Internal error', 500)

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
