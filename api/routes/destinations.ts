// Destination routes ({base_url}, X-Api-Key): seed §4.2 (DELETE) plus create, list and read.
import { Type } from '@sinclair/typebox'
import type { TypedApp } from '../typed-app.ts'
import type { ApiDeps } from '../deps.ts'
import { guardedResponses } from '../responses.ts'
import { DestinationRecord, CreateDestinationBody, type DestinationService } from '../transfers.ts'

const CLIENT_X_API_KEY = { auth: { roles: ['client' as const], headers: 'x-api-key' as const } }
const IdParams = Type.Object({ destination_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }) })

export default async function destinationRoutes (app: TypedApp, opts: { deps: ApiDeps }): Promise<void> {
  const service = opts.deps.destinations as DestinationService
  app.post('/destinations', {
    config: CLIENT_X_API_KEY,
    // A destination is a small record: 256 KiB is more than its largest (two header sets of 32).
    bodyLimit: 256 * 1024,
    schema: { tags: ['destinations'], summary: 'Register a destination (its credentials stay on this node)', body: CreateDestinationBody, response: guardedResponses({ 201: DestinationRecord }, [409]) }
  }, async (req, reply) => reply.code(201).send(await service.create(req.body, req.principal!)))

  app.get('/destinations', {
    config: CLIENT_X_API_KEY,
    schema: { tags: ['destinations'], summary: 'Destinations you can send to', response: guardedResponses({ 200: Type.Object({ items: Type.Array(DestinationRecord) }) }) }
  }, async (req) => ({ items: await service.list(req.principal!) }))

  app.get('/destinations/:destination_id', {
    config: CLIENT_X_API_KEY,
    schema: { tags: ['destinations'], summary: 'One destination', params: IdParams, response: guardedResponses({ 200: DestinationRecord }, [404]) }
  }, async (req) => service.get(req.params.destination_id, req.principal!))

  app.delete('/destinations/:destination_id', {
    config: CLIENT_X_API_KEY,
    schema: {
      tags: ['destinations'], summary: 'Remove a destination; the response body is empty', params: IdParams,
      response: guardedResponses({ 204: { description: 'Removed; empty body', type: 'null' } }, [404, 409])
    }
  }, async (req, reply) => {
    await service.remove(req.params.destination_id, req.principal!)
    return reply.code(204).send()
  })
}
