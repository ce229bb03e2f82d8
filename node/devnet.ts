// The devnet: a whole network in one process on loopback — a local hyperdht testnet, one
// orchestrator with the API (or several: `orchestrators`), N workers and one validator (or several,
// with unequal stakes: `validators`) — the embedded default `make run` starts. Its chain is the
// embedded dev chain, or with `chain: 'subtensor'` a local Subtensor chain (chopsticks running the
// real runtime, node/adapters/subtensor/local.ts) with a subnet the devnet creates for its nodes.
import { namespaceDir } from './adapters/destinations/node-sink.ts'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { pino } from 'pino'
import type { DevnetThreadData, DevnetThreadMessage } from './devnet-thread.ts'
import { mkdir, writeFile, rename, readFile, rm } from 'node:fs/promises'
import createTestnet, { type Testnet } from 'hyperdht/testnet.js'
import { nodeIdOf, type Role } from '../protocol/index.ts'
import { BwnetNode, type NodeInfo } from './node.ts'
import { DataDirInUse, PortInUse } from './errors.ts'
import { loadOrCreateKeystore } from './keystore.ts'
import { DEVNET_VALIDATOR_STAKE_RAO, devnetValidatorStakeRao } from './chain.ts'
import { NODE_DEFAULTS, type DevnetConfig, type NodeConfig } from './config.ts'
import type { Pino } from './logger.ts'
import type { LocalSubtensor } from './adapters/subtensor/local.ts'
import { stripsTypes } from './ts-runtime.ts'
import { releaseStartupHeap } from './heap.ts'

export const DEVNET_NETWORK_ID = 'devnet'
const TESTNET_SIZE = 3
export const DEVNET_BLOCK_TIME_MS = 1_000 // seconds on the devnet, 12 s on a real chain
export const DEVNET_BLOCKS_PER_EPOCH = 10 // 10 s epochs
/** How long the second thread's nodes may take to stop before the thread is ended (within the CLI's 5 s shutdown). */
const THREAD_STOP_MS = 3_000
// The second thread's young generation, capped: by default V8 lets it grow to ~48 MiB, most of it idle
// between collections. The thread's garbage is mostly socket buffers, which V8 collects by their own
// count whatever the young generation's size; the cap took ~25 MiB off the devnet's peak RSS
// (bench:memory) and nothing measurable off its speed (bench:e2e), docs/benchmarks.md#memory.
const THREAD_YOUNG_GENERATION_MIB = 12

export interface DevnetFile {
  baseUrl: string
  dashboardUrl: string
  telemetryUrl: string
  keys: Record<string, string>
  network: string
  bootstrap: string[]
  /** The chain the network runs on; with `subtensor` its WebSocket RPC and the subnet's netuid. */
  chain: 'dev' | 'subtensor'
  chainUrl: string | null
  netuid: number | null
  /**
   * `id`: the node's stable UUID (protocol/node-id.ts), what audit routes accept besides the hotkey;
   * `uid`: its UID on the chain, null for workers (they hold an attachment, not a UID); `url`: an
   * orchestrator's API, else null; `metricsUrl`: the node's Prometheus endpoint (`…/metrics`).
   */
  nodes: Array<{ role: Role, name: string, hotkey: string, publicKey: string, id: string, uid: number | null, url: string | null, metricsUrl: string | null }>
  /** The devnet's process, and where its log file and the orchestrator's sink (delivered files) are. */
  pid: number
  logFile: string
  sinkDir: string
}

/** Beside devnet.json in the data directory: the pid of the devnet running on it (removed when it stops). */
export const DEVNET_PID_FILE = 'devnet.pid'
/** The devnet's log file in the data directory (the previous run's is kept as devnet.log.1). */
export const DEVNET_LOG_FILE = 'devnet.log'

/** A process with this pid is running (signal 0 checks without sending anything). */
function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch (err) { return (err as { code?: string }).code === 'EPERM' }
}

/**
 * Claims `data` for this process: refuses with a message naming the devnet running on it (its pid and
 * API, from its pid file and devnet.json) when there is one, otherwise writes this process's pid file.
 * A pid file left by a devnet that is gone (killed, crashed) is taken over. The databases' own locks
 * still refuse anything else that holds them (a `bwnet node` on the same directory).
 */
