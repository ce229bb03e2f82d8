// A coordinator's signature on each task offer (docs/security.md#peers). Offers reach a worker through
// its orchestrator, which could otherwise rewrite them: point an offer at another chunk's source, hash
// or target, so that the honest worker's signed result meets a failed check and the worker is struck
// for it. Signed, an offer is the coordinator's word from end to end; the worker takes no other.
//
// Signed bytes: the UTF-8 of a JSON array, in this order (JSON quotes every string, so no two different
// offers share them, whatever their URLs hold):
//   ["bwnet-offer/v1", transferId, taskId, attemptId, chunkIndex, length, sha256,
//    source.coordinator, source.path, source.url,
//    target.method, target.url, [[header, value], ...] sorted by header, target.expiresAt, expiresAt]
// `excludeWorkers` is routing advice for the orchestrator and is not signed.
import { sign, verify, toHex, fromHex, type KeyPair } from './keys.ts'
import type { TaskOffer } from './messages/transfer.ts'

export const OFFER_SIGNATURE_VERSION = 'bwnet-offer/v1'
const ENCODER = new TextEncoder()

function canonical (o: Omit<TaskOffer, 'signature'>): Uint8Array {
  const headers = Object.keys(o.target.headers).sort().map(k => [k, o.target.headers[k]])
  return ENCODER.encode(JSON.stringify([
    OFFER_SIGNATURE_VERSION, o.transferId, o.taskId, o.attemptId, o.chunkIndex, o.length, o.sha256,
    o.source.coordinator, o.source.path, o.source.url,
    o.target.method, o.target.url, headers, o.target.expiresAt, o.expiresAt
  ]))
}

/** The coordinator's signature over an offer it made (its own key is `source.coordinator`), hex. */
export function signOffer (key: KeyPair, offer: Omit<TaskOffer, 'signature'>): string {
  return toHex(sign(key, canonical(offer)))
}

/** Whether the offer carries its coordinator's signature over exactly these terms. */
export function offerSigned (offer: TaskOffer): boolean {
  if (offer.signature === undefined) return false
  try {
    return verify(offer.source.coordinator, canonical(offer), fromHex(offer.signature))
  } catch {
    return false
  }
}
