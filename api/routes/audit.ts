// Dashboard audit routes ({dashboard_url}): seed §4.3. Raw rows of one orchestrator or one worker on
// one transfer, grouped by table, paged per table, redacted (actors/telemetry/audit.ts).
// Who may call: the operator's admin key and validator keys (investigation, data verification) read
// every participant's rows on both routes; an organization admin the same, on its own organization's
// transfers only. Orchestrator and worker keys are bound to their participant's hotkey when
// issued and read only their own rows: an orchestrator key its own orchestrator rows and the rows of
// work its workers did through it; a worker key its own worker rows. Anyone else's rows (or any rows,
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
import type { KeyRole, Principal } from '../accounts/model.ts'

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

/** The hotkey whose rows a key is confined to; null when it reads everyone's (admin, validator). */
function confinedTo (p: Principal): string | null {
  if (p.role === 'admin' || p.role === 'validator') return null
  return p.hotkey ?? '' // an unbound orchestrator or worker key matches no participant
}

/**
 * An organization admin (an admin key without `operator`) reads only the rows of its own
 * organization's transfers; rows of another organization's transfer, or of a transfer whose owner this
 * node does not hold, answer 404 as missing ones. The operator's admin key and validator keys read all.
 */
function otherTenant (p: Principal, r: AuditResult): boolean {
  return p.role === 'admin' && p.operator !== true && r.organizationId !== p.organizationId
}

export default async function auditRoutes (app: TypedApp, opts: { deps: ApiDeps }): Promise<void> {
  const reader = opts.deps.audit as AuditReader
  const page = (q: { limit?: number, offset?: number }): { limit: number, offset: number } => ({ limit: q.limit ?? AUDIT_LIMIT_DEFAULT, offset: q.offset ?? 0 })

  app.get('/api/audit/orchestrator/:orchestratorId/transfers/:transferId', {
    config: {
      auth: { roles: AUDIT_ORCHESTRATOR_ROLES },
      read: async (req) => conditional(await orchestratorRows(req as never))
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
      read: async (req) => conditional(await workerRows(req as never))
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
    // An orchestrator key: the worker's rows of work that went through that orchestrator only.
    const r = own !== null && principal.role === 'orchestrator'
      ? (own === '' ? null : await reader.worker(workerId, transferId, p, own))
      : await reader.worker(workerId, transferId, p)
    if (r === null || (own !== null && principal.role === 'worker' && r.participant.hotkey !== own) || otherTenant(principal, r)) throw new AuditTransferNotFound(`No rows for worker ${workerId} on transfer ${transferId}`)
    return body(r, WORKER_TABLES, p.limit, p.offset)
  }
}

/** Audit rows are not versioned: their ETag is a digest of the answer, so a re-read of unchanged rows is a 304. */
function conditional (rows: Record<string, unknown>): ReadResult {
  const text = JSON.stringify(rows)
  return { etag: createHash('sha256').update(text).digest('base64url').slice(0, 27), body: () => text }
}