export async function claimDevnetData (data: string): Promise<void> {
  await mkdir(data, { recursive: true, mode: 0o700 })
  const path = join(data, DEVNET_PID_FILE)
  const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim())
  if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
    const file = await readFile(join(data, 'devnet.json'), 'utf8').then(t => JSON.parse(t) as Partial<DevnetFile>, () => null)
    const api = file?.pid === pid && typeof file.baseUrl === 'string' ? `, API ${file.baseUrl}` : ''
    throw new DataDirInUse(data, `the data directory ${data} is in use by a running devnet (pid ${pid}${api}): stop it (Ctrl-C where it runs, or kill ${pid}) or start this one with another --data (BWN_DATA)`)
  }
  await writeFile(path, `${process.pid}\n`)
}



/** A devnet subnet's tempo: an epoch is 11 blocks (33 s at the runtime's 3 s slots). */
export const DEVNET_SUBNET_TEMPO = 10
/** TAO each validator of a Subtensor devnet stakes: 1000, 500, 333, … (unequal, so stake weighting shows). */
export const devnetSubtensorStakeTao = (n: number): bigint => 1_000n / BigInt(n)
/** TAO (and α) the devnet subnet's pool is seeded with, so stake buys α at about the pool's price. */
const DEVNET_POOL_RESERVE_TAO = 1_000_000n
/** TAO each validator's hotkey account holds to pay its weight extrinsics' fees. */
const DEVNET_FEE_TAO = 1_000n

export interface DevnetHooks {
  /**
   * Keys the devnet bootstraps (admin, client, clientFree, console) once the orchestrator is up;
   * `previous`: the keys of the devnet.json an earlier run on the same data directory wrote, to keep.
   */
  bootstrapKeys?: (orchestrator: BwnetNode, previous: Record<string, string>) => Promise<Record<string, string>>
  /** Called when the second thread (threads: 2) ends without being stopped: its nodes are gone. */
  lost?: (err: Error) => void
}

/** The devnet's settings; test faults (none), chain (dev), orchestrators and validators (by chain) are optional. */
type Optional = 'testFaults' | 'chain' | 'orchestrators' | 'validators'
export type DevnetOptions = Omit<DevnetConfig, Optional> & Partial<Pick<DevnetConfig, Optional>>

/**
 * Source that loads devnet-thread in a worker: the compiled module, or in a source checkout the
 * TypeScript, by the runtime itself where it strips types, else through tsx (a worker does not inherit
 * the loader node/bin.js registers).
 */
function threadEntry (): string {
  const ts = import.meta.url.endsWith('.ts')
  const entry = new URL(`./devnet-thread.${ts ? 'ts' : 'js'}`, import.meta.url).href
  if (!ts || stripsTypes()) return `import(${JSON.stringify(entry)})`
  return `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}) })`
}

export class Devnet {
  readonly config: DevnetOptions
  readonly logger: Pino
  readonly hooks: DevnetHooks
  /** The nodes on this thread: all of them, or with `threads: 2` the orchestrator alone. */
  readonly nodes: Array<{ name: string, node: BwnetNode }> = []
  testnet!: Testnet
  file!: DevnetFile
  #stopping: Promise<void> | null = null
  #thread: Worker | null = null
  #threadExited: Promise<unknown> = Promise.resolve()
  /** The second thread's nodes (threads: 2), known here by what they reported at start. */
  #threadNodes: Array<{ name: string, info: NodeInfo }> = []
  /** The local Subtensor chain (chain: 'subtensor') and its block timer. */
  #subtensor: LocalSubtensor | null = null
  #netuid: number | null = null
  #blockTimer: NodeJS.Timeout | null = null
  #building: Promise<unknown> = Promise.resolve()
  #blocksStopped = false
  #claimed = false

  constructor (config: DevnetOptions, logger: Pino, hooks: DevnetHooks = {}) {
    this.config = config
    this.logger = logger
    this.hooks = hooks
  }

