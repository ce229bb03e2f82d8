// The telemetry actor: owns the projections, fed by the coordinator's events, the membership view and
// the epoch source; publishes a network snapshot every hour on the injected clock.
import { randomOf } from '../random.ts'
import type { Random } from '../ports.ts'
import type { Store, Timer } from '../ports.ts'
import { spawnSupervised, tell, type Env, type Ref } from '../runtime.ts'
import type { CoordinatorEvent } from '../transfer/coordinator.ts'
import { BLOCKS_PER_EPOCH, DEFAULT_BLOCK_TIME_MS } from '../domain/chain-time.ts'
import { TelemetryProjection, type TelemetryEvent } from './projection.ts'
import type { ParticipantCounts, Pool } from './evidence.ts'
import type { EpochSource, ParticipantsSource, SellAllowanceSource, TelemetryReader } from './ports.ts'
import { restoreProjection } from './journal.ts'

export const NETWORK_PUBLISH_INTERVAL_MS = 3_600_000 // 1 h: network snapshots at least hourly
export const PARTICIPANTS_REFRESH_MS = 5_000 // 5 s
export const CURSOR_KEY_META = 'telemetry/cursor-key'
const CURSOR_KEY_BYTES = 32

export * from './ports.ts'
export * from './projection.ts'
export * from './evidence.ts'
export * from './journal.ts'

export type TelemetryMsg =
  | { type: 'event', event: TelemetryEvent }
  | { type: 'participants', participants: ParticipantCounts, weights: Record<string, unknown> }
  | { type: 'publish' }

export interface TelemetryDeps {
  env: Env
  store: Store
  participants?: ParticipantsSource
  epochs?: EpochSource
  sellAllowance?: SellAllowanceSource
  /** PRISM pool of an orchestrator; 'unscored' when not given. */
  poolOf?: (orchestratorHotkey: string) => Pool
  /** Epoch of a time (the chain's block reference); default: 12 s blocks from the Unix epoch, 360 per epoch. */
  epochAt?: (ms: number) => number
  formulaDocsUri?: string
}

export interface Telemetry {
  ref: Ref<TelemetryMsg>
  /** Forward every coordinator event here (copied at once: the coordinator mutates its rows later). */
  onCoordinatorEvent (e: CoordinatorEvent): void
  reader: TelemetryReader
  /** Stops the timers and waits until the journal is written. */
  stop (): Promise<void>
}

const defaultEpochAt = (ms: number): number => Math.floor(ms / (DEFAULT_BLOCK_TIME_MS * BLOCKS_PER_EPOCH))

/** Copies the facts telemetry keeps out of a coordinator event; null for events it does not use. */
export function telemetryEventOf (e: CoordinatorEvent): TelemetryEvent | null {
  if (e.type === 'transfer') {
    const completed = e.row.completed_at === null ? null : Date.parse(e.row.completed_at)
    return { type: 'transfer', id: e.row.id, status: e.row.status, completedAtMs: Number.isFinite(completed) ? completed : null }
  }
  if (e.type === 'result' || e.type === 'checking') return { type: 'result', row: { ...e.row }, attempt: { ...e.attempt } }
  return null
}

async function cursorKeyOf (store: Store, random: Random): Promise<Uint8Array> {
  const meta = store.table<string>('meta')
  const existing = await meta.get(CURSOR_KEY_META)
  if (existing !== undefined) return Buffer.from(existing, 'base64')
  const key = random.bytes(CURSOR_KEY_BYTES)
  await meta.put(CURSOR_KEY_META, Buffer.from(key).toString('base64'))
  return key
}

export async function startTelemetry (parent: Ref<any>, deps: TelemetryDeps): Promise<Telemetry> {
  const { env } = deps
  const log = env.logger.child({ component: 'telemetry' })
  const projection = new TelemetryProjection({ epochAt: deps.epochAt ?? defaultEpochAt, poolOf: deps.poolOf, formulaDocsUri: deps.formulaDocsUri })
  const cursorKey = await cursorKeyOf(deps.store, randomOf(env))
  // Published history, evidence and live versions come back from the journal (a restart keeps them).
  const { journal, replayed } = await restoreProjection(deps.store, projection, log)
  if (projection.publishedNetwork().length === 0) projection.publishNetwork(env.clock.now())
  log.info({ event: 'telemetry_restored', entries: replayed, networkSnapshots: projection.networkSeq, publishedTasks: projection.taskSeq }, 'telemetry projection rebuilt')

  // The projection lives outside the actor state: a restart keeps it (it is only ever appended to).
  const ref = spawnSupervised<null, TelemetryMsg>(parent, 'telemetry', env, () => null, (state, msg) => {
    const now = env.clock.now()
    switch (msg.type) {
      case 'event': projection.apply(msg.event, now); break
      case 'participants': projection.setParticipants(msg.participants, msg.weights); break
      case 'publish': projection.publishNetwork(now); projection.prune(now); break
    }
    return state
  })

  const refresh = async (): Promise<void> => {
    let participants: ParticipantCounts | null = null
    if (deps.participants !== undefined) {
      const p = await deps.participants()
      const providers = new Map<string, number>()
      let capacity = 0
      for (const w of p.workers) {
        capacity += w.bandwidthMbps
        const name = w.provider ?? 'unknown'
        providers.set(name, (providers.get(name) ?? 0) + 1)
      }
      participants = {
        workerCount: p.counts.worker,
        orchestratorCount: p.counts.orchestrator,
        validatorCount: p.counts.validator,
        reportedCapacityMbps: capacity,
        providers: [...providers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([provider, workerCount]) => ({ provider, workerCount }))
      }
    }
    let weights: Record<string, unknown> = {}
    if (deps.epochs !== undefined) {
      const versions = await deps.epochs.list()
      const latest = versions.reduce<typeof versions[number] | null>((best, v) => best === null || v.data.epoch > best.data.epoch || (v.data.epoch === best.data.epoch && v.data.revision > best.data.revision) ? v : best, null)
      if (latest !== null) weights = { epoch: latest.data.epoch, revision: latest.data.revision, snapshotId: latest.snapshotId, formulaVersion: latest.data.formulaVersion }
    }
    if (participants !== null || deps.epochs !== undefined) tell(ref, { type: 'participants', participants: participants ?? { workerCount: 0, orchestratorCount: 0, validatorCount: 0, reportedCapacityMbps: 0, providers: [] }, weights })
  }
  const refreshSafely = (): void => { refresh().catch((err: Error) => log.warn({ err: err.message }, 'telemetry refresh failed')) }
  refreshSafely()
  const timers: Timer[] = [
    env.clock.every(PARTICIPANTS_REFRESH_MS, refreshSafely),
    env.clock.every(NETWORK_PUBLISH_INTERVAL_MS, () => tell(ref, { type: 'publish' }))
  ]

  return {
    ref,
    onCoordinatorEvent: (e) => {
      const event = telemetryEventOf(e)
      if (event !== null) tell(ref, { type: 'event', event })
    },
    reader: { projection, clock: env.clock, cursorKey, epochs: deps.epochs ?? null, sellAllowance: deps.sellAllowance ?? null },
    stop: async () => {
      for (const t of timers) t.cancel()
      await journal.flush()
    }
  }
}
