// `bwnet node` and `bwnet devnet`: long-running commands with graceful shutdown on SIGINT/SIGTERM.
import { Command } from 'commander'
import { BwnetNode } from '../node.ts'
import { isAbsolute, join } from 'node:path'
import { Devnet, claimDevnetData, DEVNET_LOG_FILE, type DevnetFile, type DevnetHooks } from '../devnet.ts'
import { resolveConfig, NodeSettings, NODE_SETTINGS, NODE_DEFAULTS, DevnetSettings, DEVNET_SETTINGS, DEVNET_DEFAULTS } from '../config.ts'
import { createLogger, createDevnetLogger } from '../logger.ts'
import { tuneHeapForDataPlane, releaseStartupHeap } from '../heap.ts'
import { bootstrapDevnetKeys } from '../../api/accounts/devnet.ts'
import { hashPool } from '../adapters/hash-pool.ts'
import { invocation } from './transfer/invocation.ts'

export const SHUTDOWN_TIMEOUT_MS = 5_000 // everything must be closed within this after a signal
export const CHAIN_HOST_WAIT_MS = 20_000 // how long `bwnet node` waits for its chain host before saying ready anyway

/** Runs `stop` on the first SIGINT/SIGTERM; exits 0 when it finishes in time, 1 otherwise. */
export function onShutdown (stop: () => Promise<void>, log: { info (o: object, m: string): void, error (o: object, m: string): void }): void {
  let stopping = false
  const handle = (signal: string): void => {
    if (stopping) return
    stopping = true
    log.info({ event: 'shutdown', signal }, 'shutting down')
    const timer = setTimeout(() => { log.error({ event: 'shutdown_timeout' }, 'shutdown took too long; exiting'); process.exit(1) }, SHUTDOWN_TIMEOUT_MS)
    stop().then(() => { clearTimeout(timer); process.exit(0) }, (err) => { log.error({ err }, 'shutdown failed'); process.exit(1) })
  }
  process.once('SIGINT', () => handle('SIGINT'))
  process.once('SIGTERM', () => handle('SIGTERM'))
}

/** Commander collector for repeatable list flags: `--x a,b --x c` gives [a, b, c]. */
export function collectList (value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map(s => s.trim()).filter(Boolean)]
}

/** Options the user typed (commander leaves the others undefined, so defaults stay in one place). */
function typed (cmd: Command): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(cmd.opts())) if (v !== undefined && k !== 'config') out[k] = v
  return out
}

