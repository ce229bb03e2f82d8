// Client profiles: `bwnet login` stores an API URL and key under a name in the user's config file
// (mode 0600), so no command needs the key on its command line. Where: $BWN_CONFIG, else
// $XDG_CONFIG_HOME/bwnet/config.json, else ~/.config/bwnet/config.json. Which profile and key a command
// uses: docs/cli.md#profiles (flags > an explicit --profile > BWN_API/BWN_KEY > the default profile).
import { Command, Option } from 'commander'
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { DEFAULT_API } from './http-call.ts'
import { CliError, UsageError, Interrupted } from './common.ts'
import { createApiClient } from '../../api/client/index.ts'
import { hostPort, networkCode } from '../transfers/reach.ts'
import { invocation } from './transfer/invocation.ts'

export const CONFIG_VERSION = 1
export const DEFAULT_PROFILE = 'default'
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const VERIFY_TIMEOUT_MS = 15_000

export interface Profile { api: string, key: string }
export interface ConfigFile { version: typeof CONFIG_VERSION, default_profile?: string, profiles: Record<string, Profile> }

export function configPath (env: NodeJS.ProcessEnv = process.env): string {
  if (env.BWN_CONFIG !== undefined && env.BWN_CONFIG !== '') return env.BWN_CONFIG
  const base = env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(homedir(), '.config')
  return join(base, 'bwnet', 'config.json')
}

/** The config file, or an empty one when there is none. A file others can read is refused: it holds keys. */
export async function readConfig (path = configPath()): Promise<ConfigFile> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: CONFIG_VERSION, profiles: {} }
    throw new CliError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  if (process.platform !== 'win32' && ((await stat(path)).mode & 0o077) !== 0) {
    throw new CliError(`${path} holds API keys but others can read it: run \`chmod 600 ${path}\``)
  }
  let parsed: ConfigFile
  try { parsed = JSON.parse(text) as ConfigFile } catch { throw new CliError(`${path} is not JSON`) }
  if (parsed === null || typeof parsed !== 'object' || typeof parsed.profiles !== 'object' || parsed.profiles === null) throw new CliError(`${path} has no "profiles" object`)
  return parsed
}

/** Replaces the config file atomically, readable by its owner only (directory 0700, file 0600). */
export async function writeConfig (config: ConfigFile, path = configPath()): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`
  await writeFile(tmp, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 })
  await chmod(tmp, 0o600)
  await rename(tmp, path)
}

export function checkProfileName (name: string): string {
  if (!PROFILE_NAME.test(name)) throw new UsageError(`profile names are letters, digits, '.', '_' and '-' (at most 64), got "${name}"`)
  return name
}

export function normaliseApi (api: string, from = '--api'): string {
  let url: URL
  try { url = new URL(api) } catch { throw new UsageError(`${from} ${api} is not a URL`) }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${from} ${api} is not an http(s) URL`)
  return url.toString().replace(/\/+$/, '')
}

/** The flags every client command takes; commander fills them. */
export interface ClientFlags { api?: string, key?: string, profile?: string }
export interface Credentials { api: string, key: string, profile: string | null }

/**
 * Which API and key a command uses: --api/--key first; then the profile named by --profile; then
 * BWN_API/BWN_KEY; then the profile named by BWN_PROFILE or "default"; the API falls back to
 * http://127.0.0.1:8000. No key at all is a usage error (exit 2).
 */
