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
    .description('sign, with this hotkey, consent to an orchestrator or worker API key of an organization being bound to it (pass the proof to admin key create --hotkey-proof)')
    .requiredOption('--organization <organizationId>', 'the organization that issues the key')
    .requiredOption('--role <role>', 'orchestrator or worker')
    .option('--keystore <file>', 'keystore path', process.env.BWN_KEYSTORE ?? DEFAULT_KEYSTORE)
    .action(async (opts: { organization: string, role: string, keystore: string }) => {
      if (!['orchestrator', 'worker'].includes(opts.role)) throw new CliError(`--role takes orchestrator or worker, got ${opts.role}`)
      await cryptoReady()
      const key = await readKeystore(opts.keystore)
      console.log(JSON.stringify({ hotkey: key.address, organizationId: opts.organization, role: opts.role, hotkeyProof: proveBinding(key, opts.organization, opts.role) }))
    })
  return keys
}
