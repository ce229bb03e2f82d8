// The telemetry projections: task evidence and the network summary, fed by the coordinator's events.
// Two views of the same evidence:
//   live (realtime)  every settled or checking attempt, transfers in progress included; a new live
//                    version is cut when something changed and a realtime read arrives; superseded
//                    versions stay readable LIVE_VERSION_TTL_MS, then they are gone.
//   published        evidence of terminal transfers only, appended once, immutable; a network
//                    snapshot is published at least hourly and at every terminal transfer.
// Every list is ordered by a sequence that only grows, so a walk pinned to a sequence high-water mark
// sees each item once while new items arrive. Pure and synchronous: the telemetry actor is its only
// writer; readers read it between messages.
import { sealEnvelope, formulaReference, type SnapshotEnvelope } from '../validator/envelope.ts'
import { isoFromMs } from '../domain/chain-time.ts'
import {
  addRecord, evidenceOf, networkSummary, settleAtTerminal, HourlyCounters, LOOKBACK_MS, NO_PARTICIPANTS,
  type EvidenceRecord, type NetworkSummaryData, type ParticipantCounts, type Pool, type TaskEvidenceData
} from './evidence.ts'
import { TERMINAL, type AttemptRow, type ResultRow, type TransferStatus } from '../transfer/model.ts'

export const LIVE_VERSION_TTL_MS = 10 * 60_000 // seed §8: superseded realtime versions readable 10 min
export const LIVE_REFRESH_MS = 60_000 // a live version older than this is re-cut so its window moves
export const HISTORY_RETENTION_MS = 30 * 24 * 3_600_000 // published network snapshots and task evidence: 30 days

export type Envelope<D> = SnapshotEnvelope<D>

/** An input event, copied out of the coordinator's rows at the moment it fired. */
export type TelemetryEvent =
  | { type: 'transfer', id: string, status: TransferStatus, completedAtMs: number | null }
  | { type: 'result', row: ResultRow, attempt: AttemptRow, pool?: Pool }

/**
 * Every input that changed the projection, with its time, in order: replaying the entries into a
 * fresh projection rebuilds the same state — the same published snapshots and evidence, the same
 * snapshot ids, sequences and live versions (actors/telemetry/journal.ts keeps them in the
 * `telemetry` table). A result carries the pool it was scored in when it arrived.
 */
export type JournalEntry =
  | { k: 'event', at: number, event: TelemetryEvent }
  | { k: 'participants', participants: ParticipantCounts, weights: Record<string, unknown> }
  | { k: 'publish', at: number }
  | { k: 'prune', at: number }
  | { k: 'cut', at: number }

export interface ListItem<D> {
  /** Position in its list: grows with every item appended. */
  seq: number
  env: Envelope<D>
  observedMs: number
  transferId?: string
  participants?: [string, string]
}

export interface ListFilter {
  sinceMs?: number
  untilMs?: number
  transferId?: string
  participantId?: string
  snapshotId?: string
}

export interface Page<D> { items: Array<Envelope<D>>, last: number | null, more: boolean }

interface LiveRecord { firstSeq: number, transferId: string, participants: [string, string], versions: Array<{ seq: number, rec: EvidenceRecord, env: Envelope<TaskEvidenceData> }> }

export interface LiveVersion {
  /** Position of the version among live versions (grows by one per cut). */
  no: number
  /** The event sequence this version includes (inclusive). */
  seq: number
  id: string
  env: Envelope<NetworkSummaryData>
  cutAtMs: number
  supersededAtMs: number | null
}

export interface ProjectionOptions {
  /** Epoch of a time, for `sourceEpoch`. */
  epochAt: (ms: number) => number
  poolOf?: (orchestratorHotkey: string) => Pool
  formulaDocsUri?: string
  /** Receives every entry that changes the projection, in order (persistence); not called by `replay`. */
  journal?: (entry: JournalEntry) => void
}

