// RFC 9457 problem+json for every error at the HTTP edge: one error handler, one not-found handler,
// and the answers Fastify and Node's HTTP parser give before a route runs (a bad URL, oversized headers).
import fp from 'fastify-plugin'
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Socket } from 'node:net'
import { randomUUID } from 'node:crypto'
import { maxHeaderSize, STATUS_CODES } from 'node:http'

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
  FST_ERR_VALIDATION: 'BWN_ERR_VALIDATION',
  // Routing, before any route runs (answered through `frameworkErrors`): a path that does not
  // percent-decode (400), a path parameter longer than the router takes (414).
  FST_ERR_BAD_URL: 'BWN_ERR_BAD_REQUEST',
  FST_ERR_MAX_PARAM_LENGTH: 'BWN_ERR_BAD_REQUEST'
}

export const INTERNAL_DETAIL = 'The server could not complete the request.'

/** The answer's code: the project's own, or Fastify's bad input mapped; anything else by its status. */
function codeOf (err: FastifyError, status: number): string {
  const code = typeof err.code === 'string' ? err.code : undefined
  if (code !== undefined && code.startsWith('BWN_ERR_')) return code
  // A 5xx under another code (EACCES, ENOENT, LEVEL_*, a library's) is internal: its code and message
  // name files and engines, never the client's business.
  if (status >= 500) return 'BWN_ERR_INTERNAL'
  if (code !== undefined && !code.startsWith('FST_')) return code
  return (code !== undefined ? FASTIFY_BAD_INPUT[code] : undefined) ?? 'BWN_ERR_BAD_REQUEST'
}

/**
 * Out of file descriptors (the process's or the system's): the node is busy, not broken, and the same
 * request can succeed in a moment. Answered 503 with Retry-After, not as an internal error.
 */
const OUT_OF_FILES = new Set(['EMFILE', 'ENFILE'])
export const outOfFiles = (err: { code?: unknown, statusCode?: number }): boolean => err.statusCode === undefined && OUT_OF_FILES.has(err.code as string)
export const OUT_OF_FILES_DETAIL = 'The node has too many files open at once; retry shortly.'

/** Headers an error's answer carries: its own (withExtensions), or Retry-After when out of files. */
export function problemHeaders (err: { code?: unknown, statusCode?: number, headers?: Record<string, string> }): Record<string, string> | undefined {
  return err.headers ?? (outOfFiles(err) ? { 'retry-after': '1' } : undefined)
}

export function toProblem (err: FastifyError & { extensions?: Record<string, unknown> }, instance: string): Problem {
  const busy = outOfFiles(err)
  let status = busy ? 503 : err.statusCode ?? 500
  if (err.validation) status = 400
  if (status < 400 || status > 599) status = 500
  const code = busy ? 'BWN_ERR_UNAVAILABLE' : codeOf(err, status)
  const problem: Problem = {
    type: problemType(code),
    title: STATUS_CODES[status] ?? 'Error',
    status,
    // A 5xx never shows its internal message: it may carry paths, peers or provider answers.
    detail: busy ? OUT_OF_FILES_DETAIL : status >= 500 && code === 'BWN_ERR_INTERNAL' ? INTERNAL_DETAIL : err.message,
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

/**
 * Fastify's `frameworkErrors`: what goes wrong before a route runs (a path that does not percent-decode,
 * a path parameter past the router's length) answers as a problem, like every other error.
 */
export function frameworkErrors (err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const problem = toProblem(err, req.id)
  if (problem.status >= 500) req.log.error({ err }, 'request failed')
  else req.log.info({ code: problem.code, status: problem.status }, 'request refused')
  void reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem)
}

const CLIENT_ERRORS: Record<string, { status: number, detail: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, detail: `The request's headers are larger than this server accepts (${maxHeaderSize} bytes in all).` },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: 'The request was not received in time.' }
}

/**
 * The server's `clientError` (Fastify's `clientErrorHandler`): a request Node's HTTP parser refuses
 * never reaches Fastify, so its answer is written here, as a problem, and the connection closed.
 */
export function clientErrorHandler (this: { log: FastifyBaseLogger }, err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const { status, detail } = CLIENT_ERRORS[err.code ?? ''] ?? { status: 400, detail: 'The request is not valid HTTP.' }
  const problem: Problem = { type: problemType('BWN_ERR_BAD_REQUEST'), title: STATUS_CODES[status] ?? 'Error', status, detail, instance: randomUUID(), code: 'BWN_ERR_BAD_REQUEST' }
  // Not the error itself: its rawPacket holds the request's bytes, API key included.
  this.log.debug({ code: err.code, status, instance: problem.instance }, 'request refused by the HTTP parser')
  // Never into an answer already on its way on this connection (the peer would read a corrupt one).
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage
  if (socket.writable && inFlight?.headersSent !== true) {
    const body = JSON.stringify(problem)
    socket.write(`HTTP/1.1 ${status} ${problem.title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(err)
}

export default fp(async function problemPlugin (app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError & { extensions?: Record<string, unknown>, headers?: Record<string, string> }, req, reply) => {
    const problem = toProblem(err, req.id)
    // A 503 is an answer by design (busy or not ready: retry later), logged as a warning, not a failure.
    if (problem.status === 503 && problem.code !== 'BWN_ERR_INTERNAL') req.log.warn({ code: problem.code, status: problem.status, ...(outOfFiles(err) ? { err } : {}) }, 'request refused: unavailable')
    else if (problem.status >= 500) req.log.error({ err }, 'request failed')
    else req.log.info({ code: problem.code, status: problem.status }, 'request refused')
    const headers = problemHeaders(err)
    // A conditional read sets its ETag before its limits: a refusal (429, 402, …) is no version of it.
    void reply.removeHeader('etag')
    if (headers !== undefined) reply.headers(headers)
    void reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem)
  })
  app.setNotFoundHandler((req, reply) => {
    void reply.code(404).type(PROBLEM_CONTENT_TYPE).send({
      type: problemType('BWN_ERR_NOT_FOUND'), title: 'Not Found', status: 404,
      detail: `No route ${req.method} ${req.url.split('?')[0]}`, instance: req.id, code: 'BWN_ERR_NOT_FOUND'
    } satisfies Problem)
  })
}, { name: 'bwnet-problem' })
