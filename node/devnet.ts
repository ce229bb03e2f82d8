// The devnet: a whole network in one process on loopback — a local hyperdht testnet, one
// orchestrator with the API, N workers and one validator (or several, with unequal stakes:
// `validators`) — the embedded default `make run` starts.
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { pino } from 'pino'
import type { DevnetThreadData, DevnetThreadMessage } from './devnet-thread.ts'
import { mkdir, writeFile, rename } from 'node:fs/promises'
import createTestnet, { type Testnet } from 'hyperdht/testnet.js'
import { nodeIdOf, type Role } from '../protocol/index.ts'
import { BwnetNode, type NodeInfo } from './node.ts'
import { loadOrCreateKeystore } from './keystore.ts'
import { DEVNET_VALIDATOR_STAKE_RAO, devnetValidatorStakeRao } from './chain.ts'
import { NODE_DEFAULTS, type DevnetConfig, type NodeConfig } from './config.ts'
import type { Pino } from './logger.ts'

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
  /** `id`: the node's stable UUID (protocol/node-id.ts), what audit routes accept besides the hotkey. */
  nodes: Array<{ role: Role, name: string, hotkey: string, publicKey: string, id: string }>
}

export interface DevnetHooks {
  /** Keys the devnet bootstraps (admin, client, console) once the orchestrator is up. */
  bootstrapKeys?: (orchestrator: BwnetNode) => Promise<Record<string, string>>
  /** Called when the second thread (threads: 2) ends without being stopped: its nodes are gone. */
  lost?: (err: Error) => void
}

/** The devnet's settings; test faults are optional (none by default). */
export type DevnetOptions = Omit<DevnetConfig, 'testFaults'> & Partial<Pick<DevnetConfig, 'testFaults'>>

/**
 * Source that loads devnet-thread in a worker: the compiled module, or in a source checkout the
 * TypeScript through tsx (a worker does not inherit the loader node/bin.js registers).
 */
function threadEntry (): string {
  const ts = import.meta.url.endsWith('.ts')
  const entry = new URL(`./devnet-thread.${ts ? 'ts' : 'js'}`, import.meta.url).href
  if (!ts) return `import(${JSON.stringify(entry)})`
  return `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}) })`
}

export class Devnet {
  /** The nodes on this thread: all of them, or with `threads: 2` the orchestrator alone. */
  readonly nodes: Array<{ name: string, node: BwnetNode }> = []
  testnet!: Testnet
  file!: DevnetFile
  #stopping: Promise<void> | null = null
  #thread: Worker | null = null
  #threadExited: Promise<unknown> = Promise.resolve()
  /** The second thread's nodes (threads: 2), known here by what they reported at start. */
  #threadNodes: Array<{ name: string, info: NodeInfo }> = []

  constructor (readonly config: DevnetOptions, readonly logger: Pino, readonly hooks: DevnetHooks = {}) {}

  get orchestrator (): BwnetNode { return this.nodes[0]!.node }

