// The `bwnet` command line. Every command has --help. Exit codes (docs/cli.md#exit-codes): 0 done,
// 1 a failed transfer or an API error, 2 bad usage (one line naming it), 130 interrupted (Ctrl-C).
import { Command, CommanderError } from 'commander'
import { keysCommand } from './commands/keys.ts'
import { adminCommand } from './commands/admin.ts'
import { simCommand } from './commands/sim.ts'
import { chainCommand } from './commands/chain.ts'
import { nodeCommand, devnetCommand } from './commands/run.ts'
import { transferCommand } from './commands/transfer.ts'
import { bootstrapCommand } from './commands/bootstrap.ts'
import { loginCommand, logoutCommand, profilesCommand } from './commands/profiles.ts'
import { SOFTWARE } from './node.ts'

export const EXIT_OK = 0
export const EXIT_FAILED = 1
export const EXIT_USAGE = 2
export const EXIT_INTERRUPTED = 130

export function buildCli (): Command {
  const program = new Command('bwnet')
    .description('bwnet: a distributed bandwidth network')
    .version(SOFTWARE.split('/')[1]!, '-v, --version')
    .showHelpAfterError('(run with --help for usage)')
  program.addCommand(loginCommand())
  program.addCommand(logoutCommand())
  program.addCommand(profilesCommand())
  program.addCommand(transferCommand())
  program.addCommand(devnetCommand())
  program.addCommand(nodeCommand())
  program.addCommand(bootstrapCommand())
  program.addCommand(keysCommand())
  program.addCommand(adminCommand())
  program.addCommand(simCommand())
  program.addCommand(chainCommand())
  return program
}

/** Commander exits by itself unless every command, subcommands too, overrides it. */
function overrideExits (cmd: Command): Command {
  cmd.exitOverride()
  for (const sub of cmd.commands) overrideExits(sub)
  return cmd
}

/** The exit code for an error that ended a command. */
export function exitCodeOf (err: unknown): number {
  if (err instanceof CommanderError) {
    // Commander's own parse errors (unknown option, invalid argument, missing argument…) are usage
    // errors; help and --version exit 0; a command's own cmd.error() keeps the code it chose.
    if (err.exitCode === 0) return EXIT_OK
    return err.code.startsWith('commander.') ? EXIT_USAGE : err.exitCode
  }
  const code = (err as { code?: string } | null)?.code
  if (code === 'BWN_ERR_INTERRUPTED') return EXIT_INTERRUPTED
  if (code === 'BWN_ERR_CONFIG' || code === 'BWN_ERR_USAGE') return EXIT_USAGE
  return EXIT_FAILED
}

export async function main (argv: string[]): Promise<void> {
  const program = overrideExits(buildCli())
  try {
    await program.parseAsync(argv)
  } catch (err) {
    if (!(err instanceof CommanderError) && (err as Error | null)?.message !== '') process.stderr.write(`bwnet: ${(err as Error).message}\n`)
    process.exit(exitCodeOf(err))
  }
}

await main(process.argv)
