// Telemetry test fixtures: evidence rows as the coordinator writes them, in-memory epoch and
// sell-allowance sources holding real envelopes built with the real formulas, and an app with the
// telemetry routes and a console key with credits.
import { randomBytes, randomUUID } from 'node:crypto'
import { buildApp } from '../../api/app.ts'
import type { FastifyInstance } from 'fastify'
import { TelemetryProjection, type EpochSnapshot, type EpochSource, type SellAllowanceSource, type SellAllowancePaidSnapshot, type SellAllowanceFreeSnapshot } from '../../actors/telemetry/index.ts'
import { sellAllowanceSnapshots } from '../../actors/validator/sell-allowance.ts'
import { epochSummary } from '../../actors/domain/epoch-weights.ts'
import { epochSnapshotOf } from '../../actors/validator/epochs.ts'
import { computeSellAllowance } from '../../actors/domain/sell-allowance.ts'
import { isoFromMs } from '../../actors/domain/chain-time.ts'
import type { AuditReader } from '../../actors/telemetry/audit.ts'
import type { AttemptRow, ResultRow } from '../../actors/transfer/model.ts'
import { testDeps, type TestDeps } from './api.ts'
import type { ApiDeps } from '../../api/deps.ts'

export const ORCH = '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY'
export const ORCH_B = '5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty'
export const WORKER = '5FLSigC9HGRKVhB9FiEo4Y3koPsNmBmLJbpXg2mp1hXcS59Y'
export const WORKER_B = '5DAAnrj7VHTznn2AWBemMuyBwZWs6FNFjdyVXUeYum3PTXFy'
export const EPOCH_MS = 360 * 12_000

/** A settled attempt's result and attempt rows, as the coordinator persists them. */
export function settled (opts: {
  transferId: string, index?: number, orchestrator?: string, worker?: string, bytes?: number, offeredAtMs: number, receivedAtMs: number,
  outcome?: ResultRow['outcome'], attemptState?: AttemptRow['state'], recovery?: boolean, error?: string | null, claimedDurationMs?: number
}): { row: ResultRow, attempt: AttemptRow } {
  const taskId = randomUUID()
  const attemptId = randomUUID()
  const orchestrator = opts.orchestrator ?? ORCH
  const worker = opts.worker ?? WORKER
  const index = opts.index ?? 0
  const attempt: AttemptRow = {
    id: attemptId, task_id: taskId, transfer_id: opts.transferId, chunk_index: index, attempt_no: opts.recovery === true ? 1 : 0, attempt_slot: 0,
    orchestrator_id: orchestrator, worker_id: worker, batch_id: randomUUID(), wave_kind: opts.recovery === true ? 'recovery' : 'initial', recovery: opts.recovery === true,
    state: opts.attemptState ?? 'succeeded', offered_at: isoFromMs(opts.offeredAtMs), accepted_at: isoFromMs(opts.offeredAtMs), finished_at: isoFromMs(opts.receivedAtMs), failure_reason: null
  }
  const row: ResultRow = {
    attempt_id: attemptId, task_id: taskId, transfer_id: opts.transferId, chunk_index: index, orchestrator_id: orchestrator, worker_id: worker,
    success: (opts.outcome ?? 'accepted') === 'accepted', bytes: opts.bytes ?? 1_048_576, claimed_bytes: opts.bytes ?? 1_048_576,
    duration_ms: opts.claimedDurationMs ?? 1, sha256: 'ab'.repeat(32), etag: null, error: opts.error ?? null, via: 'http',
    outcome: opts.outcome ?? 'accepted', received_at: isoFromMs(opts.receivedAtMs)
  }
  return { row, attempt }
}

/** Epoch versions as a validator publishes them: the real v3 weights, sealed like the epoch machinery does. */
export function epochVersion (epoch: number, revision: number, previous: EpochSnapshot | null, publishedAtMs: number, verifiedMib = [300, 100]): EpochSnapshot {
  const summary = epochSummary(epoch, verifiedMib.map((mib, i) => ({ uid: i + 1, hotkey: [ORCH, ORCH_B][i % 2]! + '', verifiedMib: mib, penaltyMultiplier: 1, score: 0 })))
  // The validator's own builder: the fixtures are exactly what the epoch machinery publishes.
  return epochSnapshotOf({
    summary, close: { epoch, endAtMs: (epoch + 1) * EPOCH_MS }, publishedAtMs, revision,
    previousSnapshotId: previous?.snapshotId ?? null, evidenceCount: revision * 10
  })
}

export class MemoryEpochSource implements EpochSource {
  readonly versions: EpochSnapshot[] = []
  async list (): Promise<EpochSnapshot[]> { return [...this.versions] }
}

const ALPHA = 1_000_000_000n
/** Paid and free proofs of one hotkey at one epoch, from the real sell-allowance formula. */
export function sellProofs (hotkey: string, epoch: number, publishedAtMs: number): { paid: SellAllowancePaidSnapshot, free: SellAllowanceFreeSnapshot } {
  const atBlock = (epoch + 1) * 360 - 1
  const r = computeSellAllowance({
    hotkey, uid: 1, epoch, atBlock,
    emissions: Array.from({ length: 20 }, (_, i) => ({ block: i * 504, baseAlphaRao: ALPHA })),
    sales: [{ block: 5000, alphaRao: 3n * ALPHA }],
    baseWeight: 0.5,
    blockReference: { block: 0, atMs: 0 },
    computedAtMs: publishedAtMs
  })
  return sellAllowanceSnapshots(r, { endAtMs: (epoch + 1) * EPOCH_MS }, publishedAtMs, 1)
}