  async start (): Promise<DevnetFile> {
    const { config } = this
    await mkdir(config.data, { recursive: true })
    this.testnet = await createTestnet(TESTNET_SIZE, { host: '127.0.0.1' })
    const bootstrap = this.testnet.bootstrap.map(b => `${b.host}:${b.port}`)
    const base = { ...NODE_DEFAULTS, network: DEVNET_NETWORK_ID, bootstrap, dhtHost: '127.0.0.1', logLevel: config.logLevel, blockTimeMs: DEVNET_BLOCK_TIME_MS, blocksPerEpoch: DEVNET_BLOCKS_PER_EPOCH, verifySampleRate: 1, inflightMib: config.inflightMib ?? NODE_DEFAULTS.inflightMib,
      // Everything in a devnet lives on loopback, its destinations too: the operator's explicit choice.
      allowPrivateDestinations: true, testFaults: config.testFaults ?? [] } as NodeConfig
    const plan: Array<{ name: string, cfg: NodeConfig, stakeRao?: bigint }> = [
      { name: 'orchestrator', cfg: { ...base, role: 'orchestrator', port: config.port, data: join(config.data, 'orchestrator') } }
    ]
    for (let i = 1; i <= config.workers; i++) plan.push({ name: `worker-${i}`, cfg: { ...base, role: 'worker', port: 0, data: join(config.data, `worker-${i}`) } })
    // The first validator keeps the name (and data directory) of a one-validator devnet.
    for (let i = 1; i <= (config.validators ?? 1); i++) {
      const name = i === 1 ? 'validator' : `validator-${i}`
      plan.push({ name, cfg: { ...base, role: 'validator', port: 0, data: join(config.data, name) }, stakeRao: devnetValidatorStakeRao(i) })
    }

    const make = ({ name, cfg }: { name: string, cfg: NodeConfig }): void => {
      this.nodes.push({ name, node: new BwnetNode({ config: cfg, logger: this.logger.child({ node: name }), dht: this.testnet.createNode() }) })
    }
    try {
      // The orchestrator first: it hosts the dev chain, and workers meet it as soon as they join.
      make(plan[0]!)
      await this.orchestrator.start()
      // The devnet registers its validators on its chain (roles come from registrations, not announces);
      // workers hold no registration: the orchestrator attaches them on first contact (node/attachments.ts).
      for (const p of plan.slice(1)) if (p.cfg.role !== 'worker') await this.enroll(p.cfg.data, p.cfg.role, p.stakeRao)
      const rest = plan.slice(1).map(p => ({ name: p.name, cfg: { ...p.cfg, chainHost: this.orchestrator.key.address } }))
      if ((config.threads ?? 1) === 2) {
        await this.#startThread(rest)
      } else {
        for (const p of rest) make(p)
        await Promise.all(this.nodes.slice(1).map(n => n.node.start()))
      }
      const baseUrl = this.orchestrator.url!
      const res = await fetch(`${baseUrl}/healthz`)
      if (!res.ok) throw new Error(`devnet API answered ${res.status} on /healthz`)
      const keys = this.hooks.bootstrapKeys ? await this.hooks.bootstrapKeys(this.orchestrator) : {}
      await this.#writeFile(baseUrl, keys, bootstrap)
    } catch (err) {
      await this.stop()
      throw err
    }
    this.logger.info({ event: 'devnet_ready', file: join(config.data, 'devnet.json'), baseUrl: this.file.baseUrl, nodes: this.file.nodes.length, threads: this.#thread === null ? 1 : 2 }, 'devnet ready')
    return this.file
  }

  async #writeFile (baseUrl: string, keys: Record<string, string>, bootstrap: string[]): Promise<void> {
    this.file = {
      baseUrl,
      dashboardUrl: baseUrl,
      telemetryUrl: baseUrl,
      keys,
      network: DEVNET_NETWORK_ID,
      bootstrap,
      nodes: [...this.nodes.map(({ name, node }) => ({ name, info: node.info() })), ...this.#threadNodes].map(({ name, info }) => {
        return { role: info.role, name, hotkey: info.hotkey, publicKey: info.publicKey, id: nodeIdOf(info.hotkey) }
      })
    }
    const path = join(this.config.data, 'devnet.json')
    await writeFile(`${path}.tmp`, JSON.stringify(this.file, null, 2) + '\n', { mode: 0o600 })
    await rename(`${path}.tmp`, path)
  }

  /** Starts `plans` on the second thread; resolves once every one of them has started. */
  async #startThread (plans: Array<{ name: string, cfg: NodeConfig }>): Promise<void> {
    const data: DevnetThreadData = { plans, bootstrap: this.testnet.bootstrap, logLevel: this.config.logLevel }
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
    await mkdir(data, { recursive: true })
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
    })()
    return this.#stopping
  }
}
