// What an orchestrator takes in from the validators: PRISM scores (its routing weights and the pools
// telemetry reports) and published snapshots (each copy a stake-weighted vote,
// actors/validator/snapshot-votes.ts). Senders are checked by the wiring (a permitted validator) before
// anything reaches here. PRISM scores are never taken from the last validator heard: each validator's
// latest vector is kept (and stored), and routing uses their stake-weighted consensus
// (actors/domain/prism-consensus.ts) over every permitted validator's stake. Vectors labelled with an
// epoch the chain has not reached, or older than the window below, are refused. docs/validators.md.
import type { Logger, Store, StoreOp } from '../ports.ts'
import type { PrismScores, SnapshotPublished } from '../../protocol/index.ts'
import { prismConsensus, type PrismConsensus, type PrismScore, type ValidatorVector } from '../domain/prism-consensus.ts'
import { collect, prefixRange } from '../store.ts'
import { KEYS } from './snapshots.ts'
import { voteSnapshot, idMatchesContent } from './snapshot-votes.ts'

/** Meta rows: a validator's vector (epoch, computedAt) and one row per orchestrator it scored. */
export const PRISM_VECTOR_PREFIX = 'prism/vec/'
/** How long the permitted validators' stakes read for snapshot votes are reused. */
export const STAKES_FOR_VOTES_MS = 5_000
export const PRISM_SCORE_PREFIX = 'prism/score/'
/** The single "latest scores" row of earlier versions, removed on load. */
const LEGACY_LATEST_KEY = 'prism/latest'
/**
 * Epochs before the last closed one whose scores still count (1: the last closed epoch, which
 * validators label their scores with, and the one before it, for a validator whose view of the chain
 * lags a close). Older vectors are refused, and stop counting once the chain moves past them.
 */
export const PRISM_MAX_AGE_EPOCHS = 1
export type Pool = 'qualifying' | 'qualified' | 'unscored'
export type PrismRefusal = 'future_epoch' | 'stale_epoch' | 'older_than_held' | 'too_many_for_epoch' | 'chain_unavailable' | 'not_stored'
/**
 * Vectors of one validator taken for one epoch: each costs chain lookups and a store write per
 * orchestrator, and an honest validator sends one per epoch close (a correction or two fit).
 */
export const PRISM_VECTORS_PER_EPOCH = 4

/** One validator's vector as GET /chain/prism lists it, with the stake it counts with. */
export interface PrismValidatorView {
  hotkey: string
  stakeRao: string
  epoch: number
  computedAt: number
  scores: PrismScore[]
}

/** The consensus GET /chain/prism serves, with the vectors it was taken over. */
export interface PrismLatest {
  /** The validator whose vector the consensus is when it alone holds the deciding stake; else null. */
  validator: string | null
  epoch: number | null
  computedAt: number | null
  scores: PrismScore[]
  /** Stake of every permitted validator (rao), the consensus's denominator; null until known. */
  totalStakeRao: string | null
  validators: PrismValidatorView[]
}

/** What the consensus needs of the chain. */
export interface PrismChainView {
  /** The head block's epoch and the last closed epoch. */
  epochs (): Promise<{ current: number, lastClosed: number }>
  /** Every validator holding a permit now, with its stake (rao). */
  validatorStakes (): Promise<ReadonlyMap<string, bigint>>
}

export interface ValidatorIntakeDeps {
  store: Store
  logger: Logger
  chain: PrismChainView
  /** Disconnects and scores a validator that sent a copy whose id does not match its content. */
  penalize (validator: string, detail: string): void
  /** Times the stakes read for snapshot votes (without it they are read for every copy). */
  clock?: { now (): number }
  /**
   * Whether a hotkey is a registered orchestrator: a sell-allowance copy is taken only for one (honest
   * validators publish one per registered orchestrator). Without it, any hotkey (tests).
   */
  isOrchestrator? (hotkey: string): Promise<boolean>
}

/**
 * Closed epochs, before the last one, for which snapshot copies are taken: honest validators send the
 * last REPLICATED_EPOCHS (4) again at every close; twice that leaves room for a lagging view. Older copies
 * are refused, and the votes and copies kept for them are removed as the chain moves on (the versions
 * already served stay, under telemetry's retention).
 */
export const SNAPSHOT_VOTE_EPOCHS = 8
/** Copies of one validator waiting to be counted; past it a copy is dropped (honest ones come again at the next close). */
export const MAX_PENDING_SNAPSHOTS_PER_VALIDATOR = 512

