// The actor the node runs: evidence through its mailbox, epoch closes from the chain's events.
import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { cryptoReady, newHotkey } from '../../../protocol/index.ts'
import { LevelStore } from '../../../actors/store.ts'
import { startSystem, stopActor } from '../../../actors/runtime.ts'
import { DevChain } from '../../../actors/chain/dev-chain.ts'
import { startValidatorEpochs } from '../../../actors/validator/epochs.ts'
import { epochSnapshot, weightsProof } from '../../../actors/validator/snapshots.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { silentLogger } from '../../helpers/logger.ts'

t.test('the epochs actor publishes on the chain\'s epoch closes and sets weights', async t => {
  await cryptoReady()
  const clock = new ManualClock()
  const logger = silentLogger()
  const chain = await DevChain.open({ clock, store: new LevelStore(new MemoryLevel() as never), logger, blockTimeMs: 1_000, blocksPerEpoch: 5 })
  const orchestrator = newHotkey().address
  await chain.register(orchestrator, 'orchestrator')
  const store = new LevelStore(new MemoryLevel() as never)
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const hotkey = newHotkey().address
  const epochs = await startValidatorEpochs(system, { clock, logger }, { store, chain, hotkey, logger })
  t.match(await chain.registrations(), [{ hotkey: orchestrator }, { hotkey, role: 'validator' }], 'the validator registered itself')
  const ev = { taskId: 't1', attemptId: 'a1', transferId: 'x1', orchestratorHotkey: orchestrator, workerHotkey: hotkey, bytes: 8 * 1_048_576, verifiedAt: clock.now() + 10, durationMs: 5, verdict: 'verified' as const }
  t.match(await epochs.submitEvidence([ev]), { accepted: 1 })
  await t.rejects(epochs.submitEvidence([{ ...ev, bytes: -5 }]), /evidence\[0\]/, 'bad input is rejected to the sender')
  await epochs.submitPenalties([])
  chain.start()
  for (let i = 0; i < 10; i++) { clock.advance(1_000); await chain.settled() }
  // The closes reached the actor through the chain's listener, before the flush.
  await epochs.flush()
  t.match((await epochSnapshot(store, 0))!.data, { revision: 1, contributingOrchestratorCount: 1, sumFinalShare: 1 })
  t.match(await weightsProof(store, 0), { source: 'epoch_summary', uids: [1], uint16Weights: [65535] })
  await epochs.stop()
  await chain.stop()
})
