// Configuration: flags > environment (BWN_*) > JSON config file > defaults, validated once by one
// schema. A bad value stops the program with one line naming the setting and where it came from.
import { DEFAULT_MAX_WORKERS, DEFAULT_MAX_WORKERS_PER_ADDRESS } from './attachments.ts'
import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { Type, type Static, type TObject, type TProperties } from '@sinclair/typebox'
import { Ajv } from 'ajv'
import { Role } from '../protocol/index.ts'
import { RESULT_GAP_MS } from '../actors/transfer/coordinator.ts'
import { SWEEP_INTERVAL_MS, SWEEP_GRACE_MS, HISTORY_RETENTION_DAYS, RECORD_RETENTION_DAYS } from './sweep.ts'
import { ConfigError } from './errors.ts'
export { ConfigError }

interface SettingMeta { flag: string, env: string }

const HostPort = Type.String({ pattern: '^[A-Za-z0-9.:\\[\\]-]+:[0-9]{1,5}$', description: 'host:port' })

/** Test-only fault switches; the crash points name the coordinator's FaultPoint with dashes. */
export const TEST_FAULTS = ['corrupt', 'stall', 'crash-after-chunk', 'crash-after-finalize', 'crash-during-delivery', 'crash-before-complete', 'crash-after-complete'] as const
const TestFault = Type.Union(TEST_FAULTS.map(f => Type.Literal(f)))
export type TestFault = typeof TEST_FAULTS[number]

