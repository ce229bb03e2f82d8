// What a validator checks of a `verify_request` before it reads anything back: the request must come
// from the coordinator of the attempt, and name the orchestrator and worker that really reported the
// delivery. The proof is the orchestrator's own signed `task_result` frame, addressed to the coordinator,
// which the coordinator forwards: a peer cannot make one up for an orchestrator (it would need that
// orchestrator's key), cannot reuse one of another coordinator (it is addressed to that coordinator),
// and cannot change the attempt, worker or hash it names. See docs/security.md#peers.
import { decodeFrame, MAX_CLOCK_SKEW_MS, type Envelope, type MessageBody } from '../protocol/index.ts'

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

/**
 * Checks a verify request's evidence. Its age is judged against the request's own time (which the
 * messenger has checked against `now`), not against `now` alone: an orchestrator could otherwise sign a
 * result just inside the window, so that it expires in the coordinator's hands and the validator blames
 * the coordinator.
 */
export function checkVerifyRequest (msg: Envelope, now: number): EvidenceCheck {
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
  return { ok: true }
}
