// An orchestrator's own registration on the chain: it needs a UID before it can hold weight. Tried at
// start and every REGISTER_RETRY_MS on the injected clock until the chain answers (the chain host may
// not be connected yet); `register` is idempotent, so a registered key burns nothing. docs/chain.md.
import type { Clock, Logger, Timer } from '../ports.ts'
import type { Chain } from './ports.ts'
import type { Role } from '../../protocol/index.ts'

export const REGISTER_RETRY_MS = 2_000 // 2 s

export interface Registration {
  registered (): boolean
  stop (): void
}

export function keepRegistered (deps: { chain: Pick<Chain, 'register'>, clock: Clock, logger: Logger, hotkey: string, role: Role }): Registration {
  let registered = false
  let inFlight = false
  let timer: Timer | null = null
  const attempt = (): void => {
    if (registered || inFlight) return
    inFlight = true
    deps.chain.register(deps.hotkey, deps.role).then(() => { registered = true; timer?.cancel() }, (err: Error) => deps.logger.debug({ err: err.message }, 'chain registration failed; retrying'))
      .finally(() => { inFlight = false })
  }
  attempt()
  timer = deps.clock.every(REGISTER_RETRY_MS, attempt)
  return { registered: () => registered, stop: () => timer?.cancel() }
}
