// A node hosting the dev chain and a node reaching it over signed messages.
import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { cryptoReady } from '../../protocol/index.ts'
import { LevelStore } from '../../actors/store.ts'
import { hostDevChain, remoteChain } from '../../node/chain.ts'
import { ManualClock } from '../helpers/clock.ts'
import { silentLogger } from '../helpers/logger.ts'
import { linkedMessengers } from '../helpers/linked-messengers.ts'

t.test('hostDevChain serves, remoteChain registers and reads', async t => {
  await cryptoReady()
  const clock = new ManualClock()
  const logger = silentLogger()
  const link = linkedMessengers(clock, { a: 'orchestrator', b: 'validator' })
  await link.settle()
  const store = new LevelStore(new MemoryLevel() as never)
  const host = await hostDevChain({ store, clock, logger, messenger: link.a }, { blockTimeMs: 1_000, blocksPerEpoch: 4 })
  const remote = remoteChain({ clock, logger, messenger: link.b }, link.keyA.address)
  t.equal(host.dev, true)
  t.match(await remote.chain.register(link.keyB.address, 'validator'), { uid: 1, role: 'validator' })
  clock.advance(5_000)
  await (host.chain as unknown as { settled (): Promise<void> }).settled()
  t.match(await remote.chain.head(), { block: 5, epoch: 1 })
  t.match(await remote.chain.epochClose(0), { lastBlock: 3 })
  t.equal(await remote.chain.uidOf(link.keyB.address), 1)
  t.ok(await store.table('chain').get('head'), 'the chain lives in the host node\'s store')
  await remote.stop()
  await host.stop()
  await t.rejects(remote.chain.head(), { code: 'BWN_ERR_CHAIN_UNAVAILABLE' })
})