  get orchestrator (): BwnetNode { return this.nodes[0]!.node }
  get chain (): 'dev' | 'subtensor' { return this.config.chain ?? 'dev' }
  /** The network id its nodes share (the swarm topic): `devnet` unless told otherwise. */
  get network (): string { return this.config.network ?? DEVNET_NETWORK_ID }
  /** The local Subtensor chain of a `chain: 'subtensor'` devnet, once started. */
  get subtensor (): LocalSubtensor | null { return this.#subtensor }

  async start (): Promise<DevnetFile> {
    const { config } = this
    await claimDevnetData(config.data)
    this.#claimed = true
    const previous = await readFile(join(config.data, 'devnet.json'), 'utf8').then(t => (JSON.parse(t) as Partial<DevnetFile>).keys ?? {}, () => ({}))
    this.testnet = await createTestnet(TESTNET_SIZE, { host: '127.0.0.1' })
    const bootstrap = this.testnet.bootstrap.map(b => `${b.host}:${b.port}`)
    const base = { ...NODE_DEFAULTS, network: this.network, bootstrap, dhtHost: '127.0.0.1', logLevel: config.logLevel, blockTimeMs: DEVNET_BLOCK_TIME_MS, blocksPerEpoch: DEVNET_BLOCKS_PER_EPOCH, verifySampleRate: 1, inflightMib: config.inflightMib ?? NODE_DEFAULTS.inflightMib,
      // Everything in a devnet lives on loopback, its destinations too: the operator's explicit choice.
      allowPrivateDestinations: true, testFaults: config.testFaults ?? [],
      // Every node serves /healthz, /readyz and /metrics on a free loopback port (devnet.json nodes[].metricsUrl).
      metricsHost: '127.0.0.1', metricsPort: 0 } as NodeConfig
    const subtensor = this.chain === 'subtensor'
    const orchestrators = config.orchestrators ?? (subtensor ? 2 : 1)
    const validators = config.validators ?? (subtensor ? 2 : 1)
    const plan: Array<{ name: string, cfg: NodeConfig, stakeRao?: bigint }> = []
    // The first orchestrator (and validator) keeps the name and data directory of a devnet with one.
    for (let i = 1; i <= orchestrators; i++) {
      const name = i === 1 ? 'orchestrator' : `orchestrator-${i}`
      plan.push({ name, cfg: { ...base, role: 'orchestrator', port: i === 1 ? config.port : 0, data: join(config.data, name) } })
    }
    for (let i = 1; i <= config.workers; i++) plan.push({ name: `worker-${i}`, cfg: { ...base, role: 'worker', port: 0, data: join(config.data, `worker-${i}`) } })
    for (let i = 1; i <= validators; i++) {
      const name = i === 1 ? 'validator' : `validator-${i}`
      plan.push({ name, cfg: { ...base, role: 'validator', port: 0, data: join(config.data, name) }, stakeRao: devnetValidatorStakeRao(i) })
    }

    const make = ({ name, cfg }: { name: string, cfg: NodeConfig }): void => {
      this.nodes.push({ name, node: new BwnetNode({ config: cfg, logger: this.logger.child({ node: name }), dht: this.testnet.createNode() }) })
    }
    try {
      if (subtensor) {
        // The subnet first: every orchestrator and validator holds a UID (validators their stake and
        // permit) before any node starts; workers hold none.
        const chain = await this.#startSubtensor(plan)
        for (const p of plan) Object.assign(p.cfg, chain)
      }
      // The orchestrators first: the first hosts the dev chain, and workers meet them as soon as they join.
      const heads = plan.filter(p => p.cfg.role === 'orchestrator')
      make(heads[0]!)
      await this.orchestrator.start().catch((err: Error & { code?: string }) => {
        throw err.code === 'EADDRINUSE' && config.port !== 0 ? new PortInUse(config.port) : err
      })
      // On the dev chain the devnet registers its other orchestrators and its validators (roles come from
      // registrations, not announces); workers hold no registration: an orchestrator attaches them on
      // first contact (node/attachments.ts).
      const others = plan.filter(p => p !== heads[0])
      if (!subtensor) for (const p of others) if (p.cfg.role !== 'worker') await this.enroll(p.cfg.data, p.cfg.role, p.stakeRao)
      const chainHost = subtensor ? null : this.orchestrator.key.address
      const rest = others.map(p => ({ name: p.name, cfg: { ...p.cfg, chainHost } }))
      // Further orchestrators serve an API too: they stay on this thread.
      for (const p of rest.filter(p => p.cfg.role === 'orchestrator')) make(p)
      await Promise.all(this.nodes.slice(1).map(n => n.node.start()))
      const rest2 = rest.filter(p => p.cfg.role !== 'orchestrator')
      if ((config.threads ?? 1) === 2) {
        await this.#startThread(rest2)
      } else {
        const from = this.nodes.length
        for (const p of rest2) make(p)
        await Promise.all(this.nodes.slice(from).map(n => n.node.start()))
      }
      const baseUrl = this.orchestrator.url!
      const res = await fetch(`${baseUrl}/healthz`)
      if (!res.ok) throw new Error(`devnet API answered ${res.status} on /healthz`)
      const keys = this.hooks.bootstrapKeys ? await this.hooks.bootstrapKeys(this.orchestrator, previous) : {}
      // Before devnet.json says it is ready: what starting five nodes left on this thread's heap goes back
      // (the second thread does the same before it reports ready), docs/benchmarks.md#devnet-memory.
      await releaseStartupHeap()
      await this.#writeFile(baseUrl, keys, bootstrap)
    } catch (err) {
      await this.stop()
      throw err
    }
    this.logger.info({ event: 'devnet_ready', file: join(config.data, 'devnet.json'), baseUrl: this.file.baseUrl, nodes: this.file.nodes.length, threads: this.#thread === null ? 1 : 2 }, 'devnet ready')
    return this.file
  }

  async #writeFile (baseUrl: string, keys: Record<string, string>, bootstrap: string[]): Promise<void> {
    const urls = new Map(this.nodes.map(({ node }) => [node.key.address, node.url ?? null]))
    const nodes = await Promise.all([...this.nodes.map(({ name, node }) => ({ name, info: node.info() })), ...this.#threadNodes].map(async ({ name, info }) => {
      const uid = info.role === 'worker' ? null : await this.#uidOf(info.hotkey)
      const url = info.role === 'orchestrator' ? urls.get(info.hotkey) ?? null : null
      const metricsUrl = info.metricsUrl === null ? null : `${info.metricsUrl}/metrics`
      return { role: info.role, name, hotkey: info.hotkey, publicKey: info.publicKey, id: nodeIdOf(info.hotkey), uid, url, metricsUrl }
    }))
    // Delivered files land in the organization's namespace of the orchestrator's sink (docs/destinations.md#tenant-namespaces).
    const org = (await this.orchestrator.accounts?.listOrganizations())?.[0]
    const sinkRoot = join(this.config.data, 'orchestrator', 'sink')
    this.file = {
      baseUrl,
      dashboardUrl: baseUrl,
      telemetryUrl: baseUrl,
      keys,
      network: this.network,
      bootstrap,
      chain: this.chain,
      chainUrl: this.#subtensor?.url ?? null,
      netuid: this.#netuid,
      nodes,
      pid: process.pid,
      logFile: join(this.config.data, DEVNET_LOG_FILE),
      sinkDir: org !== undefined ? namespaceDir(sinkRoot, org.id) : sinkRoot
    }
    const path = join(this.config.data, 'devnet.json')
    await writeFile(`${path}.tmp`, JSON.stringify(this.file, null, 2) + '\n', { mode: 0o600 })
    await rename(`${path}.tmp`, path)
  }

  /** A hotkey's UID on the devnet's chain, or null. */
  async #uidOf (hotkey: string): Promise<number | null> {
    if (this.#subtensor !== null) {
      const uid = (await this.#subtensor.api.query.subtensorModule.uids(this.#netuid!, hotkey)).toJSON() as number | null
      return uid === null ? null : Number(uid)
    }
    return await this.orchestrator.devChain?.uidOf(hotkey) ?? null
  }

  /**
   * Starts the local Subtensor chain, creates the devnet's subnet (owned by //Alice, whose own address
   * is the owner hotkey, UID 0: where an epoch without work burns its weight), registers the validators
   * and orchestrators of `plan`,
   * stakes the validators (1000 TAO, 500 TAO, …) and waits for their permits; then stamps blocks with
   * the wall clock and builds one every slot. Returns the chain settings every node runs with.
   */
  async #startSubtensor (plan: Array<{ name: string, cfg: NodeConfig }>): Promise<Pick<NodeConfig, 'chain' | 'chainUrl' | 'netuid' | 'blockTimeMs' | 'blocksPerEpoch'>> {
    // Loaded only here: a devnet on the dev chain never loads chopsticks or the polkadot libraries.
    const local = await import('./adapters/subtensor/local.ts')
    const log = this.logger.child({ component: 'chopsticks' })
    const s = await local.startLocalSubtensor({ onOutput: (line) => { log.debug({ event: 'chopsticks_output' }, line) } })
    this.#subtensor = s
    const hotkeyOf = async (data: string): Promise<string> => {
      await mkdir(data, { recursive: true, mode: 0o700 })
      return (await loadOrCreateKeystore(join(data, 'hotkey.json'))).key.address
    }
    const validators = await Promise.all(plan.filter(p => p.cfg.role === 'validator').map(p => hotkeyOf(p.cfg.data)))
    const orchestrators = await Promise.all(plan.filter(p => p.cfg.role === 'orchestrator').map(p => hotkeyOf(p.cfg.data)))
    const stakeTao = Object.fromEntries(validators.map((h, i) => [h, devnetSubtensorStakeTao(i + 1)]))
    const netuid = await local.createLocalSubnet(s, {
      ownerHotkey: s.owner.address, hotkeys: [...validators, ...orchestrators], stakeTao, tempo: DEVNET_SUBNET_TEMPO, weightsRateLimit: 0, poolReserve: DEVNET_POOL_RESERVE_TAO
    })
    this.#netuid = netuid
    for (const h of validators) await local.fundAccount(s, h, DEVNET_FEE_TAO)
    // Permits are handed out at the subnet's epoch run: at most one epoch of blocks away.
    const q = s.api.query.subtensorModule
    const permitted = async (): Promise<boolean> => {
      const permits = (await q.validatorPermit(netuid)).toJSON() as boolean[]
      for (const h of validators) {
        const uid = (await q.uids(netuid, h)).toJSON() as number | null
        if (uid === null || permits[uid] !== true) return false
      }
      return true
    }
    for (let i = 0; i <= 2 * (DEVNET_SUBNET_TEMPO + 1) && !(await permitted()); i++) await s.newBlocks(1)
    if (!(await permitted())) throw new Error(`the devnet's validators got no permit on subnet ${netuid}`)
    // Setup built blocks faster than their slots: from here on, blocks carry the wall clock's time.
    const slotMs = Number((await s.api.call.auraApi.slotDuration()).toString())
    await local.setChainTime(s, Date.now() + slotMs)
    let next = Date.now() + slotMs
    const tick = (): void => {
      this.#building = s.newBlocks(1).catch((err: Error) => {
        if (!this.#blocksStopped) this.logger.warn({ event: 'devnet_block_failed', err: err.message }, 'building a block failed; the next slot tries again')
      }).finally(() => {
        if (this.#blocksStopped) return
        next = Math.max(next + slotMs, Date.now())
        this.#blockTimer = setTimeout(tick, next - Date.now())
      })
    }
    this.#blockTimer = setTimeout(tick, next - Date.now())
    this.logger.info({ event: 'devnet_subnet', url: s.url, netuid, validators, orchestrators, slotMs, tempo: DEVNET_SUBNET_TEMPO }, `subnet ${netuid} on a local Subtensor chain at ${s.url}`)
    return { chain: 'subtensor', chainUrl: s.url, netuid, blockTimeMs: slotMs, blocksPerEpoch: DEVNET_SUBNET_TEMPO + 1 }
  }

