// The admin API: organizations, projects, environments, keys and credits. Admin keys only.
//
// Two kinds of admin key (docs/security.md): the network operator's (`operator: true`) reaches every
// organization; any other admin key is an organization admin, confined to its own organization: another
// organization, its projects, environments and keys answer exactly like missing ones (404), and what
// only the operator may do (create organizations, grant credits, issue or revoke operator keys, issue
// validator keys, choose the plan of a key) answers 403 BWN_ERR_OPERATOR_ONLY.
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ApiDeps } from '../deps.ts'
import type { KeyRole, Principal } from '../accounts/model.ts'
import { HotkeyProofInvalid, HotkeyProofReplayed, HotkeyProofStale, KeyNotFound, OperatorOnly, OrganizationNotFound, ProjectNotFound } from '../errors.ts'
import { ApiKeyView, Balance, CreatedKey, Environment, Id, KeyId, LedgerEntry, NewKey, Organization, Project } from '../accounts/model.ts'
import { LEDGER_PAGE_MAX } from '../accounts/service.ts'
import { checkProof, PROOF_MAX_SKEW_MS } from '../accounts/binding.ts'
import { guardedResponses } from '../responses.ts'

export const ADMIN_PREFIX = '/admin'

/**
 * Roles only the operator issues: their keys read beyond one organization. Orchestrator and worker keys
 * are not among them: unbound they read nothing, and bound they read their participant's own rows only
 * with that participant's signature over the issuing request.
 */
export const OPERATOR_ISSUED_ROLES: readonly KeyRole[] = ['validator']

const NameBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false })
const OrgParams = Type.Object({ organizationId: Id })
const ProjectParams = Type.Object({ projectId: Id })
const KeyParams = Type.Object({ keyId: KeyId })
const GrantBody = Type.Object({
  amount: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
  memo: Type.Optional(Type.String({ maxLength: 256 }))
}, { additionalProperties: false })
const LEDGER_PAGE = 100 // entries per ledger read unless ?limit= says otherwise
const LedgerQuery = Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LEDGER_PAGE_MAX, default: LEDGER_PAGE })) })
const list = <T extends ReturnType<typeof Type.Object>>(item: T) => Type.Object({ items: Type.Array(item) })

