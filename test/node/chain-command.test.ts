// `bwnet chain head|weights|sale` against a node API serving the chain routes on 127.0.0.1.
import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { runChainCommand } from '../helpers/chain-cli.ts'
import { LevelStore } from '../../actors/store.ts'
import { DevChain } from '../../actors/chain/dev-chain.ts'
import { cryptoReady, newHotkey } from '../../protocol/index.ts'
import { ManualClock } from '../helpers/clock.ts'
import { silentLogger } from '../helpers/logger.ts'
import { chainApp } from '../helpers/chain-app.ts'

const run = runChainCommand

t.test('head, weights and a sale through the API; errors exit non-zero with the problem code', async t => {
  await cryptoReady()
  const clock = new ManualClock()
  const chain = await DevChain.open({ clock, store: new LevelStore(new MemoryLevel() as never), logger: silentLogger(), blockTimeMs: 1_000, blocksPerEpoch: 5, emissionPerEpochRao: 1_000n })
  const v = newHotkey().address
  const m = newHotkey().address
  await chain.register(v, 'validator')
  await chain.register(m, 'orchestrator')
  await chain.setWeights(v, 0, [2], [1])
  chain.start()
  clock.advance(6_000); await chain.settled()
  const app = await chainApp(chain)
  t.teardown(() => app.close())
  const api = await app.listen({ host: '127.0.0.1', port: 0 })

  const head = await run(['--api', api, 'head'])
  t.equal(head.code, 0)
  t.match(JSON.parse(head.out), { block: 6, epoch: 1, blockTimeMs: 1_000, blocksPerEpoch: 5 })
  const weights = await run(['--api', api, 'weights', '--epoch', '0'])
  t.match(JSON.parse(weights.out), { epoch: 0, weights: [{ validatorHotkey: v, uids: [2], weights: [1] }] })
  const sale = await run(['--api', api, 'sale', '--hotkey', m, '--alpha', '250'])
  t.equal(sale.code, 0)
  t.match(JSON.parse(sale.out), { hotkey: m, alphaRao: '250', block: 6 })

  const reg = await run(['--api', api, 'registration', '--hotkey', m])
  t.equal(reg.code, 0)
  t.match(JSON.parse(reg.out), { hotkey: m, role: 'orchestrator', uid: 2 })
  const unregistered = await run(['--api', api, 'registration', '--hotkey', newHotkey().address])
  t.equal(unregistered.code, 1)
  t.match(unregistered.err, /404 BWN_ERR_CHAIN_NOT_REGISTERED/)

  const over = await run(['--api', api, 'sale', '--hotkey', m, '--alpha', '5000'])
  t.equal(over.code, 1)
  t.match(over.err, /409 BWN_ERR_CHAIN_INSUFFICIENT_ALPHA/)
  const badAlpha = await run(['--api', api, 'sale', '--hotkey', m, '--alpha', '1.5'])
  t.equal(badAlpha.code, 2)
  t.match(badAlpha.err, /--alpha takes a positive whole number/)
  const badEpoch = await run(['--api', api, 'weights', '--epoch', 'x'])
  t.not(badEpoch.code, 0)
  t.match(badEpoch.err, /--epoch/)
  await app.close()
  const gone = await run(['--api', api, 'head'])
  t.equal(gone.code, 1)
  t.match(gone.err, /cannot reach/)
  await chain.stop()
})
