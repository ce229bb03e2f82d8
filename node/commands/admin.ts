// `bwnet admin …`: the admin HTTP API from a terminal. Prints JSON on stdout; an API error prints its
// problem (code and detail) on stderr and exits 1.
import { Command, Option } from 'commander'
import { join } from 'node:path'
import { mkdir } from 'node:fs/promises'
import { Level } from 'level'
import { printApiCall, DEFAULT_API } from './http-call.ts'
import { LevelStore } from '../../actors/store.ts'
import { AccountsService } from '../../api/accounts/service.ts'
import { CliError } from './keys.ts'
import { apiOf } from './profiles.ts'

export { DEFAULT_API }

interface Globals { api: string, key?: string }

function collectScope (value: string, previous: string[] = []): string[] { return [...previous, value] }

async function callApi (cmd: Command, method: string, path: string, body?: unknown): Promise<void> {
  const { key } = cmd.optsWithGlobals<Globals>()
  if (key === undefined || key === '') cmd.error('error: an admin key is needed (--key or BWN_ADMIN_KEY)', { exitCode: 2, code: 'bwnet.admin.key' })
  const api = await apiOf(cmd)
  let url: URL
  try { url = new URL(`/admin${path}`, api) } catch { return cmd.error(`error: --api ${api} is not a URL`, { exitCode: 2, code: 'bwnet.admin.api' }) }
  return printApiCall(cmd, 'admin', url, method, key, body)
}

