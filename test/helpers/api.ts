// A real app over a memory store for API tests: real accounts service, real plugins, a pino logger
// whose lines are kept for inspection.
import { MemoryLevel } from 'memory-level'
import pino from 'pino'
import { Writable } from 'node:stream'
import { LevelStore } from '../../actors/store.ts'
import { AccountsService, type AccountsOptions } from '../../api/accounts/service.ts'
import type { ApiDeps } from '../../api/deps.ts'

export interface TestDeps {
  deps: ApiDeps
  accounts: AccountsService
  store: LevelStore
  /** Every log line written so far, raw. */
  logLines: string[]
  clock: { now (): number, advance (ms: number): void }
}

export function testDeps (opts: { pricing?: AccountsOptions['pricing'], planRequestsPerMinute?: ApiDeps['planRequestsPerMinute'] } = {}): TestDeps {
  const store = new LevelStore(new MemoryLevel() as never)
  let now = Date.parse('2030-01-01T00:00:00Z')
  const clock = { now: () => now, advance: (ms: number) => { now += ms } }
  const accounts = new AccountsService({ store, clock, pricing: opts.pricing })
  const logLines: string[] = []
  const sink = new Writable({ write (chunk, _enc, cb) { logLines.push(String(chunk)); cb() } })
  const logger = pino({ level: 'trace' }, sink)
  const deps: ApiDeps = {
    logger,
    self: { hotkey: '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY', role: 'orchestrator', software: 'bwnet/test' },
    membership: { counts: async () => ({ orchestrator: 1, worker: 0, validator: 0 }), peers: async () => [] },
    ready: () => true,
    accounts,
    planRequestsPerMinute: opts.planRequestsPerMinute
  }
  return { deps, accounts, store, logLines, clock }
}

/**
 * The API on test deps with the devnet's keys bootstrapped, closed when `t` ends, and `as(key)`: a
 * caller that sends a bearer key and answers `{ status, body }`; `operator` is the operator's own.
 */
export async function adminApp (t: { teardown (fn: () => unknown): void }) {
  const { buildApp } = await import('../../api/app.ts')
  const { bootstrapDevnetKeys } = await import('../../api/accounts/devnet.ts')
  const env = testDeps()
  const devnet = await bootstrapDevnetKeys(env.accounts)
  const app = await buildApp(env.deps)
  await app.ready()
  t.teardown(() => app.close())
  const as = (key: string) => async (method: string, url: string, payload?: object): Promise<{ status: number, body: any }> => {
    const res = await app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${key}` }, ...(payload ? { payload } : {}) })
    return { status: res.statusCode, body: res.json() }
  }
  return { env, devnet, app, as, operator: as(devnet.admin) }
}

/**
 * The API with a destination registry under `policy` (names resolved by `resolve`), and a caller that
 * POSTs /destinations `{ name: 'd', ...body }` with a client key of a fresh organization.
 */
export async function destinationsApi (t: { teardown (fn: () => unknown): void }, policy: import('../../node/adapters/destinations/url-policy.ts').AddressPolicy, resolve: (host: string) => Promise<string[]>) {
  const { buildApp } = await import('../../api/app.ts')
  const { DestinationRegistry } = await import('../../node/transfers/destinations.ts')
  const { newHotkey } = await import('../../protocol/index.ts')
  const h = testDeps()
  const registry = new DestinationRegistry(h.store, newHotkey(), { now: () => Date.now() } as never, policy, resolve)
  const app = await buildApp({ ...h.deps, destinations: registry })
  t.teardown(() => app.close())
  const org = await h.accounts.createOrganization({ name: 'o' })
  const key = (await h.accounts.createKey(org.id, { role: 'client' })).key
  const create = async (body: object) => await app.inject({ method: 'POST', url: '/destinations', headers: { 'x-api-key': key }, payload: { name: 'd', ...body } })
  return { create }
}
