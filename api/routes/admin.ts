// The admin API: organizations, projects, environments, keys and credits. Admin keys only.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { ApiDeps } from '../deps.ts'
import { ApiKeyView, Balance, CreatedKey, Environment, Id, KeyId, LedgerEntry, NewKey, Organization, Project } from '../accounts/model.ts'
import { LEDGER_PAGE_MAX } from '../accounts/service.ts'
import { guardedResponses } from '../responses.ts'

export const ADMIN_PREFIX = '/admin'

const NameBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false })
const OrgParams = Type.Object({ organizationId: Id })
const ProjectParams = Type.Object({ projectId: Id })
const KeyParams = Type.Object({ keyId: KeyId })
const GrantBody = Type.Object({
  amount: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  memo: Type.Optional(Type.String({ maxLength: 256 }))
}, { additionalProperties: false })
const LedgerQuery = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: LEDGER_PAGE_MAX, default: 100 }) })
const list = <T extends ReturnType<typeof Type.Object>>(item: T) => Type.Object({ items: Type.Array(item) })

export default async function adminRoutes (app: FastifyInstance, opts: { deps: ApiDeps }): Promise<void> {
  const { accounts } = opts.deps
  const config = { auth: { roles: ['admin' as const] } }
  const tags = ['admin']

  app.post<{ Body: Static<typeof NameBody> }>('/organizations', {
    config, schema: { tags, summary: 'Create an organization', body: NameBody, response: guardedResponses({ 201: Organization }) }
  }, async (req, reply) => reply.code(201).send(await accounts.createOrganization(req.body)))

  app.get('/organizations', {
    config, schema: { tags, summary: 'List organizations', response: guardedResponses({ 200: list(Organization) }) }
  }, async () => ({ items: await accounts.listOrganizations() }))

  app.get<{ Params: Static<typeof OrgParams> }>('/organizations/:organizationId', {
    config, schema: { tags, summary: 'Read an organization', params: OrgParams, response: guardedResponses({ 200: Organization }, [404]) }
  }, async (req) => accounts.getOrganization(req.params.organizationId))

  app.post<{ Params: Static<typeof OrgParams>, Body: Static<typeof NameBody> }>('/organizations/:organizationId/projects', {
    config, schema: { tags, summary: 'Create a project in an organization', params: OrgParams, body: NameBody, response: guardedResponses({ 201: Project }, [404]) }
  }, async (req, reply) => reply.code(201).send(await accounts.createProject(req.params.organizationId, req.body)))

  app.get<{ Params: Static<typeof OrgParams> }>('/organizations/:organizationId/projects', {
    config, schema: { tags, summary: 'List the projects of an organization', params: OrgParams, response: guardedResponses({ 200: list(Project) }, [404]) }
  }, async (req) => ({ items: await accounts.listProjects(req.params.organizationId) }))

  app.post<{ Params: Static<typeof ProjectParams>, Body: Static<typeof NameBody> }>('/projects/:projectId/environments', {
    config, schema: { tags, summary: 'Create an environment in a project', params: ProjectParams, body: NameBody, response: guardedResponses({ 201: Environment }, [404]) }
  }, async (req, reply) => reply.code(201).send(await accounts.createEnvironment(req.params.projectId, req.body)))

  app.get<{ Params: Static<typeof ProjectParams> }>('/projects/:projectId/environments', {
    config, schema: { tags, summary: 'List the environments of a project', params: ProjectParams, response: guardedResponses({ 200: list(Environment) }, [404]) }
  }, async (req) => ({ items: await accounts.listEnvironments(req.params.projectId) }))

  app.post<{ Params: Static<typeof OrgParams>, Body: NewKey }>('/organizations/:organizationId/keys', {
    config,
    schema: {
      tags,
      summary: 'Issue an API key',
      description: 'The plain key is in this response only; it is stored as a hash and cannot be shown again. ' +
        'Give projectId or environmentId to grant the key at that level (default: organization).',
      params: OrgParams,
      body: NewKey,
      response: guardedResponses({ 201: CreatedKey }, [404])
    }
  }, async (req, reply) => {
    const created = await accounts.createKey(req.params.organizationId, req.body)
    return reply.code(201).header('cache-control', 'no-store').send(created)
  })

  app.get<{ Params: Static<typeof OrgParams> }>('/organizations/:organizationId/keys', {
    config, schema: { tags, summary: 'List the keys of an organization (never their secrets)', params: OrgParams, response: guardedResponses({ 200: list(ApiKeyView) }, [404]) }
  }, async (req) => ({ items: await accounts.listKeys(req.params.organizationId) }))

  app.get<{ Params: Static<typeof KeyParams> }>('/keys/:keyId', {
    config, schema: { tags, summary: 'Read a key', params: KeyParams, response: guardedResponses({ 200: ApiKeyView }, [404]) }
  }, async (req) => accounts.getKey(req.params.keyId))

  app.delete<{ Params: Static<typeof KeyParams> }>('/keys/:keyId', {
    config, schema: { tags, summary: 'Revoke a key; its next request is refused', params: KeyParams, response: guardedResponses({ 200: ApiKeyView }, [404]) }
  }, async (req) => accounts.revokeKey(req.params.keyId))

  app.post<{ Params: Static<typeof OrgParams>, Body: Static<typeof GrantBody> }>('/organizations/:organizationId/credits', {
    config, schema: { tags, summary: 'Grant prepaid credits', params: OrgParams, body: GrantBody, response: guardedResponses({ 201: Balance }, [404]) }
  }, async (req, reply) => reply.code(201).send(await accounts.grantCredits(req.params.organizationId, req.body.amount, req.body.memo ?? null)))

  app.get<{ Params: Static<typeof OrgParams> }>('/organizations/:organizationId/credits', {
    config, schema: { tags, summary: 'Read the credit balance', params: OrgParams, response: guardedResponses({ 200: Balance }, [404]) }
  }, async (req) => accounts.balance(req.params.organizationId))

  app.get<{ Params: Static<typeof OrgParams>, Querystring: Static<typeof LedgerQuery> }>('/organizations/:organizationId/credits/ledger', {
    config, schema: { tags, summary: 'Read the credit ledger, newest first', params: OrgParams, querystring: LedgerQuery, response: guardedResponses({ 200: list(LedgerEntry) }, [404]) }
  }, async (req) => ({ items: await accounts.ledger(req.params.organizationId, { limit: req.query.limit }) }))
}
