// Dashboard audit routes ({dashboard_url}): seed §4.3. Raw rows of one orchestrator or one worker on
// one transfer, grouped by table, paged per table, redacted (actors/telemetry/audit.ts).
// Who may call (docs/security.md#audit-reach): the operator's admin key and validator keys (issued by
// the operator only; the network's validators investigate and verify) read every participant's rows on
// both routes. Orchestrator and worker keys are bound to their participant's hotkey when issued, with
// that participant's signature, and read only its own rows: an orchestrator key its own orchestrator
// rows and the rows of work its workers did through it; a worker key its own worker rows. Any other key
// (an organization admin) reads only its own organization's transfers, and on the worker route only a
// worker that worked on that transfer, with its strikes on it alone. Anyone else's rows (or any rows,
// for an unbound key) answer 404, exactly as rows that do not exist. Ids: an orchestrator by node UUID,
// chain UID or hotkey; a worker by worker id (node UUID) or hotkey. docs/telemetry.md#dashboard-audit.
import type { FastifyRequest } from 'fastify'
import type { Static, TSchema } from '@sinclair/typebox'
import type { TypedApp } from '../typed-app.ts'
import { createHash } from 'node:crypto'
import type { ApiDeps } from '../deps.ts'
import { guardedResponses, NOT_MODIFIED_RESPONSE } from '../responses.ts'
import { AuditTransferNotFound } from '../errors.ts'
import { AuditOrchestratorParams, AuditQuery, AuditResponse, AuditWorkerParams, AUDIT_LIMIT_DEFAULT, ConditionalHeaders } from '../telemetry/schemas.ts'
import { serveResolvedRead, type ReadResult } from '../telemetry/read.ts'
import { ORCHESTRATOR_TABLES, WORKER_TABLES, type AuditReader, type AuditResult } from '../../actors/telemetry/audit.ts'
import { BINDABLE_ROLES, type KeyRole, type Principal } from '../accounts/model.ts'

export const AUDIT_ORCHESTRATOR_ROLES: KeyRole[] = ['admin', 'validator', 'orchestrator']
export const AUDIT_WORKER_ROLES: KeyRole[] = ['admin', 'validator', 'orchestrator', 'worker']

/** An audit read as its route's schemas type it (the conditional-read hook hands over the plain request). */
type AuditRequest<P extends TSchema> = FastifyRequest<{ Params: Static<P>, Querystring: Static<typeof AuditQuery> }>

function body (r: AuditResult, tables: readonly string[], limit: number, offset: number): Record<string, unknown> {
  const out: Record<string, unknown> = { transfer_id: r.transferId, transfer_name: null, participant: r.participant }
  const pages: Record<string, unknown> = {}
  for (const t of tables) {
    const table = r.tables[t] ?? { rows: [], total: 0 }
    out[t] = table.rows
    const hasMore = offset + table.rows.length < table.total
    pages[t] = { limit, offset, returned: table.rows.length, has_more: hasMore, next_offset: offset + table.rows.length }
  }
  out.pagination = { limit, offset, tables: pages }
  return out
}

/** Roles whose keys read every organization's rows by design; their keys are issued by the operator only (api/routes/admin.ts). */
export const AUDIT_CROSS_TENANT_ROLES: readonly KeyRole[] = ['validator']

/** The hotkey whose rows a participant key is confined to; null for keys confined otherwise (or not at all). */
function confinedTo (p: Principal): string | null {
  if (!BINDABLE_ROLES.includes(p.role)) return null
  return p.hotkey ?? '' // an unbound orchestrator or worker key matches no participant
}

/**
 * Whether the key is held to its own organization's transfers: every key except the operator's admin
 * key, validator keys, and participant keys (held to their participant's own rows instead, by `confinedTo`).
 */
function tenantConfined (p: Principal): boolean {
  if (p.role === 'admin' && p.operator === true) return false
  return !AUDIT_CROSS_TENANT_ROLES.includes(p.role) && !BINDABLE_ROLES.includes(p.role)
}

