// Where published epoch snapshots, epoch summaries, weight proofs and sell-allowance proofs live, and
// the read functions the telemetry routes use. Versions are immutable: a correction is a new key.
//
// snapshots table                          epochs table
//   epoch/<epoch>/<revision> → envelope      close/<epoch>            → the chain's epoch close
//   id/<snapshotId>          → key above     sum/<epoch>/<revision>   → full summary (rows, vector)
//   sellpaid/<hotkey>/<epoch> → envelope     pub/<epoch>              → latest revision published
//   sellfree/<hotkey>/<epoch> → envelope     vec/<epoch>              → weight vector of that revision
//   sellidx/<epoch>/<hotkey> → 1             proof/<epoch>            → weights set on chain
//                                            ev/<verifiedAt>/<attemptId>, eva/<attemptId>, pen/<hotkey>/<id>
import type { Store } from '../ports.ts'
import { collect } from '../store.ts'
import type { EpochSummary, WeightVector, ServedSource } from '../domain/epoch-weights.ts'
import type { SellAllowanceData, SellAllowanceFree, SellAllowancePaid } from '../domain/sell-allowance.ts'
import type { SnapshotEnvelope } from './envelope.ts'

export const CORRECTION_REASON = 'verified_evidence_updated'

/** Seed §2.4 epoch data. `previousSnapshotId` and `correctionReason` are null on revision 1. */
export interface EpochData {
  epoch: number
  formulaVersion: string
  epochSummaryVersion: string
  expectedOrchestratorCount: number
  contributingOrchestratorCount: number
  sumFinalShare: number
  computedAt: string
  previousSnapshotId: string | null
  correctionReason: typeof CORRECTION_REASON | null
  revision: number
}
export type EpochSnapshot = SnapshotEnvelope<EpochData>
export type SellAllowancePaidSnapshot = SnapshotEnvelope<SellAllowanceData<SellAllowancePaid>>
export type SellAllowanceFreeSnapshot = SnapshotEnvelope<SellAllowanceData<SellAllowanceFree>>

/** Everything behind one epoch version: the formula's full output and the evidence it saw. */
export interface EpochSummaryRecord {
  epoch: number
  revision: number
  snapshotId: string
  evidenceCount: number
  summary: EpochSummary
  vector: WeightVector
}

/** What a validator recorded after setting weights on chain. */
export interface WeightsProofRecord {
  /** Epoch whose summary was served. */
  epoch: number
  /** Epoch the served vector comes from (an earlier one under the no-transfer fallback). */
  sourceEpoch: number
  source: ServedSource
  allWeightsZero: boolean
  formulaVersion: string
  snapshotId: string
  validatorHotkey: string
  txId: string
  block: number
  uids: number[]
  uint16Weights: number[]
}

export interface PublishedPointer { epoch: number, revision: number, snapshotId: string, endAtMs: number }

const pad = (n: number, width: number): string => String(n).padStart(width, '0')
export const epochKey = (e: number): string => pad(e, 10)
export const revisionKey = (r: number): string => pad(r, 4)
export const KEYS = {
  epochSnapshot: (e: number, r: number) => `epoch/${epochKey(e)}/${revisionKey(r)}`,
  snapshotId: (id: string) => `id/${id}`,
  sellPaid: (hotkey: string, e: number) => `sellpaid/${hotkey}/${epochKey(e)}`,
  sellFree: (hotkey: string, e: number) => `sellfree/${hotkey}/${epochKey(e)}`,
  sellIndex: (e: number, hotkey: string) => `sellidx/${epochKey(e)}/${hotkey}`,
  close: (e: number) => `close/${epochKey(e)}`,
  summary: (e: number, r: number) => `sum/${epochKey(e)}/${revisionKey(r)}`,
  published: (e: number) => `pub/${epochKey(e)}`,
  vector: (e: number) => `vec/${epochKey(e)}`,
  proof: (e: number) => `proof/${epochKey(e)}`,
  dirty: (e: number) => `dirty/${epochKey(e)}`
} as const

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0

export interface EpochListOptions {
  /** Inclusive epoch bounds. */
  fromEpoch?: number
  toEpoch?: number
  /** Only the latest revision of each epoch (default: every revision, oldest first). */
  latestOnly?: boolean
  /** Continue after this version (exclusive), in the listing's order. */
  after?: { epoch: number, revision: number }
  reverse?: boolean
  limit?: number
}