export async function resolveCredentials (flags: ClientFlags, env: NodeJS.ProcessEnv = process.env, path = configPath(env)): Promise<Credentials> {
  const envApi = env.BWN_API !== undefined && env.BWN_API !== '' ? env.BWN_API : undefined
  const envKey = env.BWN_KEY !== undefined && env.BWN_KEY !== '' ? env.BWN_KEY : undefined
  const explicit = flags.profile !== undefined
  const config = await readConfig(path)
  const name = checkProfileName(flags.profile ?? (env.BWN_PROFILE !== undefined && env.BWN_PROFILE !== '' ? env.BWN_PROFILE : undefined) ?? config.default_profile ?? DEFAULT_PROFILE)
  const profile = config.profiles[name]
  if (explicit && profile === undefined) throw new UsageError(`no profile "${name}" in ${path}; run \`${invocation()} login --profile ${name} --api URL\``)
  // An explicit --profile beats the environment; otherwise BWN_API/BWN_KEY beat the default profile.
  const pick = (flag: string | undefined, fromEnv: string | undefined, fromProfile: string | undefined): [string | undefined, string] =>
    flag !== undefined && flag !== ''
      ? [flag, 'flag']
      : explicit ? [fromProfile ?? fromEnv, fromProfile !== undefined ? 'profile' : 'env'] : [fromEnv ?? fromProfile, fromEnv !== undefined ? 'env' : 'profile']
  const [api, apiFrom] = pick(flags.api, envApi, profile?.api)
  const [key, keyFrom] = pick(flags.key, envKey, profile?.key)
  if (key === undefined) throw new UsageError(`an API key is needed: run \`${invocation()} login --api URL\` once (or set BWN_KEY, or pass --key)`)
  const label = apiFrom === 'flag' ? '--api' : apiFrom === 'env' ? 'BWN_API' : `profile ${name}: api`
  return { api: normaliseApi(api ?? DEFAULT_API, label), key, profile: keyFrom === 'profile' ? name : null }
}

/** What a key looks like in messages: its public id only (`bwn_<id>_…`), never the secret. */
export function keyLabel (key: string): string {
  const m = /^(bwn_[0-9a-f]{16})_/.exec(key)
  return m !== null ? `${m[1]}_…` : '(a key)'
}

/** The options every client command takes (--api, --key, --profile). */
export function addClientOptions (cmd: Command): Command {
  return cmd
    .addOption(new Option('--profile <name>', 'profile from `bwnet login` (default: BWN_PROFILE, else "default")'))
    .addOption(new Option('--api <url>', 'API base URL (default: BWN_API, else the profile\'s, else http://127.0.0.1:8000)'))
    .addOption(new Option('--key <key>', 'client API key, for scripts (default: BWN_KEY, else the profile\'s); visible to other users in `ps`'))
}

/** Reads the key without echo from a terminal, or the first line of piped stdin; never from argv. */
export async function readSecret (prompt: string, input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stderr): Promise<string> {
  if (input.isTTY !== true) {
    let text = ''
    input.setEncoding('utf8')
    for await (const part of input) text += part as string
    return (text.split(/\r?\n/).find(l => l.trim() !== '') ?? '').trim()
  }
  // No echo before the prompt shows: a key typed (or pasted) the moment it appears is not echoed.
  input.setRawMode(true)
  output.write(prompt)
  input.resume()
  input.setEncoding('utf8')
  return await new Promise<string>((resolve, reject) => {
    let value = ''
    const done = (err: Error | null): void => {
      input.setRawMode(false)
      input.pause()
      input.off('data', onData)
      output.write('\n')
      if (err !== null) reject(err); else resolve(value.trim())
    }
    const onData = (data: string): void => {
      for (const ch of data) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done(null)
        if (ch === '\u0003') return done(new Interrupted('login cancelled'))
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1)
        else if (ch >= ' ') value += ch
      }
    }
    input.on('data', onData)
  })
}

/** Asks the API whether the key works (GET /transfers?limit=1): 401/403 means a wrong key. */
async function verifyKey (api: string, key: string): Promise<void> {
  const client = createApiClient(api, { key })
  let res: Response
  try {
    res = (await client.GET('/transfers', { params: { query: { limit: 1 } }, signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS) })).response
  } catch (err) {
    throw new CliError(`BWN_ERR_CLI_API_UNREACHABLE: cannot reach the API at ${hostPort(api)} (${networkCode(err) ?? (err as Error).message}); use --no-verify to save the profile anyway`)
  }
  if (res.status === 401 || res.status === 403) throw new CliError(`the API at ${api} refused the key (${res.status}); nothing was saved`)
  if (!res.ok && res.status !== 429) throw new CliError(`the API at ${api} answered ${res.status}; nothing was saved (use --no-verify to save anyway)`)
}

