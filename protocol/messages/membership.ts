// Membership: who is on the network, in which role, with what capacity.
import { Type, type Static } from '@sinclair/typebox'
import { Hotkey, Role } from './common.ts'

export const Capacity = Type.Object({
  /** Tasks the node can run at once (workers) or workers it accepts (orchestrators). */
  slots: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
  /** Bandwidth the operator claims; a claim, never used as evidence. */
  bandwidthMbps: Type.Number({ minimum: 0, maximum: 1_000_000 })
}, { additionalProperties: false })
export type Capacity = Static<typeof Capacity>

/** Sent once on every new connection and whenever the node's own facts change. */
export const Announce = Type.Object({
  role: Role,
  hotkey: Hotkey,
  software: Type.String({ maxLength: 64 }),
  capacity: Capacity,
  /** Base URL of the node's HTTP data endpoint, when it serves one (orchestrators). */
  dataUrl: Type.Union([Type.String({ maxLength: 512 }), Type.Null()]),
  /** Orchestrator a worker attaches to (its hotkey), or null. */
  attachTo: Type.Union([Hotkey, Type.Null()])
}, { additionalProperties: false })
export type Announce = Static<typeof Announce>

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