  async #stopSubtensor (): Promise<void> {
    this.#blocksStopped = true
    if (this.#blockTimer !== null) clearTimeout(this.#blockTimer)
    await this.#building
    await this.#subtensor?.stop()
  }

  /** Starts `plans` on the second thread; resolves once every one of them has started. */
  async #startThread (plans: Array<{ name: string, cfg: NodeConfig }>): Promise<void> {
    // The thread logs at this logger's level: what its destination may write somewhere (the devnet's log
    // file takes info even while the terminal shows only warnings).
    const data: DevnetThreadData = { plans, bootstrap: this.testnet.bootstrap, logLevel: this.logger.level }
    const thread = new Worker(threadEntry(), { eval: true, name: 'bwnet-devnet-nodes', workerData: data, resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MIB } })
    this.#thread = thread
    this.#threadExited = new Promise(resolve => thread.once('exit', resolve))
    // The thread's lines are finished JSON (its own logger redacts them): written as they are to this
    // logger's destination, or, for a logger that is not pino's, logged again as objects.
    const stream = (this.logger as unknown as Record<symbol, { write?: (line: string) => void } | undefined>)[pino.symbols.streamSym]
    const out = typeof stream?.write === 'function' ? (line: string) => stream.write!(line) : (line: string) => { this.logger.info(JSON.parse(line)) }
    const ready = new Promise<Array<{ name: string, info: NodeInfo }>>((resolve, reject) => {
      thread.on('message', (m: DevnetThreadMessage) => {
        if (m.op === 'log') out(m.line)
        else if (m.op === 'ready') resolve(m.nodes)
        else if (m.op === 'failed') reject(new Error(`devnet nodes did not start: ${m.error}`))
      })
      thread.once('error', reject)
      thread.once('exit', (code) => reject(new Error(`devnet node thread exited (code ${code}) before its nodes started`)))
    })
    this.#threadNodes = await ready
    // After start, the thread's end is the end of the devnet's workers and validator: say so, loudly.
    thread.on('error', (err) => { this.logger.error({ err, event: 'devnet_thread_failed' }, 'devnet node thread failed') })
    thread.once('exit', (code) => {
      if (this.#stopping !== null) return
      this.logger.error({ code, event: 'devnet_thread_exited' }, 'devnet node thread exited: its workers and validator are gone')
      this.hooks.lost?.(new Error(`devnet node thread exited with code ${code}`))
    })
  }

  /** Stops the second thread's nodes, then the thread; ends it outright if it takes longer than THREAD_STOP_MS. */
  async #stopThread (): Promise<void> {
    const thread = this.#thread
    if (thread === null) return
    thread.postMessage({ op: 'stop' })
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<'late'>(resolve => { timer = setTimeout(() => resolve('late'), THREAD_STOP_MS) })
    if (await Promise.race([this.#threadExited, late]) === 'late') {
      this.logger.warn({ event: 'devnet_thread_stop_timeout', ms: THREAD_STOP_MS }, 'devnet node thread did not stop in time; ending it')
      await thread.terminate()
    }
    clearTimeout(timer)
  }

  /**
   * Registers the node whose data directory is `data` (its identity created there if new) on the
   * devnet's chain in `role`; validators get stake (`stakeRao`, 1000 α by default), hence a permit.
   * Returns the node's hotkey.
   */
  async enroll (data: string, role: Role, stakeRao: bigint = DEVNET_VALIDATOR_STAKE_RAO): Promise<string> {
    const chain = this.orchestrator.devChain
    if (chain === undefined) throw new Error('the devnet orchestrator hosts no chain')
    await mkdir(data, { recursive: true, mode: 0o700 })
    const { key } = await loadOrCreateKeystore(join(data, 'hotkey.json'))
    await chain.enroll(key.address, role, role === 'validator' ? { stakeRao } : {})
    return key.address
  }

  stop (): Promise<void> {
    this.#stopping ??= (async () => {
      // Workers and validator first, the orchestrator (and its API) last, then the DHT itself.
      await this.#stopThread()
      await Promise.allSettled(this.nodes.slice(1).reverse().map(n => n.node.stop()))
      if (this.nodes[0] !== undefined) await this.nodes[0].node.stop()
      await this.testnet?.destroy()
      await this.#stopSubtensor()
      if (this.#claimed) await rm(join(this.config.data, DEVNET_PID_FILE), { force: true })
    })()
    return this.#stopping
  }
}