export function loginCommand (): Command {
  return new Command('login')
    .description('store an API URL and client key as a profile (the key is read from a prompt or stdin, never the command line)')
    .option('--profile <name>', 'profile name', DEFAULT_PROFILE)
    .addOption(new Option('--api <url>', 'API base URL (default: the profile\'s, else BWN_API, else http://127.0.0.1:8000)'))
    .option('--no-verify', 'save without checking the key against the API')
    .option('--default', 'make this profile the default one')
    .action(async (opts: { profile: string, api?: string, verify: boolean, default?: boolean }) => {
      const name = checkProfileName(opts.profile)
      const path = configPath()
      const config = await readConfig(path)
      const api = normaliseApi(opts.api ?? config.profiles[name]?.api ?? process.env.BWN_API ?? DEFAULT_API)
      const key = await readSecret(`API key for ${api}: `)
      if (key === '') throw new UsageError('no key given (type it at the prompt or pipe it on stdin)')
      if (opts.verify) await verifyKey(api, key)
      config.version = CONFIG_VERSION
      config.profiles[name] = { api, key }
      if (opts.default === true || config.default_profile === undefined || config.profiles[config.default_profile] === undefined) config.default_profile = name
      await writeConfig(config, path)
      process.stderr.write(`saved profile "${name}" (${api}, key ${keyLabel(key)}) in ${path}\n`)
    })
}

export function logoutCommand (): Command {
  return new Command('logout')
    .description('remove a profile and its key from the config file')
    .option('--profile <name>', 'profile name', DEFAULT_PROFILE)
    .action(async (opts: { profile: string }) => {
      const name = checkProfileName(opts.profile)
      const path = configPath()
      const config = await readConfig(path)
      if (config.profiles[name] === undefined) throw new UsageError(`no profile "${name}" in ${path}`)
      delete config.profiles[name]
      if (config.default_profile === name) delete config.default_profile
      await writeConfig(config, path)
      process.stderr.write(`removed profile "${name}" from ${path}\n`)
    })
}

export function profilesCommand (): Command {
  return new Command('profiles')
    .description('list the profiles (names and API URLs; keys are never printed)')
    .action(async () => {
      const config = await readConfig()
      for (const [name, p] of Object.entries(config.profiles)) process.stdout.write(`${name}\t${p.api}\t${keyLabel(p.key)}\n`)
    })
}

/**
 * The API URL of a command that has its own --api (admin, chain): --api or BWN_API when given, else
 * the URL of --profile (or of the default profile), else the built-in default.
 */
export async function apiOf (cmd: Command): Promise<string> {
  const opts = cmd.optsWithGlobals<{ api: string, profile?: string }>()
  const owner = [cmd, ...ancestors(cmd)].find(c => c.options.some(o => o.long === '--api'))
  const source = owner?.getOptionValueSource('api')
  if (source === 'cli' || source === 'env') return opts.api
  const path = configPath()
  const config = await readConfig(path)
  const name = opts.profile !== undefined ? checkProfileName(opts.profile) : (process.env.BWN_PROFILE || config.default_profile || DEFAULT_PROFILE)
  const profile = config.profiles[name]
  if (opts.profile !== undefined && profile === undefined) throw new UsageError(`no profile "${name}" in ${path}`)
  return profile?.api ?? opts.api
}

function ancestors (cmd: Command): Command[] {
  const out: Command[] = []
  for (let c = cmd.parent; c !== null; c = c.parent) out.push(c)
  return out
}
