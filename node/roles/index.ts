// Role wiring: what each role adds on top of the membership every node runs.
import { join } from 'node:path'
import { tell } from '../../actors/runtime.ts'
import { startCoordinator, type OrchestratorCandidate, type FaultPoint } from '../../actors/transfer/coordinator.ts'
import { startRouter } from '../../actors/transfer/router.ts'
import { TransferEventHub } from '../../actors/transfer/events.ts'
import { startWorker, type ChunkMover } from '../../actors/transfer/worker.ts'
import { sinkRoutes } from '../adapters/destinations/index.ts'
import { sinkNameRoutes } from '../adapters/destinations/sink-names.ts'
import { BadSignatures } from '../adapters/bad-signatures.ts'
import { HttpChunkMover } from '../adapters/chunk-mover.ts'
import { DestinationRegistry } from '../transfers/destinations.ts'
import { NodeTransferService } from '../transfers/service.ts'
import { dataRoutes, signChunkSource, signedChunk, reportRead, type ChunkSource } from '../transfers/data-endpoint.ts'
import { FileBlobStore } from '../adapters/blob-store.ts'
import { SignedUrlInvalid, SignedUrlRequired } from '../../api/errors.ts'
import { startTelemetry } from '../../actors/telemetry/index.ts'
import { storeAuditReader } from '../../actors/telemetry/audit.ts'
import { startVerifier } from '../../actors/validator/verifier.ts'
import { startValidatorEpochs } from '../../actors/validator/epochs.ts'
import { listEpochSnapshots, sellAllowanceSnapshot } from '../../actors/validator/snapshots.ts'
import { validatorIntake } from '../../actors/validator/intake.ts'
import { deferredEpochs, replicateSnapshots } from '../../actors/validator/lifecycle.ts'
import { keepRegistered } from '../../actors/chain/registration.ts'
import { ORCHESTRATOR_INBOUND, WORKER_INBOUND, type InboundRoute } from '../../actors/transfer/inbound.ts'
import { DevChain, validatorsView, type Chain } from '../../actors/chain/index.ts'
import { checkVerifyRequest, checkWorkerAccept, checkWorkerClaim } from '../verify-evidence.ts'
import { authorityOf, offerSigned, signOffer, type Envelope, type PrismScores, type SnapshotPublished, type TaskOfferMsg, type VerifyRequest } from '../../protocol/index.ts'
import { hostDevChain, openSubtensor, remoteChain, NODE_REGISTRATION_COST_RAO, NODE_MIN_VALIDATOR_STAKE_RAO, type NodeChain } from '../chain.ts'
import { httpRangeReader } from '../adapters/range-reader.ts'
import { hostAddresses, joinedAddresses, liveAddresses, reportedAddresses, type AddressPolicy } from '../adapters/destinations/url-policy.ts'
import { InflightBudget } from '../adapters/inflight-budget.ts'
import chainRoutes from '../../api/routes/chain.ts'
import workerRoutes from '../../api/routes/workers.ts'
import { ADMIN_PREFIX } from '../../api/routes/admin.ts'
import { RevocationTeller } from '../revocation-teller.ts'
import { WorkerRevocations } from '../worker-revocations.ts'
import prismRoutes from '../../api/routes/prism.ts'
import { AttachmentIssuer } from '../attachments.ts'
import { parseTrustedPeers, satisfies, type PeerAuth, type PeerStanding } from '../peer-auth.ts'
import type { RoleContext, RoleHandle } from './types.ts'
import { meteredMover, coordinatorMetrics, meteredEvidence, meteredChain, chainMetrics, sweepMetrics } from '../metrics-ports.ts'
import { DiskSweep } from '../sweep.ts'
import { SinkPartials } from '../adapters/destinations/sink-partials.ts'
import { logEvery } from '../log-every.ts'

/**
 * Read-backs a validator runs at once for one coordinator (each up to READ_TIMEOUT_MS): a coordinator's
 * verify requests cannot hold the validator's sockets without bound; past it they are answered
 * `unreadable` (`busy`) and the coordinator checks for itself.
 */