export function nodeCommand (): Command {
  return new Command('node')
    .description('run one node in one role')
    .option('--role <role>', 'orchestrator | worker | validator (BWN_ROLE)')
    .option('--data <dir>', `data directory (BWN_DATA, default ${NODE_DEFAULTS.data})`)
    .option('--network <id>', `network id (BWN_NETWORK, default ${NODE_DEFAULTS.network})`)
    .option('--bootstrap <list>', 'DHT bootstrap host:port; repeatable or comma-separated (BWN_BOOTSTRAP, required)', collectList)
    .option('--dht-host <addr>', 'address the DHT node binds and announces, e.g. 127.0.0.1 (BWN_DHT_HOST)')
    .option('--dht-port <n>', 'fixed UDP port of the DHT node, for a firewall rule (BWN_DHT_PORT, default random)')
    .option('--host <addr>', `HTTP listen address (BWN_HOST, default ${NODE_DEFAULTS.host})`)
    .option('--port <n>', `HTTP port (BWN_PORT, default ${NODE_DEFAULTS.port})`)
    .option('--slots <n>', `tasks a worker runs at once (BWN_SLOTS, default ${NODE_DEFAULTS.slots})`)
    .option('--bandwidth-mbps <n>', 'claimed bandwidth (BWN_BANDWIDTH_MBPS)')
    .option('--attach-to <hotkey>', 'orchestrator a worker attaches to (BWN_ATTACH_TO)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (LOG_LEVEL)')
    .option('--public-url <url>', 'base URL peers use to reach this node over HTTP (BWN_PUBLIC_URL)')
    .option('--chain-host <hotkey>', 'hotkey of the node hosting the dev chain; validators need it (BWN_CHAIN_HOST)')
    .option('--block-time-ms <n>', 'dev chain block time, chain host only (BWN_BLOCK_TIME_MS, default 12000)')
    .option('--blocks-per-epoch <n>', 'dev chain epoch length, chain host only (BWN_BLOCKS_PER_EPOCH, default 360)')
    .option('--verify-sample-rate <r>', 'fraction of deliveries a validator reads back (BWN_VERIFY_SAMPLE_RATE, default 1)')
    .option('--chain <kind>', 'dev (embedded dev chain) | subtensor (BWN_CHAIN, default dev)')
    .option('--chain-url <url>', 'WebSocket RPC of a Subtensor node, with --chain subtensor (BWN_CHAIN_URL)')
    .option('--netuid <n>', 'subnet id on Subtensor, with --chain subtensor (BWN_NETUID)')
    .option('--skip-registration-check', 'start without a UID on the subnet (test networks; BWN_SKIP_REGISTRATION_CHECK)')
    .option('--inflight-mib <n>', `MiB of chunk data the node holds in memory at once (BWN_INFLIGHT_MIB, default ${NODE_DEFAULTS.inflightMib})`)
    .option('--min-free-mib <n>', 'MiB kept free on the data directory\'s filesystem; new transfers and chunks get 507 past it (BWN_MIN_FREE_MIB, default 5% of it, at most 1 GiB)')
    .option('--result-gap-ms <n>', `orchestrators: how long (at least) a worker may hold work without progress or a result (BWN_RESULT_GAP_MS, default ${NODE_DEFAULTS.resultGapMs})`)
    .option('--sweep-interval-ms <n>', `orchestrators: between two disk sweeps of unreferenced blobs and abandoned sink partials (BWN_SWEEP_INTERVAL_MS, default ${NODE_DEFAULTS.sweepIntervalMs})`)
    .option('--sweep-grace-ms <n>', `orchestrators: the disk sweep deletes no file younger than this (BWN_SWEEP_GRACE_MS, default ${NODE_DEFAULTS.sweepGraceMs})`)
    .option('--history-retention-days <n>', `orchestrators: days a finished transfer keeps its delivery history; 0 keeps it for ever (BWN_HISTORY_RETENTION_DAYS, default ${NODE_DEFAULTS.historyRetentionDays})`)
    .option('--record-retention-days <n>', `orchestrators: days a finished transfer keeps its record and chunks (GET /transfers/{id} answers 404 after); 0 keeps it for ever (BWN_RECORD_RETENTION_DAYS, default ${NODE_DEFAULTS.recordRetentionDays})`)
    .option('--metrics-port <n>', 'serve /healthz, /readyz and /metrics on this port; 0 picks one (BWN_METRICS_PORT, default off)')
    .option('--metrics-host <addr>', `listen address of the metrics server (BWN_METRICS_HOST, default ${NODE_DEFAULTS.metricsHost})`)
    .option('--test-faults <list>', 'test-only fault switches: corrupt, crash-after-chunk, crash-after-finalize, crash-during-delivery, crash-before-complete, crash-after-complete (BWN_TEST_FAULTS)')
    .option('--allow-private-destinations', 'let destinations reach loopback, private and link-local addresses (BWN_ALLOW_PRIVATE_DESTINATIONS, default off)')
    .option('--trusted-peers <list>', 'test networks only: comma-separated role:hotkey entries trusted without a chain registration (BWN_TRUSTED_PEERS)')
    .option('--max-workers <n>', `orchestrators: workers attached at once by signed attachment; 0 attaches none (BWN_MAX_WORKERS, default ${NODE_DEFAULTS.maxWorkers})`)
    .option('--max-workers-per-address <n>', `orchestrators: of those, from one remote address (IPv6: one /64), loopback exempt; 0: no cap (BWN_MAX_WORKERS_PER_ADDRESS, default ${NODE_DEFAULTS.maxWorkersPerAddress})`)
    .option('--worker-allowlist <list>', 'orchestrators: comma-separated worker hotkeys, the only ones attached (BWN_WORKER_ALLOWLIST, default any)')
    .option('--config <file>', 'JSON config file with any of the settings above by name')
    .action(async (opts: { config?: string }, cmd: Command) => {
      const config = resolveConfig(NodeSettings, NODE_SETTINGS, NODE_DEFAULTS, { flags: typed(cmd), env: process.env, configFile: opts.config })
      tuneHeapForDataPlane()
      hashPool() // BWN_HASH_THREADS checked now, not at the first chunk
      const logger = createLogger({ level: config.logLevel })
      const node = new BwnetNode({ config, logger })
      onShutdown(() => node.stop(), logger)
      await node.start()
      await releaseStartupHeap() // what loading and starting left on the heap (node/heap.ts)
      // Ready once the chain host knows this node (a validator can be chosen, a worker can attach).
      const registration = await node.awaitChainHost(CHAIN_HOST_WAIT_MS)
      // A worker holds no registration: its orchestrator attaches it (docs/node.md#attaching-workers).
      if (registration === null && config.role !== 'worker') logger.warn({ event: 'not_registered', hotkey: node.info().hotkey }, 'this hotkey is not registered on the chain; enroll it (bwnet chain enroll) and peers will accept it')
      // The chain host disconnects a peer whose hotkey is not registered (docs/security.md#peers), so an
      // unregistered node mostly sees no answer at all rather than "not registered".
      if (registration === 'unreachable') logger.warn({ event: 'chain_host_unreachable' }, `the chain host did not answer within ${CHAIN_HOST_WAIT_MS / 1000} s; still trying (is this hotkey registered? peers disconnect unregistered hotkeys)`)
      logger.info({ event: 'node_ready', registration, ...node.info() }, 'node ready')
    })
}

