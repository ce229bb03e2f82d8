// `bwnet chain …`: inspect the chain a node uses, and record a sale on a dev chain, over the node's
// HTTP API. Prints JSON on stdout; an API error prints its problem code and detail and exits 1.
import { Command, InvalidArgumentError, Option } from 'commander'
import { printApiCall, DEFAULT_API } from './http-call.ts'

export { DEFAULT_API }

interface Globals { api: string, key?: string }

async function callApi (cmd: Command, method: 'GET' | 'POST', path: string, body?: unknown): Promise<void> {
  const { api, key } = cmd.optsWithGlobals<Globals>()
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
    .addOption(new Option('--key <key>', 'admin API key (recording a sale)').env('BWN_ADMIN_KEY'))

  chain.command('head').description('latest block, epoch, block time and epoch length')
    .action((_o, cmd: Command) => callApi(cmd, 'GET', '/chain/head'))

  chain.command('weights').description('weight vectors validators set for an epoch (default: the latest set)')
    .option('--epoch <n>', 'epoch number', parseEpoch)
    .action((o: { epoch?: string }, cmd: Command) => callApi(cmd, 'GET', `/chain/weights${o.epoch !== undefined ? `?epoch=${o.epoch}` : ''}`))

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