export const MAX_READS_PER_COORDINATOR = 64

export async function startRole (ctx: RoleContext): Promise<RoleHandle> {
  switch (ctx.role) {
    case 'orchestrator': return startOrchestrator(ctx)
    case 'worker': return startWorkerRole(ctx)
    case 'validator': return startValidatorRole(ctx)
  }
}

/**
 * Which addresses a tenant's destination may reach from this node: public ones, not this host's own
 * (docs/security.md#destination-policy-ssrf); everything when the operator allows private destinations.
 * The orchestrator's destinations, a worker's writes and a validator's read-backs all go through it:
 * each reaches a URL that a tenant, or another operator's coordinator, chose.
 */
function tenantPolicy (ctx: RoleContext): AddressPolicy {
  if (ctx.config.allowPrivateDestinations) return { allowPrivate: true }
  // The interfaces read again at most once a minute while the node runs (IPv6 temporary addresses rotate),
  // and the address the swarm's DHT nodes see this host at (a 1:1 NAT's, on no interface) as it changes.
  const reported = reportedAddresses(() => ctx.transport.swarm.dht.host, (list) => {
    ctx.logger.info({ event: 'own_address_reported', reported: list }, 'destinations refuse the address the swarm\'s DHT reports for this host too')
  })
  const own = joinedAddresses(liveAddresses(() => hostAddresses(ctx.config.publicUrl)), reported)
  ctx.logger.info({ own: own() }, 'destinations refuse this host\'s own addresses')
  return { allowPrivate: false, own }
}

/** The node's in-flight budget (`--inflight-mib`): chunk bytes its streams may hold in memory at once. */
function inflightBudget (ctx: RoleContext): InflightBudget {
  return new InflightBudget(ctx.config.inflightMib * 1024 * 1024)
}

