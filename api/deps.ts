// What the API needs from the node. Each capability the node wires in is one field here; routes
// reach actors only through these, never by importing them.
import type { FastifyBaseLogger } from 'fastify'
import type { Role } from '../protocol/index.ts'
import type { AccountsService } from './accounts/service.ts'
import type { Plan } from './accounts/model.ts'
import type { TransferService, DestinationService } from './transfers.ts'
import type { TelemetryReader } from '../actors/telemetry/ports.ts'
import type { AuditReader } from '../actors/telemetry/audit.ts'
import type { TransferEvent } from '../protocol/index.ts'
import type { LiveLimits } from './live/socket.ts'

export interface PeerSummary {
  hotkey: string
  role: Role
  software: string
  lastSeenAt: string
  attachTo: string | null
}

export interface MembershipView {
  /** Nodes known on the network by role, this node included. */
  counts (): Promise<Record<Role, number>>
  peers (): Promise<PeerSummary[]>
}

export interface ApiDeps {
  logger: FastifyBaseLogger
  /** A connection silent this long in both directions is closed (default SOCKET_IDLE_TIMEOUT_MS, api/app.ts). */
  socketIdleTimeoutMs?: number
  /** A body (not a chunk's) not read in whole this long after its request began closes its connection (default BODY_DEADLINE_MS, api/body-pace.ts). */
  bodyDeadlineMs?: number
  self: { hotkey: string, role: Role, software: string }
  membership: MembershipView
  /** True once the store is open, the swarm joined and the actor system up. */
  ready (): boolean
  /** Why the node is not ready now (an actor down, the store failing writes); empty or absent when it is. */
  notReady? (): string[]
  /** Organizations, API keys and prepaid credits (prices live on the service). */
  accounts: AccountsService
  /** Requests per minute by plan; defaults to Free 60, Pro 300, Enterprise unlimited. */
  planRequestsPerMinute?: Partial<Record<Plan, number | null>>
  /** Transfer and destination routes (orchestrators). */
  transfers?: TransferService
  destinations?: DestinationService
  /** Telemetry routes /v1/telemetry/* and the free /v1/audit/* route (orchestrators). */
  telemetry?: TelemetryReader
  /** Dashboard audit routes /api/audit/* (orchestrators). */
  audit?: AuditReader
  /** Transfer events for GET /transfers/{id}/events (orchestrators, with `transfers`). */
  transferEvents?: TransferEventFeed
  /** Limits of the live (WebSocket) routes; defaults in api/live/socket.ts. */
  live?: Partial<LiveLimits>
}

/** One worker as its orchestrator sees it: attached now (by an attachment it issued) and/or revoked. */
export interface WorkerAttachmentView {
  hotkey: string
  /** Holds a live attachment from this orchestrator (connected, or gone with it still valid). */
  attached: boolean
  /** When that attachment expires (ISO 8601); null when it holds none. */
  expiresAt: string | null
  /** The operator revoked it: it is refused here until reinstated, across restarts. */
  revoked: boolean
  revokedAt: string | null
}

/** The operator's control of the workers an orchestrator attaches (docs/node.md#attaching-workers). */
export interface WorkerAttachments {
  /** Attached and revoked workers, by hotkey. */
  list (): Promise<WorkerAttachmentView[]>
  /** Revokes the worker (durably, before it answers): its attachment is refused at once and it is attached no more. */
  revoke (hotkey: string): Promise<WorkerAttachmentView>
  /** Lifts a revocation; `wasRevoked` false when there was none. */
  reinstate (hotkey: string): Promise<{ view: WorkerAttachmentView, wasRevoked: boolean }>
}

/** The coordinator's per-transfer events: the persisted log and the live feed. */
export interface TransferEventFeed {
  /** Calls `fn` with each event of the transfer published from now on (once durable); returns the unsubscribe. */
  subscribe (transferId: string, fn: (e: TransferEvent) => void): () => void
  /** The stored events after `after`, in order, at most `limit`. */
  read (transferId: string, after: number, limit: number): Promise<TransferEvent[]>
}
