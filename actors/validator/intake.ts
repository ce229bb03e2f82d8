// What an orchestrator takes in from the validators: PRISM scores (its routing weights and the pools
// telemetry reports, the latest copy kept for GET /chain/prism) and published snapshots (each copy a
// stake-weighted vote, actors/validator/snapshot-votes.ts). Senders are checked by the wiring (a
// registered validator) before anything reaches here. docs/validation.md.
import type { Logger, Store } from '../ports.ts'
import type { PrismScores, SnapshotPublished } from '../../protocol/index.ts'
import { KEYS } from './snapshots.ts'
import { voteSnapshot, idMatchesContent } from './snapshot-votes.ts'

export const PRISM_LATEST_KEY = 'prism/latest' // meta table
export type Pool = 'qualifying' | 'qualified' | 'unscored'

/** The latest PRISM scores a validator published, as GET /chain/prism serves them. */
export interface PrismLatest {
  validator: string | null
  epoch: number | null
  computedAt: number | null
  scores: PrismScores['scores']
}

export interface ValidatorIntakeDeps {
  store: Store
  logger: Logger
  /** Disconnects and scores a validator that sent a copy whose id does not match its content. */
  penalize (validator: string, detail: string): void
}

export interface ValidatorIntake {
  /** A registered validator's PRISM scores: the routing weights from now on. */
  prism (from: string, body: PrismScores): void
  /** A registered validator's published snapshot, a vote weighted by its stake. Resolves once counted. */
  snapshot (from: string, body: SnapshotPublished, stakeRao: bigint): Promise<void>
  /** The routing score of an orchestrator (undefined until a validator scored it). */
  routingScore (hotkey: string): number | undefined
  /** The PRISM pool of an orchestrator. */
  poolOf (hotkey: string): Pool
  latestPrism (): Promise<PrismLatest>
}

export function validatorIntake (deps: ValidatorIntakeDeps): ValidatorIntake {
  const log = deps.logger.child({ component: 'validator-intake' })
  const routing = new Map<string, number>()
  const pools = new Map<string, 'qualifying' | 'qualified'>()
  const meta = deps.store.table<PrismScores & { validator: string }>('meta')
  let prismWrites: Promise<void> = Promise.resolve()
  // One vote at a time: each re-decides its group from every vote stored.
  let votes: Promise<void> = Promise.resolve()
  return {
    prism (from, body) {
      for (const s of body.scores) { routing.set(s.hotkey, s.routingScore); pools.set(s.hotkey, s.pool) }
      prismWrites = prismWrites.then(() => meta.put(PRISM_LATEST_KEY, { validator: from, ...body }))
        .catch((err: Error) => log.warn({ err: err.message }, 'PRISM scores not stored'))
    },
    snapshot (from, body, stakeRao) {
      const snapshot = body.snapshot as SnapshotPublished['snapshot'] & Record<string, unknown>
      if (!idMatchesContent(snapshot)) { deps.penalize(from, 'snapshot id does not match its content'); return Promise.resolve() }
      const slot = body.kind === 'epoch' ? KEYS.epochSnapshot(body.epoch, body.revision) : body.kind === 'sell_paid' ? KEYS.sellPaid(body.hotkey ?? '', body.epoch) : KEYS.sellFree(body.hotkey ?? '', body.epoch)
      // Several validators' copies are combined by stake, never last-one-wins.
      votes = votes.then(() => voteSnapshot(deps.store, { group: body.kind === 'epoch' ? `epoch/${body.epoch}` : slot, slot, validator: from, stakeRao, snapshot, idKey: KEYS.snapshotId }))
        .then(() => {}, (err: Error) => log.warn({ err: err.message }, 'snapshot vote failed'))
      return votes
    },
    routingScore: (hotkey) => routing.get(hotkey),
    poolOf: (hotkey) => pools.get(hotkey) ?? 'unscored',
    async latestPrism () {
      await prismWrites
      const latest = await meta.get(PRISM_LATEST_KEY)
      return latest === undefined
        ? { validator: null, epoch: null, computedAt: null, scores: [] }
        : { validator: latest.validator, epoch: latest.epoch, computedAt: latest.computedAt, scores: latest.scores }
    }
  }
}
