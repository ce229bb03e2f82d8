// The validator's verification: for every delivery a coordinator asks about, read the chunk back from
// the destination (through a short-lived read URL, never its credentials), compare sha256 with the
// staged chunk, and answer with a signed verdict. Verdicts become epoch evidence; a mismatch becomes an
// `integrity_chunk_mismatch` penalty on the worker that delivered the bytes (its own hotkey and UID),
// not on the orchestrator it was attached to. After each epoch close it computes PRISM from what it
// verified and from each orchestrator's readiness transitions, and publishes the routing scores.
// Everything PRISM is computed from lives in the store (`meta`, keys `prism/…`) and is rebuilt on start
// (docs/formulas.md#readiness-transitions).
import type { Network, Store, StoreOp } from '../ports.ts'
import { spawnSupervised, tell, type Env, type Ref } from '../runtime.ts'
import { prefixRange } from '../store.ts'
import {
  computePrism, DAY_MS, type PrismComponents, type PrismOrchestratorInput, type PrismPool, type ThroughputSample, type OutcomeEvent,
  type PenaltyRow, type ReadinessTransition
} from '../domain/prism.ts'
import type { VerifyRequest, ReadTarget, PrismScores } from '../../protocol/index.ts'
import type { TaskEvidence, OrchestratorPenalty } from './epochs.ts'

/** Reads bytes back and hashes them (I/O: real HTTP in the node, modelled in the simulator). */
export interface RangeReader {
  sha256Of (target: ReadTarget, length: number): Promise<{ sha256: string, bytes: number }>
}

export interface EvidenceSink {
  submitEvidence (records: TaskEvidence[]): Promise<unknown>
  submitPenalties (rows: OrchestratorPenalty[]): Promise<void>
}

export const EVIDENCE_WINDOW_MS = DAY_MS // PRISM looks back one day
const MBPS = 8 / 1e6

export type VerifierMsg =
  | { type: 'request', from: string, body: VerifyRequest, workerUid?: number | null }
  | { type: 'read', from: string, body: VerifyRequest, sha256: string | null, error: string | null, workerUid?: number | null }
  /** An orchestrator's membership state as this node saw it at `atMs` (link up/down, workers attached). */
  | { type: 'readiness', hotkey: string, atMs: number, ready: boolean, connected: boolean }
  | { type: 'epoch', epoch: number }
  | { type: 'scores', reply: (s: Map<string, number>) => void }

/** Evidence tagged with the pool it was earned in: a graduate's qualifying evidence is not qualified evidence. */
type PooledSample = ThroughputSample & { pool: PrismPool }
type PooledOutcome = OutcomeEvent & { pool: PrismPool, key: string }
interface Track {
  firstSeenAt: number, samples: PooledSample[], outcomes: PooledOutcome[], penalties: PenaltyRow[], verified: number,
  pool: PrismPool, transitionPending: boolean
}
/** Readiness history of one orchestrator; the last transition is its current recorded state. */
interface Readiness { firstSeenAt: number, seq: number, transitions: Array<ReadinessTransition & { key: string }> }
interface State {
  loaded: boolean
  tracks: Map<string, Track>
  readiness: Map<string, Readiness>
  scores: Map<string, number>
  /** Attempts read back (or being read), with when: forgotten with their evidence, past the window. */
  seenAttempts: Map<string, number>
}

/**
 * Readiness changes closer than this to the last one recorded replace it instead of adding a row
 * (docs/formulas.md#readiness-transitions). Well under the 5 s between an orchestrator's heartbeats
 * (actors/membership.ts), so an honest one's changes, a heartbeat or more apart, are each recorded.
 */
export const READINESS_MIN_GAP_MS = 2_000

/** Store keys (table `meta`) of the PRISM inputs. Times are zero-padded so keys sort by time. */
export const PRISM_KEYS = {
  prefix: 'prism/',
  /** The final scores of the last close (the epoch machinery's tie-break reads them between closes). */
  scores: 'prism/scores',
  track: (hotkey: string) => `prism/track/${hotkey}`,
  evidence: (hotkey: string, atMs: number, attemptId: string) => `prism/ev/${hotkey}/${pad(atMs)}/${attemptId}`,
  penalty: (hotkey: string, atMs: number, attemptId: string) => `prism/pen/${hotkey}/${pad(atMs)}/${attemptId}`,
  readiness: (hotkey: string) => `prism/rd/${hotkey}`,
  transition: (hotkey: string, atMs: number, seq: number) => `prism/tr/${hotkey}/${pad(atMs)}/${String(seq).padStart(10, '0')}`
}
const pad = (ms: number): string => String(Math.max(0, Math.floor(ms))).padStart(15, '0')

