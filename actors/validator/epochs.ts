// The validator's epoch machinery. Verified-task evidence and penalty rows come in; at every epoch
// close the previous epoch's summary is published (one epoch late) as an immutable, content-addressed
// snapshot, earlier published epochs that received evidence since are corrected by a new revision,
// sell-allowance proofs are published, and the served weight vector is set on chain with its proof
// recorded. Rules: docs/formulas.md#epoch-publication.
import { Type, type Static } from '@sinclair/typebox'
import { Hotkey, assertValid } from '../../protocol/index.ts'
import type { Logger, Store, StoreOp } from '../ports.ts'
import { collect } from '../store.ts'
import { spawnSupervised, tell, ask, type Env, type Ref, type Reply } from '../runtime.ts'
import type { Chain, EpochClose, Registration } from '../chain/ports.ts'
import { epochSummary, servedWeights, type EpochSummary, type ServedVector, type WeightCandidate, type WeightVector } from '../domain/epoch-weights.ts'
import { activePenaltyCounts, penaltyMultiplier, PENALTY_KINDS, DAY_MS, type PenaltyRow } from '../domain/prism.ts'
import { isoFromMs } from '../domain/chain-time.ts'
import { sealEnvelope, formulaReference } from './envelope.ts'
import {
  CORRECTION_REASON, KEYS, epochKey, type EpochData, type EpochSnapshot, type EpochSummaryRecord, type PublishedPointer,
  type WeightsProofRecord
} from './snapshots.ts'
import { publishSellAllowances, sellAllowancePruneOps } from './sell-allowance.ts'
import { applySellPressure } from '../domain/sell-allowance.ts'

export const EPOCH_RETENTION_MS = 30 * DAY_MS // seed: epoch sets are kept 30 days
/** Evidence is kept a day longer than the epochs it can still correct. */
export const EVIDENCE_RETENTION_MS = EPOCH_RETENTION_MS + DAY_MS
/** Closed epochs published at once after a validator was away (older ones stay unpublished). */
export const MAX_PUBLISH_BACKLOG = 50 // epochs
/** Earlier vectors searched for the no-transfer fallback. */
const SERVED_HISTORY_EPOCHS = 50
const MIB = 1_048_576
const MAX_TEXT_ID = 128
export const EPOCHS_ASK_TIMEOUT_MS = 30_000 // 30 s

const TextId = Type.String({ minLength: 1, maxLength: MAX_TEXT_ID })
const Ms = Type.Integer({ minimum: 0, maximum: 8_640_000_000_000_000 })

/** One verified (or refuted) task attempt, as the validation flow hands it over. */
export const TaskEvidence = Type.Object({
  taskId: TextId,
  attemptId: TextId,
  transferId: TextId,
  orchestratorHotkey: Hotkey,
  workerHotkey: Hotkey,
  /** Server-planned size of the chunk the attempt delivered. */
  bytes: Type.Integer({ minimum: 0, maximum: 5 * 1024 ** 4 }),
  /** When the validator's verdict was reached (ms since the Unix epoch); decides the epoch. */
  verifiedAt: Ms,
  durationMs: Type.Integer({ minimum: 0 }),
  verdict: Type.Union([Type.Literal('verified'), Type.Literal('mismatch')])
}, { additionalProperties: false })
export type TaskEvidence = Static<typeof TaskEvidence>

/**
 * A penalty row (PRISM penalty kinds); the same id replaces the row (revocation). It is against the
 * orchestrator, unless `workerHotkey` is set: then it is against that worker's own hotkey/UID (a delivery
 * of the worker), `orchestratorHotkey` names the orchestrator it was attached to, and it does not touch
 * the orchestrator's penalty multiplier.
 */
export const OrchestratorPenalty = Type.Object({
  id: TextId,
  orchestratorHotkey: Hotkey,
  workerHotkey: Type.Optional(Hotkey),
  workerUid: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
  kind: Type.Union(PENALTY_KINDS.map(k => Type.Literal(k))),
  createdAtMs: Ms,
  durationMs: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
  revokedAtMs: Type.Optional(Type.Union([Ms, Type.Null()]))
}, { additionalProperties: false })
export type OrchestratorPenalty = Static<typeof OrchestratorPenalty>

export interface EvidenceOutcome {
  accepted: number
  /** Records already known with the same or a stronger verdict. */
  duplicates: number
  /** Published epochs these records will correct at the next close. */
  correcting: number[]
}

