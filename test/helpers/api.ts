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
