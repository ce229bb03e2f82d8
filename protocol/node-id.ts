// Every node's stable UUID: a name-based UUID (RFC 9562 version 5) of its hotkey in bwnet's own
// namespace. Any node computes any other node's id from the hotkey alone, so audit routes resolve an
// orchestrator or worker UUID without a directory, and the id never changes while the hotkey stays.
import { v5 as uuidv5 } from 'uuid'

/** Namespace of node ids (fixed forever: changing it changes every node's id). */
export const NODE_ID_NAMESPACE = '6f1f0b0e-3c6a-5d2e-9a57-62776e65746e'
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The stable UUID of the node holding `hotkey`. */
export function nodeIdOf (hotkey: string): string {
  return uuidv5(`bwnet-node:${hotkey}`, NODE_ID_NAMESPACE)
}
