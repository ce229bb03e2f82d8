// Chain wiring for a node: the node that hosts the dev chain opens it in its own store and answers
// other nodes over the swarm; every other node reaches it through a RemoteChain.
import type { Clock, Logger, Store } from '../actors/ports.ts'
import { DevChain, serveChain, RemoteChain, RAO_PER_ALPHA, type Chain, type DevChainOptions } from '../actors/chain/index.ts'

/** What registering a hotkey burns on a node's dev chain: a fresh key holds no alpha, so it cannot. */
export const NODE_REGISTRATION_COST_RAO = RAO_PER_ALPHA // 1 α
/** Stake a validator needs for a permit on a node's dev chain. */
export const NODE_MIN_VALIDATOR_STAKE_RAO = RAO_PER_ALPHA // 1 α
/** Stake the devnet gives its own validators (the first; later ones hold less, see below). */
export const DEVNET_VALIDATOR_STAKE_RAO = 1_000n * RAO_PER_ALPHA // 1000 α
const DEVNET_VALIDATOR_STAKE_STEP_RAO = 100n * RAO_PER_ALPHA // 100 α less for each further validator

/**
 * Stake of the devnet's `n`-th validator (1-based): 1000 α, 900 α, 800 α, … down to 100 α for the tenth.
 * Unequal on purpose, so the stake-weighted PRISM consensus shows (docs/validators.md).
 */
export function devnetValidatorStakeRao (n: number): bigint {
  if (!Number.isSafeInteger(n) || n < 1 || n > 10) throw new RangeError(`devnet validator ${n}: 1 to 10`)
  return DEVNET_VALIDATOR_STAKE_RAO - BigInt(n - 1) * DEVNET_VALIDATOR_STAKE_STEP_RAO
}
import type { Messenger } from './messenger.ts'
import type { KeyPair } from '../protocol/index.ts'
import type { NodeConfig } from './config.ts'

export interface NodeChain {
  chain: Chain
  /** True when this node hosts a dev chain (enables POST /chain/sales). */
  dev: boolean
  stop (): Promise<void>
}

/** Opens the dev chain in this node's store, starts its blocks and serves it to peers. */
export async function hostDevChain (deps: { store: Store, clock: Clock, logger: Logger, messenger: Messenger }, opts: Omit<DevChainOptions, 'clock' | 'store' | 'logger'> & { allowRemoteSales?: boolean } = {}): Promise<NodeChain> {
  const { allowRemoteSales, ...chainOpts } = opts
  const chain = await DevChain.open({ ...chainOpts, clock: deps.clock, store: deps.store, logger: deps.logger })
  const stopServing = serveChain(chain, deps.messenger, deps.messenger, { logger: deps.logger, allowRemoteSales: allowRemoteSales ?? false })
  chain.start()
  return { chain, dev: true, stop: async () => { stopServing(); await chain.stop() } }
}

/** The chain hosted by `host` (a hotkey), over the swarm. */
export function remoteChain (deps: { clock: Clock, logger: Logger, messenger: Messenger }, host: string, dev = true): NodeChain {
  const chain = new RemoteChain({ net: deps.messenger, inbox: deps.messenger, host, clock: deps.clock, logger: deps.logger })
  return { chain, dev, stop: async () => { chain.close() } }
}

/**
 * The subnet on a Subtensor node (`--chain subtensor --chain-url --netuid`). Orchestrators (the subnet's
 * miners) refuse to start without a UID on the subnet unless `--skip-registration-check` is set;
 * workers hold no UID (they are attached by an orchestrator) and read the subnet only to know their peers.
 */
export async function openSubtensor (deps: { store: Store, clock: Clock, logger: Logger }, config: Pick<NodeConfig, 'role' | 'chainUrl' | 'netuid' | 'skipRegistrationCheck'>, key: KeyPair, opts: { follow?: boolean } = {}): Promise<NodeChain> {
  // Loaded on demand: nodes on the dev chain never pay for the polkadot libraries.
  const { SubtensorChain, checkRegistration } = await import('./adapters/subtensor/chain.ts')
  const chain = await SubtensorChain.connect({ url: config.chainUrl!, netuid: config.netuid!, key, store: deps.store, clock: deps.clock, logger: deps.logger, follow: opts.follow })
  if (config.role === 'orchestrator' && !config.skipRegistrationCheck) {
    try {
      const uid = await checkRegistration(chain, key.address, config.netuid!)
      deps.logger.info({ event: 'subtensor_registered', uid, netuid: config.netuid }, `hotkey ${key.address} is UID ${uid} on subnet ${config.netuid}`)
    } catch (err) {
      await chain.close()
      throw err
    }
  }
  return { chain, dev: false, stop: async () => { await chain.close() } }
}