export const NodeSettings = Type.Object({
  role: Role,
  data: Type.String({ minLength: 1, description: 'data directory: identity, database, staged chunks' }),
  network: Type.String({ pattern: '^[a-z0-9-]{1,64}$', description: 'network id: nodes of one id find each other' }),
  bootstrap: Type.Array(HostPort, { minItems: 1, description: 'DHT bootstrap nodes; never defaults to a public list' }),
  dhtHost: Type.Union([Type.String({ minLength: 1 }), Type.Null()], { description: 'address the DHT node binds and announces (127.0.0.1 on loopback)' }),
  dhtPort: Type.Union([Type.Integer({ minimum: 1, maximum: 65535 }), Type.Null()], { description: 'fixed UDP port of the DHT node (open it in the firewall); the node then joins the DHT as a reachable, persistent node. null: a random port, ephemeral' }),
  host: Type.String({ minLength: 1, description: 'HTTP listen address' }),
  port: Type.Integer({ minimum: 0, maximum: 65535, description: 'HTTP port (orchestrator API and data endpoint); 0 picks a free one' }),
  slots: Type.Integer({ minimum: 1, maximum: 1024, description: 'tasks a worker runs at once' }),
  bandwidthMbps: Type.Number({ minimum: 0, maximum: 1_000_000 }),
  attachTo: Type.Union([Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{46,48}$' }), Type.Null()], { description: 'orchestrator hotkey a worker attaches to (default: the first it meets)' }),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map(l => Type.Literal(l))),
  publicUrl: Type.Union([Type.String({ pattern: '^https?://', maxLength: 512 }), Type.Null()], { description: 'base URL peers use to reach this node over HTTP (default: the listen address)' }),
  testFaults: Type.Array(TestFault, { maxItems: 8, uniqueItems: true, description: 'test-only fault switches: corrupt (a worker flips a byte of every chunk it writes); stall (a worker accepts offers and never moves them); crash-* (an orchestrator kills its own process, as kill -9 would, at that point: docs/transfers.md#recovery-on-start)' }),
  chainHost: Type.Union([Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{46,48}$' }), Type.Null()], { description: 'hotkey of the node hosting the dev chain; null: an orchestrator hosts its own' }),
  blockTimeMs: Type.Integer({ minimum: 100, maximum: 600_000, description: 'dev chain block time (chain host only)' }),
  blocksPerEpoch: Type.Integer({ minimum: 2, maximum: 100_000, description: 'dev chain epoch length in blocks (chain host only)' }),
  verifySampleRate: Type.Number({ minimum: 0, maximum: 1, description: 'fraction of deliveries a validator reads back' }),
  chain: Type.Union([Type.Literal('dev'), Type.Literal('subtensor')], { description: 'dev: the embedded dev chain; subtensor: a Subtensor node (--chain-url, --netuid)' }),
  chainUrl: Type.Union([Type.String({ pattern: '^wss?://', maxLength: 512 }), Type.Null()], { description: 'WebSocket RPC URL of a Subtensor node (with --chain subtensor)' }),
  netuid: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()], { description: 'subnet id on Subtensor (with --chain subtensor)' }),
  skipRegistrationCheck: Type.Boolean({ description: 'start an orchestrator or worker whose hotkey has no UID on the subnet (test networks only)' }),
  inflightMib: Type.Integer({ minimum: 1, maximum: 65_536, description: 'MiB of chunk data this node holds in memory at once (streams reserve their window; docs/node.md#memory)' }),
  minFreeMib: Type.Union([Type.Integer({ minimum: 0, maximum: 1_048_576 }), Type.Null()], { description: 'MiB kept free on the data directory\'s filesystem: new transfers and chunks are refused with 507 past it; null: 5% of the filesystem, at most 1 GiB (docs/node.md#storage)' }),
  allowPrivateDestinations: Type.Boolean({ description: 'let client destinations, worker PUTs and read-backs reach loopback, private, link-local and other non-public addresses (devnet, private networks); docs/security.md' }),
  resultGapMs: Type.Integer({ minimum: 1_000, maximum: 3_600_000, description: 'orchestrators: a worker holding accepted work that makes no progress and sends no result for this long (at least; twice a chunk\'s time at the measured rate when longer) loses it (docs/transfers.md#overseer)' }),
  sweepIntervalMs: Type.Integer({ minimum: 60_000, maximum: 604_800_000, description: 'orchestrators: between two disk sweeps (the first runs at start), which delete unreferenced blobs and abandoned node-sink partial files (docs/node.md#disk-sweep)' }),
  sweepGraceMs: Type.Integer({ minimum: 600_000, maximum: 2_592_000_000, description: 'orchestrators: the disk sweep deletes no file younger than this (docs/node.md#disk-sweep)' }),
  historyRetentionDays: Type.Integer({ minimum: 0, maximum: 36_500, description: 'orchestrators: days a finished transfer keeps its delivery history (tasks, attempts, results, plans, offers, interventions, events); its record and chunks stay; 0 keeps it for ever (docs/node.md#disk-sweep)' }),
  recordRetentionDays: Type.Integer({ minimum: 0, maximum: 36_500, description: 'orchestrators: days a finished transfer keeps its record, chunks and index keys; after it GET /transfers/{id} answers 404; 0 keeps it for ever (docs/node.md#disk-sweep)' }),
  metricsHost: Type.String({ minLength: 1, description: 'listen address of the health and metrics server' }),
  metricsPort: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()], { description: 'port of the health and metrics server (/healthz, /readyz, /metrics); 0 picks a free one; null: not served' }),
  trustedPeers: Type.Array(Type.String({ pattern: '^(orchestrator|worker|validator):[1-9A-HJ-NP-Za-km-z]{46,48}$' }), { maxItems: 1024, description: 'test networks only: role:hotkey entries trusted without a chain registration' }),
  maxWorkers: Type.Integer({ minimum: 0, maximum: 100_000, description: 'orchestrators: workers attached at once by signed attachment on their first contact; 0 attaches none (docs/node.md#attaching-workers)' }),
  maxWorkersPerAddress: Type.Integer({ minimum: 0, maximum: 100_000, description: 'orchestrators: workers attached at once from one remote address (IPv6: one /64), loopback exempt; 0: no cap (docs/node.md#attaching-workers)' }),
  workerAllowlist: Type.Array(Type.String({ pattern: '^[1-9A-HJ-NP-Za-km-z]{46,48}$' }), { maxItems: 100_000, description: 'orchestrators: the only worker hotkeys attached (empty: any worker, up to --max-workers)' })
}, { additionalProperties: false })
export type NodeConfig = Static<typeof NodeSettings>