/**
 * What `bwnet devnet` prints once it is up (to stderr, whatever the log level): where everything is and
 * one command to try, runnable as printed from the checkout it was started in.
 */
export function devnetBanner (file: DevnetFile, config: { data: string, logLevel: string }): string {
  const counts = new Map<string, number>()
  for (const n of file.nodes) counts.set(n.role, (counts.get(n.role) ?? 0) + 1)
  const nodes = [...counts].map(([role, n]) => `${n} ${role}${n > 1 ? 's' : ''}`).join(', ')
  const json = join(config.data, 'devnet.json')
  const required = isAbsolute(json) ? json : `./${json}`
  const metrics = file.nodes.find(n => n.role === 'orchestrator')?.metricsUrl ?? 'not served'
  return [
    `bwnet devnet up: ${nodes} on the ${file.chain} chain`,
    `  API        ${file.baseUrl}`,
    `  dashboard  ${file.dashboardUrl}/`,
    `  docs       ${file.baseUrl}/docs`,
    `  metrics    ${metrics} (every node's: nodes[].metricsUrl in devnet.json)`,
    `  keys       ${json} (keys.client: no request limit; keys.clientFree: the Free plan's limits)`,
    `  delivered  ${file.sinkDir}`,
    `  logs       ${file.logFile} (this terminal: ${config.logLevel} and above; --log-level info shows more)`,
    `  try        ${invocation()} transfer put README.md --api ${file.baseUrl} --key "$(node -p "require('${required}').keys.client")"`,
    'Ctrl-C stops it; a restart on the same --data keeps the keys and the data.'
  ].join('\n') + '\n'
}

