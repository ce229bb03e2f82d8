// Every error the HTTP API returns, with its stable code and status. Documented in docs/errors.md.
// Branch on `err.code`, never on the message.
import createError from '@fastify/error'

export const NotFound = createError('BWN_ERR_NOT_FOUND', 'No route %s %s', 404)
export const BadRequest = createError('BWN_ERR_BAD_REQUEST', '%s', 400)
export const ValidationFailed = createError('BWN_ERR_VALIDATION', '%s', 400)
export const Unavailable = createError('BWN_ERR_UNAVAILABLE', '%s', 503)
export const Timeout = createError('BWN_ERR_TIMEOUT', '%s', 504)
export const Internal = createError('BWN_ERR_INTERNAL', 'Internal error', 500)

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
