import { Command } from 'commander'
import { stat } from 'node:fs/promises'
import { cryptoReady, newHotkey, toHex } from '../../protocol/index.ts'
import { readKeystore, writeKeystore } from '../keystore.ts'
import { proveBinding } from '../../api/accounts/binding.ts'
import { DEFAULT_KEYSTORE, CliError } from './common.ts'

export { DEFAULT_KEYSTORE, CliError, UsageError, Interrupted } from './common.ts'

export function keysCommand (): Command {
  const keys = new Command('keys').description('create and show hotkeys (sr25519, SS58 addresses)')
  keys.command('new')
    .description('create a new hotkey keystore file (mode 0600)')
    .option('--keystore <file>', 'keystore path', process.env.BWN_KEYSTORE ?? DEFAULT_KEYSTORE)
    .option('--force', 'overwrite an existing keystore')
    .action(async (opts: { keystore: string, force?: boolean }) => {
      await cryptoReady()
      const exists = await stat(opts.keystore).then(() => true, () => false)
      if (exists && opts.force !== true) throw new CliError(`keystore ${opts.keystore} exists; pass --force to replace it`)
      const key = newHotkey()
      await writeKeystore(opts.keystore, key)
      console.log(JSON.stringify({ address: key.address, publicKey: toHex(key.publicKey), keystore: opts.keystore }))
    })
  keys.command('show')
    .description('print the address and public key of a keystore')
    .option('--keystore <file>', 'keystore path', process.env.BWN_KEYSTORE ?? DEFAULT_KEYSTORE)
    .action(async (opts: { keystore: string }) => {
      await cryptoReady()
      const key = await readKeystore(opts.keystore)
      console.log(JSON.stringify({ address: key.address, publicKey: toHex(key.publicKey), keystore: opts.keystore }))
    })
  keys.command('prove-binding')
    .description('sign, with this hotkey, the request that issues an orchestrator or worker API key of an organization bound to it; ' +
      'prints the request body to pass to `bwnet admin key create --hotkey-proof` within 5 minutes, once (docs/api.md#binding-proof)')
    .requiredOption('--organization <organizationId>', 'the organization that issues the key')
    .requiredOption('--role <role>', 'orchestrator or worker')
    .option('--name <name>', 'the key\'s label (signed with the rest)')
    .option('--expires-at <date-time>', 'the key\'s expiry, ISO 8601 (signed with the rest)')
    .option('--project <projectId>', 'grant at project level (signed with the rest)')
    .option('--environment <environmentId>', 'grant at environment level (signed with the rest)')
    .option('--keystore <file>', 'keystore path', process.env.BWN_KEYSTORE ?? DEFAULT_KEYSTORE)
    .action(async (opts: { organization: string, role: string, name?: string, expiresAt?: string, project?: string, environment?: string, keystore: string }) => {
      if (!['orchestrator', 'worker'].includes(opts.role)) throw new CliError(`--role takes orchestrator or worker, got ${opts.role}`)
      await cryptoReady()
      const key = await readKeystore(opts.keystore)
      console.log(JSON.stringify(proveBinding(key, opts.organization, {
        role: opts.role,
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.expiresAt !== undefined ? { expiresAt: opts.expiresAt } : {}),
        ...(opts.project !== undefined ? { projectId: opts.project } : {}),
        ...(opts.environment !== undefined ? { environmentId: opts.environment } : {})
      })))
    })
  return keys
}