export const NODE_SETTINGS: Record<keyof NodeConfig, SettingMeta> = {
  role: { flag: '--role', env: 'BWN_ROLE' },
  data: { flag: '--data', env: 'BWN_DATA' },
  network: { flag: '--network', env: 'BWN_NETWORK' },
  bootstrap: { flag: '--bootstrap', env: 'BWN_BOOTSTRAP' },
  dhtHost: { flag: '--dht-host', env: 'BWN_DHT_HOST' },
  dhtPort: { flag: '--dht-port', env: 'BWN_DHT_PORT' },
  host: { flag: '--host', env: 'BWN_HOST' },
  port: { flag: '--port', env: 'BWN_PORT' },
  slots: { flag: '--slots', env: 'BWN_SLOTS' },
  bandwidthMbps: { flag: '--bandwidth-mbps', env: 'BWN_BANDWIDTH_MBPS' },
  attachTo: { flag: '--attach-to', env: 'BWN_ATTACH_TO' },
  logLevel: { flag: '--log-level', env: 'LOG_LEVEL' },
  publicUrl: { flag: '--public-url', env: 'BWN_PUBLIC_URL' },
  testFaults: { flag: '--test-faults', env: 'BWN_TEST_FAULTS' },
  chainHost: { flag: '--chain-host', env: 'BWN_CHAIN_HOST' },
  blockTimeMs: { flag: '--block-time-ms', env: 'BWN_BLOCK_TIME_MS' },
  blocksPerEpoch: { flag: '--blocks-per-epoch', env: 'BWN_BLOCKS_PER_EPOCH' },
  verifySampleRate: { flag: '--verify-sample-rate', env: 'BWN_VERIFY_SAMPLE_RATE' },
  chain: { flag: '--chain', env: 'BWN_CHAIN' },
  chainUrl: { flag: '--chain-url', env: 'BWN_CHAIN_URL' },
  netuid: { flag: '--netuid', env: 'BWN_NETUID' },
  skipRegistrationCheck: { flag: '--skip-registration-check', env: 'BWN_SKIP_REGISTRATION_CHECK' },
  inflightMib: { flag: '--inflight-mib', env: 'BWN_INFLIGHT_MIB' },
  minFreeMib: { flag: '--min-free-mib', env: 'BWN_MIN_FREE_MIB' },
  allowPrivateDestinations: { flag: '--allow-private-destinations', env: 'BWN_ALLOW_PRIVATE_DESTINATIONS' },
  resultGapMs: { flag: '--result-gap-ms', env: 'BWN_RESULT_GAP_MS' },
  sweepIntervalMs: { flag: '--sweep-interval-ms', env: 'BWN_SWEEP_INTERVAL_MS' },
  sweepGraceMs: { flag: '--sweep-grace-ms', env: 'BWN_SWEEP_GRACE_MS' },
  historyRetentionDays: { flag: '--history-retention-days', env: 'BWN_HISTORY_RETENTION_DAYS' },
  recordRetentionDays: { flag: '--record-retention-days', env: 'BWN_RECORD_RETENTION_DAYS' },
  metricsHost: { flag: '--metrics-host', env: 'BWN_METRICS_HOST' },
  metricsPort: { flag: '--metrics-port', env: 'BWN_METRICS_PORT' },
  trustedPeers: { flag: '--trusted-peers', env: 'BWN_TRUSTED_PEERS' },
  maxWorkers: { flag: '--max-workers', env: 'BWN_MAX_WORKERS' },
  maxWorkersPerAddress: { flag: '--max-workers-per-address', env: 'BWN_MAX_WORKERS_PER_ADDRESS' },
  workerAllowlist: { flag: '--worker-allowlist', env: 'BWN_WORKER_ALLOWLIST' }
}

