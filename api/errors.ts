// Every error the HTTP API returns, with its stable code and status. Documented in docs/errors.md.
// Branch on `err.code`, never on the message.
import createError from '@fastify/error'

export const NotFound = createError('BWN_ERR_NOT_FOUND', 'No route %s %s', 404)
export const BadRequest = createError('BWN_ERR_BAD_REQUEST', '%s', 400)
export const ValidationFailed = createError('BWN_ERR_VALIDATION', '%s', 400)
export const Unavailable = createError('BWN_ERR_UNAVAILABLE', '%s', 503)
export const Timeout = createError('BWN_ERR_TIMEOUT', '%s', 504)
export const Internal = createError('BWN_ERR_INTERNAL', 'Internal error', 500)