export function adminCommand (): Command {
  const admin = new Command('admin')
    .description('manage organizations, projects, environments, API keys and credits over the admin API')
    .addOption(new Option('--api <url>', 'API base URL').env('BWN_API').default(DEFAULT_API))
    .addOption(new Option('--profile <name>', 'take the API URL from this `bwnet login` profile'))
    .addOption(new Option('--key <key>', 'admin API key').env('BWN_ADMIN_KEY'))

  admin.command('init')
    .description('create the first organization and an admin key in a node\'s data directory (run it on the orchestrator\'s host while the node is stopped); the key is printed once')
    .requiredOption('--data <dir>', 'the orchestrator\'s data directory (its --data)')
    .option('--name <name>', 'name of the organization', 'operator')
    .option('--force', 'create another admin key even if one exists')
    .action(async (o: { data: string, name: string, force?: boolean }) => {
      const created = await initAdmin(o.data, { name: o.name, force: o.force === true })
      process.stdout.write(JSON.stringify(created) + '\n')
      process.stderr.write('admin key created: store it now, it is not shown again (use it as BWN_ADMIN_KEY or --key)\n')
    })

  const org = admin.command('org').description('organizations')
  org.command('create <name>').description('create an organization')
    .action((name: string, _o, cmd: Command) => callApi(cmd, 'POST', '/organizations', { name }))
  org.command('list').description('list organizations')
    .action((_o, cmd: Command) => callApi(cmd, 'GET', '/organizations'))
  org.command('show <organizationId>').description('show an organization')
    .action((id: string, _o, cmd: Command) => callApi(cmd, 'GET', `/organizations/${encodeURIComponent(id)}`))

  const project = admin.command('project').description('projects')
  project.command('create <organizationId> <name>').description('create a project')
    .action((id: string, name: string, _o, cmd: Command) => callApi(cmd, 'POST', `/organizations/${encodeURIComponent(id)}/projects`, { name }))
  project.command('list <organizationId>').description('list the projects of an organization')
    .action((id: string, _o, cmd: Command) => callApi(cmd, 'GET', `/organizations/${encodeURIComponent(id)}/projects`))

  const env = admin.command('env').description('environments')
  env.command('create <projectId> <name>').description('create an environment')
    .action((id: string, name: string, _o, cmd: Command) => callApi(cmd, 'POST', `/projects/${encodeURIComponent(id)}/environments`, { name }))
  env.command('list <projectId>').description('list the environments of a project')
    .action((id: string, _o, cmd: Command) => callApi(cmd, 'GET', `/projects/${encodeURIComponent(id)}/environments`))

  const key = admin.command('key').description('API keys')
  key.command('create <organizationId>').description('issue a key; the plain key is printed once')
    .requiredOption('--role <role>', 'client, orchestrator, worker, validator, console or admin')
    .option('--scope <scope>', 'telemetry:read or telemetry:realtime:read (repeatable; console keys)', collectScope)
    .option('--plan <plan>', 'free, pro or enterprise; only the operator chooses (default: free from the operator, the issuing admin\'s own plan from an organization admin)')
    .option('--project <projectId>', 'grant at project level')
    .option('--environment <environmentId>', 'grant at environment level')
    .option('--name <name>', 'a label')
    .option('--expires-at <date-time>', 'expiry, ISO 8601')
    .option('--hotkey <hotkey>', 'bind an orchestrator or worker key to its participant (it then reads only its own audit rows)')
    .option('--hotkey-proof <json>', 'the signed request body `bwnet keys prove-binding` printed on the participant\'s side: sent exactly as signed (the other options must agree with it)')
    .option('--operator', 'an operator admin key, reaching every organization (needs an operator key)')
    .action((id: string, o: { role: string, scope?: string[], plan?: string, project?: string, environment?: string, name?: string, expiresAt?: string, hotkey?: string, hotkeyProof?: string, operator?: boolean }, cmd: Command) => {
      const body: Record<string, unknown> = {
        role: o.role,
        ...(o.plan !== undefined ? { plan: o.plan } : {}),
        ...(o.operator === true ? { operator: true } : {}),
        ...(o.scope !== undefined ? { scopes: o.scope } : {}),
        ...(o.project !== undefined ? { projectId: o.project } : {}),
        ...(o.environment !== undefined ? { environmentId: o.environment } : {}),
        ...(o.name !== undefined ? { name: o.name } : {}),
        ...(o.expiresAt !== undefined ? { expiresAt: o.expiresAt } : {}),
        ...(o.hotkey !== undefined ? { hotkey: o.hotkey } : {})
      }
      if (o.hotkeyProof === undefined) return callApi(cmd, 'POST', `/organizations/${encodeURIComponent(id)}/keys`, body)
      // The proof signs the whole body: it is sent as signed, and what the options say must be in it.
      let signed: Record<string, unknown>
      try { signed = JSON.parse(o.hotkeyProof) } catch { return cmd.error('error: --hotkey-proof takes the JSON `bwnet keys prove-binding` printed', { exitCode: 2, code: 'bwnet.admin.proof' }) }
      for (const [field, value] of Object.entries(body)) {
        if (JSON.stringify(signed[field]) !== JSON.stringify(value)) {
          return cmd.error(`error: ${field} is ${JSON.stringify(value)} here but ${JSON.stringify(signed[field] ?? null)} in the signed body; the participant signs every field (bwnet keys prove-binding)`, { exitCode: 2, code: 'bwnet.admin.proof' })
        }
      }
      return callApi(cmd, 'POST', `/organizations/${encodeURIComponent(id)}/keys`, signed)
    })
  key.command('list <organizationId>').description('list the keys of an organization (no secrets)')
    .action((id: string, _o, cmd: Command) => callApi(cmd, 'GET', `/organizations/${encodeURIComponent(id)}/keys`))
  key.command('show <keyId>').description('show a key')
    .action((id: string, _o, cmd: Command) => callApi(cmd, 'GET', `/keys/${encodeURIComponent(id)}`))
  key.command('revoke <keyId>').description('revoke a key; its next request is refused')
    .action((id: string, _o, cmd: Command) => callApi(cmd, 'DELETE', `/keys/${encodeURIComponent(id)}`))

  const credits = admin.command('credits').description('prepaid credits')
  credits.command('grant <organizationId> <amount>').description('grant credits')
    .option('--memo <text>', 'why')
    .action((id: string, amount: string, o: { memo?: string }, cmd: Command) =>
      // The API validates the amount (a positive integer); a non-number arrives as null and is refused.
      callApi(cmd, 'POST', `/organizations/${encodeURIComponent(id)}/credits`, { amount: Number(amount), ...(o.memo !== undefined ? { memo: o.memo } : {}) }))
  credits.command('balance <organizationId>').description('read the balance')
    .action((id: string, _o, cmd: Command) => callApi(cmd, 'GET', `/organizations/${encodeURIComponent(id)}/credits`))
  credits.command('ledger <organizationId>').description('read the ledger, newest first')
    .option('--limit <n>', 'entries (the API answers 100 by default)')
    .action((id: string, o: { limit?: string }, cmd: Command) =>
      callApi(cmd, 'GET', `/organizations/${encodeURIComponent(id)}/credits/ledger${o.limit !== undefined ? `?limit=${encodeURIComponent(o.limit)}` : ''}`))

  // The workers an orchestrator attaches (operator key; docs/node.md#attaching-workers).
  const worker = admin.command('worker').description('workers this orchestrator attaches (operator key)')
  worker.command('list').description('attached and revoked workers')
    .action((_o, cmd: Command) => callApi(cmd, 'GET', '/workers'))
  worker.command('revoke <hotkey>').description('revoke a worker: refused here at once, its session ended, kept across restarts')
    .action((hotkey: string, _o, cmd: Command) => callApi(cmd, 'PUT', `/workers/${encodeURIComponent(hotkey)}/revocation`))
  worker.command('reinstate <hotkey>').description('lift a worker\'s revocation: it may attach again')
    .action((hotkey: string, _o, cmd: Command) => callApi(cmd, 'DELETE', `/workers/${encodeURIComponent(hotkey)}/revocation`))

  return admin
}

