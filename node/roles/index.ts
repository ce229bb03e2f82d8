// Role wiring: what each role adds on top of the membership every node runs.
import { join } from 'node:path'
import type { Role } from '../../protocol/index.ts'
import { tell } from '../../actors/runtime.ts'
import { startCoordinator, type OrchestratorCandidate } from '../../actors/transfer/coordinator.ts'
import { startRouter } from '../../actors/transfer/router.ts'
import { startWorker } from '../../actors/transfer/worker.ts'
import { sinkRoutes } from '../adapters/destinations/index.ts'
import { HttpChunkMover } from '../adapters/chunk-mover.ts'
import { DestinationRegistry } from '../transfers/destinations.ts'
import { NodeTransferService } from '../transfers/service.ts'
import { dataRoutes, signChunkSource, readSignedChunk } from '../transfers/data-endpoint.ts'
import { startTelemetry } from '../../actors/telemetry/index.ts'
import { storeAuditReader } from '../../actors/telemetry/audit.ts'
import type { RoleContext, RoleHandle } from './types.ts'

export async function startRole (ctx: RoleContext): Promise<RoleHandle> {
  switch (ctx.role) {
    case 'orchestrator': return startOrchestrator(ctx)
    case 'worker': return startWorkerRole(ctx)
    case 'validator': return { stop: async () => {} }
  }
}

/** Who sent a message, by role, as the membership saw their announce. */
function roleBook (ctx: RoleContext): Map<string, Role> {
  const roles = new Map<string, Role>([[ctx.key.address, ctx.role]])
  ctx.messenger.on('announce', (msg) => { roles.set(msg.from, (msg.body as { role: Role }).role) })
  return roles
}

async function startOrchestrator (ctx: RoleContext): Promise<RoleHandle> {
  const { messenger, store, blobs, clock, key } = ctx
  const env = { clock, logger: ctx.logger }
  const roles = roleBook(ctx)
  const destinations = new DestinationRegistry(store, key, clock)
  let baseUrl = ''
  const source = { key, store, blobs, clock }
  let service: NodeTransferService | null = null
  const telemetry = await startTelemetry(ctx.system, {
    env, store,
    participants: async () => {
      const view = await ctx.membership.view()
      return { counts: view.counts, workers: view.peers.filter(p => p.role === 'worker').map(p => ({ bandwidthMbps: p.capacity.bandwidthMbps })) }
    }
  })

  const router = startRouter(ctx.system, {
    env, self: key.address, net: messenger, store,
    onWorkersChanged: () => tell(ctx.membership.ref, { type: 'publish' })
  })
  const coordinator = startCoordinator(ctx.system, {
    env, self: key.address, net: messenger, store, blobs,
    driverFor: (id) => destinations.driverFor(id),
    candidates: async (): Promise<OrchestratorCandidate[]> => {
      const view = await ctx.membership.view()
      const out: OrchestratorCandidate[] = [{ hotkey: key.address, workers: router.workers(), score: 1 }]
      for (const p of view.peers) if (p.role === 'orchestrator') out.push({ hotkey: p.hotkey, workers: p.workers, score: 1 })
      return out
    },
    signSource: (transferId, index, attemptId, expiresAt) => signChunkSource(source, ctx.config.publicUrl ?? baseUrl, transferId, index, attemptId, expiresAt),
    onEvent: (e) => {
      telemetry.onCoordinatorEvent(e)
      if (e.type === 'transfer') service?.onTransferChanged(e.row)
    }
  })
  service = new NodeTransferService({ store, blobs, clock, coordinator: coordinator.ref, destinations })
  destinations.inUse = (id) => service!.activeForDestination(id)

  messenger.on('worker_attach', (m) => tell(router.ref, { type: 'attach', from: m.from, body: m.body as never }))
  messenger.on('task_offer_batch', (m) => tell(router.ref, { type: 'batch', from: m.from, body: m.body as never }))
  messenger.on('task_result_ack', (m) => tell(router.ref, { type: 'ack', from: m.from, body: m.body as never }))
  messenger.on('task_cancel', (m) => tell(router.ref, { type: 'cancel', from: m.from, body: m.body as never }))
  messenger.on('task_assigned', (m) => tell(coordinator.ref, { type: 'assigned', from: m.from, body: m.body as never }))
  messenger.on('task_result', (m) => {
    // From one of our workers: relay it; from an orchestrator (or ourselves as one): it is ours to settle.
    if (roles.get(m.from) === 'worker') tell(router.ref, { type: 'result', from: m.from, body: m.body as never })
    else tell(coordinator.ref, { type: 'result', from: m.from, body: m.body as never })
  })
  ctx.transport.serveBulk(async (_peer, signedPath) => {
    try { return await readSignedChunk(source, signedPath) } catch { return null }
  })
  ctx.onPeerDown((hotkey) => { if (roles.get(hotkey) === 'worker') tell(router.ref, { type: 'detach', worker: hotkey }) })

  return {
    apiDeps: { transfers: service, destinations, telemetry: telemetry.reader, audit: storeAuditReader({ store }) },
    routes: async (app) => {
      await app.register(dataRoutes(source))
      await app.register(sinkRoutes, { dir: join(ctx.dataDir, 'sink'), trustedSigners: new Set([key.address]), now: () => clock.now() })
    },
    listening: async (url) => {
      baseUrl = url
      await destinations.ensureDefault(ctx.config.publicUrl ?? url)
    },
    workers: () => router.workers(),
    stop: async () => { telemetry.stop(); coordinator.stop() }
  }
}

async function startWorkerRole (ctx: RoleContext): Promise<RoleHandle> {
  const { messenger, clock, key } = ctx
  const env = { clock, logger: ctx.logger }
  const roles = roleBook(ctx)
  const worker = startWorker(ctx.system, {
    env, self: key.address, net: messenger, mover: new HttpChunkMover(ctx.transport, messenger),
    slots: ctx.config.slots, attachTo: ctx.config.attachTo, faults: { corrupt: ctx.config.testFaults.includes('corrupt') }
  })
  messenger.on('announce', (m) => { if ((m.body as { role: Role }).role === 'orchestrator') tell(worker.ref, { type: 'orchestrator-up', hotkey: m.from }) })
  messenger.on('worker_attached', (m) => tell(worker.ref, { type: 'attached', from: m.from, session: (m.body as { session: string }).session }))
  messenger.on('session_displaced', (m) => tell(worker.ref, { type: 'displaced', from: m.from, session: (m.body as { session: string }).session }))
  messenger.on('task_offer', (m) => tell(worker.ref, { type: 'offer', from: m.from, body: m.body as never }))
  messenger.on('task_result_ack', (m) => tell(worker.ref, { type: 'ack', from: m.from, body: m.body as never }))
  messenger.on('task_cancel', (m) => tell(worker.ref, { type: 'cancel', from: m.from, body: m.body as never }))
  ctx.onPeerDown((hotkey) => { if (roles.get(hotkey) === 'orchestrator') tell(worker.ref, { type: 'orchestrator-down', hotkey }) })
  return { load: () => worker.load(), stop: async () => {} }
}
export type { RoleContext, RoleHandle }
