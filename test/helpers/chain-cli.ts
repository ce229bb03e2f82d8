// `bwnet chain …` run in-process with its output captured: exit code, stdout and stderr.
import { CommanderError, type Command } from 'commander'
import { chainCommand } from '../../node/commands/chain.ts'

export async function runChainCommand (args: string[]): Promise<{ code: number, out: string, err: string }> {
  const cmd = chainCommand()
  let out = ''
  let err = ''
  const quiet = (c: Command): void => {
    c.exitOverride().configureOutput({ writeOut: s => { out += s }, writeErr: s => { err += s } })
    c.commands.forEach(quiet)
  }
  quiet(cmd)
  try {
    await cmd.parseAsync(args, { from: 'user' })
    return { code: 0, out, err }
  } catch (e) {
    if (e instanceof CommanderError) return { code: e.exitCode, out, err }
    throw e
  }
}