export const NODE_DEFAULTS: Partial<NodeConfig> = {
  data: '.bwnet/node', network: 'devnet', dhtHost: null, dhtPort: null, host: '127.0.0.1', port: 8000, slots: 4,
  bandwidthMbps: 1000, attachTo: null, logLevel: 'info', publicUrl: null, testFaults: [],
  chainHost: null, blockTimeMs: 12_000, blocksPerEpoch: 360, verifySampleRate: 1, inflightMib: 64, minFreeMib: null, allowPrivateDestinations: false,
  chain: 'dev', chainUrl: null, netuid: null, skipRegistrationCheck: false, resultGapMs: RESULT_GAP_MS, sweepIntervalMs: SWEEP_INTERVAL_MS, sweepGraceMs: SWEEP_GRACE_MS, historyRetentionDays: HISTORY_RETENTION_DAYS, recordRetentionDays: RECORD_RETENTION_DAYS, metricsHost: '127.0.0.1', metricsPort: null, trustedPeers: [], maxWorkers: DEFAULT_MAX_WORKERS, maxWorkersPerAddress: DEFAULT_MAX_WORKERS_PER_ADDRESS, workerAllowlist: []
}

export const DevnetSettings = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  data: Type.String({ minLength: 1 }),
  workers: Type.Integer({ minimum: 1, maximum: 64 }),
  chain: Type.Union([Type.Literal('dev'), Type.Literal('subtensor')], { description: 'dev: the embedded dev chain; subtensor: a local Subtensor chain (chopsticks on the spec in test/fixtures/subtensor) with a subnet of the devnet\'s nodes' }),
  orchestrators: Type.Union([Type.Integer({ minimum: 1, maximum: 4 }), Type.Null()], { description: 'orchestrator nodes; null: 1 on the dev chain, 2 on subtensor' }),
  validators: Type.Union([Type.Integer({ minimum: 1, maximum: 10 }), Type.Null()], { description: 'validator nodes, staking 1000 α, 900 α, 800 α, … on the dev chain (node/chain.ts devnetValidatorStakeRao); null: 1 on the dev chain, 2 on subtensor' }),
  logLevel: NodeSettings.properties.logLevel,
  inflightMib: Type.Optional(NodeSettings.properties.inflightMib),
  network: Type.Optional(NodeSettings.properties.network),
  threads: Type.Optional(Type.Integer({ minimum: 1, maximum: 2, description: '1: every node on the main thread; 2: the orchestrator there, the workers and the validator on a second thread' })),
  /** Passed to the orchestrator (crash points) and the workers (corrupt). */
  testFaults: NodeSettings.properties.testFaults
}, { additionalProperties: false })
export type DevnetConfig = Static<typeof DevnetSettings>
export const DEVNET_SETTINGS: Record<keyof DevnetConfig, SettingMeta> = {
  port: { flag: '--port', env: 'BWN_PORT' },
  data: { flag: '--data', env: 'BWN_DATA' },
  workers: { flag: '--workers', env: 'BWN_WORKERS' },
  chain: { flag: '--chain', env: 'BWN_CHAIN' },
  orchestrators: { flag: '--orchestrators', env: 'BWN_ORCHESTRATORS' },
  validators: { flag: '--validators', env: 'BWN_VALIDATORS' },
  logLevel: { flag: '--log-level', env: 'LOG_LEVEL' },
  inflightMib: { flag: '--inflight-mib', env: 'BWN_INFLIGHT_MIB' },
  network: { flag: '--network', env: 'BWN_NETWORK' },
  threads: { flag: '--threads', env: 'BWN_DEVNET_THREADS' },
  testFaults: { flag: '--test-faults', env: 'BWN_TEST_FAULTS' }
}
// Two threads wherever there are two cores to run them: the devnet then moves a file ~25 % faster
// (docs/benchmarks.md#e2e); on one core a second thread would only add an isolate.
// The devnet's terminal shows warnings and its banner; its whole log (info) is in DATA/devnet.log.
export const DEVNET_DEFAULTS: DevnetConfig = { port: 8000, data: '.bwnet', workers: 3, chain: 'dev', orchestrators: null, validators: null, logLevel: 'warn', inflightMib: 64, network: 'devnet', threads: availableParallelism() >= 2 ? 2 : 1, testFaults: [] }

