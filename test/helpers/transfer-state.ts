// Readers of the coordinator core's steps (actors/transfer/state.ts) for its tests: the rows a step
// puts, the effects and destination jobs it asks for, the offers of a wave, and transfer rows to feed it.
import type { Reply } from '../../actors/runtime.ts'
import type { StoreOp } from '../../actors/ports.ts'
import type { Step, Effect, IoJob, OfferDraft, TransferState } from '../../actors/transfer/state.ts'
import type { TaskAssigned } from '../../protocol/index.ts'
import type { TransferRow } from '../../actors/transfer/model.ts'

export const CHUNK = 1024
export const UPLOAD = { kind: 'node', uploadId: 'u1' } as const

/** A transfer row as the API creates it: `chunks` chunks of CHUNK bytes, pending, no upload yet. */
export function transferRow (id: string, chunks: number, over: Partial<TransferRow> = {}): TransferRow {
  const iso = new Date(0).toISOString()
  return {
    id, status: 'pending', sender_hotkey: 'x', filename: `${id}.bin`, total_size: CHUNK * chunks, chunk_size: CHUNK, total_chunks: chunks, tier: 'STANDARD',
    destination_id: 'd1', api_key_id: null, org_id: null, coordinator_id: '', metadata: { name: id }, upload: null,
    chunks_received: 0, chunks_delivered: 0, chunks_verified: 0, bytes_received: 0, bytes_delivered: 0, finalize_requested: false,
    created_at: iso, updated_at: iso, started_at: null, finalized_at: null, completed_at: null, error_code: null, error_message: null, ...over
  }
}

/** A distinct sha256 (hex) for chunk `i`. */
export const sha = (i: number): string => i.toString(16).padStart(64, '0')
export const jobs = (s: Step, type?: IoJob['type']): IoJob[] => s.effects.flatMap(e => e.kind === 'io' && (type === undefined || e.job.type === type) ? [e.job] : [])
export const effects = <K extends Effect['kind']>(s: Step, kind: K): Array<Extract<Effect, { kind: K }>> => s.effects.filter((e): e is Extract<Effect, { kind: K }> => e.kind === kind)
export const puts = (s: Step, table: string): unknown[] => s.ops.filter((o): o is Extract<StoreOp, { type: 'put' }> => o.type === 'put' && o.table === table).map(o => o.value)
/** The task of each attempt offered in a step read with offersOf (the latest read wins: tests reuse attempt ids). */
const taskOf = new Map<string, string>()
export const offersOf = (s: Step): Array<OfferDraft & { to: string }> => {
  const offers = jobs(s, 'offers').flatMap(j => j.type === 'offers' ? j.batches.flatMap(b => b.offers.map(o => ({ ...o, to: b.to }))) : [])
  for (const o of offers) taskOf.set(o.attemptId, o.taskId)
  return offers
}
/**
 * An orchestrator's `task_assigned`, and each named worker's own word that it holds its attempt, as an
 * honest worker sends it (the coordinator holds a stall against a worker only on that word). The offers
 * must have been read with offersOf.
 */
export function assign (core: TransferState, from: string, body: TaskAssigned, now: number): Step {
  const step = core.assigned(from, body, now)
  for (const { attemptId, worker } of body.assignments) {
    if (worker === null) continue
    const taskId = taskOf.get(attemptId)
    if (taskId === undefined) throw new Error(`assign: attempt ${attemptId} was not read with offersOf`)
    core.accepted(from, { transferId: body.transferId, attemptId, taskId, worker, coordinator: core.self })
  }
  return step
}
/** A reply that keeps what it was resolved with. */
export const reply = (): Reply<any> & { value?: unknown } => {
  const r: Reply<any> & { value?: unknown } = { id: 'r', resolve: (v) => { r.value = v }, reject: () => {} }
  return r
}
