// What a validator checks of a `verify_request` before it reads anything back: the request must come
// from the coordinator of the attempt, and name the orchestrator and worker that really reported the
// delivery. The proof is the orchestrator's own signed `task_result` frame, addressed to the coordinator,
// which the coordinator forwards: a peer cannot make one up for an orchestrator (it would need that
// orchestrator's key), cannot reuse one of another coordinator (it is addressed to that coordinator),
// and cannot change the attempt, worker or hash it names. Inside it, the worker's own signed result
// (checkWorkerClaim) shows the worker said it delivered those bytes. See docs/security.md#peers.
import { decodeFrame, MAX_CLOCK_SKEW_MS, type Envelope, type MessageBody, type RelayedAccept } from '../protocol/index.ts'

/**
 * How much older than its verify request the evidence may be: a result the coordinator took in at the
 * edge of the frame window (MAX_CLOCK_SKEW_MS old), plus as long again for the coordinator's own delay.
 */
export const EVIDENCE_MAX_AGE_MS = 2 * MAX_CLOCK_SKEW_MS

/**
 * `blameless`: refused for the evidence's age, which the orchestrator that signed it chose and the
 * coordinator forwarding it cannot help; such a refusal must not cost the coordinator score.
 */
export type EvidenceCheck = { ok: true } | { ok: false, reason: string, blameless?: true }
/** A verify request's evidence that holds, and the move's duration its worker signed (ms). */
export type VerifyEvidence = { ok: true, workerDurationMs: number } | { ok: false, reason: string, blameless?: true }

/**
 * Checks a verify request's evidence. Its age is judged against the request's own time (which the
 * messenger has checked against `now`), not against `now` alone: an orchestrator could otherwise sign a
 * result just inside the window, so that it expires in the coordinator's hands and the validator blames
 * the coordinator.
 */
export function checkVerifyRequest (msg: Envelope, now: number): VerifyEvidence {
  const req = msg.body as MessageBody<'verify_request'>
  if (req.evidence === undefined) return { ok: false, reason: 'no evidence of the delivery' }
  const res = decodeFrame(Buffer.from(req.evidence, 'base64'))
  if (!res.ok) return { ok: false, reason: `evidence ${res.reason}: ${res.detail}` }
  const ev = res.msg
  if (msg.ts - ev.ts > EVIDENCE_MAX_AGE_MS || ev.ts - Math.max(msg.ts, now) > MAX_CLOCK_SKEW_MS) {
    return { ok: false, reason: `evidence signed at ${ev.ts}, ${msg.ts - ev.ts} ms before the request`, blameless: true }
  }
  if (ev.type !== 'task_result') return { ok: false, reason: `evidence is a ${ev.type}` }
  if (ev.from !== req.orchestrator) return { ok: false, reason: 'evidence is not signed by the named orchestrator' }
  if (ev.to !== msg.from) return { ok: false, reason: 'evidence was sent to another coordinator' }
  const r = ev.body as MessageBody<'task_result'>
  if (!r.success || r.transferId !== req.transferId || r.taskId !== req.taskId || r.attemptId !== req.attemptId || r.worker !== req.worker || r.sha256 !== req.sha256) {
    return { ok: false, reason: 'evidence describes another delivery' }
  }
  // The worker answers for the bytes (a mismatch is a penalty on its own hotkey), so it must have said
  // so itself: its signed result, addressed to the orchestrator that relayed it. A coordinator checks
  // the same before it accepts the delivery, so a request without it is the coordinator's fault.
  const claim = checkWorkerClaim(r, ev.from, msg.from, ev.ts)
  if (!claim.ok) return { ok: false, reason: `worker claim: ${claim.reason}` }
  return { ok: true, workerDurationMs: r.durationMs }
}

