// The chain routes over a DevChain, through the app's problem+json edge.
import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { chainApp } from '../helpers/chain-app.ts'
import { LevelStore } from '../../actors/store.ts'
import { DevChain } from '../../actors/chain/dev-chain.ts'
import type { Chain } from '../../actors/chain/ports.ts'
import { ChainError } from '../../actors/chain/ports.ts'
import { cryptoReady, newHotkey } from '../../protocol/index.ts'
import { ManualClock } from '../helpers/clock.ts'
import { silentLogger } from '../helpers/logger.ts'

async function devChain () {
  await cryptoReady()
  const clock = new ManualClock()
  const chain = await DevChain.open({ clock, store: new LevelStore(new MemoryLevel() as never), logger: silentLogger(), blockTimeMs: 1_000, blocksPerEpoch: 5, emissionPerEpochRao: 5_000n })
  const v = newHotkey().address
  const m = newHotkey().address
  await chain.register(v, 'validator')
  await chain.register(m, 'orchestrator')
  chain.start()
  return { clock, chain, v, m }
}

t.test('head, weights and sales', async t => {
  const { clock, chain, v, m } = await devChain()
  const app = await chainApp(chain)
  t.teardown(() => app.close())
  clock.advance(2_000); await chain.settled()
  const head = await app.inject('/chain/head')
  t.equal(head.statusCode, 200)
  t.same(head.json(), { block: 2, epoch: 0, atMs: clock.now(), blockTimeMs: 1_000, blocksPerEpoch: 5 })

  t.same((await app.inject('/chain/weights')).json(), { epoch: 0, headEpoch: 0, weights: [] })
  const proof = await chain.setWeights(v, 0, [2], [65535])
  clock.advance(6_000); await chain.settled() // epoch 1 closes at block 9 and pays the miner
  t.same((await app.inject('/chain/weights')).json(), { epoch: 0, headEpoch: 1, weights: [{ ...proof, uids: [2], weights: [65535] }] }, 'latest epoch with vectors')
  t.same((await app.inject('/chain/weights?epoch=1')).json().weights, [])
  const bad = await app.inject('/chain/weights?epoch=-1')
  t.equal(bad.statusCode, 400)
  t.equal(bad.json().code, 'BWN_ERR_VALIDATION')

  const sale = await app.inject({ method: 'POST', url: '/chain/sales', payload: { hotkey: m, alphaRao: '4000' } })
  t.equal(sale.statusCode, 201)
  t.match(sale.json(), { hotkey: m, alphaRao: '4000', block: 8, txId: /^0x/ })
  t.same((await chain.salesFor(m, 0, 100)).map(s => s.alphaRao), [4000n])
  const tooMuch = await app.inject({ method: 'POST', url: '/chain/sales', payload: { hotkey: m, alphaRao: '2000' } })
  t.equal(tooMuch.statusCode, 409)
  t.equal(tooMuch.json().code, 'BWN_ERR_CHAIN_INSUFFICIENT_ALPHA')
  const unknown = await app.inject({ method: 'POST', url: '/chain/sales', payload: { hotkey: newHotkey().address, alphaRao: '1' } })
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.json().code, 'BWN_ERR_CHAIN_NOT_REGISTERED')
  const future = await app.inject({ method: 'POST', url: '/chain/sales', payload: { hotkey: m, alphaRao: '1', block: 99 } })
  t.equal(future.json().code, 'BWN_ERR_CHAIN_BAD_BLOCK')
  for (const payload of [{ hotkey: m, alphaRao: '0' }, { hotkey: m, alphaRao: '-1' }, { hotkey: m, alphaRao: '1.5' }, { hotkey: 'x', alphaRao: '1' }, { hotkey: m, alphaRao: '1', extra: 1 }]) {
    const res = await app.inject({ method: 'POST', url: '/chain/sales', payload })
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    t.equal(res.json().code, 'BWN_ERR_VALIDATION')
  }
  await chain.stop()
})

t.test('sales only on a dev chain, behind the write guard; chain outages are 503/504', async t => {
  const { chain, m } = await devChain()
  const notDev = await chainApp(chain, false)
  t.teardown(() => notDev.close())
  const res = await notDev.inject({ method: 'POST', url: '/chain/sales', payload: { hotkey: m, alphaRao: '1' } })
  t.equal(res.statusCode, 403)
  t.equal(res.json().code, 'BWN_ERR_CHAIN_FORBIDDEN')

  const guarded = await chainApp(chain, true, { roles: ['admin'], operator: true })
  t.teardown(() => guarded.close())
  t.equal((await guarded.inject({ method: 'POST', url: '/chain/sales', payload: { hotkey: m, alphaRao: '1' } })).statusCode, 401)
  t.equal((await guarded.inject('/chain/head')).statusCode, 200, 'reads are not guarded')

  const down: Chain = { ...chain, head: async () => { throw new ChainError('BWN_ERR_CHAIN_TIMEOUT', 'no answer') } } as unknown as Chain
  const slow = await chainApp(down)
  t.teardown(() => slow.close())
  const timeout = await slow.inject('/chain/head')
  t.equal(timeout.statusCode, 504)
  t.equal(timeout.json().code, 'BWN_ERR_CHAIN_TIMEOUT')
  await chain.stop()
})
