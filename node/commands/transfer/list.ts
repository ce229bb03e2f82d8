// `bwnet transfer list`: your transfers, newest first.
import { Command, Option } from 'commander'
import { TransferApiClient } from '../../transfers/api-client.ts'
import { formatBytes } from '../../transfers/progress.ts'
import { addClientOptions, resolveCredentials, type ClientFlags } from '../profiles.ts'
import type { TransferRecord } from '../../../api/transfers.ts'
import { LIST_PAGE, positiveInt, table, machineOutput, type Status } from './shared.ts'

export function listCommand (): Command {
  return addClientOptions(new Command('list'))
    .description('your transfers, newest first')
    .addOption(new Option('--status <status>', 'only transfers in this status').choices(['pending', 'in_progress', 'completed', 'failed', 'cancelled']))
    .option('--limit <n>', 'at most this many (1..1000)', positiveInt(1000), 50)
    .option('--json', 'one JSON line: {items, total} (the default when stdout is not a terminal)')
    .action(async (opts: ClientFlags & { status?: Status, limit: number, json?: boolean }) => {
      const creds = await resolveCredentials(opts)
      const client = new TransferApiClient(creds.api, creds.key, { onWait: w => { if (w.reason === 'rate_limited') process.stderr.write(`rate limited, resuming in ${Math.ceil(w.ms / 1000)} s\n`) } })
      const items: TransferRecord[] = []
      let total = 0
      while (items.length < opts.limit) {
        const page = await client.list({ limit: Math.min(LIST_PAGE, opts.limit - items.length), offset: items.length, ...(opts.status !== undefined ? { status: opts.status } : {}) })
        items.push(...page.items)
        total = page.total
        if (page.items.length === 0 || items.length >= total) break
      }
      if (machineOutput(opts)) { process.stdout.write(JSON.stringify({ items, total }) + '\n'); return }
      if (items.length === 0) { process.stderr.write(`no transfers${opts.status !== undefined ? ` in status ${opts.status}` : ''}\n`); return }
      process.stdout.write(table([['ID', 'STATUS', 'SIZE', 'DELIVERED', 'CREATED'], ...items.map(r => [
        r.id, r.status, formatBytes(r.total_size), `${r.chunks.delivered}/${r.total_chunks}`, r.created_at
      ])]))
      if (total > items.length) process.stderr.write(`${items.length} of ${total} shown (--limit)\n`)
    })
}