/** A worker's own signed frame, relayed as base64: of `type`, signed by `worker`, addressed to the orchestrator relaying it. */
function workerFrame (b64: string | undefined, type: 'task_result' | 'task_accepted', worker: string, relayedBy: string): Envelope | { reason: string } {
  if (b64 === undefined) return { reason: 'none' }
  const res = decodeFrame(Buffer.from(b64, 'base64'))
  if (!res.ok) return { reason: `${res.reason}: ${res.detail}` }
  const w = res.msg
  if (w.type !== type) return { reason: `a ${w.type}` }
  if (w.from !== worker) return { reason: 'not signed by the named worker' }
  if (w.to !== relayedBy) return { reason: 'sent to another orchestrator' }
  return w
}

/** Every field a worker's result states; the relayed copy must state the same. */
const CLAIM_FIELDS = ['taskId', 'attemptId', 'transferId', 'worker', 'success', 'bytes', 'durationMs', 'sha256', 'etag', 'error', 'via', 'coordinator'] as const satisfies ReadonlyArray<keyof MessageBody<'task_result'>>

/** The most a worker's claim may be older or younger than the orchestrator's frame relaying it. */
export const CLAIM_MAX_SKEW_MS = EVIDENCE_MAX_AGE_MS

export type ClaimCheck = { ok: true } | { ok: false, reason: string }

/**
 * Checks that a relayed `task_result` is what its worker said: `workerClaim` is the worker's own signed
 * frame, addressed to `relayedBy` (the orchestrator it works for), naming `coordinator` as the one the
 * delivery was for, and stating every field the relayed copy states. An orchestrator cannot make one up
 * for a worker (it would need the worker's key), take one a worker sent to another orchestrator, use it
 * with another coordinator, or change what the worker said it delivered. `relayedAt` (the relaying
 * frame's time, at a validator): the claim must be within CLAIM_MAX_SKEW_MS of it, so an old claim
 * cannot be wrapped in fresh evidence.
 */
export function checkWorkerClaim (relayed: MessageBody<'task_result'>, relayedBy: string, coordinator: string, relayedAt?: number): ClaimCheck {
  const w = workerFrame(relayed.workerClaim, 'task_result', relayed.worker, relayedBy)
  if ('reason' in w) return { ok: false, reason: w.reason }
  if (relayedAt !== undefined && Math.abs(relayedAt - w.ts) > CLAIM_MAX_SKEW_MS) return { ok: false, reason: `signed ${relayedAt - w.ts} ms before its relay` }
  const said = w.body as MessageBody<'task_result'>
  if (said.workerClaim !== undefined) return { ok: false, reason: 'a relayed copy' }
  if (said.coordinator !== coordinator) return { ok: false, reason: 'for another coordinator' }
  for (const k of CLAIM_FIELDS) if (said[k] !== relayed[k]) return { ok: false, reason: `${k} differs from what the worker said` }
  return { ok: true }
}

/** Every field a worker's accept states; the relayed copy must state the same. */
const ACCEPT_FIELDS = ['transferId', 'attemptId', 'taskId', 'worker', 'coordinator'] as const satisfies ReadonlyArray<keyof MessageBody<'task_accepted'>>

/**
 * Checks that a relayed `task_accepted` is what its worker said: `workerAccept` is the worker's own
 * signed frame, addressed to `relayedBy` (the orchestrator it works for), naming `coordinator` and
 * stating the same attempt. An orchestrator cannot make one up for a worker, take one a worker sent to
 * another orchestrator, or move it to another attempt. No age limit: an attempt id is used once, so the
 * word is about that attempt whenever it was said.
 */
export function checkWorkerAccept (relayed: RelayedAccept, relayedBy: string, coordinator: string): ClaimCheck {
  const w = workerFrame(relayed.workerAccept, 'task_accepted', relayed.worker, relayedBy)
  if ('reason' in w) return { ok: false, reason: w.reason }
  const said = w.body as MessageBody<'task_accepted'>
  if (said.coordinator !== coordinator) return { ok: false, reason: 'for another coordinator' }
  for (const k of ACCEPT_FIELDS) if (said[k] !== relayed[k]) return { ok: false, reason: `${k} differs from what the worker said` }
  return { ok: true }
}
