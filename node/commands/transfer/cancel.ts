// `bwnet transfer cancel ID...`: cancel transfers, freeing their slots.
import { Command } from 'commander'
import { TransferApiClient, ApiProblem } from '../../transfers/api-client.ts'
import { CliError } from '../common.ts'
import { addClientOptions, resolveCredentials, type ClientFlags } from '../profiles.ts'
import { asNotFound, machineOutput, resolveId } from './shared.ts'

export function cancelCommand (): Command {
  return addClientOptions(new Command('cancel').argument('<id...>'))
    .description('cancel transfers (ids or unique prefixes): nothing more is delivered; frees a slot of your plan')
    .option('--json', 'one JSON line per transfer (the default when stdout is not a terminal)')
    .action(async (ids: string[], opts: ClientFlags & { json?: boolean }) => {
      const creds = await resolveCredentials(opts)
      const client = new TransferApiClient(creds.api, creds.key)
      let failures = 0
      let lastError: unknown = null
      for (const given of ids) {
        try {
          const record = await client.cancel(await resolveId(client, given))
          process.stdout.write(machineOutput(opts) ? JSON.stringify(record) + '\n' : `${record.id} ${record.status}\n`)
        } catch (err) {
          const e = asNotFound(err, given)
          if (!(e instanceof ApiProblem) || ids.length === 1) throw e
          failures++
          lastError = e
          process.stderr.write(`bwnet: ${given}: ${e.message}\n`)
        }
      }
      if (failures > 0) throw new CliError(`${failures} of ${ids.length} cancels failed (last: ${(lastError as Error).message})`)
    })
}
