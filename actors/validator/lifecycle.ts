// A validator's epoch machinery over its life: started once the chain can be reached (retried every
// second on the injected clock; it registers the validator on the chain), evidence that arrives before
// held in memory and handed over at start, and after each epoch close the published snapshots replicated
// to the orchestrators (whose telemetry serves them, actors/validator/intake.ts). docs/validation.md.
import type { Clock, Logger, Network, Store, Timer } from '../ports.ts'
import type { TaskEvidence, OrchestratorPenalty, ValidatorEpochs } from './epochs.ts'
import type { EvidenceSink } from './verifier.ts'
import { listEpochSnapshots, sellAllowanceSnapshot } from './snapshots.ts'

export const START_RETRY_MS = 1_000 // 1 s between attempts to start the epoch machinery
/** Epochs replicated after a close: the closed one and the three before it (late revisions). */
export const REPLICATED_EPOCHS = 4

export interface DeferredEpochsDeps {
  clock: Clock
  logger: Logger
  /** Whether starting may be tried now (the chain host is connected). */
  ready (): boolean
  start (): Promise<ValidatorEpochs>
}

export interface DeferredEpochs {
  /** The sink the verifier submits to: straight to the epochs once started, held until then. */
  sink: EvidenceSink
  /** The started epochs, or null. */
  epochs (): ValidatorEpochs | null
  /** Tries to start now (as the timer does every second). */
  tryStart (): void
  stop (): Promise<void>
}

export function deferredEpochs (deps: DeferredEpochsDeps): DeferredEpochs {
  let epochs: ValidatorEpochs | null = null
  let starting = false
  let stopped = false
  const waiting: { evidence: TaskEvidence[], penalties: OrchestratorPenalty[] } = { evidence: [], penalties: [] }
  const tryStart = (): void => {
    if (stopped || epochs !== null || starting || !deps.ready()) return
    starting = true
    deps.start().then(async (e) => {
      epochs = e
      timer.cancel()
      if (waiting.penalties.length > 0) await e.submitPenalties(waiting.penalties.splice(0))
      if (waiting.evidence.length > 0) await e.submitEvidence(waiting.evidence.splice(0))
      deps.logger.info({ event: 'validator_ready' }, 'validator epochs started')
    }, (err: Error) => { starting = false; deps.logger.warn({ err: err.message }, 'validator epochs could not start yet; retrying') })
  }
  const timer: Timer = deps.clock.every(START_RETRY_MS, tryStart)
  return {
    sink: {
      submitEvidence: async (records) => { if (epochs) return await epochs.submitEvidence(records); waiting.evidence.push(...records) },
      submitPenalties: async (rows) => { if (epochs) return await epochs.submitPenalties(rows); waiting.penalties.push(...rows) }
    },
    epochs: () => epochs,
    tryStart,
    stop: async () => { stopped = true; timer.cancel(); await epochs?.stop() }
  }
}

/**
 * After the close of `epoch`: broadcasts every epoch snapshot and sell-allowance snapshot (paid and
 * free) of the last REPLICATED_EPOCHS epochs, once the epoch machine has written what it published.
 */
export async function replicateSnapshots (deps: { store: Store, net: Pick<Network, 'broadcast'>, epochs: Pick<ValidatorEpochs, 'flush'> }, epoch: number): Promise<number> {
  await deps.epochs.flush()
  const from = Math.max(0, epoch - (REPLICATED_EPOCHS - 1))
  let sent = 0
  for (const snap of await listEpochSnapshots(deps.store, { fromEpoch: from, toEpoch: epoch })) {
    deps.net.broadcast('snapshot_published', { kind: 'epoch', epoch: snap.sourceEpoch, revision: snap.data.revision, hotkey: null, snapshot: snap as never })
    sent++
  }
  for (const key of await sellIndexKeys(deps.store, from)) {
    const [, e, hotkey] = key.split('/')
    for (const variant of ['paid', 'free'] as const) {
      const snap = await sellAllowanceSnapshot(deps.store, hotkey!, variant as 'paid', Number(e))
      if (snap !== null) {
        deps.net.broadcast('snapshot_published', { kind: variant === 'paid' ? 'sell_paid' : 'sell_free', epoch: Number(e), revision: 0, hotkey: hotkey!, snapshot: snap as never })
        sent++
      }
    }
  }
  return sent
}

/** Sell-allowance index keys (`sellidx/<epoch>/<hotkey>`) from epoch `from` on. */
async function sellIndexKeys (store: Store, from: number): Promise<string[]> {
  const out: string[] = []
  for await (const [k] of store.table('snapshots').entries({ gte: `sellidx/${String(from).padStart(10, '0')}/`, lt: 'sellidx/\xff' })) out.push(k)
  return out
}
