// `bwnet admin …`: the admin HTTP API from a terminal. Prints JSON on stdout; an API error prints its
// problem (code and detail) on stderr and exits 1.
import { Command, Option } from 'commander'
import { printApiCall, DEFAULT_API } from './http-call.ts'

export { DEFAULT_API }

interface Globals { api: string, key?: string }

function collectScope (value: string, previous: string[] = []): string[] { return [...previous, value] }

async function callApi (cmd: Command, method: string, path: string, body?: unknown): Promise<void> {
  const { api, key } = cmd.optsWithGlobals<Globals>()
  if (key === undefined || key === '') cmd.error('error: an admin key is needed (--key or BWN_ADMIN_KEY)', { exitCode: 2, code: 'bwnet.admin.key' })
  const url = new URL(`/admin${path}`, api)
  return printApiCall(cmd, 'admin', url, method, key, body)
}

export function adminCommand (): Command {
  const admin = new Command('admin')
    .description('manage organizations, projects, environments, API keys and credits over the admin API')
    .addOption(new Option('--api <url>', 'API base URL').env('BWN_API').default(DEFAULT_API))
    .addOption(new Option('--key <key>', 'admin API key').env('BWN_ADMIN_KEY'))

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
    .option('--plan <plan>', 'free, pro or enterprise', 'free')
    .option('--project <projectId>', 'grant at project level')
    .option('--environment <environmentId>', 'grant at environment level')
    .option('--name <name>', 'a label')
    .option('--expires-at <date-time>', 'expiry, ISO 8601')
    .option('--hotkey <hotkey>', 'bind an orchestrator or worker key to its participant (it then reads only its own audit rows)')
    .option('--operator', 'an operator admin key, reaching every organization (needs an operator key)')
    .action((id: string, o: { role: string, scope?: string[], plan: string, project?: string, environment?: string, name?: string, expiresAt?: string, hotkey?: string, operator?: boolean }, cmd: Command) =>
      callApi(cmd, 'POST', `/organizations/${encodeURIComponent(id)}/keys`, {
        role: o.role,
        plan: o.plan,
        ...(o.operator === true ? { operator: true } : {}),
        ...(o.scope !== undefined ? { scopes: o.scope } : {}),
        ...(o.project !== undefined ? { projectId: o.project } : {}),
        ...(o.environment !== undefined ? { environmentId: o.environment } : {}),
        ...(o.name !== undefined ? { name: o.name } : {}),
        ...(o.expiresAt !== undefined ? { expiresAt: o.expiresAt } : {}),
        ...(o.hotkey !== undefined ? { hotkey: o.hotkey } : {})
      }))
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
    .option('--limit <n>', 'entries', '100')
    .action((id: string, o: { limit: string }, cmd: Command) =>
      callApi(cmd, 'GET', `/organizations/${encodeURIComponent(id)}/credits/ledger?limit=${encodeURIComponent(o.limit)}`))

  return admin
}
