// One bwnet node: identity, store, blob store, swarm transport, actor system, and (with a port)
// the HTTP server. Started in that order and stopped in reverse, as OTP children.
import { join } from 'node:path'
import { mkdir, stat } from 'node:fs/promises'
import { Level } from 'level'
import DHT, { type DHTOptions } from 'hyperdht'
import type { FastifyInstance } from 'fastify'
import { cryptoReady, toHex, type KeyPair, type Role, type AnnounceFacts, type Announce, type Heartbeat } from '../protocol/index.ts'
import { LevelStore } from '../actors/store.ts'
import { startSystem, stopActor, tell, mailboxDepths, type SystemRef, type ActorHealth } from '../actors/runtime.ts'
import { startMembership, type Membership } from '../actors/membership.ts'
import type { Clock, Logger, Store } from '../actors/ports.ts'
import type { ApiDeps } from '../api/deps.ts'
import type { AccountsService } from '../api/accounts/service.ts'
import type { LedgerJournal } from '../api/accounts/journal.ts'
import { FileBlobStore } from './adapters/blob-store.ts'
import { SwarmTransport } from './adapters/swarm-transport.ts'
import { Messenger } from './messenger.ts'
import { loadOrCreateKeystore } from './keystore.ts'
import { systemClock } from './clock.ts'
import { startRole, type RoleHandle } from './roles/index.ts'
import { PeerAuth, parseTrustedPeers } from './peer-auth.ts'
import { remoteChain, type NodeChain } from './chain.ts'
import type { NodeConfig } from './config.ts'
import { NodeMetrics, type HistogramSeries } from './metrics.ts'
import { MetricsServer } from './metrics-server.ts'
import { StorageGuard, guardStore, STORAGE_PROBE_KEY } from './storage.ts'
import type { Pino } from './logger.ts'
import { DataDirInUse } from './errors.ts'
import { isLoopback } from './peer-gate.ts'

/** Between attempts to reach the chain host while a node waits to be ready. */
export const CHAIN_HOST_RETRY_MS = 500

export const SOFTWARE = 'bwnet/0.1.0'
const SWARM_CLOSE_GRACE_MS = 1_500 // then the swarm is destroyed without unannouncing

export interface NodeOptions {
  config: NodeConfig
  logger: Pino
  clock?: Clock
  /** A DHT node to use (tests and the devnet pass `testnet.createNode()`); otherwise one is built from config. */
  dht?: DHT
  /** Whether this node serves HTTP (the API on orchestrators; the data endpoint for any role). */
  serveHttp?: boolean
}

export interface NodeInfo { role: Role, hotkey: string, publicKey: string, swarmKey: string, url: string | null, metricsUrl: string | null }

export class BwnetNode {
  readonly config: NodeConfig
  readonly logger: Pino
  readonly clock: Clock
  key!: KeyPair
  db!: Level<string, string>
  store!: Store
  /** Free space on the data directory as a state (node/storage.ts). */
  storage!: StorageGuard
  blobs!: FileBlobStore
  messenger!: Messenger
  transport!: SwarmTransport
  system!: SystemRef
  membership!: Membership
  auth!: PeerAuth
  app: FastifyInstance | null = null
  /** What the API was built with (null without HTTP); tests reach the live feeds through it. */
  apiDeps: ApiDeps | null = null
  /** Accounts, keys and credits of the API this node serves (orchestrators). */
  accounts: AccountsService | null = null
  url: string | null = null
  /** This node's Prometheus metrics (its own registry). */
  metrics!: NodeMetrics
  /** URL of the health and metrics server, when `metricsPort` is set. */
  metricsUrl: string | null = null
  #metricsServer: MetricsServer | null = null
  #ledgerJournal: LedgerJournal | null = null
  #role: RoleHandle | null = null
  #authChain: NodeChain | null = null
  #dht: DHT | undefined
  #serveHttp: boolean
  #ready = false
  /** Actors down now (crashed, not yet serving again), with why: /readyz says so. */
  readonly #down = new Map<string, string>()
  #stopping: Promise<void> | null = null