/** Epoch snapshot versions by epoch then revision. */
export async function listEpochSnapshots (store: Store, opts: EpochListOptions = {}): Promise<EpochSnapshot[]> {
  const from = isCount(opts.fromEpoch) ? opts.fromEpoch : 0
  const to = isCount(opts.toEpoch) ? opts.toEpoch : 9_999_999_999
  if (to < from) return []
  const range: { gte?: string, gt?: string, lt?: string, lte?: string, reverse?: boolean } = { gte: `epoch/${epochKey(from)}/`, lt: `epoch/${epochKey(to)}/\xff`, reverse: opts.reverse === true }
  if (opts.after !== undefined) {
    const k = KEYS.epochSnapshot(opts.after.epoch, opts.after.revision)
    if (opts.reverse === true) { delete range.lt; range.lt = k } else { delete range.gte; range.gt = k }
  }
  const limit = opts.limit ?? 1000
  const table = store.table<EpochSnapshot>('snapshots')
  if (opts.latestOnly !== true) return (await collect(table, { ...range, limit })).map(([, v]) => v)
  // Retention bounds an epoch range to a few hundred epochs of a few revisions: group in memory.
  const latest: EpochSnapshot[] = []
  for (const [, v] of await collect(table, range)) {
    const last = latest[latest.length - 1]
    if (last !== undefined && last.sourceEpoch === v.sourceEpoch) {
      if (v.data.revision > last.data.revision) latest[latest.length - 1] = v
    } else {
      latest.push(v)
    }
  }
  return latest.slice(0, limit)
}

/** One epoch's snapshot: the given revision, or the latest. */
export async function epochSnapshot (store: Store, epoch: number, revision?: number): Promise<EpochSnapshot | null> {
  if (!isCount(epoch)) return null
  const table = store.table<EpochSnapshot>('snapshots')
  if (revision !== undefined) return (await table.get(KEYS.epochSnapshot(epoch, revision))) ?? null
  const [latest] = await collect(table, { gte: `epoch/${epochKey(epoch)}/`, lt: `epoch/${epochKey(epoch)}/\xff`, reverse: true, limit: 1 })
  return latest?.[1] ?? null
}

/** The latest revision of the newest published epoch. */
export async function latestEpochSnapshot (store: Store): Promise<EpochSnapshot | null> {
  const [latest] = await collect(store.table<EpochSnapshot>('snapshots'), { gte: 'epoch/', lt: 'epoch/\xff', reverse: true, limit: 1 })
  return latest?.[1] ?? null
}

/** Any published version by its id (epoch snapshots and sell-allowance proofs). */
export async function snapshotById (store: Store, snapshotId: string): Promise<SnapshotEnvelope<unknown> | null> {
  const table = store.table<unknown>('snapshots')
  const key = await table.get(KEYS.snapshotId(snapshotId)) as string | undefined
  if (key === undefined) return null
  return (await table.get(key) as SnapshotEnvelope<unknown> | undefined) ?? null
}

/** A hotkey's sell-allowance proof: for `epoch` when retained, else the latest published. */
export async function sellAllowanceSnapshot (store: Store, hotkey: string, variant: 'paid', epoch?: number): Promise<SellAllowancePaidSnapshot | null>
export async function sellAllowanceSnapshot (store: Store, hotkey: string, variant: 'free', epoch?: number): Promise<SellAllowanceFreeSnapshot | null>
export async function sellAllowanceSnapshot (store: Store, hotkey: string, variant: 'paid' | 'free', epoch?: number): Promise<SnapshotEnvelope<unknown> | null> {
  const table = store.table<SnapshotEnvelope<unknown>>('snapshots')
  const prefix = variant === 'paid' ? 'sellpaid' : 'sellfree'
  if (epoch !== undefined) return isCount(epoch) ? (await table.get(`${prefix}/${hotkey}/${epochKey(epoch)}`)) ?? null : null
  const [latest] = await collect(table, { gte: `${prefix}/${hotkey}/`, lt: `${prefix}/${hotkey}/\xff`, reverse: true, limit: 1 })
  return latest?.[1] ?? null
}

/** The full summary behind an epoch version (latest revision when none given). */
export async function epochSummaryRecord (store: Store, epoch: number, revision?: number): Promise<EpochSummaryRecord | null> {
  if (!isCount(epoch)) return null
  const table = store.table<EpochSummaryRecord>('epochs')
  if (revision !== undefined) return (await table.get(KEYS.summary(epoch, revision))) ?? null
  const [latest] = await collect(table, { gte: `sum/${epochKey(epoch)}/`, lt: `sum/${epochKey(epoch)}/\xff`, reverse: true, limit: 1 })
  return latest?.[1] ?? null
}

/** The weights this validator set on chain for an epoch, with the transaction. */
export async function weightsProof (store: Store, epoch: number): Promise<WeightsProofRecord | null> {
  if (!isCount(epoch)) return null
  return (await store.table<WeightsProofRecord>('epochs').get(KEYS.proof(epoch))) ?? null
}
