// Raw audit rows of one orchestrator or one worker on one transfer, grouped by table (seed §2.6,
// §4.3), read from the level tables the transfer flow writes. Rows are redacted before they leave:
// credentials, signatures, URLs, object paths, upload state, display names and the worker's own
// timing claims never appear. docs/telemetry.md#dashboard-audit.
import { nodeIdOf, UUID_PATTERN } from '../../protocol/node-id.ts'
import type { Store } from '../ports.ts'
import { collect, prefixRange } from '../store.ts'
import type { WorkerStandingRow } from '../transfer/worker-standing.ts'
import { keys, type AttemptRow, type InterventionRow, type OfferBatchRow, type PlanRow, type ResultRow, type TaskRow, type TransferRow } from '../transfer/model.ts'

export const ORCHESTRATOR_TABLES = ['transfer_assignment_plans', 'task_offer_batches', 'tasks', 'task_attempts', 'task_results', 'overseer_interventions'] as const
export const WORKER_TABLES = ['workers', 'transfer_assignment_plans', 'tasks', 'task_attempts', 'task_results', 'overseer_interventions'] as const
export const REDACTED = '[redacted]'

const HOTKEY = /^[1-9A-HJ-NP-Za-km-z]{46,48}$/
const UID = /^[0-9]{1,10}$/
/** Keys whose values are secret or private wherever they appear. */
const SECRET_KEY = /(secret|credential|signature|sig|token|password|passphrase|presigned|upload|url|urls|path|headers|target|source|authorization|api_key_id|org_id|bucket|object_key|key_prefix)$/i
/** Keys that are participants' own claims about timing: never shown. */
const TIMING_CLAIM_KEYS = new Set(['duration_ms', 'durationMs', 'claimed_duration_ms', 'started_at_claim'])
const URLISH = /[a-z][a-z0-9+.-]*:\/\/|[?&](x-amz-[a-z-]+|sig|signature|expires|token)=/i

/** A deep copy with secrets replaced, timing claims and display names removed. */
export function redactRow (value: unknown, key = ''): unknown {
  if (TIMING_CLAIM_KEYS.has(key)) return undefined
  if (value === null || value === undefined) return value
  if (key !== '' && SECRET_KEY.test(key)) return REDACTED
  if (typeof value === 'string') return URLISH.test(value) ? REDACTED : value
  if (Array.isArray(value)) return value.map(v => redactRow(v))
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (key === 'metadata' && k === 'name') continue
      if (k === 'transfer_name') { out[k] = null; continue }
      const r = redactRow(v, k)
      if (r !== undefined) out[k] = r
    }
    return out
  }
  return value
}

export interface AuditPage { limit: number, offset: number }
export interface AuditTable { rows: unknown[], total: number }
export interface AuditResult {
  transferId: string
  /** The organization that owns the transfer, when this node holds its transfer row; null otherwise. */
  organizationId: string | null
  participant: { role: 'orchestrator' | 'worker', id: string, hotkey: string }
  tables: Record<string, AuditTable>
}

export interface AuditReader {
  /**
   * Rows of an orchestrator named by its node UUID, chain UID or hotkey; null when the transfer or the
   * participant is not known here.
   */
  orchestrator (orchestratorId: string, transferId: string, page: AuditPage): Promise<AuditResult | null>
  /**
   * Rows of a worker named by its worker id (node UUID) or hotkey. `via`: only the work that went
   * through this orchestrator (an orchestrator key reads its own workers' rows); null when none.
   * `thisTransfer`: only what concerns this transfer (a reader held to one organization's transfers):
   * null unless the worker worked on it, and its standing's strikes on this transfer only.
   */
  worker (workerId: string, transferId: string, page: AuditPage, scope?: WorkerScope): Promise<AuditResult | null>
}

export interface WorkerScope { via?: string, thisTransfer?: boolean }

export interface AuditReaderDeps {
  store: Store
  /** Hotkey of an orchestrator's UID (the chain's registration); without it UIDs are not known. */
  hotkeyOfUid?: (uid: number) => Promise<string | null>
}

function paged (rows: unknown[], page: AuditPage): AuditTable {
  return { rows: rows.slice(page.offset, page.offset + page.limit).map(r => redactRow(r)), total: rows.length }
}