interface TrackRow { firstSeenAt: number, verified: number, pool: PrismPool, transitionPending: boolean }
interface EvidenceRow { atMs: number, pool: PrismPool, verified: boolean, mbps: number | null }
interface ReadinessRow { firstSeenAt: number, seq: number }

/** Rebuilds the verifier's PRISM inputs from the store. */
export async function loadPrismInputs (store: Store): Promise<Pick<State, 'tracks' | 'readiness' | 'seenAttempts' | 'scores'>> {
  const scores = new Map<string, number>(Object.entries(await store.table<Record<string, number>>('meta').get(PRISM_KEYS.scores) ?? {}))
  const tracks = new Map<string, Track>()
  const readiness = new Map<string, Readiness>()
  const seenAttempts = new Map<string, number>()
  const trackOf = (hotkey: string): Track => {
    let t = tracks.get(hotkey)
    if (t === undefined) { t = { firstSeenAt: Infinity, samples: [], outcomes: [], penalties: [], verified: 0, pool: 'qualifying', transitionPending: false }; tracks.set(hotkey, t) }
    return t
  }
  const readinessOf = (hotkey: string): Readiness => {
    let r = readiness.get(hotkey)
    if (r === undefined) { r = { firstSeenAt: Infinity, seq: 0, transitions: [] }; readiness.set(hotkey, r) }
    return r
  }
  for await (const [key, value] of store.table<unknown>('meta').entries(prefixRange(PRISM_KEYS.prefix))) {
    const [, kind, hotkey, , attemptId] = key.split('/')
    if (hotkey === undefined) continue
    switch (kind) {
      case 'track': Object.assign(trackOf(hotkey), value as TrackRow); break
      case 'ev': {
        const e = value as EvidenceRow
        const t = trackOf(hotkey)
        t.outcomes.push(e.verified ? { atMs: e.atMs, verified: 1, pool: e.pool, key } : { atMs: e.atMs, failed: 1, pool: e.pool, key })
        if (e.mbps !== null) t.samples.push({ atMs: e.atMs, mbps: e.mbps, pool: e.pool })
        if (attemptId !== undefined) seenAttempts.set(attemptId, e.atMs)
        break
      }
      case 'pen': trackOf(hotkey).penalties.push(value as PenaltyRow); break
      case 'rd': Object.assign(readinessOf(hotkey), value as ReadinessRow); break
      case 'tr': readinessOf(hotkey).transitions.push({ ...(value as ReadinessTransition), key }); break
    }
  }
  // Rows whose header never made it (or was pruned) still score: they start when their evidence starts.
  for (const t of tracks.values()) if (t.firstSeenAt === Infinity) t.firstSeenAt = Math.min(...t.outcomes.map(o => o.atMs), ...t.penalties.map(p => p.createdAtMs))
  for (const r of readiness.values()) if (r.firstSeenAt === Infinity) r.firstSeenAt = r.transitions[0]?.atMs ?? 0
  return { tracks, readiness, seenAttempts, scores }
}

export interface VerifierDeps {
  env: Env
  self: string
  net: Network
  /** Where the PRISM inputs are kept across restarts. */
  store: Store
  reader: RangeReader
  evidence: EvidenceSink
  /** Fraction of deliveries read back (1 in the devnet); decided per attempt from its id, so replayable. */
  sampleRate: number
  /** Whether an orchestrator is connected and has workers now (PRISM readiness). */
  readiness (hotkey: string): { ready: boolean, connected: boolean }
  /** Every PRISM component of an epoch's computation, once stored (the simulator's metrics read them). */
  onPrism? (epoch: number, prism: readonly PrismComponents[]): void
  /**
   * Read-backs one coordinator may have in flight at once; more are answered `unreadable` (`busy`) at
   * once, and that coordinator checks those deliveries itself. Unbounded without it (the simulator).
   */
  maxReadsPerCoordinator?: number
}

export interface Verifier { ref: Ref<VerifierMsg>, scoreOf (hotkey: string): number }