export interface InitializedAdmin { organizationId: string, keyId: string, key: string, created: 'organization' | 'key' }

/**
 * Creates the first organization and an admin key directly in a node's store. The node must be stopped:
 * LevelDB's lock refuses a second opener, so a running node is never written behind its back (the
 * command fails with a clear message instead). Refuses when a live admin key exists, unless `force`
 * (which adds a key to the oldest organization).
 */
export async function initAdmin (data: string, opts: { name?: string, force?: boolean } = {}): Promise<InitializedAdmin> {
  await mkdir(data, { recursive: true })
  const db = new Level<string, string>(join(data, 'db'))
  try {
    await db.open()
  } catch (err) {
    const code = (err as { code?: string, cause?: { code?: string } }).cause?.code ?? (err as { code?: string }).code
    if (code === 'LEVEL_LOCKED') throw new CliError(`the database in ${data} is in use: stop the node first (bwnet admin init runs while the node is stopped)`)
    throw new CliError(`cannot open the database in ${data}: ${(err as Error).message}`)
  }
  try {
    const accounts = new AccountsService({ store: new LevelStore(db as never) })
    const orgs = await accounts.listOrganizations()
    for (const org of orgs) {
      const admins = (await accounts.listKeys(org.id)).filter(k => k.role === 'admin' && k.revokedAt === null)
      if (admins.length > 0 && opts.force !== true) throw new CliError(`an admin key already exists (${admins[0]!.prefix}… in organization ${org.id}); use --force to create another`)
    }
    const org = orgs[0] ?? await accounts.createOrganization({ name: opts.name ?? 'operator' })
    // The first key of a node is the network operator's: it reaches every organization (docs/security.md).
    const key = await accounts.createKey(org.id, { role: 'admin', operator: true, plan: 'enterprise', name: 'first admin' })
    return { organizationId: org.id, keyId: key.apiKey.id, key: key.key, created: orgs.length === 0 ? 'organization' : 'key' }
  } finally {
    await db.close()
  }
}