function matches (item: ListItem<unknown>, f: ListFilter): boolean {
  if (f.snapshotId !== undefined && item.env.snapshotId !== f.snapshotId) return false
  if (f.sinceMs !== undefined && item.observedMs < f.sinceMs) return false
  if (f.untilMs !== undefined && item.observedMs > f.untilMs) return false
  if (f.transferId !== undefined && item.transferId !== f.transferId) return false
  if (f.participantId !== undefined && (item.participants === undefined || !item.participants.includes(f.participantId))) return false
  return true
}

/** First index whose seq is greater than `after`. */
export function firstAfter<T extends { seq: number }> (list: readonly T[], after: number): number {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (list[mid].seq <= after) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** One page of a seq-ordered list: items with after < seq ≤ pin that pass the filter. */
export function pageOf<D> (list: ReadonlyArray<ListItem<D>>, after: number, pin: number, filter: ListFilter, limit: number): Page<D> {
  const items: Array<Envelope<D>> = []
  let last: number | null = null
  for (let i = firstAfter(list, after); i < list.length && list[i].seq <= pin; i++) {
    const item = list[i]
    if (!matches(item, filter)) continue
    if (items.length === limit) return { items, last, more: true }
    items.push(item.env)
    last = item.seq
  }
  return { items, last, more: false }
}

export class TelemetryProjection {
  readonly #opts: ProjectionOptions
  readonly #formulaRef: string
  // Live view.
  #eventSeq = 0
  readonly #live = new Map<string, LiveRecord>() // attemptId →
  #liveOrder: LiveRecord[] = [] // by firstSeq
  readonly #liveCounters = new HourlyCounters()
  readonly #liveOrchestrators = new Map<string, number>() // hotkey → last evidence ms
  #versions: LiveVersion[] = []
  readonly #versionById = new Map<string, LiveVersion>()
  #dirty = true
  // Published view.
  readonly #transfers = new Map<string, { status: TransferStatus, attempts: Set<string> }>()
  #publishedTasks: Array<ListItem<TaskEvidenceData>> = []
  #publishedNetwork: Array<ListItem<NetworkSummaryData>> = []
  readonly #publishedCounters = new HourlyCounters()
  readonly #publishedOrchestrators = new Map<string, number>()
  #taskSeq = 0
  #networkSeq = 0
  // Context.
  #participants: ParticipantCounts = NO_PARTICIPANTS
  #weights: Record<string, unknown> = {}
  #journal: ((entry: JournalEntry) => void) | undefined

  constructor (opts: ProjectionOptions) {
    this.#opts = opts
    this.#formulaRef = formulaReference('network-summary', opts.formulaDocsUri)
    this.#journal = opts.journal
  }

  /** Where entries go from now on (set after a replay). */
  set journal (fn: ((entry: JournalEntry) => void) | undefined) { this.#journal = fn }

  /** Applies one journaled entry (a rebuild on start); journals nothing. */
  replay (entry: JournalEntry): void {
    const journal = this.#journal
    this.#journal = undefined
    try {
      switch (entry.k) {
        case 'event': this.apply(entry.event, entry.at); break
        case 'participants': this.setParticipants(entry.participants, entry.weights); break
        case 'publish': this.publishNetwork(entry.at); break
        case 'prune': this.prune(entry.at); break
        case 'cut': this.current(entry.at); break
      }
    } finally {
      this.#journal = journal
    }
  }

  get eventSeq (): number { return this.#eventSeq }

  // ---- input ----

  apply (e: TelemetryEvent, nowMs: number): void {
    // The pool is fixed when the result arrives, so a replay scores it the same way.
    const event = e.type === 'result' && e.pool === undefined ? { ...e, pool: this.#opts.poolOf?.(e.attempt.orchestrator_id) ?? 'unscored' } : e
    this.#journal?.({ k: 'event', at: nowMs, event })
    this.#eventSeq++
    this.#dirty = true
    if (event.type === 'result') this.#applyResult(event.row, event.attempt, event.pool ?? 'unscored', nowMs)
    else this.#applyTransfer(event, nowMs)
  }

  setParticipants (p: ParticipantCounts, weights: Record<string, unknown>): void {
    if (JSON.stringify(p) === JSON.stringify(this.#participants) && JSON.stringify(weights) === JSON.stringify(this.#weights)) return
    this.#journal?.({ k: 'participants', participants: p, weights })
    this.#participants = p
    this.#weights = weights
    this.#eventSeq++
    this.#dirty = true
  }

  #applyResult (row: ResultRow, attempt: AttemptRow, pool: Pool, nowMs: number): void {
    const rec = evidenceOf(row, attempt, pool)
    const t = this.#transfers.get(rec.transferId) ?? { status: 'in_progress' as TransferStatus, attempts: new Set<string>() }
    this.#transfers.set(rec.transferId, t)
    t.attempts.add(rec.data.attemptId)
    // A transfer that already ended (its failure fired first): the record is final now.
    this.#putLive(TERMINAL.has(t.status) ? settleAtTerminal(rec) : rec, nowMs)
    if (TERMINAL.has(t.status)) this.#publishTask(settleAtTerminal(rec), nowMs)
  }

  #applyTransfer (e: Extract<TelemetryEvent, { type: 'transfer' }>, nowMs: number): void {
    const t = this.#transfers.get(e.id) ?? { status: e.status, attempts: new Set<string>() }
    const wasTerminal = TERMINAL.has(t.status) && this.#transfers.has(e.id)
    t.status = e.status
    this.#transfers.set(e.id, t)
    if (!TERMINAL.has(e.status) || wasTerminal) return
    // The snapshot this terminal transfer publishes is an effect of the event: not journaled apart.
    const journal = this.#journal
    this.#journal = undefined
    try { this.#settleTransfer(e, t, nowMs) } finally { this.#journal = journal }
  }

  #settleTransfer (e: Extract<TelemetryEvent, { type: 'transfer' }>, t: { status: TransferStatus, attempts: Set<string> }, nowMs: number): void {
    if (e.status === 'completed') {
      const at = e.completedAtMs ?? nowMs
      this.#liveCounters.bucket(at).completedTransfers++
      this.#publishedCounters.bucket(at).completedTransfers++
    }
    for (const attemptId of t.attempts) { // arrival order
      const live = this.#live.get(attemptId)
      if (live === undefined) continue
      const current = live.versions[live.versions.length - 1].rec
      const settled = settleAtTerminal(current)
      if (settled !== current) this.#putLive(settled, nowMs)
      this.#publishTask(settled, nowMs)
    }
    this.publishNetwork(nowMs)
  }

  #putLive (rec: EvidenceRecord, nowMs: number): void {
    const seq = this.#eventSeq
    let live = this.#live.get(rec.data.attemptId)
    if (live !== undefined) addRecord(this.#liveCounters.bucket(live.versions[live.versions.length - 1].rec.finishedAtMs), live.versions[live.versions.length - 1].rec.data, -1)
    addRecord(this.#liveCounters.bucket(rec.finishedAtMs), rec.data, 1)
    this.#liveOrchestrators.set(rec.data.orchestratorId, Math.max(this.#liveOrchestrators.get(rec.data.orchestratorId) ?? 0, rec.finishedAtMs))
    const env = this.#taskEnvelope(rec, `task-evidence-live-${seq}`, nowMs, seq)
    if (live === undefined) {
      live = { firstSeq: seq, transferId: rec.transferId, participants: [rec.data.orchestratorId, rec.data.workerId], versions: [] }
      this.#live.set(rec.data.attemptId, live)
      this.#liveOrder.push(live)
    }
    live.versions.push({ seq, rec, env })
  }

  #publishTask (rec: EvidenceRecord, nowMs: number): void {
    this.#taskSeq++
    addRecord(this.#publishedCounters.bucket(rec.finishedAtMs), rec.data, 1)
    this.#publishedOrchestrators.set(rec.data.orchestratorId, Math.max(this.#publishedOrchestrators.get(rec.data.orchestratorId) ?? 0, rec.finishedAtMs))
    this.#publishedTasks.push({
      seq: this.#taskSeq,
      env: this.#taskEnvelope(rec, `task-evidence-${this.#taskSeq}`, nowMs, this.#taskSeq),
      observedMs: rec.finishedAtMs,
      transferId: rec.transferId,
      participants: [rec.data.orchestratorId, rec.data.workerId]
    })
  }

  #taskEnvelope (rec: EvidenceRecord, version: string, nowMs: number, seq: number): Envelope<TaskEvidenceData> {
    return sealEnvelope({
      version,
      observedAt: rec.data.finishedAt,
      sourceEpoch: this.#opts.epochAt(rec.finishedAtMs),
      formulaReference: formulaReference('task-evidence', this.#opts.formulaDocsUri),
      publishedAt: isoFromMs(nowMs),
      evidenceSequence: String(seq),
      data: rec.data
    })
  }

  #networkEnvelope (version: string, nowMs: number, seq: number, counters: HourlyCounters, orchestrators: Map<string, number>): Envelope<NetworkSummaryData> {
    let active = 0
    for (const last of orchestrators.values()) if (last > nowMs - LOOKBACK_MS) active++
    return sealEnvelope({
      version,
      observedAt: isoFromMs(nowMs),
      sourceEpoch: this.#opts.epochAt(nowMs),
      formulaReference: this.#formulaRef,
      publishedAt: isoFromMs(nowMs),
      evidenceSequence: String(seq),
      data: networkSummary({ nowMs, counters, participants: this.#participants, evidenceOrchestrators: active, weights: this.#weights })
    })
  }

  /** Publishes an immutable network snapshot of the published evidence (hourly, and per terminal transfer). */
  publishNetwork (nowMs: number): Envelope<NetworkSummaryData> {
    this.#journal?.({ k: 'publish', at: nowMs })
    this.#networkSeq++
    const env = this.#networkEnvelope(`network-summary-${this.#networkSeq}`, nowMs, this.#taskSeq, this.#publishedCounters, this.#publishedOrchestrators)
    this.#publishedNetwork.push({ seq: this.#networkSeq, env, observedMs: nowMs })
    return env
  }

  /** Drops what retention no longer keeps: published items past 30 days, live evidence past the lookback. */
  prune (nowMs: number): void {
    this.#journal?.({ k: 'prune', at: nowMs })
    const keepPublished = nowMs - HISTORY_RETENTION_MS
    this.#publishedNetwork = this.#publishedNetwork.filter((i, idx, all) => i.observedMs >= keepPublished || idx === all.length - 1)
    this.#publishedTasks = this.#publishedTasks.filter(i => Date.parse(i.env.publishedAt) >= keepPublished)
    this.#publishedCounters.prune(keepPublished)
    const keepLive = nowMs - LOOKBACK_MS
    this.#liveCounters.prune(keepLive)
    const oldestPinned = this.#oldestReadableSeq(nowMs)
    const kept: LiveRecord[] = []
    for (const r of this.#liveOrder) {
      const last = r.versions[r.versions.length - 1]
      if (last.rec.finishedAtMs < keepLive && r.firstSeq < oldestPinned) {
        this.#live.delete(last.rec.data.attemptId)
        continue
      }
      kept.push(r)
    }
    this.#liveOrder = kept
    for (const [id, t] of this.#transfers) {
      if (TERMINAL.has(t.status) && [...t.attempts].every(a => !this.#live.has(a))) this.#transfers.delete(id)
    }
  }

  // ---- live versions ----

  #oldestReadableSeq (nowMs: number): number {
    for (const v of this.#versions) if (v.supersededAtMs === null || nowMs - v.supersededAtMs < LIVE_VERSION_TTL_MS) return v.seq
    return this.#eventSeq
  }

  #expireVersions (nowMs: number): void {
    let drop = 0
    while (drop < this.#versions.length - 1) {
      const v = this.#versions[drop]
      if (v.supersededAtMs !== null && nowMs - v.supersededAtMs >= LIVE_VERSION_TTL_MS) { this.#versionById.delete(v.id); drop++ } else break
    }
    if (drop > 0) this.#versions = this.#versions.slice(drop)
    // Record versions no readable live version can see any more.
    const oldest = this.#versions[0]?.seq ?? this.#eventSeq
    for (const r of this.#liveOrder) {
      let keepFrom = 0
      while (keepFrom < r.versions.length - 1 && r.versions[keepFrom + 1].seq <= oldest) keepFrom++
      if (keepFrom > 0) r.versions = r.versions.slice(keepFrom)
    }
  }

  /** The current live version, cut anew when something changed or it has aged. */
  current (nowMs: number): LiveVersion {
    let cur = this.#versions[this.#versions.length - 1]
    if (cur === undefined || (this.#dirty && cur.seq !== this.#eventSeq) || nowMs - cur.cutAtMs >= LIVE_REFRESH_MS) {
      const env = this.#networkEnvelope(`network-live-${this.#eventSeq}`, nowMs, this.#eventSeq, this.#liveCounters, this.#liveOrchestrators)
      this.#journal?.({ k: 'cut', at: nowMs })
      if (cur !== undefined && cur.id === env.snapshotId) {
        cur.cutAtMs = nowMs
      } else {
        if (cur !== undefined) cur.supersededAtMs = nowMs
        cur = { no: (cur?.no ?? 0) + 1, seq: this.#eventSeq, id: env.snapshotId, env, cutAtMs: nowMs, supersededAtMs: null }
        this.#versions.push(cur)
        this.#versionById.set(cur.id, cur)
      }
      this.#dirty = false
    }
    this.#expireVersions(nowMs)
    return cur
  }

  /** A live version by id while it is readable; null once gone. */
  version (id: string, nowMs: number): LiveVersion | null {
    const cur = this.current(nowMs)
    if (id === cur.id) return cur
    const v = this.#versionById.get(id)
    if (v === undefined || (v.supersededAtMs !== null && nowMs - v.supersededAtMs >= LIVE_VERSION_TTL_MS)) return null
    return v
  }

  /** Readable live versions (oldest first) as a list. */
  liveVersions (nowMs: number): Array<ListItem<NetworkSummaryData>> {
    this.current(nowMs)
    return this.#versions.map(v => ({ seq: v.no, env: v.env, observedMs: v.cutAtMs }))
  }

  /** Live task evidence as of `pin` (a live version's seq), after position `after` (a firstSeq). */
  liveTasks (pin: number, after: number, filter: ListFilter, limit: number): Page<TaskEvidenceData> {
    const items: Array<Envelope<TaskEvidenceData>> = []
    let last: number | null = null
    let lo = 0
    let hi = this.#liveOrder.length
    while (lo < hi) { const mid = (lo + hi) >>> 1; if (this.#liveOrder[mid].firstSeq <= after) lo = mid + 1; else hi = mid }
    for (let i = lo; i < this.#liveOrder.length; i++) {
      const r = this.#liveOrder[i]
      if (r.firstSeq > pin) break
      let v = r.versions[0]
      for (const candidate of r.versions) if (candidate.seq <= pin) v = candidate
      const item: ListItem<TaskEvidenceData> = { seq: r.firstSeq, env: v.env, observedMs: v.rec.finishedAtMs, transferId: r.transferId, participants: r.participants }
      if (!matches(item, filter)) continue
      if (items.length === limit) return { items, last, more: true }
      items.push(v.env)
      last = r.firstSeq
    }
    return { items, last, more: false }
  }

  // ---- published reads ----

  latestNetwork (nowMs: number): ListItem<NetworkSummaryData> {
    const last = this.#publishedNetwork[this.#publishedNetwork.length - 1]
    if (last !== undefined) return last
    this.publishNetwork(nowMs)
    return this.#publishedNetwork[this.#publishedNetwork.length - 1]
  }

  publishedNetwork (): ReadonlyArray<ListItem<NetworkSummaryData>> { return this.#publishedNetwork }
  publishedTasks (): ReadonlyArray<ListItem<TaskEvidenceData>> { return this.#publishedTasks }
  get networkSeq (): number { return this.#networkSeq }
  get taskSeq (): number { return this.#taskSeq }
}
