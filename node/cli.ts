// The `bwnet` command line. Every command has --help; a bad setting exits 2 with one line.
import { Command, CommanderError } from 'commander'
import { keysCommand } from './commands/keys.ts'
import { adminCommand } from './commands/admin.ts'
import { simCommand } from './commands/sim.ts'
import { chainCommand } from './commands/chain.ts'
import { nodeCommand, devnetCommand } from './commands/run.ts'
import { transferCommand } from './commands/transfer.ts'
import { bootstrapCommand } from './commands/bootstrap.ts'
import { SOFTWARE } from './node.ts'

export function buildCli (): Command {
  const program = new Command('bwnet')
    .description('bwnet: a distributed bandwidth network')
    .version(SOFTWARE.split('/')[1]!, '-v, --version')
    .showHelpAfterError('(run with --help for usage)')
  program.addCommand(devnetCommand())
  program.addCommand(nodeCommand())
  program.addCommand(bootstrapCommand())
  program.addCommand(keysCommand())
  program.addCommand(adminCommand())
  program.addCommand(simCommand())
  program.addCommand(chainCommand())
  program.addCommand(transferCommand())
  return program
}

export async function main (argv: string[]): Promise<void> {
  const program = buildCli().exitOverride()
  try {
    await program.parseAsync(argv)
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode)
    const code = (err as { code?: string }).code
    process.stderr.write(`bwnet: ${(err as Error).message}\n`)
    process.exit(code === 'BWN_ERR_CONFIG' ? 2 : 1)
  }
}

await main(process.argv)