async function startOrchestrator (ctx: RoleContext): Promise<RoleHandle> {
  const { messenger, store, blobs, clock, key } = ctx
  const env = { clock, logger: ctx.logger, health: ctx.health, stopping: ctx.stopping }
  const { auth } = ctx
  // Tenants' destinations may not name this host's own public addresses (docs/security.md#destination-policy-ssrf).
  const destinations = new DestinationRegistry(store, key, clock, tenantPolicy(ctx))
  let baseUrl = ''
  const publicBase = (): string => ctx.config.publicUrl ?? baseUrl
  // `onRead` is wired once the coordinator exists (below).
  // One count of failed signature checks per remote address for every signed HTTP route of this node.
  const badSignatures = new BadSignatures({ now: () => clock.now() })
  const source: ChunkSource = { key, store, blobs, clock, baseUrl: publicBase, badSignatures }
  const budget = inflightBudget(ctx)
  let service: NodeTransferService | null = null
  // PRISM scores (routing weights, pools: their consensus over the validators' stake) and snapshot votes.
  let chainForIntake: Chain | null = null
  const trustedValidators = [...parseTrustedPeers(ctx.config.trustedPeers)].filter(([, r]) => r === 'validator').map(([h]) => h)
  const intake = validatorIntake({
    store, logger: ctx.logger, clock: ctx.clock, penalize: (v, detail) => messenger.penalize(v, 'unauthorized', detail),
    isOrchestrator: async (hotkey) => satisfies(await auth.standing(hotkey), 'orchestrator'),
    chain: validatorsView(() => { if (chainForIntake === null) throw new Error('chain not open yet'); return chainForIntake }, trustedValidators)
  })
  let epochGeneration = 0
  const telemetry = await startTelemetry(ctx.system, {
    env, store,
    poolOf: (hotkey) => intake.poolOf(hotkey),
    // The versions change only when a validator's copy is voted in (`snapshot_published`, below).
    epochs: { list: () => listEpochSnapshots(store, { limit: 100_000 }), generation: () => epochGeneration },
    sellAllowance: { get: (hotkey, variant, epoch) => sellAllowanceSnapshot(store, hotkey, variant as 'paid', epoch) as never },
    participants: async () => {
      const view = await ctx.membership.view()
      return { counts: view.counts, workers: view.peers.filter(p => p.role === 'worker').map(p => ({ bandwidthMbps: p.capacity.bandwidthMbps })) }
    }
  })

  // The dev chain: hosted here unless another node is named as its host.
  const nodeChain: NodeChain = ctx.config.chain === 'subtensor'
    ? await openSubtensor({ store, clock, logger: ctx.logger }, ctx.config, key)
    : ctx.config.chainHost === null || ctx.config.chainHost === key.address
    ? await hostDevChain({ store, clock, logger: ctx.logger, messenger }, { blockTimeMs: ctx.config.blockTimeMs, blocksPerEpoch: ctx.config.blocksPerEpoch, registrationCostRao: NODE_REGISTRATION_COST_RAO, minValidatorStakeRao: NODE_MIN_VALIDATOR_STAKE_RAO })
    : remoteChain({ clock, logger: ctx.logger, messenger }, ctx.config.chainHost)
  auth.useChain(nodeChain.chain)
  chainForIntake = nodeChain.chain
  const devChain = nodeChain.dev && nodeChain.chain instanceof DevChain ? nodeChain.chain : undefined
  // The chain host registers itself (the network's operator pays); any other orchestrator must have
  // been registered by its operator: `register` is idempotent and burns nothing for a registered key.
  if (devChain !== undefined) await devChain.enroll(key.address, 'orchestrator')
  // Registered on the chain (a UID) before it can hold weight; retried until the chain host answers.
  const registration = keepRegistered({ chain: nodeChain.chain, clock, logger: ctx.logger, hotkey: key.address, role: 'orchestrator' })
  const unmeterChain = ctx.metrics ? nodeChain.chain.subscribe(chainMetrics(ctx.metrics, ctx.logger, 'debug')) : () => {}
  const meter = ctx.metrics ? coordinatorMetrics(ctx.metrics) : () => {}
  auth.on('prism_scores', 'validator', (m) => { void intake.prism(m.from, m.body as PrismScores) })
  // Stakes, permits and the epochs that count move with the chain: the consensus is re-taken at each close.
  void intake.refresh()
  const unsubscribeIntake = nodeChain.chain.subscribe({ epochClosed: () => { void intake.refresh() } })
  auth.on('snapshot_published', 'validator', (m, _peer, standing) => {
    void intake.snapshot(m.from, m.body as SnapshotPublished, standing.stakeRao).finally(() => { epochGeneration++ })
  })

  // Workers hold no registration: this orchestrator attaches them by signed attachment on first contact.
  const attachments = new AttachmentIssuer({
    key, clock, logger: ctx.logger, maxWorkers: ctx.config.maxWorkers, maxPerAddress: ctx.config.maxWorkersPerAddress,
    connected: (worker) => messenger.peerOf(worker) !== undefined,
    allowlist: ctx.config.workerAllowlist.length > 0 ? new Set(ctx.config.workerAllowlist) : null,
    deliver: (a) => { void auth.present(a, a.worker); messenger.send(a.worker, 'worker_attachment', { attachment: a }) }
  })
  // The operator's revocations (/admin/workers) from the store, before any worker is attached. A
  // revocation also ends the worker's session and its routing here (`endWorker`, below).
  const revocations = new WorkerRevocations({ store, clock, issuer: attachments, end: (worker) => { endWorker(worker) }, registered: async (h) => (await nodeChain.chain.uidOf(h)) !== null, logger: ctx.logger })
  const restored = await revocations.load()
  if (restored > 0) ctx.logger.info({ event: 'worker_revocations_restored', count: restored }, `${restored} revoked worker(s) stay refused`)
  // Issued only to a worker connected now, counted at the address it connects from: one that left while
  // its announce was being checked would take a place counted nowhere.
  const issueTo = (worker: string): ReturnType<AttachmentIssuer['issue']> | null =>
    messenger.peerOf(worker) === undefined ? null : attachments.issue(worker, messenger.addressOf(worker))
  auth.useAttachmentPolicy({
    issue: (worker) => {
      const r = issueTo(worker)
      if (r?.ok !== true) return null
      // A worker reinstated after a revocation is told first that the attachment it holds is revoked, so
      // it takes the new one (handed next, on the same connection) instead of keeping the old.
      const notice = attachments.notice(worker)
      if (notice !== undefined) messenger.send(worker, 'attachments_revoked', { revocations: [notice] })
      return r.attachment
    },
    isRevoked: (a) => attachments.isRevoked(a)
  })
  const router = startRouter(ctx.system, {
    env, self: key.address, net: messenger, store,
    onWorkersChanged: () => tell(ctx.membership.ref, { type: 'publish' }),
    unreadSince: () => messenger.unreadSince()
  })
  const transferEvents = new TransferEventHub(store)
  const coordinator = startCoordinator(ctx.system, {
    env, self: key.address, net: messenger, store, blobs, ...(ctx.config.resultGapMs !== undefined ? { config: { resultGapMs: ctx.config.resultGapMs } } : {}),
    driverFor: (id) => destinations.driverFor(id),
    candidates: async (): Promise<OrchestratorCandidate[]> => {
      const view = await ctx.membership.view()
      // Routing scores: PRISM from validators; uniform (1) until an orchestrator has one.
      const out: OrchestratorCandidate[] = [{ hotkey: key.address, workers: router.workers(), score: intake.routingScore(key.address) ?? 1 }]
      for (const p of view.peers) if (p.role === 'orchestrator') out.push({ hotkey: p.hotkey, workers: p.workers, score: intake.routingScore(p.hotkey) ?? 1 })
      return out
    },
    signSource: (transferId, index, attemptId, expiresAt) => signChunkSource(source, transferId, index, attemptId, expiresAt),
    validators: () => messenger.connectedHotkeys().filter(h => auth.allows(h, 'validator')),
    onEvent: (e) => {
      meter(e)
      telemetry.onCoordinatorEvent(e)
      if (e.type === 'transfer') service?.onTransferChanged(e.row)
    },
    onTransferEvents: (events) => transferEvents.publish(events),
    faultPoint: crashPoint(ctx),
    attachmentOf: (worker) => auth.attachmentOf(worker),
    signOffer: (offer) => signOffer(key, offer),
    workerClaimed: (from, result, relayedAt) => {
      // The same window a validator holds the claim to (against the frame that relays it), so a
      // delivery accepted here is never refused there for its age, at this coordinator's cost.
      const claim = checkWorkerClaim(result, from, key.address, relayedAt)
      if (!claim.ok) ctx.logger.warn({ peer: from, worker: result.worker, attemptId: result.attemptId, reason: claim.reason, event: 'worker_claim_refused' }, 'delivery refused: not what its worker signed')
      return claim.ok
    },
    workerAccepted: (from, accept) => {
      const word = checkWorkerAccept(accept, from, key.address)
      if (!word.ok) ctx.logger.warn({ peer: from, worker: accept.worker, attemptId: accept.attemptId, reason: word.reason, event: 'worker_accept_refused' }, 'stall not held against the worker: not what it signed')
      return word.ok
    },
    unreadSince: () => messenger.unreadSince()
  })
  source.onRead = (transferId, attemptId, phase) => tell(coordinator.ref, { type: 'read', transferId, attemptId, phase })
  service = new NodeTransferService({ store, blobs, clock, coordinator: coordinator.ref, destinations, storage: ctx.storage })
  destinations.inUse = (id, org) => service!.activeForDestination(id, org)

  // Unreferenced blobs and abandoned sink partials: swept now (the store is open; serving need not wait)
  // and then every --sweep-interval-ms (node/sweep.ts, docs/node.md#disk-sweep).
  const sinkDir = join(ctx.dataDir, 'sink')
  const partials = new SinkPartials(sinkDir)
  const sweep = blobs instanceof FileBlobStore
    ? new DiskSweep({
      store, blobs, partials, clock, logger: ctx.logger, intervalMs: ctx.config.sweepIntervalMs, graceMs: ctx.config.sweepGraceMs,
      historyRetentionMs: ctx.config.historyRetentionDays === 0 ? null : ctx.config.historyRetentionDays * 86_400_000,
      recordRetentionMs: ctx.config.recordRetentionDays === 0 ? null : ctx.config.recordRetentionDays * 86_400_000,
      ...(ctx.metrics ? { onSwept: sweepMetrics(ctx.metrics) } : {})
    })
    : null
  sweep?.start()

  // Every role-scoped message needs its sender's registration (node/peer-auth.ts).
  // A worker without a registration works for this orchestrator only under this orchestrator's own
  // attachment: one it holds from another orchestrator does not get round this one's revocations,
  // allowlist or --max-workers. So at its worker_attach (and only then: a worker that never attaches
  // here takes no place in --max-workers) it is attached here, or refused as issue() says why.
  const attachedHere = (worker: string, s: PeerStanding): boolean => {
    if (s.source !== 'attachment') return true // registered on the chain, trusted, or this node
    const a = attachments.current(worker)
    if (a !== undefined && a.expiresAt > clock.now() && !attachments.isRevoked(a)) return true
    // Not held here (never, or forgotten: a reconnect releases it, a restart loses it): attach it now.
    const issued = issueTo(worker)
    if (issued?.ok !== true) return false
    void auth.present(issued.attachment, worker)
    messenger.send(worker, 'worker_attachment', { attachment: issued.attachment })
    return true
  }
  routeInbound(auth, ORCHESTRATOR_INBOUND, { router: router.ref, coordinator: coordinator.ref }, {
    worker_attach: (m, s) => attachedHere(m.from, s)
  })
  // The bulk channel serves admitted peers only (node/peer-gate.ts), each chunk streamed from its blob
  // file; a forged or unsigned path costs its sender score, as any unauthorized message does.
  ctx.transport.serveBulk(async (peer, signedPath) => {
    try {
      const chunk = await signedChunk(source, signedPath)
      const file = blobs instanceof FileBlobStore ? blobs.pathOf(chunk.sha256) : null
      const bytes = file === null ? await blobs.get(chunk.sha256) : null
      if (bytes === undefined) return null
      // Reported to the coordinator as over HTTP: begun now, then whole or cut as the send ends.
      reportRead(source, chunk, 'start', ctx.logger)
      const ended = (whole: boolean): void => { reportRead(source, chunk, whole ? 'done' : 'cut', ctx.logger) }
      return file !== null ? { file, ended } : { bytes: bytes!, ended }
    } catch (err) {
      const hotkey = messenger.hotkeyOf(peer)
      if (hotkey !== undefined && (err instanceof SignedUrlInvalid || err instanceof SignedUrlRequired)) messenger.penalize(hotkey, 'unauthorized', `bulk read: ${(err as Error).message}`)
      return null
    }
  }, { admitted: (peer) => messenger.gate.isAdmitted(peer) })
  ctx.onPeerDown((hotkey) => {
    if (auth.lastKnownRole(hotkey) !== 'worker') return
    tell(router.ref, { type: 'detach', worker: hotkey })
    attachments.release(hotkey)
  })
  // A revocation ends the worker's session and routing here, and its peers are told
  // (node/revocation-teller.ts); a validator or orchestrator that announces later is told then.
  const teller = new RevocationTeller({ clock, issuer: attachments, messenger, self: key.address })
  const endWorker = (worker: string): void => {
    attachments.revoke(worker)
    auth.dropAttachment(worker)
    tell(router.ref, { type: 'detach', worker })
    teller.revoked(worker)
  }
  ctx.onPeerDown((h) => { teller.down(h) })
  auth.on('announce', 'registered', (m, peer, s) => { teller.announced(m.from, peer, s.role) })
  // A peer admitted on its heartbeat (its announce lost to a failed lookup) is told then.
  auth.on('heartbeat', 'registered', (m, peer, s) => { teller.announced(m.from, peer, s.role) })

  return {
    devChain,
    apiDeps: { transfers: service, transferEvents, destinations, telemetry: telemetry.reader, audit: storeAuditReader({ store, hotkeyOfUid: async (uid) => (await nodeChain.chain.registrations()).find(r => r.uid === uid)?.hotkey ?? null }) },
    routes: async (app, apiDeps) => {
      await app.register(dataRoutes(source))
      await app.register(chainRoutes, { chain: nodeChain.chain, dev: nodeChain.dev, enroll: devChain === undefined ? undefined : async (h, r, stake) => await devChain.enroll(h, r, { stakeRao: stake }), writeAuth: { roles: ['admin'], operator: true } })
      await app.register(prismRoutes, { latest: intake.latestPrism })
      await app.register(workerRoutes, { workers: revocations, prefix: ADMIN_PREFIX })
      // The sink accepts only URLs this node signed for its own sink audience at its own authority
      // (which the disk sweep relies on: this node's store names every upload the sink holds).
      const sinkAuth = { trustedSigners: new Set([key.address]), authority: () => authorityOf(publicBase()), now: () => clock.now(), badSignatures }
      // The sink is on the data directory's disk: its begins and chunks ask the storage guard too.
      // Its refusals for room are the coordinator's evidence that a worker's `destination_full` is true.
      await app.register(sinkRoutes, { dir: sinkDir, ...sinkAuth, budget, storage: ctx.storage, partials, onRefusedForRoom: (uploadId, index, attempt) => tell(coordinator.ref, { type: 'sink_full', uploadId, index, attemptNo: attempt }) })
      await app.register(sinkNameRoutes, { dir: sinkDir, ...sinkAuth })
    },
    listening: async (url) => {
      baseUrl = url
      await destinations.ensureDefault(ctx.config.publicUrl ?? url)
    },
    workers: () => router.workers(),
    attachments,
    revokeWorker: async (worker) => { await revocations.revoke(worker) },
    stop: async () => { teller.stop(); attachments.stop(); registration.stop(); unsubscribeIntake(); unmeterChain(); await sweep?.stop(); coordinator.stop(); await telemetry.stop(); await nodeChain.stop() }
  }
}

