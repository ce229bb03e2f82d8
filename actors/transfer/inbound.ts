// The one table of which transfer message goes to which actor, from which senders: the node wires it to
// the messenger behind peer authorization (node/roles/index.ts), the simulator to its transport
// (sim/nodes.ts), so both run the same routing.
import { tell, type Ref } from '../runtime.ts'
import type { MessageBody, MessageType, Role } from '../../protocol/index.ts'
import type { RouterMsg } from './router.ts'
import type { CoordinatorMsg } from './coordinator.ts'
import type { WorkerMsg } from './worker.ts'

/** Who may send a message: any registered node, or one of a role. */
export type Sender = 'registered' | Role

/** One inbound message, with the role its sender is registered as; `raw` is its signed frame (read only when needed). */
export interface Inbound { type: MessageType, from: string, body: unknown, role: Role, readonly raw?: Uint8Array | undefined, /** The frame's signed time (absent in the simulator). */ ts?: number }

export interface InboundRoute<T> {
  type: MessageType
  from: Sender
  deliver (to: T, m: Inbound): void
}

export interface OrchestratorActors { router: Ref<RouterMsg>, coordinator: Ref<CoordinatorMsg> }
export interface WorkerActors { worker: Ref<WorkerMsg> }

const session = (body: unknown): string => (body as { session: string }).session

export const ORCHESTRATOR_INBOUND: ReadonlyArray<InboundRoute<OrchestratorActors>> = [
  { type: 'worker_attach', from: 'worker', deliver: (to, m) => tell(to.router, { type: 'attach', from: m.from, body: m.body as never }) },
  { type: 'task_offer_batch', from: 'orchestrator', deliver: (to, m) => tell(to.router, { type: 'batch', from: m.from, body: m.body as never }) },
  { type: 'task_result_ack', from: 'orchestrator', deliver: (to, m) => tell(to.router, { type: 'ack', from: m.from, body: m.body as never }) },
  { type: 'task_cancel', from: 'orchestrator', deliver: (to, m) => tell(to.router, { type: 'cancel', from: m.from, body: m.body as never }) },
  { type: 'task_assigned', from: 'orchestrator', deliver: (to, m) => tell(to.coordinator, { type: 'assigned', from: m.from, body: m.body as never }) },
  { type: 'verify_verdict', from: 'validator', deliver: (to, m) => tell(to.coordinator, { type: 'verdict', from: m.from, body: m.body as never }) },
  {
    type: 'task_progress',
    from: 'registered',
    // From one of our workers: relay it to each chunk's coordinator; from an orchestrator: ours to note.
    deliver: (to, m) => {
      if (m.role === 'worker') tell(to.router, { type: 'progress', from: m.from, body: m.body as never })
      else if (m.role === 'orchestrator') tell(to.coordinator, { type: 'progress', from: m.from, body: m.body as never })
    }
  },
  // A worker's accept, to relay with its signed frame; accepts relayed by an orchestrator, ours to note.
  { type: 'task_accepted', from: 'worker', deliver: (to, m) => tell(to.router, { type: 'accepted', from: m.from, body: m.body as never, ...(m.raw !== undefined ? { word: m.raw } : {}) }) },
  {
    type: 'task_accepts',
    from: 'orchestrator',
    deliver: (to, m) => { for (const body of (m.body as MessageBody<'task_accepts'>).accepts) tell(to.coordinator, { type: 'accepted', from: m.from, body }) }
  },
  {
    type: 'task_result',
    from: 'registered',
    // From one of our workers: relay it with the worker's signed frame (its claim); from an orchestrator
    // (or ourselves as one): it is ours to settle, and the orchestrator's signed frame is the evidence a
    // validator checks.
    deliver: (to, m) => {
      if (m.role === 'worker') {
        const claim = m.raw
        tell(to.router, { type: 'result', from: m.from, body: m.body as never, ...(claim !== undefined ? { claim } : {}) })
      }
      else if (m.role === 'orchestrator') {
        const evidence = m.raw
        tell(to.coordinator, { type: 'result', from: m.from, body: m.body as never, ...(evidence !== undefined ? { evidence } : {}), ...(m.ts !== undefined ? { relayedAt: m.ts } : {}) })
      }
    }
  }
]

export const WORKER_INBOUND: ReadonlyArray<InboundRoute<WorkerActors>> = [
  // A worker attaches to, and takes work from, registered orchestrators only.
  { type: 'announce', from: 'registered', deliver: (to, m) => { if (m.role === 'orchestrator') tell(to.worker, { type: 'orchestrator-up', hotkey: m.from }) } },
  { type: 'worker_attached', from: 'orchestrator', deliver: (to, m) => tell(to.worker, { type: 'attached', from: m.from, session: session(m.body) }) },
  { type: 'session_displaced', from: 'orchestrator', deliver: (to, m) => tell(to.worker, { type: 'displaced', from: m.from, session: session(m.body) }) },
  { type: 'task_offer', from: 'orchestrator', deliver: (to, m) => tell(to.worker, { type: 'offer', from: m.from, body: m.body as never }) },
  { type: 'task_result_ack', from: 'orchestrator', deliver: (to, m) => tell(to.worker, { type: 'ack', from: m.from, body: m.body as never }) },
  { type: 'task_cancel', from: 'orchestrator', deliver: (to, m) => tell(to.worker, { type: 'cancel', from: m.from, body: m.body as never }) }
]

/** The table by message type (for transports that dispatch themselves, as the simulator's does). */
export function inboundByType<T> (table: ReadonlyArray<InboundRoute<T>>): ReadonlyMap<MessageType, InboundRoute<T>> {
  return new Map(table.map(r => [r.type, r]))
}

/** Delivers `m` by its route when its sender's role may send it; false when refused or unrouted. */
export function deliverInbound<T> (routes: ReadonlyMap<MessageType, InboundRoute<T>>, to: T, m: Inbound): boolean {
  const r = routes.get(m.type)
  if (r === undefined || (r.from !== 'registered' && r.from !== m.role)) return false
  r.deliver(to, m)
  return true
}
