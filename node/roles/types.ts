// What a role's wiring gets from the node, and what it hands back.
import type { StorageGuard } from '../storage.ts'
import type { ActorHealth } from '../../actors/runtime.ts'
import type { AttachmentIssuer } from '../attachments.ts'
import type { FastifyInstance } from 'fastify'
import type { Role, KeyPair } from '../../protocol/index.ts'
import type { Clock, Logger, Store } from '../../actors/ports.ts'
import type { IngestingBlobStore } from '../adapters/blob-store.ts'
import type { SystemRef } from '../../actors/runtime.ts'
import type { Membership } from '../../actors/membership.ts'
import type { Messenger } from '../messenger.ts'
import type { SwarmTransport } from '../adapters/swarm-transport.ts'
import type { ApiDeps } from '../../api/deps.ts'
import type { NodeConfig } from '../config.ts'
import type { NodeMetrics } from '../metrics.ts'
import type { PeerAuth } from '../peer-auth.ts'
import type { DevChain } from '../../actors/chain/index.ts'

export interface RoleContext {
  role: Role
  key: KeyPair
  config: NodeConfig
  clock: Clock
  logger: Logger
  system: SystemRef
  store: Store
  blobs: IngestingBlobStore
  /** Free space on the data directory as a state (node/storage.ts). */
  storage?: StorageGuard
  /** Hears actor crashes and recoveries (the node's readiness). */
  health?: ActorHealth
  /** True once the node has begun to stop: an actor failing then is stopped, not restarted (actors/runtime.ts). */
  stopping?: () => boolean
  messenger: Messenger
  transport: SwarmTransport
  membership: Membership
  /** Who may do what: standings from the chain registrations. */
  auth: PeerAuth
  dataDir: string
  /** Registers a callback for peers (by hotkey) whose connection closed. */
  onPeerDown (fn: (hotkey: string) => void): void
  /** This node's metrics: the wiring meters the actors' ports with it (node/metrics-ports.ts). */
  metrics?: NodeMetrics
}

export interface RoleHandle {
  /** Extra API dependencies this role provides (orchestrators). */
  apiDeps?: Partial<ApiDeps>
  /** Routes the role mounts on the node's HTTP server. */
  routes?: (app: FastifyInstance, deps: ApiDeps) => Promise<void>
  /** Load reported in heartbeats. */
  load?: () => number
  /** Workers attached (orchestrators), reported in heartbeats. */
  workers?: () => number
  /** Called once the HTTP server listens, with its URL. */
  listening?: (url: string) => Promise<void>
  /** The dev chain this node hosts, if any (the devnet registers its own nodes on it). */
  devChain?: DevChain
  /** The attachments this orchestrator issued (node/attachments.ts). */
  attachments?: AttachmentIssuer
  /** Revokes a worker's attachment here: refused at once, its session ended (orchestrators). */
  /** Revokes a worker durably (node/worker-revocations.ts); resolves once the revocation is on disk and applied. */
  revokeWorker?: (worker: string) => Promise<void>
  stop (): Promise<void>
}
