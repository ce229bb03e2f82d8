// The validator's verification: for every delivery a coordinator asks about, read the chunk back from
// the destination (through a short-lived read URL, never its credentials), compare sha256 with the
// staged chunk, and answer with a signed verdict. Verdicts become epoch evidence; a mismatch becomes an
// `integrity_chunk_mismatch` penalty on the worker that delivered the bytes (its own hotkey and UID),
// not on the orchestrator it was attached to. After each epoch close it computes PRISM from what it
// verified and publishes the routing scores.
import type { Network } from '../ports.ts'
import { spawnSupervised, tell, type Env, type Ref } from '../runtime.ts'
import { computePrism, DAY_MS, type PrismOrchestratorInput, type PrismPool, type ThroughputSample, type OutcomeEvent, type PenaltyRow } from '../domain/prism.ts'
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
  | { type: 'epoch', epoch: number }
  | { type: 'scores', reply: (s: Map<string, number>) => void }

interface Track { firstSeenAt: number, samples: ThroughputSample[], outcomes: OutcomeEvent[], penalties: PenaltyRow[], verified: number, pool: PrismPool }
interface State { tracks: Map<string, Track>, scores: Map<string, number>, seenAttempts: Set<string> }

export interface VerifierDeps {
  env: Env
  self: string
  net: Network
  reader: RangeReader
  evidence: EvidenceSink
  /** Fraction of deliveries read back (1 in the devnet); decided per attempt from its id, so replayable. */
  sampleRate: number
  /** Whether an orchestrator is connected and has workers now (PRISM readiness). */
  readiness (hotkey: string): { ready: boolean, connected: boolean }
}

export interface Verifier { ref: Ref<VerifierMsg>, scoreOf (hotkey: string): number }

/** Deterministic sampling: the attempt id's first 8 hex digits as a fraction of 2^32. */
export function sampled (attemptId: string, rate: number): boolean {
  if (rate >= 1) return true
  if (rate <= 0) return false
  return parseInt(attemptId.replaceAll('-', '').slice(0, 8), 16) / 0x1_0000_0000 < rate
}

export function startVerifier (parent: Ref<any>, deps: VerifierDeps): Verifier {
  const { env, net } = deps
  const log = env.logger.child({ component: 'verifier' })
  let self: Ref<VerifierMsg>
  let latest = new Map<string, number>()

  const track = (state: State, hotkey: string): Track => {
    let t = state.tracks.get(hotkey)
    if (t === undefined) {
      t = { firstSeenAt: env.clock.now(), samples: [], outcomes: [], penalties: [], verified: 0, pool: 'qualifying' }
      state.tracks.set(hotkey, t)
    }
    return t
  }

  const handler = async (state: State, msg: VerifierMsg): Promise<State> => {
    switch (msg.type) {
      case 'request': {
        const r = msg.body
        if (state.seenAttempts.has(r.attemptId)) return state
        if (!sampled(r.attemptId, deps.sampleRate)) {
          net.send(msg.from, 'verify_verdict', { transferId: r.transferId, attemptId: r.attemptId, chunkIndex: r.chunkIndex, verdict: 'unreadable', sha256: null, detail: 'not_sampled' })
          return state
        }
        state.seenAttempts.add(r.attemptId)
        deps.reader.sha256Of(r.read, r.length).then(
          res => tell(self, { type: 'read', from: msg.from, body: r, workerUid: msg.workerUid, sha256: res.bytes === r.length ? res.sha256 : null, error: res.bytes === r.length ? null : `read ${res.bytes} bytes, expected ${r.length}` }),
          (err: Error & { code?: string }) => tell(self, { type: 'read', from: msg.from, body: r, workerUid: msg.workerUid, sha256: null, error: (err.code ?? err.message).slice(0, 200) })
        )
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
        net.send(msg.from, 'verify_verdict', { transferId: r.transferId, attemptId: r.attemptId, chunkIndex: r.chunkIndex, verdict, sha256: msg.sha256, detail: null })
        const t = track(state, r.orchestrator)
        if (verdict === 'verified') {
          t.verified++
          t.outcomes.push({ atMs: now, verified: 1 })
          if (r.trustedDurationMs > 0) t.samples.push({ atMs: now, mbps: r.length * MBPS / (r.trustedDurationMs / 1000) })
        } else {
          // The worker wrote the bytes: the penalty is its own, and nothing changes for the orchestrator.
          log.warn({ transferId: r.transferId, chunk: r.chunkIndex, orchestrator: r.orchestrator, worker: r.worker, event: 'integrity_chunk_mismatch' }, 'delivered bytes do not match the staged chunk')
          await deps.evidence.submitPenalties([{ id: `mismatch-${r.attemptId}`, orchestratorHotkey: r.orchestrator, workerHotkey: r.worker, workerUid: msg.workerUid ?? null, kind: 'integrity_chunk_mismatch', createdAtMs: now }])
        }
        await deps.evidence.submitEvidence([{
          taskId: r.taskId, attemptId: r.attemptId, transferId: r.transferId, orchestratorHotkey: r.orchestrator, workerHotkey: r.worker,
          bytes: r.length, verifiedAt: now, durationMs: r.trustedDurationMs, verdict
        }])
        return state
      }
      case 'epoch': {
        const now = env.clock.now()
        const inputs: PrismOrchestratorInput[] = []
        for (const [hotkey, t] of state.tracks) {
          t.samples = t.samples.filter(s => now - s.atMs <= EVIDENCE_WINDOW_MS)
          t.outcomes = t.outcomes.filter(o => now - o.atMs <= EVIDENCE_WINDOW_MS)
          const r = deps.readiness(hotkey)
          inputs.push({ id: hotkey, pool: t.pool, throughputSamples: t.samples, outcomes: t.outcomes, ready: r.ready, connected: r.connected, transitions: [], penalties: t.penalties, lifetimeVerifiedTasks: t.verified, ageStartMs: t.firstSeenAt })
        }
        if (inputs.length === 0) return state
        const prism = computePrism({ nowMs: now, orchestrators: inputs })
        const scores: PrismScores['scores'] = []
        for (const p of prism) {
          state.tracks.get(p.id)!.pool = p.nextPool
          state.scores.set(p.id, p.finalScore)
          scores.push({ hotkey: p.id, pool: p.nextPool, routingScore: p.routingScore, finalScore: p.finalScore, penaltyMultiplier: p.penaltyMultiplier })
        }
        latest = new Map(state.scores)
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

  self = spawnSupervised<State, VerifierMsg>(parent, 'verifier', env, () => ({ tracks: new Map(), scores: new Map(), seenAttempts: new Set() }), handler)
  return { ref: self, scoreOf: (hotkey) => latest.get(hotkey) ?? 0 }
}
