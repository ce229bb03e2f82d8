// The `bwnet` command line. Every command has --help. Exit codes (docs/cli.md#exit-codes): 0 done,
// 1 a failed transfer or an API error, 2 bad usage (one line naming it), 130 interrupted (Ctrl-C).
import { Command, CommanderError, Option } from 'commander'
import { transferCommand } from './commands/transfer.ts'
import { loginCommand, logoutCommand, profilesCommand } from './commands/profiles.ts'
import { CLI_VERSION } from './commands/common.ts'
import { completionCommand } from './commands/completion.ts'

export const EXIT_OK = 0
export const EXIT_FAILED = 1
export const EXIT_USAGE = 2
export const EXIT_INTERRUPTED = 130

/** Client commands: loading only these keeps `bwnet transfer …` quick to start (no node, no sr25519). */
// Client commands (and --version) load only the client's modules: a tenth of the start-up of the whole CLI.
const CLIENT_COMMANDS = new Set(['login', 'logout', 'profiles', 'transfer', '--version', '-V'])

/** The --config every command without its own takes: the client config file (profiles), as BWN_CONFIG. */
const CLIENT_CONFIG = new WeakSet<Option>()

/** Gives every command that has no --config of its own (devnet and node have theirs) the client one. */
function addConfigOptions (cmd: Command): void {
  if (cmd.commands.length === 0 && !cmd.options.some(o => o.long === '--config')) {
    const option = new Option('--config <file>', 'client config file with the profiles (default: BWN_CONFIG, else ~/.config/bwnet/config.json)')
    CLIENT_CONFIG.add(option)
    cmd.addOption(option)
  }
  for (const sub of cmd.commands) addConfigOptions(sub)
}

/** The whole CLI; `only` = 'client' builds just the client commands (what a client command needs). */
export async function buildCli (only: 'all' | 'client' = 'all'): Promise<Command> {
  const program = new Command('bwnet')
    .description('bwnet: a distributed bandwidth network')
    .version(CLI_VERSION, '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    // A client --config names the profiles file: commands read it through BWN_CONFIG (profiles.ts).
    .hook('preAction', (_program, action) => {
      const option = action.options.find(o => o.long === '--config')
      const file = action.opts<{ config?: string }>().config
      if (option !== undefined && CLIENT_CONFIG.has(option) && typeof file === 'string') process.env.BWN_CONFIG = file
    })
  program.addCommand(loginCommand())
  program.addCommand(logoutCommand())
  program.addCommand(profilesCommand())
  program.addCommand(transferCommand())
  if (only === 'client') { addConfigOptions(program); return program }
  const [{ keysCommand }, { adminCommand }, { simCommand }, { chainCommand }, { nodeCommand, devnetCommand }, { bootstrapCommand }] = await Promise.all([
    import('./commands/keys.ts'), import('./commands/admin.ts'), import('./commands/sim.ts'), import('./commands/chain.ts'),
    import('./commands/run.ts'), import('./commands/bootstrap.ts')
  ])
  program.addCommand(devnetCommand())
  program.addCommand(nodeCommand())
  program.addCommand(bootstrapCommand())
  program.addCommand(keysCommand())
  program.addCommand(adminCommand())
  program.addCommand(simCommand())
  program.addCommand(chainCommand())
  program.addCommand(completionCommand(() => program))
  addConfigOptions(program)
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
  const program = overrideExits(await buildCli(CLIENT_COMMANDS.has(argv[2] ?? '') ? 'client' : 'all'))
  try {
    await program.parseAsync(argv)
  } catch (err) {
    if (!(err instanceof CommanderError) && (err as Error | null)?.message !== '') process.stderr.write(`bwnet: ${(err as Error).message}\n`)
    process.exit(exitCodeOf(err))
  }
}

await main(process.argv)
