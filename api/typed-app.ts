// Route plugins take the app typed by its TypeBox schemas (@fastify/type-provider-typebox): a handler's
// `req.params`, `req.query` and `req.body` have the types of the route's schemas, never a cast. Types only:
// validation stays with the app's ajv, which compiled those same schemas.
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'

export type TypedApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression<RawServerDefault>, RawReplyDefaultExpression<RawServerDefault>, FastifyBaseLogger, TypeBoxTypeProvider>
