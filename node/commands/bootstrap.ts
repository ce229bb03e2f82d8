// `bwnet bootstrap --host H --port P`: a DHT bootstrap node (hyperdht) for a private network. It binds
// and announces exactly H:P (never 0.0.0.0), logs its address, and stops cleanly on SIGINT/SIGTERM.
// Nodes reach it with `--bootstrap H:P`; run two or more on different hosts and give nodes all of them.
import { Command, InvalidArgumentError } from 'commander'
import DHT from 'hyperdht'
import { createLogger } from '../logger.ts'
import { onShutdown } from './run.ts'

function port (value: string): number {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new InvalidArgumentError('a UDP port 1..65535')
  return n
}

function ipv4 (value: string): string {
  if (!/^(\d{1,3})(\.\d{1,3}){3}$/.test(value) || value.split('.').some(o => Number(o) > 255)) throw new InvalidArgumentError('an IPv4 address of this host')
  if (value === '0.0.0.0') throw new InvalidArgumentError('a concrete address: peers must be able to reach it (not 0.0.0.0)')
  return value
}

function hostPorts (value: string, previous: string[] = []): string[] {
  const list = value.split(',').map(s => s.trim()).filter(Boolean)
  for (const hp of list) if (!/^[A-Za-z0-9.-]+:\d{1,5}$/.test(hp)) throw new InvalidArgumentError(`host:port, not ${JSON.stringify(hp)}`)
  return [...previous, ...list]
}

export interface BootstrapNode { dht: DHT, address: string, stop (): Promise<void> }

/** Starts a bootstrap DHT node bound to host:port; `peers` are other bootstrap nodes to join. */
export async function startBootstrap (host: string, udpPort: number, peers: string[] = []): Promise<BootstrapNode> {
  const dht = DHT.bootstrapper(udpPort, host, { host, bootstrap: peers })
  await dht.ready()
  const a = dht.address()
  return { dht, address: `${host}:${a.port}`, stop: () => dht.destroy() }
}

export function bootstrapCommand (): Command {
  return new Command('bootstrap')
    .description('run a DHT bootstrap node for a private bwnet network (UDP)')
    .requiredOption('--host <ipv4>', 'address to bind and announce (this host\'s own address)', ipv4)
    .requiredOption('--port <n>', 'UDP port (open it in the firewall)', port)
    .option('--bootstrap <host:port>', 'other bootstrap nodes to join (repeatable or comma-separated)', hostPorts)
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (LOG_LEVEL)')
    .action(async (opts: { host: string, port: number, bootstrap?: string[], logLevel?: string }) => {
      const logger = createLogger({ level: opts.logLevel })
      const node = await startBootstrap(opts.host, opts.port, opts.bootstrap ?? [])
      onShutdown(() => node.stop(), logger)
      logger.info({ event: 'bootstrap_ready', address: node.address, host: opts.host, port: opts.port }, `DHT bootstrap node on ${node.address} (nodes use --bootstrap ${node.address})`)
    })
}
