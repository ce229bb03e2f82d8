// A dev chain on a manual clock and validators' epoch machines fed its epoch closes.
import { MemoryLevel } from 'memory-level'
import { cryptoReady, newHotkey } from '../../protocol/index.ts'
import { LevelStore } from '../../actors/store.ts'
import { DevChain } from '../../actors/chain/dev-chain.ts'
import type { EpochClose } from '../../actors/chain/ports.ts'
import { EpochMachine, type CloseOutcome, type TaskEvidence } from '../../actors/validator/epochs.ts'
import { ManualClock } from './clock.ts'
import { silentLogger } from './logger.ts'

export const MIB = 1_048_576

export async function epochFixture (opts: { blockTimeMs?: number, blocksPerEpoch?: number, validators?: number, orchestrators?: number } = {}) {
  await cryptoReady()
  const blockTimeMs = opts.blockTimeMs ?? 1_000
  const blocksPerEpoch = opts.blocksPerEpoch ?? 10
  const clock = new ManualClock()
  const chain = await DevChain.open({ clock, store: new LevelStore(new MemoryLevel() as never), logger: silentLogger(), blockTimeMs, blocksPerEpoch, emissionPerEpochRao: 1_000_000n })
  const orchestrators = Array.from({ length: opts.orchestrators ?? 3 }, () => newHotkey().address)
  for (const o of orchestrators) await chain.register(o, 'orchestrator')
  const validators = await Promise.all(Array.from({ length: opts.validators ?? 2 }, async () => {
    const store = new LevelStore(new MemoryLevel() as never)
    const hotkey = newHotkey().address
    const machine = new EpochMachine({ store, chain, hotkey, logger: silentLogger() })
    await machine.start()
    return { store, hotkey, machine, outcomes: [] as CloseOutcome[] }
  }))
  const closes: EpochClose[] = []
  chain.subscribe({ epochClosed: c => closes.push(c) })
  chain.start()
  let seq = 0

  return {
    clock, chain, orchestrators, validators, closes, blockTimeMs, blocksPerEpoch,
    /** Produces `blocks` blocks and hands every epoch close to every validator, in order. */
    async advance (blocks: number) {
      for (let i = 0; i < blocks; i++) {
        clock.advance(blockTimeMs)
        await chain.settled()
        while (closes.length > 0) {
          const c = closes.shift()!
          for (const v of validators) v.outcomes.push(await v.machine.epochClosed(c))
        }
      }
    },
    /** Advances to the last block of `epoch` (its close). */
    async closeEpoch (epoch: number) {
      const head = await chain.head()
      await this.advance((epoch + 1) * blocksPerEpoch - 1 - head.block)
    },
    evidence (orchestrator: string, mib: number, verifiedAt: number, over: Partial<TaskEvidence> = {}): TaskEvidence {
      seq++
      return {
        taskId: `task-${seq}`, attemptId: `attempt-${seq}`, transferId: 'transfer-1', orchestratorHotkey: orchestrator,
        workerHotkey: orchestrator, bytes: mib * MIB, verifiedAt, durationMs: 1_000, verdict: 'verified', ...over
      }
    }
  }
}
