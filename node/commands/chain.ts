// `bwnet chain …`: inspect the chain a node uses, and record a sale on a dev chain, over the node's
// HTTP API; or, with --chain-url and --netuid, read a Subtensor subnet directly over its RPC.
// Prints JSON on stdout; an API or chain error prints its code and detail and exits 1.
import { Command, InvalidArgumentError, Option } from 'commander'
import { MemoryLevel } from 'memory-level'
import { printApiCall, DEFAULT_API } from './http-call.ts'
import { LevelStore } from '../../actors/store.ts'
import { systemClock } from '../clock.ts'
import { createLogger } from '../logger.ts'
import type { SubtensorChain } from '../adapters/subtensor/chain.ts'
import { ChainError } from '../../actors/chain/ports.ts'
import { apiOf } from './profiles.ts'

export { DEFAULT_API }

interface Globals { api: string, key?: string, chainUrl?: string, netuid?: string }

/** Runs `fn` against the Subtensor subnet named by --chain-url/--netuid (read-only) and prints its result. */
async function onSubtensor (cmd: Command, fn: (chain: SubtensorChain) => Promise<unknown>): Promise<void> {
  const { chainUrl, netuid } = cmd.optsWithGlobals<Globals>()
  if (netuid === undefined || !/^[0-9]{1,5}$/.test(netuid)) return cmd.error('error: --chain-url needs --netuid <n>', { exitCode: 2, code: 'bwnet.chain.netuid' })
  let chain: SubtensorChain | null = null
  try {
    // Loaded on demand: the polkadot libraries add noticeably to every command's start-up.
    const { SubtensorChain } = await import('../adapters/subtensor/chain.ts')
    chain = await SubtensorChain.connect({
      url: chainUrl!, netuid: Number(netuid), key: null, store: new LevelStore(new MemoryLevel() as never), clock: systemClock, logger: createLogger({ level: 'silent' }), follow: false
    })
    const out = await fn(chain)
    cmd.configureOutput().writeOut!(JSON.stringify(out, (_k, v: unknown) => typeof v === 'bigint' ? v.toString() : v, 2) + '\n')
  } catch (err) {
    const code = err instanceof ChainError ? err.code : 'BWN_ERR_CHAIN_UNAVAILABLE'
    return cmd.error(`error: ${code}: ${(err as Error).message}`, { exitCode: 1, code: 'bwnet.chain.subtensor' })
  } finally {
    await chain?.close()
  }
}

const useSubtensor = (cmd: Command): boolean => cmd.optsWithGlobals<Globals>().chainUrl !== undefined

async function callApi (cmd: Command, method: 'GET' | 'POST', path: string, body?: unknown): Promise<void> {
  const { key } = cmd.optsWithGlobals<Globals>()
  const api = await apiOf(cmd)
  let url: URL
  try { url = new URL(path, api) } catch { return cmd.error(`error: --api ${api} is not a URL`, { exitCode: 2, code: 'bwnet.chain.api' }) }
  return printApiCall(cmd, 'chain', url, method, key, body)
}

const parseEpoch = (value: string): string => {
  if (!/^[0-9]{1,10}$/.test(value)) throw new InvalidArgumentError('a whole number of at most 10 digits')
  return value
}