/** Test-only: `--test-faults crash-<point>` kills this process (as kill -9 would) when the coordinator reaches <point>. */
function crashPoint (ctx: RoleContext): ((point: FaultPoint) => void) | undefined {
  const armed = new Set(ctx.config.testFaults.filter(f => f.startsWith('crash-')).map(f => f.slice('crash-'.length).replaceAll('-', '_')))
  if (armed.size === 0) return undefined
  return (point) => {
    if (!armed.has(point)) return
    ctx.logger.warn({ event: 'test_fault_crash', point }, 'test fault: killing the process')
    process.kill(process.pid, 'SIGKILL')
  }
}

async function startWorkerRole (ctx: RoleContext): Promise<RoleHandle> {
  const { messenger, clock, key } = ctx
  const env = { clock, logger: ctx.logger, health: ctx.health, stopping: ctx.stopping }
  // A worker holds no UID: its standing is the attachment its orchestrator signs (node/peer-auth.ts).
  const { auth } = ctx
  // On Subtensor it reads the subnet (without following blocks) to know its peers' registrations.
  const subnet = ctx.config.chain === 'subtensor' ? await openSubtensor({ store: ctx.store, clock, logger: ctx.logger }, ctx.config, key, { follow: false }) : null
  if (subnet !== null) auth.useChain(subnet.chain)
  const metered = (mover: HttpChunkMover): ChunkMover => ctx.metrics ? meteredMover(mover, ctx.metrics, ctx.logger) : mover
  const worker = startWorker(ctx.system, {
    env, self: key.address, net: messenger, mover: metered(new HttpChunkMover(ctx.transport, messenger, tenantPolicy(ctx), { budget: inflightBudget(ctx) })),
    slots: ctx.config.slots, attachTo: ctx.config.attachTo, faults: { corrupt: ctx.config.testFaults.includes('corrupt'), stall: ctx.config.testFaults.includes('stall') }
  })
  // An offer is taken only with its coordinator's signature over its terms: the orchestrator relaying it
  // cannot point it at another chunk's source, hash or target and get this worker struck for the result.
  // Refused, it is answered as a failed move (no strike), so its chunk goes again at once.
  const logRefusal = logEvery(60_000, 1024) // once a minute per orchestrator: a flood of them is one line
  const signedOffer = (m: Envelope): boolean => {
    const { offer } = m.body as TaskOfferMsg
    if (offerSigned(offer)) return true
    if (logRefusal(m.from, clock.now())) {
      ctx.logger.warn({ peer: m.from, coordinator: offer.source.coordinator, attemptId: offer.attemptId, event: 'offer_refused' }, 'offer refused: not as its coordinator signed it')
    }
    messenger.send(m.from, 'task_result', {
      taskId: offer.taskId, attemptId: offer.attemptId, transferId: offer.transferId, worker: key.address, success: false, bytes: 0, durationMs: 0,
      sha256: null, etag: null, error: 'offer_unsigned', via: null, coordinator: offer.source.coordinator
    })
    return false
  }
  routeInbound(auth, WORKER_INBOUND, { worker: worker.ref }, { task_offer: signedOffer })
  ctx.onPeerDown((hotkey) => { if (auth.lastKnownRole(hotkey) === 'orchestrator') tell(worker.ref, { type: 'orchestrator-down', hotkey }) })
  return { load: () => worker.load(), stop: async () => { await subnet?.stop() } }
}
export type { RoleContext, RoleHandle }