export interface ValidatorIntake {
  /** A permitted validator's PRISM scores: its vector from now on, unless refused. Resolves once decided. */
  prism (from: string, body: PrismScores): Promise<'accepted' | PrismRefusal>
  /** Re-takes the consensus (stakes and epochs may have moved): at start and after each epoch close. */
  refresh (): Promise<void>
  /** A registered validator's published snapshot, a vote weighted by its stake. Resolves once counted. */
  snapshot (from: string, body: SnapshotPublished, stakeRao: bigint): Promise<void>
  /** The consensus routing score of an orchestrator (undefined while validators holding κ of the stake have not scored it). */
  routingScore (hotkey: string): number | undefined
  /** The consensus PRISM pool of an orchestrator. */
  poolOf (hotkey: string): Pool
  latestPrism (): Promise<PrismLatest>
}

const EMPTY: PrismLatest = { validator: null, epoch: null, computedAt: null, scores: [], totalStakeRao: null, validators: [] }
interface VectorRow { epoch: number, computedAt: number }

/**
 * The epoch a stored vote row is for: `vote/epoch/<epoch>/…` for epoch versions, `vote/<kind>/<hotkey>/<epoch, padded>/…`
 * for sell allowances (actors/validator/snapshots.ts KEYS). Infinity for a row of no known shape (kept).
 */
export function voteEpoch (key: string): number {
  const parts = key.split('/')
  const n = parts[1] === 'epoch' ? Number(parts[2]) : parts[1] === 'sellpaid' || parts[1] === 'sellfree' ? Number(parts[3]) : NaN
  return Number.isInteger(n) ? n : Infinity
}

/** Why a published snapshot's frame names another slot than its content (epoch, revision, hotkey), or null. */
function labelMismatch (body: SnapshotPublished, snapshot: Record<string, unknown>): string | null {
  const data = (snapshot.data ?? {}) as Record<string, unknown>
  if (snapshot.sourceEpoch !== body.epoch) return `epoch ${body.epoch}, content ${String(snapshot.sourceEpoch)}`
  if (body.kind === 'epoch') return data.revision === body.revision ? null : `revision ${body.revision}, content ${String(data.revision)}`
  if (data.hotkey !== body.hotkey) return `hotkey ${String(body.hotkey)}, content ${String(data.hotkey)}`
  return data.epoch === body.epoch ? null : `epoch ${body.epoch}, content data ${String(data.epoch)}`
}