export function devnetCommand (hooks: DevnetHooks = { bootstrapKeys: async (o, previous) => ({ ...await bootstrapDevnetKeys(o.accounts!, previous) }) }): Command {
  return new Command('devnet')
    .description('run a whole network on loopback in one process: a DHT testnet, 1 orchestrator, N workers, 1 validator (or more), on the dev chain or a local Subtensor subnet')
    .option('--port <n>', `API port (BWN_PORT, default ${DEVNET_DEFAULTS.port})`)
    .option('--data <dir>', `data directory; devnet.json is written there (BWN_DATA, default ${DEVNET_DEFAULTS.data})`)
    .option('--workers <n>', `worker nodes (BWN_WORKERS, default ${DEVNET_DEFAULTS.workers})`)
    .option('--chain <chain>', 'dev: the embedded dev chain; subtensor: a local Subtensor chain (chopsticks, a development dependency, runs the runtime in test/fixtures/subtensor) with a subnet of the devnet\'s nodes (BWN_CHAIN, default dev)')
    .option('--orchestrators <n>', 'orchestrator nodes, 1 to 4 (BWN_ORCHESTRATORS, default 1 on the dev chain, 2 on subtensor)')
    .option('--validators <n>', 'validator nodes, 1 to 10, staking 1000 α, 900 α, 800 α, … on the dev chain, 1000 TAO, 500 TAO, … on subtensor (BWN_VALIDATORS, default 1 on the dev chain, 2 on subtensor)')
    .option('--inflight-mib <n>', `MiB of chunk data each node holds in memory at once (BWN_INFLIGHT_MIB, default ${DEVNET_DEFAULTS.inflightMib})`)
    .option('--network <id>', `network id its nodes share, the swarm topic: two devnets of one id on one machine could meet (BWN_NETWORK, default ${DEVNET_DEFAULTS.network})`)
    .option('--threads <n>', `1: every node on one thread; 2: workers and validator on a second thread, so the devnet uses two cores (BWN_DEVNET_THREADS, default 2 on a machine with two or more cores, else 1; here ${DEVNET_DEFAULTS.threads})`)
    .option('--log-level <level>', `what the terminal shows: fatal|error|warn|info|debug|trace|silent (LOG_LEVEL, default ${DEVNET_DEFAULTS.logLevel}); the whole log, info and above, is in DATA/${DEVNET_LOG_FILE}`)
    .option('--test-faults <list>', 'test-only fault switches for every node, as for `bwnet node` (BWN_TEST_FAULTS)')
    .option('--config <file>', 'JSON config file with any of the settings above by name')
    .action(async (opts: { config?: string }, cmd: Command) => {
      const config = resolveConfig(DevnetSettings, DEVNET_SETTINGS, DEVNET_DEFAULTS, { flags: typed(cmd), env: process.env, configFile: opts.config })
      tuneHeapForDataPlane()
      hashPool() // BWN_HASH_THREADS checked now, not at the first chunk
      // The data directory first: a second devnet on it says who holds it before touching its log file.
      await claimDevnetData(config.data)
      const { logger, flush } = await createDevnetLogger({ file: join(config.data, DEVNET_LOG_FILE), terminalLevel: config.logLevel })
      process.once('exit', flush)
      // A devnet that lost its second thread has no workers left: stop it all and exit 1.
      const devnet: Devnet = new Devnet(config, logger, { ...hooks, lost: () => { void devnet.stop().finally(() => process.exit(1)) } })
      onShutdown(() => devnet.stop(), logger)
      const file = await devnet.start().catch((err: Error & { code?: string }) => {
        // A taken port or data directory is said on the terminal in one line (below, by the CLI): the
        // log file gets it too; anything unexpected is logged with its stack.
        if (err.code === 'BWN_ERR_PORT_IN_USE' || err.code === 'BWN_ERR_DATA_IN_USE') logger.info({ event: 'devnet_failed', code: err.code }, err.message)
        else logger.error({ err, event: 'devnet_failed' }, 'devnet did not start')
        flush()
        throw err
      })
      process.stderr.write(devnetBanner(file, config))
    })
}