export function chainCommand (): Command {
  const chain = new Command('chain')
    .description('inspect the chain (head, weights) and record alpha sales on a dev chain')
    .addOption(new Option('--api <url>', 'API base URL of a node').env('BWN_API').default(DEFAULT_API))
    .addOption(new Option('--profile <name>', 'take the API URL from this `bwnet login` profile'))
    .addOption(new Option('--key <key>', 'admin API key (recording a sale)').env('BWN_ADMIN_KEY'))
    .addOption(new Option('--chain-url <url>', 'read a Subtensor node directly (ws:// or wss://) instead of a node\'s API').env('BWN_CHAIN_URL'))
    .addOption(new Option('--netuid <n>', 'subnet id on Subtensor (with --chain-url)').env('BWN_NETUID'))

  chain.command('head').description('latest block, epoch, block time and epoch length')
    .action((_o, cmd: Command) => useSubtensor(cmd) ? onSubtensor(cmd, c => c.head()) : callApi(cmd, 'GET', '/chain/head'))

  chain.command('weights').description('weight vectors validators set for an epoch (default: the latest set); on Subtensor, the vector of one UID')
    .option('--epoch <n>', 'epoch number', parseEpoch)
    .option('--uid <n>', 'validator UID (Subtensor: the vector chain state holds for it)', parseEpoch)
    .action((o: { epoch?: string, uid?: string }, cmd: Command) => {
      if (useSubtensor(cmd)) {
        if (o.uid !== undefined) return onSubtensor(cmd, c => c.weightsOfUid(Number(o.uid)))
        if (o.epoch !== undefined) return onSubtensor(cmd, c => c.weightsOf(Number(o.epoch)))
        return cmd.error('error: on Subtensor give --uid <n> (or --epoch <n>)', { exitCode: 2, code: 'bwnet.chain.uid' })
      }
      return callApi(cmd, 'GET', `/chain/weights${o.epoch !== undefined ? `?epoch=${o.epoch}` : ''}`)
    })

  chain.command('registration').description('UID and role of a hotkey on the chain (exit 1 when it has none)')
    .requiredOption('--hotkey <ss58>', 'hotkey to look up')
    .action((o: { hotkey: string }, cmd: Command) => {
      if (useSubtensor(cmd)) return onSubtensor(cmd, async c => await c.register(o.hotkey, 'orchestrator'))
      return callApi(cmd, 'GET', `/chain/registrations/${encodeURIComponent(o.hotkey)}`)
    })

  chain.command('enroll').description('register a node\'s hotkey in a role on the dev chain (operator key); validators also need --stake')
    .requiredOption('--hotkey <ss58>', 'the node\'s hotkey (bwnet keys show)')
    .requiredOption('--role <role>', 'orchestrator | worker | validator')
    .option('--stake <rao>', 'stake for a validator permit, in rao')
    .action((o: { hotkey: string, role: string, stake?: string }, cmd: Command) => {
      if (!['orchestrator', 'worker', 'validator'].includes(o.role)) return cmd.error(`error: --role takes orchestrator, worker or validator, got ${o.role}`, { exitCode: 2, code: 'bwnet.chain.role' })
      if (o.stake !== undefined && !/^[0-9]{1,39}$/.test(o.stake)) return cmd.error(`error: --stake takes a whole number of rao, got ${o.stake}`, { exitCode: 2, code: 'bwnet.chain.stake' })
      return callApi(cmd, 'POST', '/chain/registrations', { hotkey: o.hotkey, role: o.role, ...(o.stake !== undefined ? { stakeRao: o.stake } : {}) })
    })

  chain.command('sale').description('record an alpha sale by a hotkey (dev chain)')
    .requiredOption('--hotkey <ss58>', 'hotkey that sells')
    .requiredOption('--alpha <rao>', 'amount in rao (1 α = 1,000,000,000 rao)')
    .option('--block <n>', 'block of the sale (default: the head)')
    .action((o: { hotkey: string, alpha: string, block?: string }, cmd: Command) => {
      if (!/^[1-9][0-9]{0,38}$/.test(o.alpha)) return cmd.error(`error: --alpha takes a positive whole number of rao, got ${o.alpha}`, { exitCode: 2, code: 'bwnet.chain.alpha' })
      if (o.block !== undefined && !/^[0-9]{1,15}$/.test(o.block)) return cmd.error(`error: --block takes a whole number, got ${o.block}`, { exitCode: 2, code: 'bwnet.chain.block' })
      return callApi(cmd, 'POST', '/chain/sales', { hotkey: o.hotkey, alphaRao: o.alpha, ...(o.block !== undefined ? { block: Number(o.block) } : {}) })
    })
  return chain
}
