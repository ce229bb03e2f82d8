/** Bumped on any change to a message shape or to framing; peers on another version are dropped. */
// 2: announces bound to the connection's Noise keys; PRISM scores carry readiness.
// 3: a relayed delivery carries the worker's own signed result (task_result.workerClaim, naming its
//    coordinator); offers carry their coordinator's signature (task_offer.signature); a verify request
//    says whether the bytes are the worker's alone (verify_request.attributable).
// 4: a worker's signed word that it holds an attempt (task_accepted), relayed to the coordinator in
//    batches (task_accepts): a worker is struck for holding work without moving it only on its own word.
// 5: an orchestrator tells its peers which attachments it revoked (attachments_revoked).
export const PROTOCOL_VERSION = 5

/** A control frame larger than this is refused before it is decoded (bulk bytes use their own channel). */
export const MAX_FRAME_BYTES = 256 * 1024 // 256 KiB
