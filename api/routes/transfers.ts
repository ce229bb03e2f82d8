// Transfer routes ({base_url}, no version prefix): seed §4.1. Keys: client role, Bearer or X-Api-Key.
import { Type } from '@sinclair/typebox'
import type { FastifyRequest, FastifyReply } from 'fastify'
import type { TypedApp } from '../typed-app.ts'
import type { Readable } from 'node:stream'
import type { ApiDeps } from '../deps.ts'
import { guardedResponses } from '../responses.ts'
import { paced, isBodyStalled, lingerBeforeClose } from '../body-pace.ts'
import { ChunkIndexInvalid, BadRequest } from '../errors.ts'
import { TransferRecord, CreateTransferBody, ChunkAck, TiersResponse, TransferStatusSchema, TransferChunks, type TransferService } from '../transfers.ts'

const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) })
const CLIENT = { auth: { roles: ['client' as const] } }
const LIST_LIMIT = 50 // transfers per page unless ?limit= says otherwise

/** Header naming the chunk's index (0-based); `?index=` works too. */
export const CHUNK_INDEX_HEADER = 'x-chunk-index'
/** Optional header with the chunk's sha256 (hex); a mismatch is a 400. */
export const CHUNK_SHA256_HEADER = 'x-chunk-sha256'

export default async function transferRoutes (app: TypedApp, opts: { deps: ApiDeps }): Promise<void> {
  const service = opts.deps.transfers as TransferService
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: 64 * 1024 }, app.getDefaultJsonParser('error', 'error'))
  // Chunk bodies are not parsed: the route gets the request stream itself and reads it only after
  // authentication (onRequest), the rate limit (preHandler) and the transfer's checks, with the
  // chunk's planned length as the limit (docs/transfers.md#chunk-ingest).
  app.addContentTypeParser('application/octet-stream', (_req, payload, done) => { done(null, payload) })

  app.get('/transfers/tiers', {
    config: CLIENT,
    schema: { tags: ['transfers'], summary: 'Transfer tiers and the limits of each plan', response: guardedResponses({ 200: TiersResponse }) }
  }, async (req) => service.tiers(req.principal))

  app.post('/transfers/create', {
    config: CLIENT,
    schema: {
      tags: ['transfers'], summary: 'Create a transfer; the chunk plan follows from total_size',
      body: CreateTransferBody,
      response: guardedResponses({ 201: TransferRecord }, [404, 409, 413, 507])
    }
  }, async (req, reply) => {
    const record = await service.create(req.body, req.principal!)
    return reply.code(201).send(record)
  })

  app.post('/transfers/:id/chunks', {
    config: { ...CLIENT, openapiRequestBody: { required: true, description: 'The chunk\'s bytes', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } } },
    // An answer sent before the body was read whole (refused early, or 413 mid-body) closes the
    // connection: the rest of the body is never read, buffered or parsed as a next request.
    onSend: closeIfBodyUnread,
    schema: {
      tags: ['transfers'],
      summary: 'Submit one chunk as raw bytes; acknowledged once durable',
      description: `Body: the chunk's bytes (application/octet-stream), exactly the planned length of that index. Headers: \`X-Chunk-Index\` (or query \`index\`), optional \`X-Chunk-SHA256\` (hex). The body is streamed to disk and hashed as it arrives: a body longer than the chunk is refused with 413 as soon as the first excess byte arrives (the connection is closed), a shorter one with 400. The same bytes again for an index answer 200 (idempotent); other bytes for a received index answer 409.`,
      params: IdParams,
      querystring: Type.Object({ index: Type.Optional(Type.Integer({ minimum: 0 })) }),
      headers: Type.Object({
        [CHUNK_INDEX_HEADER]: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
        [CHUNK_SHA256_HEADER]: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{64}$' }))
      }),
      response: guardedResponses({ 200: ChunkAck, 201: ChunkAck }, [404, 409, 413, 415, 507])
    }
  }, async (req, reply) => {
    const { id } = req.params
    const headers = req.headers as Record<string, string | undefined>
    const headerIndex = headers[CHUNK_INDEX_HEADER]
    const index = headerIndex !== undefined ? Number(headerIndex) : req.query.index
    if (index === undefined) throw new ChunkIndexInvalid('Name the chunk with the X-Chunk-Index header (or ?index=).')
    const body = req.body
    if (!isReadable(body)) throw new ChunkIndexInvalid('Send the chunk as application/octet-stream.')
    const digest = headers[CHUNK_SHA256_HEADER]?.toLowerCase() ?? null
    const declared = headers['content-length']
    const contentLength = declared !== undefined && /^[0-9]{1,16}$/.test(declared) ? Number(declared) : null
    let result
    try {
      // destroyOnReturn: false, so a refusal mid-body leaves the socket to answer on.
      const pieces = paced(body, body.iterator({ destroyOnReturn: false }), contentLength ?? Number.POSITIVE_INFINITY)
      result = await service.putChunk(id, index, pieces, { sha256: digest, contentLength }, req.principal!)
    } catch (err) {
      if (isBodyStalled(err)) throw new BadRequest(`The chunk body was cut off: ${err.message}.`)
      if (isBodyCutOff(err)) throw new BadRequest('The chunk body was cut off before its end.')
      throw err
    }
    return reply.code(result.created ? 201 : 200).send(result.ack)
  })

  app.post('/transfers/:id/finalize', {
    config: CLIENT,
    schema: {
      tags: ['transfers'], summary: 'Finalize: the transfer completes once every chunk is delivered',
      description: 'While chunks are missing the answer is 409 with `missing_chunks` (the first 1000 indices) and `missing_count`.',
      params: IdParams,
      response: guardedResponses({ 202: TransferRecord, 200: TransferRecord }, [404, 409, 507])
    }
  }, async (req, reply) => {
    const record = await service.finalize(req.params.id, req.principal!)
    return reply.code(record.status === 'completed' ? 200 : 202).send(record)
  })

  app.get('/transfers/:id', {
    config: CLIENT,
    schema: { tags: ['transfers'], summary: 'Transfer status', params: IdParams, response: guardedResponses({ 200: TransferRecord }, [404]) }
  }, async (req) => service.get(req.params.id, req.principal!))

  app.get('/transfers/:id/chunks', {
    config: CLIENT,
    schema: {
      tags: ['transfers'], summary: 'The sha256 of every received chunk (to check a local file against a transfer)',
      params: IdParams, response: guardedResponses({ 200: TransferChunks }, [404])
    }
  }, async (req) => service.chunks(req.params.id, req.principal!))

  app.delete('/transfers/:id', {
    config: CLIENT,
    schema: { tags: ['transfers'], summary: 'Cancel a transfer (idempotent); no destination write lands after the answer', params: IdParams, response: guardedResponses({ 200: TransferRecord }, [404, 409, 507]) }
  }, async (req) => service.cancel(req.params.id, req.principal!))

  app.get('/transfers', {
    config: CLIENT,
    schema: {
      tags: ['transfers'], summary: 'Your transfers, newest first; display names redacted',
      querystring: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: LIST_LIMIT })),
        offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
        status: Type.Optional(TransferStatusSchema)
      }, { additionalProperties: false }),
      response: guardedResponses({ 200: Type.Object({ items: Type.Array(TransferRecord), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() }) })
    }
  }, async (req) => {
    // Validation fills the defaults in; the fallbacks only satisfy the optional types.
    const q = { ...req.query, limit: req.query.limit ?? LIST_LIMIT, offset: req.query.offset ?? 0 }
    const { items, total } = await service.list(req.principal!, q)
    return { items, total, limit: q.limit, offset: q.offset }
  })
}

/** The chunk route's body: the request stream itself (its parser hands it over unread). */
function isReadable (body: unknown): body is Readable {
  return body !== undefined && body !== null && typeof (body as Readable).iterator === 'function'
}

function closeIfBodyUnread (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void): void {
  if (!req.raw.complete) {
    reply.header('connection', 'close')
    lingerBeforeClose(req.raw.socket)
  }
  done(null, payload)
}

function isBodyCutOff (err: unknown): boolean {
  const code = (err as { code?: string }).code
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || (err as Error).message === 'aborted'
}
