// Membership: who is on the network, in which role, with what capacity.
import { Type, type Static } from '@sinclair/typebox'
import { Hotkey, Role } from './common.ts'
import { Attachment } from './attachment.ts'

export const Capacity = Type.Object({
  /** Tasks the node can run at once (workers) or workers it accepts (orchestrators). */
  slots: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
  /** Bandwidth the operator claims; a claim, never used as evidence. */
  bandwidthMbps: Type.Number({ minimum: 0, maximum: 1_000_000 })
}, { additionalProperties: false })
export type Capacity = Static<typeof Capacity>

/** A Noise (swarm) public key in hex: what a connection is authenticated with. */
export const NoiseKeyHex = Type.String({ pattern: '^[0-9a-f]{64}$' })

/**
 * Sent once on every new connection, to that connection only. It binds the hotkey to the connection:
 * it names the sender's own Noise key and the recipient's, so a captured announce replayed on any other
 * connection is refused, and its nonce (with the frame id) makes every announce unique. The role is a
 * claim: what a hotkey may do comes from its chain registration, never from here.
 */
export const Announce = Type.Object({
  role: Role,
  hotkey: Hotkey,
  software: Type.String({ maxLength: 64 }),
  capacity: Capacity,
  /** Base URL of the node's HTTP data endpoint, when it serves one (orchestrators). */
  dataUrl: Type.Union([Type.String({ maxLength: 512 }), Type.Null()]),
  /** Orchestrator a worker attaches to (its hotkey), or null. */
  attachTo: Type.Union([Hotkey, Type.Null()]),
  /** A worker without a chain registration: its orchestrator's signed attachment (protocol/attachment.ts). */
  attachment: Type.Optional(Attachment),
  /** The sender's Noise public key: the connection this announce arrives on must be authenticated by it. */
  noiseKey: NoiseKeyHex,
  /** The recipient's Noise public key: the announce is for that connection only. */
  peerNoiseKey: NoiseKeyHex,
  nonce: Type.String({ pattern: '^[0-9a-f]{32}$' })
}, { additionalProperties: false })
export type Announce = Static<typeof Announce>
/** What a node says about itself; the messenger adds the connection binding (noise keys, nonce). */
export type AnnounceFacts = Omit<Announce, 'noiseKey' | 'peerNoiseKey' | 'nonce'>

/** Periodic liveness; peers that miss several are dropped from the view. */
export const Heartbeat = Type.Object({
  role: Role,
  seq: Type.Integer({ minimum: 0 }),
  capacity: Capacity,
  load: Type.Integer({ minimum: 0 }),
  /** Workers attached to this orchestrator (0 for other roles): coordinators route only to orchestrators with workers. */
  workers: Type.Integer({ minimum: 0 })
}, { additionalProperties: false })
export type Heartbeat = Static<typeof Heartbeat>