const ajv = new Ajv({ allErrors: false, coerceTypes: false, strict: false })

/** Parses an env string by the setting's schema type (numbers, lists, null). */
function fromEnv (schema: any, raw: string): unknown {
  const types = schema.anyOf ? schema.anyOf.map((s: any) => s.type) : [schema.type]
  if (types.includes('null') && (raw === '' || raw === 'null')) return null
  if (types.includes('boolean') && (raw === 'true' || raw === 'false' || raw === '1' || raw === '0')) return raw === 'true' || raw === '1'
  if (types.includes('array')) return raw.split(',').map(s => s.trim()).filter(Boolean)
  if (types.includes('boolean')) return raw === 'true' || raw === '1' ? true : raw === 'false' || raw === '0' ? false : raw
  if (types.includes('integer') || types.includes('number')) { const n = Number(raw); return raw.trim() === '' || Number.isNaN(n) ? raw : n }
  return raw
}

export interface Sources {
  /** Values given on the command line (already split; only those the user typed). */
  flags?: Record<string, unknown>
  env?: NodeJS.ProcessEnv
  /** Path of a JSON config file holding any of the settings by name. */
  configFile?: string
}

export function resolveConfig<P extends TProperties> (
  schema: TObject<P>, meta: Record<string, SettingMeta>, defaults: Partial<Static<TObject<P>>>, sources: Sources
): Static<TObject<P>> {
  const origin: Record<string, string> = {}
  const merged: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(defaults)) { merged[k] = v; origin[k] = 'default' }
  if (sources.configFile !== undefined) {
    let file: unknown
    try { file = JSON.parse(readFileSync(sources.configFile, 'utf8')) } catch (err) {
      throw new ConfigError(`config file ${sources.configFile}: ${(err as Error).message}`)
    }
    if (file === null || typeof file !== 'object' || Array.isArray(file)) throw new ConfigError(`config file ${sources.configFile}: must hold a JSON object`)
    for (const [k, v] of Object.entries(file)) {
      if (!(k in schema.properties)) throw new ConfigError(`config file ${sources.configFile}: unknown setting "${k}"`)
      merged[k] = v; origin[k] = `config file ${sources.configFile}`
    }
  }
  const env = sources.env ?? {}
  for (const [k, m] of Object.entries(meta)) {
    const raw = env[m.env]
    if (raw !== undefined) { merged[k] = fromEnv(schema.properties[k], raw); origin[k] = m.env }
  }
  for (const [k, v] of Object.entries(sources.flags ?? {})) {
    if (v === undefined || !(k in schema.properties)) continue
    merged[k] = typeof v === 'string' ? fromEnv(schema.properties[k], v) : v
    origin[k] = meta[k]?.flag ?? k
  }
  for (const k of Object.keys(schema.properties)) {
    if (!(k in merged)) throw new ConfigError(`missing setting "${k}" (${meta[k]?.flag ?? k} or ${meta[k]?.env ?? 'config file'})`)
  }
  const check = ajv.compile(schema)
  if (merged.chain === 'subtensor' && (merged.chainUrl === null || merged.netuid === null)) {
    throw new ConfigError(`setting "chain" = "subtensor" (from ${origin.chain}) needs --chain-url and --netuid`)
  }
  if (!check(merged)) {
    const e = check.errors![0]!
    const key = e.instancePath.split('/')[1] ?? String((e.params as { additionalProperty?: string }).additionalProperty ?? '')
    const value = JSON.stringify(merged[key])
    throw new ConfigError(`invalid setting "${key}" = ${value} (from ${origin[key] ?? 'input'}): ${e.message ?? 'invalid'}`)
  }
  return merged as Static<TObject<P>>
}
