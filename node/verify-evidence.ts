// What a validator checks of a `verify_request` before it reads anything back: the request must come
// from the coordinator of the attempt, and name the orchestrator and worker that really reported the
// delivery. The proof is the orchestrator's own signed `task_result` frame, addressed to the coordinator,
// which the coordinator forwards: a peer cannot make one up for an orchestrator (it would need that
// orchestrator's key), cannot reuse one of another coordinator (it is addressed to that coordinator),
// and cannot change the attempt, worker or hash it names. See docs/security.md#peers.
import { decodeFrame, type Envelope, type MessageBody } from '../protocol/index.ts'

export type EvidenceCheck = { ok: true } | { ok: false, reason: string }

/** Checks a verify request's evidence; `now` bounds the evidence frame's freshness like any frame. */
export function checkVerifyRequest (msg: Envelope, now: number): EvidenceCheck {
  const req = msg.body as MessageBody<'verify_request'>
  if (req.evidence === undefined) return { ok: false, reason: 'no evidence of the delivery' }
  const res = decodeFrame(Buffer.from(req.evidence, 'base64'), { now })
  if (!res.ok) return { ok: false, reason: `evidence ${res.reason}: ${res.detail}` }
  const ev = res.msg
  if (ev.type !== 'task_result') return { ok: false, reason: `evidence is a ${ev.type}` }
  if (ev.from !== req.orchestrator) return { ok: false, reason: 'evidence is not signed by the named orchestrator' }
  if (ev.to !== msg.from) return { ok: false, reason: 'evidence was sent to another coordinator' }
  const r = ev.body as MessageBody<'task_result'>
  if (!r.success || r.transferId !== req.transferId || r.taskId !== req.taskId || r.attemptId !== req.attemptId || r.worker !== req.worker || r.sha256 !== req.sha256) {
    return { ok: false, reason: 'evidence describes another delivery' }
  }
  return { ok: true }
}