export function storeAuditReader (deps: AuditReaderDeps): AuditReader {
  const { store } = deps
  const rowsOf = async <T>(table: Parameters<Store['table']>[0], transferId: string): Promise<T[]> =>
    (await collect(store.table<T>(table), prefixRange(keys.prefix(transferId)))).map(([, v]) => v)

  async function transferRows (transferId: string): Promise<{ transfer: TransferRow | undefined, plans: PlanRow[], batches: OfferBatchRow[], tasks: TaskRow[], attempts: AttemptRow[], results: ResultRow[], interventions: InterventionRow[] }> {
    const [transfer, plans, batches, tasks, attempts, results, interventions] = await Promise.all([
      store.table<TransferRow>('transfers').get(transferId),
      rowsOf<PlanRow>('transfer_assignment_plans', transferId),
      rowsOf<OfferBatchRow>('task_offer_batches', transferId),
      rowsOf<TaskRow>('tasks', transferId),
      rowsOf<AttemptRow>('task_attempts', transferId),
      rowsOf<ResultRow>('task_results', transferId),
      rowsOf<InterventionRow>('overseer_interventions', transferId)
    ])
    return { transfer, plans, batches, tasks, attempts, results, interventions }
  }

  type Rows = Awaited<ReturnType<typeof transferRows>>
  const known = (r: Rows): boolean => r.transfer !== undefined || r.batches.length > 0 || r.attempts.length > 0
  /** The hotkey among `candidates` whose node UUID is `id`. */
  const byNodeId = (id: string, candidates: Iterable<string | null | undefined>): string | null => {
    const wanted = id.toLowerCase()
    for (const c of new Set(candidates)) if (typeof c === 'string' && HOTKEY.test(c) && nodeIdOf(c) === wanted) return c
    return null
  }
  const orchestratorsOf = (r: Rows): Array<string | null | undefined> => [
    r.transfer?.coordinator_id, ...r.plans.flatMap(p => p.deliveries.map(d => d.orchestrator_id)), ...r.batches.flatMap(b => [b.orchestrator_id, b.coordinator_id]),
    ...r.tasks.map(t => t.orchestrator_id), ...r.attempts.map(a => a.orchestrator_id)
  ]
  const workersOf = (r: Rows): Array<string | null | undefined> => [...r.attempts.map(a => a.worker_id), ...r.results.map(x => x.worker_id), ...r.interventions.map(i => i.previous_worker_id)]

  return {
    async orchestrator (orchestratorId, transferId, page) {
      const r = await transferRows(transferId)
      if (!known(r)) return null
      let hotkey: string | null = null
      if (HOTKEY.test(orchestratorId)) hotkey = orchestratorId
      else if (UID.test(orchestratorId)) hotkey = deps.hotkeyOfUid === undefined ? null : await deps.hotkeyOfUid(Number(orchestratorId))
      else if (UUID_PATTERN.test(orchestratorId)) hotkey = byNodeId(orchestratorId, orchestratorsOf(r))
      if (hotkey === null) return null
      // The coordinator of the transfer acted on every row; another orchestrator on the rows that name it.
      const all = r.transfer?.coordinator_id === hotkey
      const mine = (id: string | null | undefined): boolean => all || id === hotkey
      return {
        transferId,
        organizationId: r.transfer?.org_id ?? null,
        participant: { role: 'orchestrator', id: orchestratorId, hotkey },
        tables: {
          transfer_assignment_plans: paged(r.plans.filter(p => all || p.deliveries.some(d => d.orchestrator_id === hotkey)), page),
          task_offer_batches: paged(r.batches.filter(b => mine(b.orchestrator_id) || b.coordinator_id === hotkey), page),
          tasks: paged(r.tasks.filter(t => mine(t.orchestrator_id)), page),
          task_attempts: paged(r.attempts.filter(a => mine(a.orchestrator_id)), page),
          task_results: paged(r.results.filter(x => mine(x.orchestrator_id)), page),
          overseer_interventions: paged(r.interventions.filter(i => mine(i.orchestrator_id) || i.replacement_orchestrator_id === hotkey), page)
        }
      }
    },
    async worker (workerId, transferId, page, scope = {}) {
      const { via, thisTransfer = false } = scope
      const r = await transferRows(transferId)
      if (!known(r)) return null
      const hotkey = HOTKEY.test(workerId) ? workerId : UUID_PATTERN.test(workerId) ? byNodeId(workerId, workersOf(r)) : null
      if (hotkey === null) return null
      if (thisTransfer && !workersOf(r).includes(hotkey)) return null
      const attempts = r.attempts.filter(a => a.worker_id === hotkey && (via === undefined || a.orchestrator_id === via))
      if (via !== undefined && attempts.length === 0) return null
      const attemptIds = new Set(attempts.map(a => a.id))
      const taskIds = new Set(attempts.map(a => a.task_id))
      const orchestrators = new Set(attempts.map(a => a.orchestrator_id))
      // Its session here, and this coordinator's standing of it (strikes, exclusion: worker-standing.ts).
      const workerRows = [await store.table('workers').get(`session/${hotkey}`), await store.table('workers').get(hotkey), await store.table('workers').get(`standing/${hotkey}`)]
        .filter(x => x !== undefined && (via === undefined || ((x as { orchestrator_id?: string, coordinator_id?: string }).orchestrator_id ?? (x as { coordinator_id?: string }).coordinator_id) === via))
        // The standing's strikes name the transfers they were earned on, which may be anyone's.
        .map(x => thisTransfer && Array.isArray((x as { strikes?: unknown }).strikes)
          ? { ...(x as WorkerStandingRow), strikes: (x as WorkerStandingRow).strikes.filter(s => s.transfer_id === transferId) }
          : x)
      return {
        transferId,
        organizationId: r.transfer?.org_id ?? null,
        participant: { role: 'worker', id: workerId, hotkey },
        tables: {
          workers: paged(workerRows, page),
          transfer_assignment_plans: paged(r.plans.filter(p => p.deliveries.some(d => orchestrators.has(d.orchestrator_id))), page),
          tasks: paged(r.tasks.filter(t => taskIds.has(t.id)), page),
          task_attempts: paged(attempts, page),
          task_results: paged(r.results.filter(x => x.worker_id === hotkey && (via === undefined || attemptIds.has(x.attempt_id))), page),
          overseer_interventions: paged(r.interventions.filter(i => i.previous_worker_id === hotkey && (via === undefined || i.orchestrator_id === via)), page)
        }
      }
    }
  }
}