export interface CloseOutcome {
  epoch: number
  /** Versions published at this close: first revisions, then corrections. */
  published: EpochSnapshot[]
  sellAllowances: number
  weights: WeightsProofRecord | null
}

export interface EpochMachineDeps {
  store: Store
  chain: Chain
  /** This validator's hotkey: registered as a validator, and the one that sets weights. */
  hotkey: string
  logger: Logger
  /** Base of formulaReference URIs (a network constant: validators must agree on it). */
  formulaDocsUri?: string
  /** PRISM final score per orchestrator for the rank tie-break (0 without). */
  scoreOf?: (hotkey: string, epoch: number) => number
  /** Set weights on chain after each publication (default true). */
  setWeights?: boolean
}

interface EvidencePointer { key: string }

const evidenceKey = (verifiedAt: number, attemptId: string): string => `ev/${String(verifiedAt).padStart(16, '0')}/${attemptId}`
const msKey = (ms: number): string => String(Math.max(0, ms)).padStart(16, '0')

/** Candidates of a closed epoch: registered orchestrators with their verified MiB and penalty multiplier. */
export function epochCandidates (
  close: Pick<EpochClose, 'epoch' | 'lastBlock' | 'endAtMs'>,
  registrations: readonly Registration[],
  evidence: readonly TaskEvidence[],
  penalties: readonly OrchestratorPenalty[],
  scoreOf: (hotkey: string, epoch: number) => number = () => 0
): WeightCandidate[] {
  const bytes = new Map<string, number>()
  for (const e of evidence) if (e.verdict === 'verified') bytes.set(e.orchestratorHotkey, (bytes.get(e.orchestratorHotkey) ?? 0) + e.bytes)
  const rowsOf = new Map<string, PenaltyRow[]>()
  for (const p of penalties) {
    if (p.workerHotkey !== undefined) continue // a worker's own penalty
    const list = rowsOf.get(p.orchestratorHotkey) ?? []
    list.push({ kind: p.kind, createdAtMs: p.createdAtMs, durationMs: p.durationMs ?? undefined, revokedAtMs: p.revokedAtMs ?? null })
    rowsOf.set(p.orchestratorHotkey, list)
  }
  return registrations
    .filter(r => r.role === 'orchestrator' && r.registeredAtBlock <= close.lastBlock)
    .sort((a, b) => a.uid - b.uid)
    .map(r => ({
      uid: r.uid,
      hotkey: r.hotkey,
      verifiedMib: Math.floor((bytes.get(r.hotkey) ?? 0) / MIB),
      penaltyMultiplier: penaltyMultiplier(activePenaltyCounts(rowsOf.get(r.hotkey) ?? [], close.endAtMs)).multiplier,
      score: scoreOf(r.hotkey, close.epoch)
    }))
}

/** The weight vector of a summary: rows with a UID, ascending by UID. */
export function summaryVector (summary: EpochSummary): WeightVector {
  const rows = summary.orchestrators.filter(r => r.uid !== null).sort((a, b) => (a.uid as number) - (b.uid as number))
  return { epoch: summary.epoch, uids: rows.map(r => r.uid as number), weights: rows.map(r => r.weight), uint16Weights: rows.map(r => r.uint16Weight), formulaVersion: summary.formulaVersion }
}

/** Seed §2.4 data and the §2.1 envelope of one epoch version; every time is a chain time. */
export function epochSnapshotOf (args: {
  summary: EpochSummary
  close: Pick<EpochClose, 'epoch' | 'endAtMs'>
  publishedAtMs: number
  revision: number
  previousSnapshotId: string | null
  evidenceCount: number
  formulaDocsUri?: string
}): EpochSnapshot {
  const { summary, close, publishedAtMs, revision, previousSnapshotId } = args
  const publishedAt = isoFromMs(publishedAtMs)
  const data: EpochData = {
    epoch: summary.epoch,
    formulaVersion: summary.formulaVersion,
    epochSummaryVersion: publishedAt,
    expectedOrchestratorCount: summary.expectedOrchestratorCount,
    contributingOrchestratorCount: summary.contributingOrchestratorCount,
    sumFinalShare: summary.sumFinalShare,
    computedAt: publishedAt,
    previousSnapshotId,
    correctionReason: revision > 1 ? CORRECTION_REASON : null,
    revision
  }
  return sealEnvelope({
    version: `epoch-${summary.epoch}-r${revision}`,
    observedAt: isoFromMs(close.endAtMs),
    sourceEpoch: summary.epoch,
    formulaReference: formulaReference('epoch-weights', args.formulaDocsUri),
    publishedAt,
    evidenceSequence: String(args.evidenceCount),
    data
  })
}