export default async function adminRoutes (app: FastifyInstance, opts: { deps: ApiDeps }): Promise<void> {
  const { accounts } = opts.deps
  const config = { auth: { roles: ['admin' as const] } }
  const tags = ['admin']
  const who = (req: FastifyRequest): Principal => req.principal!
  const operatorOnly = (req: FastifyRequest, what: string): void => {
    if (who(req).operator !== true) throw new OperatorOnly(`Only the network operator's admin key may ${what}; this key administers its own organization`)
  }
  /** The organization, if this admin may reach it; another organization's answers like a missing one. */
  const ownOrg = (req: FastifyRequest, organizationId: string): void => {
    const p = who(req)
    if (p.operator !== true && p.organizationId !== organizationId) throw new OrganizationNotFound(organizationId)
  }
  const ownProject = async (req: FastifyRequest, projectId: string): Promise<void> => {
    const project = await accounts.getProject(projectId)
    const p = who(req)
    if (p.operator !== true && p.organizationId !== project.organizationId) throw new ProjectNotFound(projectId)
  }
  const ownKey = async (req: FastifyRequest, keyId: string): Promise<void> => {
    const key = await accounts.getKey(keyId)
    const p = who(req)
    if (p.operator !== true && p.organizationId !== key.organizationId) throw new KeyNotFound(keyId)
  }

  app.post<{ Body: Static<typeof NameBody> }>('/organizations', {
    config, schema: { tags, summary: 'Create an organization', body: NameBody, response: guardedResponses({ 201: Organization }) }
  }, async (req, reply) => {
    operatorOnly(req, 'create organizations')
    return reply.code(201).send(await accounts.createOrganization(req.body))
  })

  app.get('/organizations', {
    config, schema: { tags, summary: 'List organizations (an organization admin sees its own)', response: guardedResponses({ 200: list(Organization) }) }
  }, async (req) => {
    const p = who(req)
    return { items: p.operator === true ? await accounts.listOrganizations() : [await accounts.getOrganization(p.organizationId)] }
  })

  app.get<{ Params: Static<typeof OrgParams> }>('/organizations/:organizationId', {
    config, schema: { tags, summary: 'Read an organization', params: OrgParams, response: guardedResponses({ 200: Organization }, [404]) }
  }, async (req) => { ownOrg(req, req.params.organizationId); return accounts.getOrganization(req.params.organizationId) })

  app.post<{ Params: Static<typeof OrgParams>, Body: Static<typeof NameBody> }>('/organizations/:organizationId/projects', {
    config, schema: { tags, summary: 'Create a project in an organization', params: OrgParams, body: NameBody, response: guardedResponses({ 201: Project }, [404]) }
  }, async (req, reply) => { ownOrg(req, req.params.organizationId); return reply.code(201).send(await accounts.createProject(req.params.organizationId, req.body)) })

  app.get<{ Params: Static<typeof OrgParams> }>('/organizations/:organizationId/projects', {
    config, schema: { tags, summary: 'List the projects of an organization', params: OrgParams, response: guardedResponses({ 200: list(Project) }, [404]) }
  }, async (req) => { ownOrg(req, req.params.organizationId); return { items: await accounts.listProjects(req.params.organizationId) } })

  app.post<{ Params: Static<typeof ProjectParams>, Body: Static<typeof NameBody> }>('/projects/:projectId/environments', {
    config, schema: { tags, summary: 'Create an environment in a project', params: ProjectParams, body: NameBody, response: guardedResponses({ 201: Environment }, [404]) }
  }, async (req, reply) => { await ownProject(req, req.params.projectId); return reply.code(201).send(await accounts.createEnvironment(req.params.projectId, req.body)) })

  app.get<{ Params: Static<typeof ProjectParams> }>('/projects/:projectId/environments', {
    config, schema: { tags, summary: 'List the environments of a project', params: ProjectParams, response: guardedResponses({ 200: list(Environment) }, [404]) }
  }, async (req) => { await ownProject(req, req.params.projectId); return { items: await accounts.listEnvironments(req.params.projectId) } })

  app.post<{ Params: Static<typeof OrgParams>, Body: NewKey }>('/organizations/:organizationId/keys', {
    config,
    schema: {
      tags,
      summary: 'Issue an API key',
      description: 'The plain key is in this response only; it is stored as a hash and cannot be shown again. ' +
        'Give projectId or environmentId to grant the key at that level (default: organization).',
      params: OrgParams,
      body: NewKey,
      response: guardedResponses({ 201: CreatedKey }, [404, 409])
    }
  }, async (req, reply) => {
    ownOrg(req, req.params.organizationId)
    if (req.body.operator === true) operatorOnly(req, 'issue operator keys')
    // A validator key reads every organization's audit rows (api/routes/audit.ts): it is the network's,
    // never an organization's to mint.
    if (OPERATOR_ISSUED_ROLES.includes(req.body.role)) operatorOnly(req, `issue ${req.body.role} keys`)
    // Plans (and the limits they carry) are the operator's to set: an organization admin issues keys
    // on its own key's plan, never another (a Free admin minting an Enterprise client lifts Free's limits).
    const p = who(req)
    if (p.operator !== true && req.body.plan !== undefined && req.body.plan !== p.plan) operatorOnly(req, `issue keys on another plan than its own (${p.plan})`)
    const plan = req.body.plan ?? (p.operator === true ? 'free' : p.plan)
    // A binding to a participant's hotkey needs that hotkey's signature over this very request, fresh and
    // used once, whoever asks (api/accounts/binding.ts).
    const { hotkeyProof, ...input } = req.body
    if (input.hotkey === undefined && hotkeyProof !== undefined) throw new HotkeyProofInvalid('hotkeyProof is given only with hotkey')
    if (input.hotkey !== undefined) {
      const hint = `bwnet keys prove-binding --organization ${req.params.organizationId} --role ${input.role}`
      const proof = checkProof(req.method, req.url.split('?')[0]!, req.body, accounts.now())
      if (!proof.ok && proof.reason === 'stale') {
        throw new HotkeyProofStale(`The proof's timestamp is more than ${PROOF_MAX_SKEW_MS / 60_000} minutes from this server's clock (${new Date(accounts.now()).toISOString()}); sign again (${hint})`)
      }
      if (!proof.ok) throw new HotkeyProofInvalid(`Binding a key to ${input.hotkey} needs that hotkey's signature over this request (hotkeyProof; ${hint}; docs/api.md#binding-proof)`)
      // Remembered until the proof could no longer be fresh; a restart keeps it (the accounts store).
      if (!await accounts.claimProofNonce(input.hotkey, hotkeyProof!.nonce, hotkeyProof!.timestamp + PROOF_MAX_SKEW_MS)) {
        throw new HotkeyProofReplayed(`This proof's nonce was already used by ${input.hotkey}; each request needs a proof of its own (${hint})`)
      }
    }
    const created = await accounts.createKey(req.params.organizationId, { ...input, plan })
    return reply.code(201).header('cache-control', 'no-store').send(created)
  })

  app.get<{ Params: Static<typeof OrgParams> }>('/organizations/:organizationId/keys', {
    config, schema: { tags, summary: 'List the keys of an organization (never their secrets)', params: OrgParams, response: guardedResponses({ 200: list(ApiKeyView) }, [404]) }
  }, async (req) => { ownOrg(req, req.params.organizationId); return { items: await accounts.listKeys(req.params.organizationId) } })

  app.get<{ Params: Static<typeof KeyParams> }>('/keys/:keyId', {
    config, schema: { tags, summary: 'Read a key', params: KeyParams, response: guardedResponses({ 200: ApiKeyView }, [404]) }
  }, async (req) => { await ownKey(req, req.params.keyId); return accounts.getKey(req.params.keyId) })

  app.delete<{ Params: Static<typeof KeyParams> }>('/keys/:keyId', {
    config, schema: { tags, summary: 'Revoke a key; its next request is refused', params: KeyParams, response: guardedResponses({ 200: ApiKeyView }, [404]) }
  }, async (req) => {
    await ownKey(req, req.params.keyId)
    if ((await accounts.getKey(req.params.keyId)).operator) operatorOnly(req, 'revoke operator keys')
    return accounts.revokeKey(req.params.keyId)
  })

  app.post<{ Params: Static<typeof OrgParams>, Body: Static<typeof GrantBody> }>('/organizations/:organizationId/credits', {
    config, schema: { tags, summary: 'Grant prepaid credits (the operator\'s key only)', params: OrgParams, body: GrantBody, response: guardedResponses({ 201: Balance }, [404]) }
  }, async (req, reply) => {
    operatorOnly(req, 'grant credits')
    return reply.code(201).send(await accounts.grantCredits(req.params.organizationId, req.body.amount, req.body.memo ?? null))
  })

  app.get<{ Params: Static<typeof OrgParams> }>('/organizations/:organizationId/credits', {
    config, schema: { tags, summary: 'Read the credit balance', params: OrgParams, response: guardedResponses({ 200: Balance }, [404]) }
  }, async (req) => { ownOrg(req, req.params.organizationId); return accounts.balance(req.params.organizationId) })

  app.get<{ Params: Static<typeof OrgParams>, Querystring: Static<typeof LedgerQuery> }>('/organizations/:organizationId/credits/ledger', {
    config, schema: { tags, summary: 'Read the credit ledger, newest first', params: OrgParams, querystring: LedgerQuery, response: guardedResponses({ 200: list(LedgerEntry) }, [404]) }
  }, async (req) => { ownOrg(req, req.params.organizationId); return { items: await accounts.ledger(req.params.organizationId, { limit: req.query.limit ?? LEDGER_PAGE }) } })
}