/**
 * Rows of a transfer that is not the key's organization's (or whose owner this node does not hold),
 * which the key may not read: they answer 404 as missing ones.
 */
function otherTenant (p: Principal, r: AuditResult): boolean {
  return tenantConfined(p) && r.organizationId !== p.organizationId
}

export default async function auditRoutes (app: TypedApp, opts: { deps: ApiDeps }): Promise<void> {
  const reader = opts.deps.audit as AuditReader
  const page = (q: { limit?: number, offset?: number }): { limit: number, offset: number } => ({ limit: q.limit ?? AUDIT_LIMIT_DEFAULT, offset: q.offset ?? 0 })

  app.get('/api/audit/orchestrator/:orchestratorId/transfers/:transferId', {
    config: {
      auth: { roles: AUDIT_ORCHESTRATOR_ROLES },
      read: async (req) => conditional(await orchestratorRows(req as never)),
      readAfterLimits: true // the ETag is a digest of the rows read
    },
    schema: {
      tags: ['audit'], summary: 'Raw rows of one orchestrator (UUID, UID or hotkey) on one transfer, by table',
      headers: ConditionalHeaders, params: AuditOrchestratorParams, querystring: AuditQuery,
      response: guardedResponses({ 200: AuditResponse(ORCHESTRATOR_TABLES, 'OrchestratorAudit'), 304: NOT_MODIFIED_RESPONSE }, [404])
    }
  }, serveResolvedRead)

  async function orchestratorRows (req: AuditRequest<typeof AuditOrchestratorParams>): Promise<Record<string, unknown>> {
    const { orchestratorId, transferId } = req.params
    const p = page(req.query)
    const own = confinedTo(req.principal!)
    const r = await reader.orchestrator(orchestratorId, transferId, p)
    if (r === null || (own !== null && r.participant.hotkey !== own) || otherTenant(req.principal!, r)) throw new AuditTransferNotFound(`No rows for orchestrator ${orchestratorId} on transfer ${transferId}`)
    return body(r, ORCHESTRATOR_TABLES, p.limit, p.offset)
  }

  app.get('/api/audit/worker/:workerId/transfers/:transferId', {
    config: {
      auth: { roles: AUDIT_WORKER_ROLES },
      read: async (req) => conditional(await workerRows(req as never)),
      readAfterLimits: true
    },
    schema: {
      tags: ['audit'], summary: 'Raw rows of one worker (id or hotkey) on one transfer, by table',
      headers: ConditionalHeaders, params: AuditWorkerParams, querystring: AuditQuery,
      response: guardedResponses({ 200: AuditResponse(WORKER_TABLES, 'WorkerAudit'), 304: NOT_MODIFIED_RESPONSE }, [404])
    }
  }, serveResolvedRead)

  async function workerRows (req: AuditRequest<typeof AuditWorkerParams>): Promise<Record<string, unknown>> {
    const { workerId, transferId } = req.params
    const p = page(req.query)
    const principal = req.principal!
    const own = confinedTo(principal)
    // An orchestrator key: the worker's rows of work that went through that orchestrator only. A key
    // held to its organization's transfers: a worker that worked on this transfer, and of its standing
    // only the strikes earned on it (the others name other organizations' transfers).
    const r = own !== null && principal.role === 'orchestrator'
      ? (own === '' ? null : await reader.worker(workerId, transferId, p, { via: own }))
      : await reader.worker(workerId, transferId, p, { thisTransfer: tenantConfined(principal) })
    if (r === null || (own !== null && principal.role === 'worker' && r.participant.hotkey !== own) || otherTenant(principal, r)) throw new AuditTransferNotFound(`No rows for worker ${workerId} on transfer ${transferId}`)
    return body(r, WORKER_TABLES, p.limit, p.offset)
  }
}

/** Audit rows are not versioned: their ETag is a digest of the answer, so a re-read of unchanged rows is a 304. */
function conditional (rows: Record<string, unknown>): ReadResult {
  const text = JSON.stringify(rows)
  return { etag: createHash('sha256').update(text).digest('base64url').slice(0, 27), body: () => text }
}