/** Deterministic sampling: the attempt id's first 8 hex digits as a fraction of 2^32. */
export function sampled (attemptId: string, rate: number): boolean {
  if (rate >= 1) return true
  if (rate <= 0) return false
  return parseInt(attemptId.replaceAll('-', '').slice(0, 8), 16) / 0x1_0000_0000 < rate
}

export function startVerifier (parent: Ref<any>, deps: VerifierDeps): Verifier {
  const { env, net, store } = deps
  const log = env.logger.child({ component: 'verifier' })
  let self: Ref<VerifierMsg>
  let latest = new Map<string, number>()
  // Read-backs in flight per coordinator (outside the state: a restart of the actor does not end them).
  const reading = new Map<string, number>()
  const readsCap = deps.maxReadsPerCoordinator ?? Infinity
  const readEnded = (from: string): void => {
    const left = (reading.get(from) ?? 1) - 1
    if (left > 0) reading.set(from, left); else reading.delete(from)
  }

  const track = (state: State, hotkey: string, ops: StoreOp[]): Track => {
    let t = state.tracks.get(hotkey)
    if (t === undefined) {
      t = { firstSeenAt: env.clock.now(), samples: [], outcomes: [], penalties: [], verified: 0, pool: 'qualifying', transitionPending: false }
      state.tracks.set(hotkey, t)
      ops.push(trackOp(hotkey, t))
    }
    return t
  }
  const trackOp = (hotkey: string, t: Track): StoreOp =>
    ({ type: 'put', table: 'meta', key: PRISM_KEYS.track(hotkey), value: { firstSeenAt: t.firstSeenAt, verified: t.verified, pool: t.pool, transitionPending: t.transitionPending } satisfies TrackRow })

  /** Appends a transition when the state changed; the store ops that make it durable go to `ops`. */
  const observe = (state: State, hotkey: string, atMs: number, ready: boolean, connected: boolean, ops: StoreOp[]): void => {
    let r = state.readiness.get(hotkey)
    if (r === undefined) { r = { firstSeenAt: atMs, seq: 0, transitions: [] }; state.readiness.set(hotkey, r) }
    const last = r.transitions.at(-1)
    if (last !== undefined && last.ready === ready && last.connected === connected) return
    if (last !== undefined && atMs - last.atMs < READINESS_MIN_GAP_MS) {
      // Within the gap of the last change: it is undone (back to the state before it) or takes the new
      // state, never a row more. An orchestrator flipping its worker count 0/1 in every heartbeat cannot
      // grow this history (kept a day) by a row and two writes per frame; the state it was in is off by
      // less than the gap per change.
      const before = r.transitions.at(-2)
      if (before !== undefined && before.ready === ready && before.connected === connected) {
        r.transitions.pop()
        ops.push({ type: 'del', table: 'meta', key: last.key })
      } else {
        last.ready = ready
        last.connected = connected
        ops.push({ type: 'put', table: 'meta', key: last.key, value: { atMs: last.atMs, ready, connected } satisfies ReadinessTransition })
      }
      log.debug({ orchestrator: hotkey, ready, connected, atMs, event: 'readiness_transition' }, 'orchestrator readiness changed (within the gap of the last change)')
      return
    }
    // Never before the last recorded one: the walk sorts by time, and a late message must not reorder history.
    const at = Math.max(atMs, last?.atMs ?? -Infinity)
    r.seq++
    const key = PRISM_KEYS.transition(hotkey, at, r.seq)
    r.transitions.push({ atMs: at, ready, connected, key })
    ops.push({ type: 'put', table: 'meta', key: PRISM_KEYS.readiness(hotkey), value: { firstSeenAt: r.firstSeenAt, seq: r.seq } satisfies ReadinessRow })
    ops.push({ type: 'put', table: 'meta', key, value: { atMs: at, ready, connected } satisfies ReadinessTransition })
    log.debug({ orchestrator: hotkey, ready, connected, atMs: at, event: 'readiness_transition' }, 'orchestrator readiness changed')
  }

  const handler = async (state: State, msg: VerifierMsg): Promise<State> => {
    if (!state.loaded) {
      // First message since start (or since a crash reset the state): rebuild from the store.
      state = { ...state, ...await loadPrismInputs(store), loaded: true }
      latest = new Map(state.scores)
      log.info({ orchestrators: state.tracks.size, event: 'prism_inputs_loaded' }, 'PRISM inputs rebuilt from the store')
    }
    switch (msg.type) {
      case 'request': {
        const r = msg.body
        if (state.seenAttempts.has(r.attemptId)) return state
        if (!sampled(r.attemptId, deps.sampleRate)) {
          net.send(msg.from, 'verify_verdict', { transferId: r.transferId, attemptId: r.attemptId, chunkIndex: r.chunkIndex, verdict: 'unreadable', sha256: null, detail: 'not_sampled' })
          return state
        }
        const inFlight = reading.get(msg.from) ?? 0
        if (inFlight >= readsCap) {
          net.send(msg.from, 'verify_verdict', { transferId: r.transferId, attemptId: r.attemptId, chunkIndex: r.chunkIndex, verdict: 'unreadable', sha256: null, detail: 'busy' })
          return state
        }
        reading.set(msg.from, inFlight + 1)
        state.seenAttempts.set(r.attemptId, env.clock.now())
        // The place is given back as the read ends, before the actor hears of it: a message the actor
        // fails to handle (a reset while it reloads its state) cannot keep the place.
        Promise.resolve().then(() => deps.reader.sha256Of(r.read, r.length)).finally(() => { readEnded(msg.from) }).then(
          res => tell(self, { type: 'read', from: msg.from, body: r, workerUid: msg.workerUid, sha256: res.bytes === r.length ? res.sha256 : null, error: res.bytes === r.length ? null : `read ${res.bytes} bytes, expected ${r.length}` }),
          (err: (Error & { code?: unknown }) | null | undefined) => tell(self, { type: 'read', from: msg.from, body: r, workerUid: msg.workerUid, sha256: null, error: (typeof err?.code === 'string' ? err.code : String(err?.message ?? err)).slice(0, 200) })
        ).catch((err: unknown) => { log.warn({ err: String((err as Error | null)?.message ?? err) }, 'a read-back\'s result could not be handled') })
        return state
      }
      case 'read': {
        const r = msg.body
        const now = env.clock.now()
        if (msg.sha256 === null) {
          // Could not read: no verdict on the worker; the coordinator checks for itself.
          log.warn({ transferId: r.transferId, chunk: r.chunkIndex, error: msg.error }, 'read-back failed')
          net.send(msg.from, 'verify_verdict', { transferId: r.transferId, attemptId: r.attemptId, chunkIndex: r.chunkIndex, verdict: 'unreadable', sha256: null, detail: msg.error })
          state.seenAttempts.delete(r.attemptId)
          return state
        }
        const verdict = msg.sha256 === r.sha256 ? 'verified' as const : 'mismatch' as const
        const ops: StoreOp[] = []
        const t = track(state, r.orchestrator, ops)
        const mbps = verdict === 'verified' && r.trustedDurationMs > 0 ? r.length * MBPS / (r.trustedDurationMs / 1000) : null
        const key = PRISM_KEYS.evidence(r.orchestrator, now, r.attemptId)
        if (verdict === 'verified') {
          t.verified++
          t.outcomes.push({ atMs: now, verified: 1, pool: t.pool, key })
          if (mbps !== null) t.samples.push({ atMs: now, mbps, pool: t.pool })
          ops.push(trackOp(r.orchestrator, t))
        } else {
          // The worker wrote the bytes: the penalty is its own (below), and nothing changes for the orchestrator.
        }
        if (verdict === 'verified') ops.push({ type: 'put', table: 'meta', key, value: { atMs: now, pool: t.pool, verified: true, mbps } satisfies EvidenceRow })
        // Durable before anyone hears the verdict: a restart must neither lose nor re-count it.
        await store.batch(ops)
        net.send(msg.from, 'verify_verdict', { transferId: r.transferId, attemptId: r.attemptId, chunkIndex: r.chunkIndex, verdict, sha256: msg.sha256, detail: null })
        if (verdict === 'mismatch') {
          log.warn({ transferId: r.transferId, chunk: r.chunkIndex, orchestrator: r.orchestrator, worker: r.worker, attributable: r.attributable === true, event: 'integrity_chunk_mismatch' }, 'delivered bytes do not match the staged chunk')
          // Only where the bytes are the worker's alone (the coordinator's own built-in sink): a tenant's
          // own destination could serve other bytes than any worker wrote.
          if (r.attributable === true) await deps.evidence.submitPenalties([{ id: `mismatch-${r.attemptId}`, orchestratorHotkey: r.orchestrator, workerHotkey: r.worker, workerUid: msg.workerUid ?? null, kind: 'integrity_chunk_mismatch', createdAtMs: now }])
        }
        await deps.evidence.submitEvidence([{
          taskId: r.taskId, attemptId: r.attemptId, transferId: r.transferId, orchestratorHotkey: r.orchestrator, workerHotkey: r.worker,
          bytes: r.length, verifiedAt: now, durationMs: r.trustedDurationMs, verdict
        }])
        return state
      }
      case 'readiness': {
        const ops: StoreOp[] = []
        observe(state, msg.hotkey, msg.atMs, msg.ready, msg.connected, ops)
        await store.batch(ops)
        return state
      }
      case 'epoch': {
        const now = env.clock.now()
        const horizon = now - EVIDENCE_WINDOW_MS
        for (const [attemptId, at] of state.seenAttempts) if (at < horizon) state.seenAttempts.delete(attemptId)
        const ops: StoreOp[] = []
        const inputs: PrismOrchestratorInput[] = []
        for (const [hotkey, t] of state.tracks) {
          for (const o of t.outcomes) if (o.atMs < horizon) ops.push({ type: 'del', table: 'meta', key: o.key })
          t.samples = t.samples.filter(s => s.atMs >= horizon)
          t.outcomes = t.outcomes.filter(o => o.atMs >= horizon)
          const current = deps.readiness(hotkey)
          observe(state, hotkey, now, current.ready, current.connected, ops)
          const rd = state.readiness.get(hotkey)!
          pruneTransitions(rd, horizon, ops)
          inputs.push({
            id: hotkey, pool: t.pool,
            throughputSamples: t.samples.filter(s => s.pool === t.pool), outcomes: t.outcomes.filter(o => o.pool === t.pool),
            ready: current.ready, connected: current.connected, transitions: rd.transitions, penalties: t.penalties,
            lifetimeVerifiedTasks: t.verified, ageStartMs: Math.min(t.firstSeenAt, rd.firstSeenAt), transitionPending: t.transitionPending
          })
        }
        if (inputs.length === 0) return state
        const prism = computePrism({ nowMs: now, orchestrators: inputs })
        const scores: PrismScores['scores'] = []
        for (const p of prism) {
          const t = state.tracks.get(p.id)!
          t.pool = p.nextPool
          // Set on graduation; cleared once the override no longer applies (positive qualified evidence).
          t.transitionPending = p.graduated || (t.transitionPending && p.routingOverrideReason !== null)
          ops.push(trackOp(p.id, t))
          state.scores.set(p.id, p.finalScore)
          scores.push({
            hotkey: p.id, pool: p.nextPool, routingScore: p.routingScore, finalScore: p.finalScore, penaltyMultiplier: p.penaltyMultiplier,
            readinessMultiplier: p.readinessMultiplier, activeTimeRatio: p.activeTimeRatio
          })
        }
        ops.push({ type: 'put', table: 'meta', key: PRISM_KEYS.scores, value: Object.fromEntries(state.scores) })
        await store.batch(ops)
        latest = new Map(state.scores)
        deps.onPrism?.(msg.epoch, prism)
        net.broadcast('prism_scores', { epoch: msg.epoch, computedAt: now, scores })
        log.info({ epoch: msg.epoch, orchestrators: scores.length, event: 'prism_published' }, 'PRISM scores published')
        return state
      }
      case 'scores': {
        msg.reply(new Map(state.scores))
        return state
      }
    }
  }

  self = spawnSupervised<State, VerifierMsg>(parent, 'verifier', env, () => ({ loaded: false, tracks: new Map(), readiness: new Map(), scores: new Map(), seenAttempts: new Map() }), handler)
  tell(self, { type: 'scores', reply: () => {} }) // loads the stored inputs now, not at the first delivery
  return { ref: self, scoreOf: (hotkey) => latest.get(hotkey) ?? 0 }
}

/** Drops transitions older than the window, keeping the last one at or before its start (it carries the state in). */
function pruneTransitions (r: Readiness, horizon: number, ops: StoreOp[]): void {
  let keepFrom = 0
  for (let i = 0; i < r.transitions.length; i++) if (r.transitions[i]!.atMs <= horizon) keepFrom = i
  for (const tr of r.transitions.slice(0, keepFrom)) ops.push({ type: 'del', table: 'meta', key: tr.key })
  r.transitions = r.transitions.slice(keepFrom)
}
