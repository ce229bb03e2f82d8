// `bwnet transfer status ID`: one transfer's record.
import { Command } from 'commander'
import { TransferApiClient } from '../../transfers/api-client.ts'
import { addClientOptions, resolveCredentials, type ClientFlags } from '../profiles.ts'
import type { TransferRecord } from '../../../api/transfers.ts'
import { asNotFound, humanRecord, machineOutput, resolveId } from './shared.ts'

export function statusCommand (): Command {
  return addClientOptions(new Command('status').argument('<id>'))
    .description('a transfer\'s record (an id or a unique prefix of 4+ hex digits); JSON when stdout is not a terminal')
    .option('--json', 'one JSON line (the default when stdout is not a terminal)')
    .action(async (given: string, opts: ClientFlags & { json?: boolean }) => {
      const creds = await resolveCredentials(opts)
      const client = new TransferApiClient(creds.api, creds.key)
      let record: TransferRecord
      try { record = await client.get(await resolveId(client, given)) } catch (err) { throw asNotFound(err, given) }
      process.stdout.write(machineOutput(opts) ? JSON.stringify(record) + '\n' : humanRecord(record))
    })
}