async function startValidatorRole (ctx: RoleContext): Promise<RoleHandle> {
  const { messenger, clock, key, store } = ctx
  const env = { clock, logger: ctx.logger, health: ctx.health, stopping: ctx.stopping }
  const { auth } = ctx
  const subtensor = ctx.config.chain === 'subtensor'
  if (!subtensor && ctx.config.chainHost === null) throw new Error('a validator needs --chain-host: the hotkey of the node hosting the chain')
  const nodeChain = subtensor
    ? await openSubtensor({ store, clock, logger: ctx.logger }, ctx.config, key)
    : remoteChain({ clock, logger: ctx.logger, messenger }, ctx.config.chainHost!)
  const chain: Chain = ctx.metrics ? meteredChain(nodeChain.chain, ctx.metrics, ctx.logger) : nodeChain.chain
  auth.useChain(nodeChain.chain)
  let verifierScore: (hotkey: string) => number = () => 0
  // The epoch machinery registers this validator on the chain: it starts once the chain host is
  // connected; evidence that arrives before waits in memory.
  const lifecycle = deferredEpochs({
    clock, logger: ctx.logger,
    ready: () => subtensor || messenger.peerOf(ctx.config.chainHost!) !== undefined,
    start: () => startValidatorEpochs(ctx.system, env, { store, chain, hotkey: key.address, logger: ctx.logger, scoreOf: (h) => verifierScore(h) })
  })
  const sink = ctx.metrics ? meteredEvidence(lifecycle.sink, ctx.metrics, ctx.logger) : lifecycle.sink
  const workersOf = new Map<string, number>()
  const readinessOf = (h: string): { ready: boolean, connected: boolean } => {
    const connected = messenger.peerOf(h) !== undefined
    return { connected, ready: connected && (workersOf.get(h) ?? 1) > 0 }
  }
  const verifier = startVerifier(ctx.system, {
    env, self: key.address, net: messenger, store, reader: httpRangeReader(tenantPolicy(ctx)), evidence: sink, sampleRate: ctx.config.verifySampleRate, maxReadsPerCoordinator: MAX_READS_PER_COORDINATOR,
    readiness: readinessOf
  })
  verifierScore = verifier.scoreOf
  // PRISM readiness transitions: every membership change of a registered orchestrator (link up with its
  // announce, workers attached per heartbeat, link down), stamped when this node saw it.
  const readinessChanged = (h: string): void => { tell(verifier.ref, { type: 'readiness', hotkey: h, atMs: clock.now(), ...readinessOf(h) }) }
  // Every registered peer announces itself (workers too): only an orchestrator's announce changes readiness.
  auth.on('announce', 'registered', (m, _peer, s) => { if (s.role === 'orchestrator') readinessChanged(m.from) })
  auth.on('heartbeat', 'registered', (m, _peer, s) => {
    if (s.role !== 'orchestrator') return
    workersOf.set(m.from, (m.body as { workers: number }).workers)
    readinessChanged(m.from)
  })
  ctx.onPeerDown((h) => { if (auth.lastKnownRole(h) === 'orchestrator') { workersOf.delete(h); readinessChanged(h) } })
  auth.on('verify_request', 'orchestrator', (m) => {
    const checked = checkVerifyRequest(m, clock.now())
    if (!checked.ok) {
      ctx.logger.warn({ peer: m.from, reason: checked.reason, event: 'verify_request_refused' }, 'verify request refused')
      if (checked.blameless !== true) messenger.penalize(m.from, 'unauthorized', checked.reason)
      return
    }
    // The duration a throughput sample is made of is the coordinator's measure (offer sent to result in),
    // which holds the worker's move: never shorter than the move its worker signed. A coordinator cannot
    // make another operator's orchestrator look faster than its worker says it was.
    const sent = m.body as VerifyRequest
    const body: VerifyRequest = { ...sent, trustedDurationMs: Math.max(sent.trustedDurationMs, checked.workerDurationMs) }
    // The worker answers for its delivery with its attachment (any penalty is keyed by its hotkey), or
    // with its own registration where it has one (its UID then carries the penalty too).
    const presented = body.attachment === undefined ? Promise.resolve(null) : auth.present(body.attachment, body.worker, { carried: true })
    // The evidence's signer must be a registered orchestrator: any key pair can sign a task_result, and
    // each hotkey named here gets a PRISM track and a row in every prism_scores this validator sends.
    Promise.all([auth.standing(body.orchestrator), presented.then(() => auth.standing(body.worker))]).then(([o, w]) => {
      if (!satisfies(o, 'orchestrator')) {
        ctx.logger.warn({ peer: m.from, orchestrator: body.orchestrator, event: 'verify_request_refused', reason: 'orchestrator not registered' }, 'verify request names an orchestrator without registration')
        return
      }
      if (w === null || w.role !== 'worker') {
        ctx.logger.warn({ peer: m.from, worker: body.worker, event: 'verify_request_refused' }, 'verify request names a worker without registration or valid attachment')
        return
      }
      tell(verifier.ref, { type: 'request', from: m.from, body, workerUid: w.uid })
    }, (err: Error) => ctx.logger.warn({ err: err.message, worker: body.worker, orchestrator: body.orchestrator }, 'standing unavailable; verify request dropped'))
  })

  const unsubscribe = chain.subscribe({
    epochClosed: (close) => {
      // Publish PRISM scores, and replicate what the epoch machine published.
      tell(verifier.ref, { type: 'epoch', epoch: close.epoch })
      const epochs = lifecycle.epochs()
      if (epochs !== null) replicateSnapshots({ store, net: messenger, epochs }, close.epoch).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'snapshot replication failed'))
    }
  })
  const unmeterChain = ctx.metrics ? chain.subscribe(chainMetrics(ctx.metrics, ctx.logger, 'info')) : () => {}
  lifecycle.tryStart()
  return { stop: async () => { unsubscribe(); unmeterChain(); await lifecycle.stop(); await nodeChain.stop() } }
}

/**
 * Wires a shared inbound table (actors/transfer/inbound.ts) to the messenger behind peer authorization;
 * `admit` adds a node's own condition for some types (dropped when it answers false).
 */
function routeInbound<T> (auth: PeerAuth, table: ReadonlyArray<InboundRoute<T>>, to: T, admit: Partial<Record<string, (m: Envelope, s: PeerStanding) => boolean>> = {}): void {
  // `raw` stays lazy: the messenger frames (signs) a message to itself only when its frame is read.
  for (const r of table) {
    const ok = admit[r.type]
    auth.on(r.type, r.from, (m, _peer, s) => { if (ok === undefined || ok(m, s)) r.deliver(to, { type: r.type, from: m.from, body: m.body, role: s.role, ts: m.ts, get raw () { return m.raw } }) })
  }
}