export class MemorySellAllowanceSource implements SellAllowanceSource {
  readonly proofs = new Map<string, { paid: SellAllowancePaidSnapshot, free: SellAllowanceFreeSnapshot }>()
  add (hotkey: string, epoch: number, publishedAtMs: number): void { this.proofs.set(`${hotkey}/${epoch}`, sellProofs(hotkey, epoch, publishedAtMs)) }
  get (hotkey: string, variant: 'paid', epoch?: number): Promise<SellAllowancePaidSnapshot | null>
  get (hotkey: string, variant: 'free', epoch?: number): Promise<SellAllowanceFreeSnapshot | null>
  async get (hotkey: string, variant: 'paid' | 'free', epoch?: number): Promise<SellAllowancePaidSnapshot | SellAllowanceFreeSnapshot | null> {
    let found: { paid: SellAllowancePaidSnapshot, free: SellAllowanceFreeSnapshot } | undefined
    if (epoch !== undefined) found = this.proofs.get(`${hotkey}/${epoch}`)
    else for (const [k, v] of this.proofs) if (k.startsWith(`${hotkey}/`) && (found === undefined || v.paid.data.epoch > found.paid.data.epoch)) found = v
    return found === undefined ? null : found[variant]
  }
}

export interface TelemetryApp {
  app: FastifyInstance
  env: TestDeps
  projection: TelemetryProjection
  epochs: MemoryEpochSource
  sell: MemorySellAllowanceSource
  keys: { console: string, snapshotOnly: string, admin: string, orchestrator: string, worker: string, client: string }
  get (url: string, key?: string | null, headers?: Record<string, string>): Promise<{ statusCode: number, body: string, headers: Record<string, unknown>, json (): any }>
}

export async function telemetryApp (opts: { sources?: boolean, audit?: AuditReader, epochs?: MemoryEpochSource, live?: ApiDeps['live'] } = {}): Promise<TelemetryApp> {
  const env = testDeps()
  const projection = new TelemetryProjection({ epochAt: (ms) => Math.floor(ms / EPOCH_MS) })
  const epochs = opts.epochs ?? new MemoryEpochSource()
  const sell = new MemorySellAllowanceSource()
  const sources = opts.sources !== false
  env.deps.telemetry = { projection, clock: env.clock, cursorKey: randomBytes(32), epochs: sources ? epochs : null, sellAllowance: sources ? sell : null }
  if (opts.audit !== undefined) env.deps.audit = opts.audit
  if (opts.live !== undefined) env.deps.live = opts.live
  const org = await env.accounts.createOrganization({ name: 'telemetry' })
  await env.accounts.grantCredits(org.id, 1_000_000_000)
  const issue = async (k: Parameters<typeof env.accounts.createKey>[1]): Promise<string> => (await env.accounts.createKey(org.id, { plan: 'enterprise', ...k })).key
  const keys = {
    console: await issue({ role: 'console', scopes: ['telemetry:read', 'telemetry:realtime:read'] }),
    snapshotOnly: await issue({ role: 'console', scopes: ['telemetry:read'] }),
    admin: await issue({ role: 'admin', operator: true }),
    orchestrator: await issue({ role: 'orchestrator', hotkey: ORCH_B }),
    worker: await issue({ role: 'worker', hotkey: WORKER_B }),
    client: await issue({ role: 'client' })
  }
  const app = await buildApp(env.deps)
  await app.ready()
  const get: TelemetryApp['get'] = async (url, key = keys.console, headers = {}) => {
    const h: Record<string, string> = { ...headers }
    if (key !== null) h['x-api-key'] = key
    return await app.inject({ method: 'GET', url, headers: h }) as never
  }
  return { app, env, projection, epochs, sell, keys, get }
}

/** Every paid telemetry read, one URL each (the sell allowance: ORCH's, as publishOneOfEach publishes it). */
export const PAID_READS = [
  '/v1/telemetry/network', '/v1/telemetry/realtime/network', '/v1/telemetry/network/history', '/v1/telemetry/realtime/network/history',
  '/v1/telemetry/tasks', '/v1/telemetry/realtime/tasks', '/v1/telemetry/epochs', '/v1/telemetry/realtime/epochs',
  `/v1/telemetry/sell-allowance/${ORCH}`
]

/** A version for every paid read: a settled transfer in the published network, an epoch, ORCH's sell allowance. */
export function publishOneOfEach (T: TelemetryApp): void {
  const now = T.env.clock.now()
  const transferId = randomUUID()
  T.projection.apply({ type: 'result', ...settled({ transferId, index: 0, offeredAtMs: now - 2000, receivedAtMs: now - 1000 }) }, now)
  T.projection.apply({ type: 'transfer', id: transferId, status: 'completed', completedAtMs: now }, now)
  T.projection.publishNetwork(now)
  T.epochs.versions.push(epochVersion(20, 1, null, now - 1000))
  T.sell.add(ORCH, 21, now - 1000)
}

/** A console key of a new organization: `plan` (Enterprise), `credits` (none), both telemetry scopes unless given. */
export async function orgConsoleKey (T: TelemetryApp, name: string, opts: { plan?: 'free' | 'enterprise', credits?: number, scopes?: string[] } = {}): Promise<{ orgId: string, key: string }> {
  const org = await T.env.accounts.createOrganization({ name })
  if (opts.credits !== undefined) await T.env.accounts.grantCredits(org.id, opts.credits)
  const { key } = await T.env.accounts.createKey(org.id, { role: 'console', plan: opts.plan ?? 'enterprise', scopes: (opts.scopes ?? ['telemetry:read', 'telemetry:realtime:read']) as never })
  return { orgId: org.id, key }
}
