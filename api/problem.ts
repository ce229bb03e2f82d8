// RFC 9457 problem+json for every error at the HTTP edge: one error handler, one not-found handler.
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance } from 'fastify'
import { STATUS_CODES } from 'node:http'

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  instance: string
  code: string
  errors?: Array<{ field: string, message: string }>
  [extension: string]: unknown
}

/** The problem `type` URI of a code; docs/errors.md has an anchor per code. */
export const problemType = (code: string): string => `urn:bwnet:problem:${code}`

// Codes fastify itself raises for bad input; they map to our own stable codes.
const FASTIFY_BAD_INPUT: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'BWN_ERR_UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_BODY_TOO_LARGE: 'BWN_ERR_BODY_TOO_LARGE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'BWN_ERR_BAD_REQUEST',
  FST_ERR_CTP_INVALID_JSON_BODY: 'BWN_ERR_BAD_REQUEST',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BWN_ERR_BAD_REQUEST',
  FST_ERR_CTP_EMPTY_TYPE: 'BWN_ERR_UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_TYPE: 'BWN_ERR_UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_VALIDATION: 'BWN_ERR_VALIDATION'
}

export function toProblem (err: FastifyError & { extensions?: Record<string, unknown> }, instance: string): Problem {
  let status = err.statusCode ?? 500
  if (err.validation) status = 400
  if (status < 400 || status > 599) status = 500
  let code = err.code && !err.code.startsWith('FST_') ? err.code : (FASTIFY_BAD_INPUT[err.code] ?? (status < 500 ? 'BWN_ERR_BAD_REQUEST' : 'BWN_ERR_INTERNAL'))
  if (err.code?.startsWith('ERR_') && status === 500) code = 'BWN_ERR_INTERNAL'
  const problem: Problem = {
    type: problemType(code),
    title: STATUS_CODES[status] ?? 'Error',
    status,
    // A 5xx never shows its internal message: it may carry paths, peers or provider answers.
    detail: status >= 500 && code === 'BWN_ERR_INTERNAL' ? 'The server could not complete the request.' : err.message,
    instance,
    code,
    ...(err.extensions ?? {})
  }
  if (err.validation) {
    problem.errors = err.validation.map(v => ({
      field: `${err.validationContext ?? 'body'}${v.instancePath || ''}${'missingProperty' in v.params ? '/' + String(v.params.missingProperty) : ''}`,
      message: v.message ?? 'invalid'
    }))
  }
  return problem
}

export default fp(async function problemPlugin (app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError & { extensions?: Record<string, unknown>, headers?: Record<string, string> }, req, reply) => {
    const problem = toProblem(err, req.id)
    if (problem.status >= 500) req.log.error({ err }, 'request failed')
    else req.log.info({ code: problem.code, status: problem.status }, 'request refused')
    if (err.headers) reply.headers(err.headers)
    void reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem)
  })
  app.setNotFoundHandler((req, reply) => {
    void reply.code(404).type(PROBLEM_CONTENT_TYPE).send({
      type: problemType('BWN_ERR_NOT_FOUND'), title: 'Not Found', status: 404,
      detail: `No route ${req.method} ${req.url.split('?')[0]}`, instance: req.id, code: 'BWN_ERR_NOT_FOUND'
    } satisfies Problem)
  })
}, { name: 'bwnet-problem' })