export function validatorIntake (deps: ValidatorIntakeDeps): ValidatorIntake {
  const log = deps.logger.child({ component: 'validator-intake' })
  const meta = deps.store.table<unknown>('meta')
  const vectors = new Map<string, ValidatorVector>()
  /** Vectors taken from each validator for the epoch of its held one (one entry per validator held). */
  const takenFor = new Map<string, number>()
  let routing = new Map<string, number>()
  let pools = new Map<string, 'qualifying' | 'qualified'>()
  let served: PrismLatest = EMPTY
  let lastEpochs: { current: number, lastClosed: number } | null = null
  // Vectors are taken in and the consensus re-taken one at a time.
  let queue: Promise<unknown> = Promise.resolve()
  const serial = <T> (fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn)
    queue = run.catch(() => {})
    return run
  }
  // One vote at a time: each re-decides its group from every vote stored.
  let votes: Promise<void> = Promise.resolve()
  const pendingVotes = new Map<string, number>()
  /** Votes and copies of epochs before this one are gone from the store. */
  let prunedBelow = 0

  const loaded = serial(async () => {
    const rows = await collect(meta, prefixRange(PRISM_VECTOR_PREFIX))
    for (const [k, v] of rows) {
      const validator = k.slice(PRISM_VECTOR_PREFIX.length)
      const scores = (await collect(meta, prefixRange(`${PRISM_SCORE_PREFIX}${validator}/`))).map(([, s]) => s as PrismScore)
      vectors.set(validator, { validator, epoch: (v as VectorRow).epoch, computedAt: (v as VectorRow).computedAt, scores })
    }
    if (await meta.get(LEGACY_LATEST_KEY) !== undefined) await meta.del(LEGACY_LATEST_KEY)
  }).catch((err: Error) => log.warn({ err: err.message }, 'stored PRISM vectors not loaded'))

  /** Removes the votes, and the copies they name, of every epoch before `below` (served versions stay). */
  const pruneVotes = async (below: number): Promise<void> => {
    const ops: StoreOp[] = []
    for (const [key, v] of await collect(deps.store.table<unknown>('snapshots'), prefixRange('vote/'))) {
      if (voteEpoch(key) >= below) continue
      ops.push({ type: 'del', table: 'snapshots', key }, { type: 'del', table: 'snapshots', key: `cand/${(v as { snapshotId: string }).snapshotId}` })
    }
    if (ops.length > 0) await deps.store.batch(ops)
    log.debug({ below, removed: ops.length / 2, event: 'snapshot_votes_pruned' }, 'snapshot votes of past epochs removed')
  }
  const epochsNow = async (): Promise<{ current: number, lastClosed: number } | null> => {
    try { lastEpochs = await deps.chain.epochs() } catch (err) {
      log.warn({ err: (err as Error).message }, 'chain head unavailable; the last one known is used')
    }
    return lastEpochs
  }
  // Permitted validators' stakes for snapshot votes: read at most every STAKES_FOR_VOTES_MS, one read
  // shared by the copies that arrive meanwhile (the consensus's own refresh reads them afresh).
  let stakesRead: { at: number, value: Promise<ReadonlyMap<string, bigint>> } | null = null
  const permittedStakes = async (): Promise<ReadonlyMap<string, bigint>> => {
    const now = deps.clock?.now() ?? null
    if (stakesRead === null || now === null || now - stakesRead.at >= STAKES_FOR_VOTES_MS) {
      const read = { at: now ?? 0, value: deps.chain.validatorStakes() }
      stakesRead = read
      read.value.catch(() => { if (stakesRead === read) stakesRead = null })
    }
    return await stakesRead.value
  }
  const fresh = (v: { epoch: number }, e: { current: number, lastClosed: number }): boolean => v.epoch <= e.current && v.epoch >= e.lastClosed - PRISM_MAX_AGE_EPOCHS
  const scoreOps = (validator: string, scores: readonly PrismScore[], type: 'put' | 'del'): StoreOp[] =>
    scores.map(s => (type === 'put' ? { type, table: 'meta', key: `${PRISM_SCORE_PREFIX}${validator}/${s.hotkey}`, value: s } : { type, table: 'meta', key: `${PRISM_SCORE_PREFIX}${validator}/${s.hotkey}` }))

  /** Drops vectors that no longer count, then combines the rest by the validators' current stakes. */
  const recompute = async (e: { current: number, lastClosed: number }): Promise<void> => {
    let stakes: ReadonlyMap<string, bigint>
    try { stakes = await deps.chain.validatorStakes() } catch (err) {
      log.warn({ err: (err as Error).message }, 'validator stakes unavailable; the consensus stays as it was')
      return
    }
    const ops: StoreOp[] = []
    for (const v of [...vectors.values()]) {
      if (fresh(v, e)) continue
      vectors.delete(v.validator)
      takenFor.delete(v.validator)
      ops.push({ type: 'del', table: 'meta', key: `${PRISM_VECTOR_PREFIX}${v.validator}` }, ...scoreOps(v.validator, v.scores, 'del'))
    }
    if (ops.length > 0) await deps.store.batch(ops).catch((err: Error) => log.warn({ err: err.message }, 'stale PRISM vectors not removed'))
    const counted = [...vectors.values()].filter(v => stakes.has(v.validator))
    const c: PrismConsensus = prismConsensus(counted, stakes)
    routing = new Map(c.scores.map(s => [s.hotkey, s.routingScore]))
    pools = new Map(c.scores.map(s => [s.hotkey, s.pool]))
    served = {
      validator: c.validator, epoch: c.epoch, computedAt: c.computedAt, scores: c.scores, totalStakeRao: c.totalStake.toString(),
      validators: counted
        .map(v => ({ hotkey: v.validator, stake: stakes.get(v.validator)!, epoch: v.epoch, computedAt: v.computedAt, scores: [...v.scores] }))
        .sort((a, b) => (a.stake === b.stake ? (a.hotkey < b.hotkey ? -1 : 1) : a.stake > b.stake ? -1 : 1))
        .map(({ stake, ...v }) => ({ ...v, stakeRao: stake.toString() }))
    }
  }

  return {
    prism (from, body) {
      return serial(async () => {
        await loaded
        const held = vectors.get(from)
        // Checked before anything is asked of the chain: a flood of vectors for one epoch, or for an
        // epoch older than the one held, costs neither the chain host nor the store.
        const taken = held !== undefined && body.epoch === held.epoch ? (takenFor.get(from) ?? 1) : 0
        if (taken >= PRISM_VECTORS_PER_EPOCH) {
          log.debug({ validator: from, epoch: body.epoch, event: 'prism_scores_refused', reason: 'too_many_for_epoch' }, 'PRISM scores refused: enough taken for this epoch')
          return 'too_many_for_epoch'
        }
        if (held !== undefined && body.epoch < held.epoch) {
          log.debug({ validator: from, epoch: body.epoch, heldEpoch: held.epoch, event: 'prism_scores_refused', reason: 'older_than_held' }, 'PRISM scores refused: older than the vector held')
          return 'older_than_held'
        }
        const e = await epochsNow()
        const reason: PrismRefusal | null = e === null
          ? 'chain_unavailable'
          : body.epoch > e.current ? 'future_epoch' : !fresh(body, e) ? 'stale_epoch' : held !== undefined && body.epoch < held.epoch ? 'older_than_held' : null
        if (reason !== null) {
          log.warn({ validator: from, epoch: body.epoch, current: e?.current, lastClosed: e?.lastClosed, heldEpoch: held?.epoch, reason, event: 'prism_scores_refused' }, 'PRISM scores refused')
          return reason
        }
        // One score per orchestrator (a repeated hotkey: the last one).
        const scores = [...new Map(body.scores.map(s => [s.hotkey, s])).values()]
        const gone = held === undefined ? [] : held.scores.filter(s => !scores.some(n => n.hotkey === s.hotkey))
        try {
          await deps.store.batch([
            ...scoreOps(from, gone, 'del'),
            { type: 'put', table: 'meta', key: `${PRISM_VECTOR_PREFIX}${from}`, value: { epoch: body.epoch, computedAt: body.computedAt } satisfies VectorRow },
            ...scoreOps(from, scores, 'put')
          ])
        } catch (err) {
          log.warn({ err: (err as Error).message, validator: from }, 'PRISM scores not stored')
          return 'not_stored'
        }
        vectors.set(from, { validator: from, epoch: body.epoch, computedAt: body.computedAt, scores })
        takenFor.set(from, taken + 1)
        await recompute(e!)
        log.debug({ validator: from, epoch: body.epoch, orchestrators: scores.length, event: 'prism_scores_taken' }, 'PRISM scores taken in')
        return 'accepted'
      })
    },
    refresh () {
      return serial(async () => {
        await loaded
        const e = await epochsNow()
        if (e !== null) await recompute(e)
      }).catch((err: Error) => { log.warn({ err: err.message }, 'PRISM consensus not refreshed') })
    },
    snapshot (from, body, stakeRao) {
      const snapshot = body.snapshot as SnapshotPublished['snapshot'] & Record<string, unknown>
      if (!idMatchesContent(snapshot)) { deps.penalize(from, 'snapshot id does not match its content'); return Promise.resolve() }
      // The slot comes from the frame; it must be the one the content names (an honest validator's always is).
      const mislabelled = labelMismatch(body, snapshot)
      if (mislabelled !== null) { deps.penalize(from, `snapshot labelled unlike its content: ${mislabelled}`); return Promise.resolve() }
      const slot = body.kind === 'epoch' ? KEYS.epochSnapshot(body.epoch, body.revision) : body.kind === 'sell_paid' ? KEYS.sellPaid(body.hotkey ?? '', body.epoch) : KEYS.sellFree(body.hotkey ?? '', body.epoch)
      // Several validators' copies are combined by stake, never last-one-wins; only for epochs the chain
      // has closed (every snapshot is of a closed epoch), and only once validators holding half the
      // permitted stake have published for it: a lone small validator serves nothing.
      const pending = pendingVotes.get(from) ?? 0
      if (pending >= MAX_PENDING_SNAPSHOTS_PER_VALIDATOR) {
        log.warn({ validator: from, epoch: body.epoch, kind: body.kind, pending, event: 'snapshot_refused', reason: 'too_many_pending' }, 'snapshot dropped: too many of this validator\'s copies wait to be counted')
        return votes
      }
      pendingVotes.set(from, pending + 1)
      // Asked as the copy arrives, when the epochs last read admit it (so copies of other validators wait
      // less behind this one's lookups), else in turn after the cheaper checks.
      const isOrchestrator = async (): Promise<boolean> => body.kind === 'epoch' || deps.isOrchestrator === undefined || await deps.isOrchestrator(body.hotkey ?? '').catch(() => false)
      const admitted = lastEpochs !== null && body.epoch <= lastEpochs.lastClosed && body.epoch >= lastEpochs.lastClosed - SNAPSHOT_VOTE_EPOCHS
      const early = admitted ? isOrchestrator() : null
      votes = votes.then(async () => {
        // Each close brings a burst of copies (every validator replicates its last epochs): the chain is
        // read once per burst, and again only for a copy of an epoch it had not seen closed.
        const known = lastEpochs
        let e = known !== null && body.epoch <= known.lastClosed ? known : await epochsNow()
        // A revision cannot be ahead of the closes since its epoch (the first at the next close, one
        // correction at most per close after): read the chain again before refusing one on a stale view.
        const revisionAhead = (v: { lastClosed: number }): boolean => body.kind === 'epoch' && body.revision > v.lastClosed - body.epoch + 1
        if (e !== null && e === known && revisionAhead(e)) e = await epochsNow()
        if (e !== null && e.lastClosed - SNAPSHOT_VOTE_EPOCHS > prunedBelow) {
          const below = e.lastClosed - SNAPSHOT_VOTE_EPOCHS
          await pruneVotes(below)
          prunedBelow = below
        }
        const refused = e === null || body.epoch > e.lastClosed
          ? null
          : body.epoch < e.lastClosed - SNAPSHOT_VOTE_EPOCHS ? 'stale_epoch'
            : revisionAhead(e) ? 'revision_ahead'
              : !(await (early ?? isOrchestrator())) ? 'not_an_orchestrator' : null
        if (refused !== null) {
          log.info({ validator: from, epoch: body.epoch, revision: body.revision, hotkey: body.hotkey, lastClosed: e?.lastClosed, kind: body.kind, event: 'snapshot_refused', reason: refused }, 'snapshot refused')
          return
        }
        let permitted: ReadonlyMap<string, bigint>
        try {
          permitted = await permittedStakes()
          // Not among the permitted as last read: read again once (a permit just won) before refusing.
          if (permitted.size > 0 && !permitted.has(from)) { stakesRead = null; permitted = await permittedStakes() }
        } catch (err) {
          log.warn({ err: (err as Error).message, validator: from, epoch: body.epoch }, 'snapshot not counted: validator stakes unavailable (validators publish again at the next close)')
          return
        }
        if (e === null || body.epoch > e.lastClosed) {
          log.warn({ validator: from, epoch: body.epoch, lastClosed: e?.lastClosed, kind: body.kind, event: 'snapshot_refused' }, e === null ? 'snapshot refused: chain head unknown' : 'snapshot refused: its epoch has not closed')
          return
        }
        if (permitted.size > 0 && !permitted.has(from)) {
          // Admitted on a standing read earlier (it lives longer than the stakes read here): its permit is gone.
          log.info({ validator: from, epoch: body.epoch, kind: body.kind, event: 'snapshot_refused', reason: 'not_permitted' }, 'snapshot refused')
          return
        }
        // A vote without stake counts as 1 (snapshot-votes.ts); so does each validator of a chain without stake.
        // Stored votes weigh their validators' stakes now (a chain that lists none: as they were cast).
        const permittedStake = [...permitted.values()].reduce((a, x) => a + (x > 0n ? x : 1n), 0n)
        await voteSnapshot(deps.store, { group: body.kind === 'epoch' ? `epoch/${body.epoch}` : slot, slot, validator: from, stakeRao: permitted.get(from) ?? stakeRao, snapshot, idKey: KEYS.snapshotId, permittedStake, stakes: permitted.size > 0 ? permitted : undefined })
      }).then(() => {}, (err: Error) => log.warn({ err: err.message }, 'snapshot vote failed')).finally(() => {
        const left = (pendingVotes.get(from) ?? 1) - 1
        if (left > 0) pendingVotes.set(from, left); else pendingVotes.delete(from)
      })
      return votes
    },
    routingScore: (hotkey) => routing.get(hotkey),
    poolOf: (hotkey) => pools.get(hotkey) ?? 'unscored',
    async latestPrism () {
      await queue
      return served
    }
  }
}
