// `bwnet admin` against a real listening API on 127.0.0.1.
import t from 'tap'
import { Command, CommanderError } from 'commander'
import { buildApp } from '../../../api/app.ts'
import { bootstrapDevnetKeys } from '../../../api/accounts/devnet.ts'
import { adminCommand } from '../../../node/commands/admin.ts'
import { testDeps } from '../../helpers/api.ts'
import { PROBES, registerProbes } from '../../helpers/probes.ts'

const env = testDeps()
const keys = await bootstrapDevnetKeys(env.accounts)
const app = await buildApp(env.deps)
await registerProbes(app)
const api = await app.listen({ host: '127.0.0.1', port: 0 })
t.teardown(() => app.close())

interface Run { out: string, err: string, exitCode: number, json: any }

/** Runs `bwnet admin …` in-process, capturing output; errors exit through CommanderError. */
async function bwnet (args: string[], envVars: Record<string, string> = {}): Promise<Run> {
  let out = ''
  let err = ''
  const root = new Command('bwnet').addCommand(adminCommand())
  const configure = (cmd: Command): void => {
    cmd.exitOverride().configureOutput({ writeOut: s => { out += s }, writeErr: s => { err += s } })
    cmd.commands.forEach(c => configure(c as Command))
  }
  configure(root)
  const saved = { ...process.env }
  Object.assign(process.env, envVars)
  let exitCode = 0
  try {
    await root.parseAsync(['node', 'bwnet', ...args])
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e
    exitCode = e.exitCode
  } finally {
    for (const k of Object.keys(envVars)) if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k]
  }
  let json: unknown
  try { json = JSON.parse(out) } catch {}
  return { out, err, exitCode, json }
}

const withKey = ['--api', api, '--key', keys.admin]

t.test('the whole admin flow from the command line', async t => {
  const org = await bwnet(['admin', ...withKey, 'org', 'create', 'acme'])
  t.equal(org.exitCode, 0, org.err)
  const orgId = org.json.id as string
  t.ok((await bwnet(['admin', ...withKey, 'org', 'list'])).json.items.some((o: { id: string }) => o.id === orgId))

  const project = (await bwnet(['admin', ...withKey, 'project', 'create', orgId, 'web'])).json
  t.equal(project.organizationId, orgId)
  t.equal((await bwnet(['admin', ...withKey, 'project', 'list', orgId])).json.items.length, 1)
  const environment = (await bwnet(['admin', ...withKey, 'env', 'create', project.id, 'prod'])).json
  t.equal(environment.projectId, project.id)
  t.equal((await bwnet(['admin', ...withKey, 'env', 'list', project.id])).json.items[0].name, 'prod')

  // Flags from the environment instead of the command line.
  const viaEnv = { BWN_API: api, BWN_ADMIN_KEY: keys.admin }
  const created = await bwnet(['admin', 'key', 'create', orgId, '--role', 'console', '--scope', 'telemetry:read', '--scope', 'telemetry:realtime:read', '--plan', 'pro', '--project', project.id, '--name', 'dash'], viaEnv)
  t.equal(created.exitCode, 0, created.err)
  t.match(created.json, { key: /^bwn_[0-9a-f]{16}_/, apiKey: { role: 'console', plan: 'pro', grant: 'project', scopes: ['telemetry:read', 'telemetry:realtime:read'], name: 'dash' } })
  const consoleKey = created.json.key as string

  const listed = await bwnet(['admin', ...withKey, 'key', 'list', orgId])
  t.equal(listed.json.items.length, 1)
  t.notOk(listed.out.includes(consoleKey.slice(21)), 'listing never shows the secret')

  t.equal((await bwnet(['admin', ...withKey, 'credits', 'grant', orgId, '10', '--memo', 'trial'])).json.balance, 10)
  const read = await app.inject({ url: PROBES.telemetry, headers: { 'x-api-key': consoleKey } })
  t.equal(read.statusCode, 200)
  t.equal((await bwnet(['admin', ...withKey, 'credits', 'balance', orgId])).json.balance, 9)
  t.match((await bwnet(['admin', ...withKey, 'credits', 'ledger', orgId, '--limit', '1'])).json.items, [{ kind: 'read', amount: -1 }])
  const ledger = (await bwnet(['admin', ...withKey, 'credits', 'ledger', orgId])).json.items
  t.match(ledger, [{ kind: 'read', amount: -1 }, { amount: 10 }], 'without --limit the API\'s default page')

  const keyId = created.json.apiKey.id as string
  t.equal((await bwnet(['admin', ...withKey, 'key', 'show', keyId])).json.revokedAt, null)
  t.type((await bwnet(['admin', ...withKey, 'key', 'revoke', keyId])).json.revokedAt, 'string')
  t.equal((await app.inject({ url: PROBES.telemetry, headers: { 'x-api-key': consoleKey } })).json().code, 'BWN_ERR_KEY_REVOKED')
})

t.test('API errors print the problem code and exit 1', async t => {
  const bad = await bwnet(['admin', ...withKey, 'credits', 'grant', '00000000-0000-4000-8000-000000000000', '5'])
  t.equal(bad.exitCode, 1)
  t.match(bad.err, /404 BWN_ERR_ORGANIZATION_NOT_FOUND/)
  const notAdmin = await bwnet(['admin', '--api', api, '--key', keys.client, 'org', 'list'])
  t.equal(notAdmin.exitCode, 1)
  t.match(notAdmin.err, /403 BWN_ERR_ROLE_FORBIDDEN/)
  const invalid = await bwnet(['admin', ...withKey, 'credits', 'grant', '00000000-0000-4000-8000-000000000000', 'lots'])
  t.match(invalid.err, /400 BWN_ERR_VALIDATION/)
  const noKey = await bwnet(['admin', '--api', api, 'org', 'list'], { BWN_ADMIN_KEY: '' })
  t.equal(noKey.exitCode, 2)
  t.match(noKey.err, /admin key is needed/)
})