export class EpochMachine {
  readonly #deps: EpochMachineDeps
  readonly #store: Store
  readonly #log: Logger
  /** Known epoch closes, ascending by epoch. */
  #closes: EpochClose[] = []
  #queue: Promise<unknown> = Promise.resolve()

  constructor (deps: EpochMachineDeps) {
    this.#deps = deps
    this.#store = deps.store
    this.#log = deps.logger.child({ component: 'epochs' })
  }

  /** Loads the known epoch closes and registers this validator on chain. */
  start (): Promise<void> {
    return this.#serial(async () => {
      this.#closes = (await collect(this.#store.table<EpochClose & { emittedRao: string, burnedRao: string }>('epochs'), { gte: 'close/', lt: 'close/\xff' }))
        .map(([, c]) => ({ ...c, emittedRao: BigInt(c.emittedRao), burnedRao: BigInt(c.burnedRao) }))
      await this.#deps.chain.register(this.#deps.hotkey, 'validator')
    })
  }

  /** Resolves once every queued operation has finished. */
  async settled (): Promise<void> {
    for (;;) {
      const q = this.#queue
      await q.catch(() => {})
      if (q === this.#queue) return
    }
  }

  #serial<T> (fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn)
    this.#queue = run.catch(() => {})
    return run
  }

  /** The closed epoch whose span (startAtMs, endAtMs] holds `ms`, or null (open epoch, or unknown). */
  epochAt (ms: number): number | null {
    for (let i = this.#closes.length - 1; i >= 0; i--) {
      const c = this.#closes[i]!
      if (ms > c.endAtMs) return null
      if (ms > c.startAtMs) return c.epoch
    }
    return null
  }

  /** Adds evidence; idempotent per attempt, and a mismatch verdict replaces a verified one (never the reverse). */
  async addEvidence (records: readonly TaskEvidence[]): Promise<EvidenceOutcome> {
    const valid = records.map((r, i) => assertValid(TaskEvidence, r, `evidence[${i}]`))
    return await this.#serial(async () => {
      const table = this.#store.table<unknown>('epochs')
      const out: EvidenceOutcome = { accepted: 0, duplicates: 0, correcting: [] }
      const correcting = new Set<number>()
      for (const rec of valid) {
        const known = await table.get(`eva/${rec.attemptId}`) as EvidencePointer | undefined
        const ops: StoreOp[] = []
        if (known !== undefined) {
          const prev = await table.get(known.key) as TaskEvidence | undefined
          if (prev !== undefined && (prev.verdict === 'mismatch' || rec.verdict === 'verified')) { out.duplicates++; continue }
          ops.push({ type: 'del', table: 'epochs', key: known.key })
          const was = prev === undefined ? null : this.epochAt(prev.verifiedAt)
          if (was !== null) await this.#markIfPublished(was, ops, correcting)
        }
        const key = evidenceKey(rec.verifiedAt, rec.attemptId)
        const epoch = this.epochAt(rec.verifiedAt)
        if (epoch !== null) await this.#markIfPublished(epoch, ops, correcting)
        ops.push({ type: 'put', table: 'epochs', key, value: rec })
        ops.push({ type: 'put', table: 'epochs', key: `eva/${rec.attemptId}`, value: { key } satisfies EvidencePointer })
        await this.#store.batch(ops)
        out.accepted++
      }
      out.correcting = [...correcting].sort((a, b) => a - b)
      if (out.correcting.length > 0) this.#log.info({ event: 'late_evidence', epochs: out.correcting }, 'evidence for published epochs; corrections follow at the next close')
      return out
    })
  }

  async #markIfPublished (epoch: number, ops: StoreOp[], correcting: Set<number>): Promise<void> {
    if (await this.#store.table('epochs').get(KEYS.published(epoch)) === undefined) return
    ops.push({ type: 'put', table: 'epochs', key: KEYS.dirty(epoch), value: 1 })
    correcting.add(epoch)
  }

  /** Adds or replaces penalty rows (by id). They count from the next computation on. */
  async addPenalties (rows: readonly OrchestratorPenalty[]): Promise<void> {
    const valid = rows.map((r, i) => assertValid(OrchestratorPenalty, r, `penalty[${i}]`))
    return await this.#serial(async () => {
      await this.#store.batch(valid.map(p => ({ type: 'put' as const, table: 'epochs' as const, key: `pen/${p.orchestratorHotkey}/${p.id}`, value: p })))
    })
  }

  /**
   * Epoch `close.epoch` closed on chain: publish the epoch before it (and any closed backlog), correct
   * published epochs that received evidence, publish sell allowances, set weights. Idempotent.
   */
  epochClosed (close: EpochClose): Promise<CloseOutcome> {
    return this.#serial(() => this.#onClose(close))
  }

  async #onClose (close: EpochClose): Promise<CloseOutcome> {
    const table = this.#store.table<unknown>('epochs')
    const outcome: CloseOutcome = { epoch: close.epoch, published: [], sellAllowances: 0, weights: null }
    const done = await table.get('done') as number | undefined
    if (done !== undefined && close.epoch <= done) return outcome
    await this.#remember(close)
    const publishedAtMs = close.endAtMs

    // 1. First revisions: closed epochs before this one that are not published yet (normally just N−1).
    const previous = close.epoch > 0 ? await this.#closeOf(close.epoch - 1) : null
    const fresh: EpochClose[] = []
    for (const c of this.#closes) {
      if (c.epoch >= close.epoch || c.epoch < close.epoch - MAX_PUBLISH_BACKLOG) continue
      if (await table.get(KEYS.published(c.epoch)) === undefined) fresh.push(c)
    }
    let newest: { record: EpochSummaryRecord, close: EpochClose } | null = null
    for (const c of fresh) {
      const record = await this.#publish(c, publishedAtMs, outcome)
      if (previous !== null && c.epoch === previous.epoch) newest = { record, close: c }
    }

    // 2. Corrections: published epochs that received evidence since their latest version.
    for (const [key] of await collect(table, { gte: 'dirty/', lt: 'dirty/\xff' })) {
      const epoch = Number(key.slice('dirty/'.length))
      const c = await this.#closeOf(epoch)
      if (c === null) { await table.del(key); continue }
      await this.#publish(c, publishedAtMs, outcome)
    }

    // 3. Weights and sell allowance for the epoch just published, both from the served vector.
    if (newest !== null) {
      const served = await this.#served(newest.record)
      const weightOf = new Map(served.uids.map((uid, i) => [uid, served.weights[i]!]))
      const sell = await publishSellAllowances({
        store: this.#store, chain: this.#deps.chain, close: newest.close, servedWeightOf: uid => weightOf.get(uid) ?? 0, publishedAtMs, formulaDocsUri: this.#deps.formulaDocsUri
      })
      outcome.sellAllowances = sell.count
      // Sell pressure on the normalized served weights before uint16 (docs/formulas.md#sell-pressure);
      // the burn vector has no miner to adjust.
      const pressured = served.source === 'burn' ? served : { ...served, ...applySellPressure(served, sell.pressure) }
      if (this.#deps.setWeights !== false) outcome.weights = await this.#setWeights(newest.record, pressured)
    }

    // 4. Retention, measured on chain time.
    await this.#prune(publishedAtMs)
    await table.put('done', close.epoch)
    return outcome
  }

  async #remember (close: EpochClose): Promise<void> {
    if (this.#closes.some(c => c.epoch === close.epoch)) return
    await this.#store.table('epochs').put(KEYS.close(close.epoch), { ...close, emittedRao: close.emittedRao.toString(), burnedRao: close.burnedRao.toString() })
    this.#closes.push(close)
    this.#closes.sort((a, b) => a.epoch - b.epoch)
  }

  /** A close this validator saw, or the chain's record of it (a validator that started late). */
  async #closeOf (epoch: number): Promise<EpochClose | null> {
    const known = this.#closes.find(c => c.epoch === epoch)
    if (known !== undefined) return known
    const fetched = await this.#deps.chain.epochClose(epoch)
    if (fetched !== null) await this.#remember(fetched)
    return fetched
  }

  async #evidenceOf (close: EpochClose): Promise<TaskEvidence[]> {
    const rows = await collect(this.#store.table<TaskEvidence>('epochs'), { gt: `ev/${msKey(close.startAtMs)}/\xff`, lt: `ev/${msKey(close.endAtMs + 1)}/` })
    return rows.map(([, v]) => v)
  }

  async #publish (close: EpochClose, publishedAtMs: number, outcome: CloseOutcome): Promise<EpochSummaryRecord> {
    const epochs = this.#store.table<unknown>('epochs')
    const evidence = await this.#evidenceOf(close)
    const penalties = (await collect(this.#store.table<OrchestratorPenalty>('epochs'), { gte: 'pen/', lt: 'pen/\xff' })).map(([, p]) => p)
    const registrations = await this.#deps.chain.registrations()
    const summary = epochSummary(close.epoch, epochCandidates(close, registrations, evidence, penalties, this.#deps.scoreOf))
    const prev = await epochs.get(KEYS.published(close.epoch)) as PublishedPointer | undefined
    const revision = prev === undefined ? 1 : prev.revision + 1
    const snapshot = epochSnapshotOf({
      summary, close, publishedAtMs, revision, previousSnapshotId: prev?.snapshotId ?? null, evidenceCount: evidence.length, formulaDocsUri: this.#deps.formulaDocsUri
    })
    const record: EpochSummaryRecord = { epoch: close.epoch, revision, snapshotId: snapshot.snapshotId, evidenceCount: evidence.length, summary, vector: summaryVector(summary) }
    const pointer: PublishedPointer = { epoch: close.epoch, revision, snapshotId: snapshot.snapshotId, endAtMs: close.endAtMs }
    const snapshotKey = KEYS.epochSnapshot(close.epoch, revision)
    await this.#store.batch([
      { type: 'put', table: 'snapshots', key: snapshotKey, value: snapshot },
      { type: 'put', table: 'snapshots', key: KEYS.snapshotId(snapshot.snapshotId), value: snapshotKey },
      { type: 'put', table: 'epochs', key: KEYS.summary(close.epoch, revision), value: record },
      { type: 'put', table: 'epochs', key: KEYS.vector(close.epoch), value: record.vector },
      { type: 'put', table: 'epochs', key: KEYS.published(close.epoch), value: pointer },
      { type: 'del', table: 'epochs', key: KEYS.dirty(close.epoch) }
    ])
    outcome.published.push(snapshot)
    this.#log.info({ event: 'epoch_published', epoch: close.epoch, revision, snapshotId: snapshot.snapshotId, evidence: evidence.length, contributing: summary.contributingOrchestratorCount }, 'epoch snapshot published')
    return record
  }

  /** The vector served for an epoch: its own, else the last valid non-zero one, else the burn. */
  async #served (record: EpochSummaryRecord): Promise<ServedVector> {
    const history = (await collect(this.#store.table<WeightVector>('epochs'), { gte: 'vec/', lt: `vec/${epochKey(record.epoch)}`, reverse: true, limit: SERVED_HISTORY_EPOCHS })).map(([, v]) => v)
    return servedWeights(record.vector, history)
  }

  async #setWeights (record: EpochSummaryRecord, served: ServedVector): Promise<WeightsProofRecord | null> {
    const existing = await this.#store.table('epochs').get(KEYS.proof(record.epoch)) as WeightsProofRecord | undefined
    if (existing !== undefined) return existing
    try {
      const proof = await this.#deps.chain.setWeights(this.#deps.hotkey, record.epoch, served.uids, served.uint16Weights)
      const row: WeightsProofRecord = {
        epoch: record.epoch,
        sourceEpoch: served.epoch,
        source: served.source,
        allWeightsZero: record.summary.allWeightsZero,
        formulaVersion: served.formulaVersion,
        snapshotId: record.snapshotId,
        validatorHotkey: this.#deps.hotkey,
        txId: proof.txId,
        block: proof.block,
        uids: served.uids,
        uint16Weights: served.uint16Weights
      }
      await this.#store.table('epochs').put(KEYS.proof(record.epoch), row)
      this.#log.info({ event: 'weights_set', epoch: record.epoch, source: served.source, txId: proof.txId, block: proof.block, uids: served.uids.length }, 'weights set on chain')
      return row
    } catch (err) {
      // The next epoch sets a fresh vector; a failed write is logged, not retried in a loop.
      this.#log.warn({ err, epoch: record.epoch, event: 'weights_failed' }, 'setting weights failed')
      return null
    }
  }

  async #prune (nowMs: number): Promise<void> {
    const epochs = this.#store.table<unknown>('epochs')
    const snapshots = this.#store.table<unknown>('snapshots')
    const ops: StoreOp[] = []
    const expired = this.#closes.filter(c => c.endAtMs < nowMs - EPOCH_RETENTION_MS)
    for (const c of expired) {
      const e = epochKey(c.epoch)
      for (const [key, v] of await collect(snapshots, { gte: `epoch/${e}/`, lt: `epoch/${e}/\xff` })) {
        ops.push({ type: 'del', table: 'snapshots', key }, { type: 'del', table: 'snapshots', key: KEYS.snapshotId((v as EpochSnapshot).snapshotId) })
      }
      for (const [key] of await collect(epochs, { gte: `sum/${e}/`, lt: `sum/${e}/\xff` })) ops.push({ type: 'del', table: 'epochs', key })
      for (const key of [KEYS.vector(c.epoch), KEYS.published(c.epoch), KEYS.proof(c.epoch), KEYS.dirty(c.epoch), KEYS.close(c.epoch)]) ops.push({ type: 'del', table: 'epochs', key })
    }
    for (const [key, v] of await collect(epochs, { lt: `ev/${msKey(nowMs - EVIDENCE_RETENTION_MS)}/`, gte: 'ev/' })) {
      ops.push({ type: 'del', table: 'epochs', key }, { type: 'del', table: 'epochs', key: `eva/${(v as TaskEvidence).attemptId}` })
    }
    ops.push(...await sellAllowancePruneOps(this.#store, nowMs))
    if (ops.length === 0) return
    await this.#store.batch(ops)
    if (expired.length > 0) {
      this.#closes = this.#closes.filter(c => !expired.includes(c))
      this.#log.info({ event: 'epochs_expired', epochs: expired.map(c => c.epoch) }, 'epochs past retention removed')
    }
  }
}

// ---- The actor the node runs: one mailbox in front of the machine ----------------------------------

export type EpochsMsg =
  | { type: 'evidence', records: TaskEvidence[], reply?: Reply<EvidenceOutcome> }
  | { type: 'penalties', rows: OrchestratorPenalty[], reply?: Reply<void> }
  | { type: 'epoch_closed', close: EpochClose, reply?: Reply<CloseOutcome> }
  /** Answers once every earlier message has been handled. */
  | { type: 'flush', reply: Reply<void> }

export interface ValidatorEpochs {
  ref: Ref<EpochsMsg>
  machine: EpochMachine
  /** Hands verified-task evidence to the validator (the transfer flow's entry point). */
  submitEvidence (records: TaskEvidence[]): Promise<EvidenceOutcome>
  submitPenalties (rows: OrchestratorPenalty[]): Promise<void>
  /** Resolves once every message sent before it (epoch closes included) has been handled. */
  flush (): Promise<void>
  stop (): Promise<void>
}

/**
 * Starts the validator's epoch machinery under `parent`: registers the validator, follows the chain's
 * epoch closes and publishes. Messages are handled one at a time; a crash restarts the actor, whose
 * state lives in the store.
 */
export async function startValidatorEpochs (parent: Ref<any>, env: Env, deps: EpochMachineDeps): Promise<ValidatorEpochs> {
  const machine = new EpochMachine(deps)
  await machine.start()
  const ref = spawnSupervised<null, EpochsMsg>(parent, 'epochs', env, () => null, async (_state, msg) => {
    try {
      switch (msg.type) {
        // The work runs before the optional reply: `reply?.resolve(await x)` would skip x without a reply.
        case 'evidence': { const outcome = await machine.addEvidence(msg.records); msg.reply?.resolve(outcome); break }
        case 'penalties': await machine.addPenalties(msg.rows); msg.reply?.resolve(); break
        case 'epoch_closed': { const outcome = await machine.epochClosed(msg.close); msg.reply?.resolve(outcome); break }
        case 'flush': msg.reply.resolve(); break
      }
    } catch (err) {
      // Bad input is the sender's problem, not a reason to restart.
      msg.reply?.reject(err as Error)
      if (msg.reply === undefined) env.logger.warn({ err, msgType: msg.type }, 'epochs message failed')
    }
    return null
  })
  const unsubscribe = deps.chain.subscribe({ epochClosed: (close) => tell(ref, { type: 'epoch_closed', close }) })
  return {
    ref,
    machine,
    submitEvidence: (records) => ask<EpochsMsg, EvidenceOutcome>(ref, env.clock, EPOCHS_ASK_TIMEOUT_MS, reply => ({ type: 'evidence', records, reply }), 'epochs'),
    submitPenalties: (rows) => ask<EpochsMsg, void>(ref, env.clock, EPOCHS_ASK_TIMEOUT_MS, reply => ({ type: 'penalties', rows, reply }), 'epochs'),
    flush: () => ask<EpochsMsg, void>(ref, env.clock, EPOCHS_ASK_TIMEOUT_MS, reply => ({ type: 'flush', reply }), 'epochs'),
    stop: async () => { unsubscribe(); await machine.settled() }
  }
}
