// The membership view: every peer's role, hotkey, capacity and liveness, built from signed
// announce and heartbeat messages. Each node runs one, whatever its role.
import type { Announce, AnnounceFacts, Heartbeat, Role, Capacity } from '../protocol/index.ts'
import type { Network, Store, Timer } from './ports.ts'
import { spawnSupervised, tell, ask, type Env, type Ref, type Reply } from './runtime.ts'

export const HEARTBEAT_INTERVAL_MS = 5_000 // 5 s
export const PEER_TIMEOUT_MS = 3 * HEARTBEAT_INTERVAL_MS // a peer silent this long leaves the view
export const VIEW_TIMEOUT_MS = 2_000

export interface PeerRecord {
  hotkey: string
  role: Role
  software: string
  capacity: Capacity
  dataUrl: string | null
  attachTo: string | null
  firstSeenAt: number
  lastSeenAt: number
  load: number
  /** Workers attached (orchestrators), from heartbeats. */
  workers: number
}

export interface MembershipSnapshot {
  self: { hotkey: string, role: Role }
  peers: PeerRecord[]
  counts: Record<Role, number>
}

export type MembershipMsg =
  | { type: 'announce', from: string, body: Announce }
  | { type: 'heartbeat', from: string, body: Heartbeat }
  | { type: 'disconnected', hotkey: string }
  | { type: 'tick' }
  /** Sends a heartbeat now (the node's load or attached workers changed). */
  | { type: 'publish' }
  | { type: 'view', reply: Reply<MembershipSnapshot> }

interface State { peers: Map<string, PeerRecord>, seq: number }

const ROLE_TABLE = { orchestrator: 'orchestrators', worker: 'workers', validator: 'validators' } as const

export interface MembershipDeps {
  env: Env
  net: Network
  store: Store
  self: AnnounceFacts
  /** Load figure reported in heartbeats (tasks in flight); 0 when the role has none. */
  load?: () => number
  /** Workers attached to this node (orchestrators). */
  workers?: () => number
}

export interface Membership {
  ref: Ref<MembershipMsg>
  view (): Promise<MembershipSnapshot>
  stop (): void
}

export function startMembership (parent: Ref<any>, deps: MembershipDeps): Membership {
  const { env, net, store, self } = deps
  const log = env.logger.child({ component: 'membership' })

  const handler = async (state: State, msg: MembershipMsg): Promise<State> => {
    const now = env.clock.now()
    switch (msg.type) {
      case 'announce': {
        const prev = state.peers.get(msg.from)
        const rec: PeerRecord = {
          hotkey: msg.from,
          role: msg.body.role,
          software: msg.body.software,
          capacity: msg.body.capacity,
          dataUrl: msg.body.dataUrl,
          attachTo: msg.body.attachTo,
          firstSeenAt: prev?.firstSeenAt ?? now,
          lastSeenAt: now,
          load: prev?.load ?? 0,
          workers: prev?.workers ?? 0
        }
        state.peers.set(msg.from, rec)
        if (prev === undefined) log.info({ peer: msg.from, peerRole: rec.role, event: 'peer_joined' }, 'peer joined')
        await store.table<PeerRecord>(ROLE_TABLE[rec.role]).put(rec.hotkey, rec)
        return state
      }
      case 'heartbeat': {
        let rec = state.peers.get(msg.from)
        if (rec === undefined) {
          // Known from an earlier announce (the view restarts empty after a crash): restore the row.
          rec = await store.table<PeerRecord>(ROLE_TABLE[msg.body.role]).get(msg.from)
          if (rec === undefined) return state // never announced: ignore
          state.peers.set(msg.from, rec)
        }
        rec.lastSeenAt = now
        rec.capacity = msg.body.capacity
        rec.load = msg.body.load
        rec.workers = msg.body.workers
        return state
      }
      case 'disconnected': {
        if (state.peers.delete(msg.hotkey)) log.info({ peer: msg.hotkey, event: 'peer_left' }, 'peer left')
        return state
      }
      case 'tick': {
        for (const [hotkey, rec] of state.peers) {
          if (now - rec.lastSeenAt > PEER_TIMEOUT_MS) {
            state.peers.delete(hotkey)
            log.info({ peer: hotkey, event: 'peer_expired', silentMs: now - rec.lastSeenAt }, 'peer expired')
          }
        }
        state.seq++
        net.broadcast('heartbeat', { role: self.role, seq: state.seq, capacity: self.capacity, load: deps.load?.() ?? 0, workers: deps.workers?.() ?? 0 })
        return state
      }
      case 'publish': {
        state.seq++
        net.broadcast('heartbeat', { role: self.role, seq: state.seq, capacity: self.capacity, load: deps.load?.() ?? 0, workers: deps.workers?.() ?? 0 })
        return state
      }
      case 'view': {
        const counts: Record<Role, number> = { orchestrator: 0, worker: 0, validator: 0 }
        counts[self.role]++
        for (const p of state.peers.values()) counts[p.role]++
        msg.reply.resolve({ self: { hotkey: self.hotkey, role: self.role }, peers: [...state.peers.values()].map(p => ({ ...p })), counts })
        return state
      }
    }
  }

  const ref = spawnSupervised<State, MembershipMsg>(parent, 'membership', env, () => ({ peers: new Map(), seq: 0 }), handler)
  const ticker: Timer = env.clock.every(HEARTBEAT_INTERVAL_MS, () => tell(ref, { type: 'tick' }))
  return {
    ref,
    view: () => ask<MembershipMsg, MembershipSnapshot>(ref, env.clock, VIEW_TIMEOUT_MS, reply => ({ type: 'view', reply }), 'membership view'),
    stop: () => ticker.cancel()
  }
}