  constructor (opts: NodeOptions) {
    this.config = opts.config
    this.clock = opts.clock ?? systemClock
    this.#dht = opts.dht
    this.#serveHttp = opts.serveHttp ?? opts.config.role === 'orchestrator'
    this.logger = opts.logger
  }

  get ready (): boolean { return this.#ready }

  /** Why this node is not ready now (empty when it is): starting or stopping, an actor down, a store failing writes. */
  notReady (): string[] {
    const reasons = this.#ready ? [] : ['starting or stopping']
    reasons.push(...this.#down.values())
    const storage = this.storage?.problem()
    if (storage != null) reasons.push(`storage failing writes: ${storage}`)
    return reasons
  }

  /** Workers attached to this node (orchestrators). */
  workersAttached (): number { return this.#role?.workers?.() ?? 0 }

  /** The dev chain this node hosts, if any. */
  get devChain (): RoleHandle['devChain'] { return this.#role?.devChain }
  /** The attachments this orchestrator issued (node/attachments.ts). */
  get attachments (): RoleHandle['attachments'] { return this.#role?.attachments }
  /** Revokes a worker's attachment at this orchestrator (refused at once, its session ended). */
  /** Revokes a worker this orchestrator attaches, as `PUT /admin/workers/{hotkey}/revocation` does (kept across restarts). */
  async revokeWorker (worker: string): Promise<void> { await this.#role?.revokeWorker?.(worker) }

  /**
   * For a node whose chain lives on another node (`--chain-host`): waits until the chain host answers
   * for this node's own registration, so "ready" means connected to the chain host, known there and able
   * to work (a validator chosen as verifier, a worker attached). Resolves with the registration's role,
   * null when the chain host says this hotkey is not registered, or 'unreachable' after `timeoutMs`
   * (then the node keeps trying in the background like any peer). Immediately 'local' without a host.
   */
  async awaitChainHost (timeoutMs: number): Promise<string | null> {
    const chain = this.#authChain?.chain
    if (chain === undefined) return 'local'
    const until = this.clock.now() + timeoutMs
    for (;;) {
      try {
        const st = await chain.standing(this.key.address)
        return st?.role ?? null
      } catch {
        if (this.clock.now() >= until) return 'unreachable'
        await new Promise<void>(resolve => this.clock.setTimer(CHAIN_HOST_RETRY_MS, resolve))
      }
    }
  }

  info (): NodeInfo {
    return { role: this.config.role, hotkey: this.key.address, publicKey: toHex(this.key.publicKey), swarmKey: this.transport.publicKey, url: this.url, metricsUrl: this.metricsUrl }
  }

  async start (): Promise<this> {
    const { config } = this
    await cryptoReady()
    const dataMode = await ensureDataDir(config.data)
    const { key, created } = await loadOrCreateKeystore(join(config.data, 'hotkey.json'))
    this.key = key
    const log: Logger = this.logger.child({ role: config.role, hotkey: key.address })
    log.info({ event: 'identity', created, data: config.data }, created ? 'new identity created' : 'identity loaded')
    if ((dataMode & 0o077) !== 0) log.warn({ data: config.data, mode: `0${(dataMode & 0o777).toString(8)}`, event: 'data_dir_open' }, 'the data directory is open to other users: it holds the hotkey, the store (destinations\' credentials included) and staged files; chmod 700 it')

    this.db = new Level<string, string>(join(config.data, 'db'))
    try {
      await this.db.open()
    } catch (err) {
      // LevelDB's lock: another process (a node or devnet on the same data directory) holds the database.
      if ((err as { cause?: { code?: string } }).cause?.code === 'LEVEL_LOCKED') throw new DataDirInUse(config.data)
      throw err
    }
    const db = this.db
    const tables = new LevelStore(this.db as never)
    this.storage = new StorageGuard({
      dir: config.data, node: key.address, logger: log,
      minFreeBytes: config.minFreeMib === null || config.minFreeMib === undefined ? null : config.minFreeMib * 1024 * 1024,
      probe: async () => { await db.put(STORAGE_PROBE_KEY, new Date(this.clock.now()).toISOString(), { sync: true }) },
      reopen: async () => { await tables.reopen() }
    })
    await this.storage.open()
    this.store = guardStore(tables, this.storage)
    this.blobs = new FileBlobStore(join(config.data, 'blobs'))
    await this.blobs.open()

    this.metrics = new NodeMetrics(config.role)
    if (config.metricsPort !== null) {
      this.#metricsServer = new MetricsServer(this.metrics, () => this.notReady())
      this.metricsUrl = await this.#metricsServer.listen(config.metricsHost, config.metricsPort)
      log.info({ event: 'metrics_listening', url: this.metricsUrl }, 'health and metrics served')
    }

    // Peers are admitted by their registration (PeerAuth below): broadcasts reach admitted peers only.
    this.messenger = new Messenger(key, this.clock, log, {}, { admission: 'auth' })
    this.messenger.onDisconnected = (reason) => this.metrics.peerDisconnects.inc({ reason })
    this.#dht ??= buildDht(config)
    const dht = this.#dht
    this.transport = new SwarmTransport({
      dht,
      networkId: config.network,
      logger: log,
      events: {
        onFrame: (peer, frame) => this.messenger.receive(peer, frame),
        onPeerUp: (peer, address) => this.messenger.peerUp(peer, address),
        onPeerDown: (peer) => this.messenger.peerDown(peer)
      }
    })

    this.system = startSystem()
    const health: ActorHealth = {
      down: (actor, err, restartInMs) => {
        this.#down.set(actor, `${actor} down (${err?.message ?? 'crashed'})${restartInMs > 0 ? `, restarting in ${Math.round(restartInMs / 1000)} s` : ''}`)
        this.metrics.actorRestarts.inc({ actor })
      },
      up: (actor) => { this.#down.delete(actor) }
    }
    const env = { clock: this.clock, logger: log, health, stopping: () => this.#stopping !== null }
    const announce: AnnounceFacts = {
      role: config.role,
      hotkey: key.address,
      software: SOFTWARE,
      capacity: { slots: config.slots, bandwidthMbps: config.bandwidthMbps },
      dataUrl: null,
      attachTo: config.attachTo
    }
    this.membership = startMembership(this.system, { env, net: this.messenger, store: this.store, self: announce, load: () => this.#role?.load?.() ?? 0, workers: () => this.#role?.workers?.() ?? 0 })
    const peerDown: Array<(hotkey: string) => void> = [(hotkey) => tell(this.membership.ref, { type: 'disconnected', hotkey })]
    this.messenger.attach(this.transport, {
      onConnect: (peer) => this.messenger.announceTo(peer, announce),
      onDisconnect: (hotkey) => {
        // While stopping, the role and membership have already stopped (reverse order of start): the
        // connections the transport closes then are no news to act on, and an actor that still took
        // them would write to a store about to close.
        if (hotkey === undefined || this.#stopping !== null) return
        for (const fn of peerDown) { try { fn(hotkey) } catch (err) { log.error({ err }, 'peer-down handler failed') } }
      }
    })
    // Registrations decide who is a member and in which role; the announce's own role claim does not.
    this.auth = new PeerAuth({ self: { hotkey: key.address, role: config.role }, clock: this.clock, logger: log, messenger: this.messenger, trusted: parseTrustedPeers(config.trustedPeers), attachTo: config.attachTo })
    this.messenger.isRegistered = (hotkey) => this.auth.wasRegistered(hotkey)
    // A worker's attachment rides in its announces: on every connection from now on, and again on the
    // open ones (a peer met before it was attached holds that announce until the attachment comes).
    this.auth.onOwnAttachment = (a) => {
      announce.attachment = a
      for (const peer of this.messenger.gate.connections()) this.messenger.announceTo(peer, announce)
    }
    // Revoked by its orchestrator: announced without it from now on, and again on the open connections,
    // where an orchestrator that attaches workers on first contact may issue one of its own.
    this.auth.onOwnAttachmentRevoked = () => {
      delete announce.attachment
      for (const peer of this.messenger.gate.connections()) this.messenger.announceTo(peer, announce)
    }
    if (config.chainHost !== null && config.chainHost !== key.address) {
      this.#authChain = remoteChain({ clock: this.clock, logger: log, messenger: this.messenger }, config.chainHost)
      this.auth.useChain(this.#authChain.chain)
    }
    this.auth.on('announce', 'registered', (msg, _peer, s) => tell(this.membership.ref, { type: 'announce', from: msg.from, body: { ...msg.body as never as Announce, role: s.role } }))
    this.auth.on('heartbeat', 'registered', (msg, _peer, s) => tell(this.membership.ref, { type: 'heartbeat', from: msg.from, body: { ...msg.body as never as Heartbeat, role: s.role } }))

    this.#role = await startRole({
      role: config.role, key, config, clock: this.clock, logger: log, system: this.system, store: this.store,
      blobs: this.blobs, storage: this.storage, health, stopping: env.stopping, messenger: this.messenger, transport: this.transport, membership: this.membership, auth: this.auth, dataDir: config.data,
      onPeerDown: (fn) => { peerDown.push(fn) }, metrics: this.metrics
    })
    this.metrics.setSources({
      peers: async () => {
        const counts: Record<string, number> = { orchestrator: 0, worker: 0, validator: 0 }
        for (const p of (await this.membership.view()).peers) counts[p.role] = (counts[p.role] ?? 0) + 1
        return counts
      },
      mailboxes: () => mailboxDepths(this.system),
      framesWaiting: () => this.messenger.outboundQueued()
    })

    if (this.#serveHttp) {
      // Loaded here, not at the top: only a node that serves the API needs Fastify and the routes'
      // compiled schemas, and a devnet thread of workers and a validator is then ~10 MiB lighter.
      const [{ buildApp }, { AccountsService }, { LedgerJournal }] = await Promise.all([import('../api/app.ts'), import('../api/accounts/service.ts'), import('../api/accounts/journal.ts')])
      // Paid reads are answered once their charge is in the ledger's journal (docs/telemetry.md#charges-and-the-ledger).
      // A charge that finds the disk full is refused as any write is (507), and frees the ballast, so the
      // next one fits (node/storage.ts).
      const storage = this.storage
      this.#ledgerJournal = new LedgerJournal(join(config.data, 'ledger.journal'), {
        appendError: err => storage.failed(err) ? Object.assign(storage.refusal('a credit charge', 0, null), { cause: err }) : err
      })
      this.accounts = new AccountsService({ store: this.store, clock: this.clock, journal: this.#ledgerJournal })
      const replay = await this.accounts.start()
      if (replay.replayed > 0 || replay.ignoredBytes > 0) log.info({ event: 'ledger_journal_replayed', ...replay }, `ledger journal: ${replay.replayed} commit(s) the store lacked replayed`)
      if (replay.setAside !== null) log.warn({ event: 'ledger_journal_set_aside', ...replay }, `ledger journal: its commits do not follow the store's; kept in ${replay.setAside}, not replayed`)
      const deps: ApiDeps = {
        accounts: this.accounts,
        logger: this.logger.child({ role: config.role, component: 'api' }),
        self: { hotkey: key.address, role: config.role, software: SOFTWARE },
        membership: {
          counts: async () => (await this.membership.view()).counts,
          peers: async () => (await this.membership.view()).peers.map(p => ({
            hotkey: p.hotkey, role: p.role, software: p.software, attachTo: p.attachTo, lastSeenAt: new Date(p.lastSeenAt).toISOString()
          }))
        },
        ready: () => this.#ready,
        notReady: () => this.notReady(),
        ...this.#role.apiDeps
      }
      this.apiDeps = deps
      this.app = await buildApp(deps)
      const httpSeconds = this.metrics.httpSeconds
      // Each route's series kept by status and method: a request costs three map reads of values it already
      // has; the labels are built once per series (every paid read passes here).
      const series = new Map<string, Map<number, Map<string, HistogramSeries>>>()
      this.app.addHook('onResponse', (req, reply, done) => {
        const route = req.routeOptions.url ?? 'unmatched'
        let byStatus = series.get(route)
        if (byStatus === undefined) { byStatus = new Map(); series.set(route, byStatus) }
        let byMethod = byStatus.get(reply.statusCode)
        if (byMethod === undefined) { byMethod = new Map(); byStatus.set(reply.statusCode, byMethod) }
        let timer = byMethod.get(req.method)
        if (timer === undefined) {
          timer = httpSeconds.series({ method: req.method, route, status: String(reply.statusCode) })
          byMethod.set(req.method, timer)
        }
        timer.observe(reply.elapsedTime / 1000)
        done()
      })
      if (this.#role.routes) await this.#role.routes(this.app, deps)
      const address = await this.app.listen({ host: config.host, port: config.port })
      this.url = address
      announce.dataUrl = config.publicUrl ?? address
      await this.#role.listening?.(address)
    }

    await this.transport.start()
    this.#ready = true
    log.info({ event: 'node_started', url: this.url, swarmKey: this.transport.publicKey }, 'node started')
    return this
  }

  /** Stops in reverse order of start. Safe to call more than once. */
  stop (): Promise<void> {
    this.#stopping ??= this.#stop()
    return this.#stopping
  }

  async #stop (): Promise<void> {
    this.#ready = false
    if (this.app !== null) {
      // The close ends idle connections when it begins; one busy then is kept alive once its answer is
      // done, for the keep-alive timeout (72 s), and the close waits for it. From now on an answered
      // connection is closed once idle (within about 1 s: Node adds a second to the timeout).
      this.app.server.keepAliveTimeout = 1
      await this.app.close()
    }
    // The store takes the ledger's journaled charges before it closes (the next start would replay them).
    await this.accounts?.flush().catch(() => {})
    await this.#role?.stop()
    await this.#authChain?.stop()
    this.membership?.stop()
    if (this.transport !== undefined) {
      let timer: NodeJS.Timeout | undefined
      const graceful = this.transport.stop()
      const late = new Promise<'late'>(resolve => { timer = setTimeout(() => resolve('late'), SWARM_CLOSE_GRACE_MS) })
      if (await Promise.race([graceful.then(() => 'done' as const), late]) === 'late') await this.transport.swarm.destroy({ force: true })
      clearTimeout(timer)
    }
    if (this.system !== undefined) stopActor(this.system)
    this.storage?.close()
    if (this.db !== undefined) await this.db.close()
    this.#ledgerJournal?.close()
    await this.#metricsServer?.close()
    this.logger.info({ role: this.config.role, hotkey: this.key?.address, event: 'node_stopped' }, 'node stopped')
  }
}

/**
 * The DHT node of a standalone node. With a fixed `dhtPort` it is a persistent, reachable DHT node on
 * that UDP port (`dhtHost` is the address it binds and announces: a host's own address on a LAN);
 * without one it is ephemeral on a random port and reaches others through the bootstrap nodes.
 */
export function buildDht (config: Pick<NodeConfig, 'bootstrap' | 'dhtHost' | 'dhtPort'>): DHT {
  return new DHT(dhtOptions(config))
}

/**
 * The options buildDht gives the DHT. A node bound to loopback is declared not firewalled: every peer it
 * can meet is on the same host and reaches it directly. Left to find that out by sampling, a loaded
 * host's node took up to 28 s before peers could connect to it (docs/benchmarks.md, the devnet on two
 * threads), longer than a peer waits for its announce.
 */
export function dhtOptions (config: Pick<NodeConfig, 'bootstrap' | 'dhtHost' | 'dhtPort'>): DHTOptions {
  const host = config.dhtHost !== null ? { host: config.dhtHost } : {}
  if (config.dhtPort !== null) return { bootstrap: config.bootstrap, ...host, port: config.dhtPort, anyPort: false, ephemeral: false, firewalled: false }
  return { bootstrap: config.bootstrap, ...host, ephemeral: true, ...(config.dhtHost !== null && isLoopback(config.dhtHost) ? { firewalled: false } : {}) }
}

/**
 * Creates the data directory readable by its owner only (0700), and returns its mode: one made earlier
 * by hand may be open to other users, which the node reports rather than changes.
 */
export async function ensureDataDir (dir: string): Promise<number> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  return (await stat(dir)).mode
}
