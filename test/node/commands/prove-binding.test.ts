// The participant-key flow from the command line: the participant signs with `bwnet keys prove-binding`,
// an admin sends the signed body with `bwnet admin key create --hotkey-proof` — once (a second send is a
// replay), and only as signed (options that disagree with the body are refused before any request).
import t from 'tap'
import { Command, CommanderError } from 'commander'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../../../api/app.ts'
import { bootstrapDevnetKeys } from '../../../api/accounts/devnet.ts'
import { AccountsService } from '../../../api/accounts/service.ts'
import { adminCommand } from '../../../node/commands/admin.ts'
import { keysCommand } from '../../../node/commands/keys.ts'
import { writeKeystore } from '../../../node/keystore.ts'
import { cryptoReady, newHotkey } from '../../../protocol/index.ts'
import { testDeps } from '../../helpers/api.ts'

await cryptoReady()
const env = testDeps()
// The participant signs with its own clock: this API judges proofs on the real one.
const accounts = new AccountsService({ store: env.store })
const admin = await bootstrapDevnetKeys(accounts)
const app = await buildApp({ ...env.deps, accounts })
const api = await app.listen({ host: '127.0.0.1', port: 0 })
t.teardown(() => app.close())
const dir = await mkdtemp(join(tmpdir(), 'bwnet-prove-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))

/** Runs `bwnet …` in-process: what it printed (console.log and commander's output) and its exit code. */
async function bwnet (args: string[]): Promise<{ out: string, err: string, exitCode: number }> {
  let out = ''
  let err = ''
  const root = new Command('bwnet').addCommand(adminCommand()).addCommand(keysCommand())
  const configure = (cmd: Command): void => {
    cmd.exitOverride().configureOutput({ writeOut: s => { out += s }, writeErr: s => { err += s } })
    cmd.commands.forEach(c => configure(c as Command))
  }
  configure(root)
  const log = console.log
  console.log = (...parts: unknown[]) => { out += parts.join(' ') + '\n' }
  let exitCode = 0
  try {
    await root.parseAsync(['node', 'bwnet', ...args])
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e
    exitCode = e.exitCode
  } finally { console.log = log }
  return { out, err, exitCode }
}

t.test('prove-binding, then admin key create with the signed body: one bound key, once', async t => {
  const participant = newHotkey()
  const keystore = join(dir, 'participant.json')
  await writeKeystore(keystore, participant)
  const org = (await accounts.listOrganizations())[0]!.id
  const proved = await bwnet(['keys', 'prove-binding', '--organization', org, '--role', 'worker', '--name', 'worker 7', '--keystore', keystore])
  t.equal(proved.exitCode, 0, proved.err)
  const body = JSON.parse(proved.out)
  t.match(body, { role: 'worker', name: 'worker 7', hotkey: participant.address, hotkeyProof: { timestamp: Number, nonce: /^[A-Za-z0-9_-]{16,64}$/, signature: /^[0-9a-f]{128}$/ } })
  const withKey = ['admin', '--api', api, '--key', admin.admin, 'key', 'create', org]
  const send = async (extra: string[] = []) => await bwnet([...withKey, '--role', 'worker', '--hotkey', participant.address, '--name', 'worker 7', '--hotkey-proof', proved.out.trim(), ...extra])

  const disagreeing = await bwnet([...withKey, '--role', 'orchestrator', '--hotkey-proof', proved.out.trim()])
  t.equal(disagreeing.exitCode, 2, 'an option that disagrees with the signed body is a usage error')
  t.match(disagreeing.err, /role is "orchestrator" here but "worker" in the signed body/)
  t.equal((await bwnet([...withKey, '--role', 'worker', '--plan', 'pro', '--hotkey-proof', proved.out.trim()])).exitCode, 2, 'so is a field the participant did not sign')

  const created = await send()
  t.equal(created.exitCode, 0, created.err)
  t.equal(JSON.parse(created.out).apiKey.hotkey, participant.address, 'the key is bound to the participant')
  const again = await send()
  t.equal(again.exitCode, 1, 'the same proof a second time')
  t.match(again.err, /BWN_ERR_HOTKEY_PROOF_REPLAYED/)
  t.equal((await accounts.listKeys(org)).filter(k => k.hotkey === participant.address).length, 1, 'one key')
})
