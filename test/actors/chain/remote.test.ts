// The chain over the swarm: a host serving a DevChain and a RemoteChain client, on two Messengers
// wired back to back (signed frames, schema checks and sender binding all run as on the wire).
import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { cryptoReady, CHAIN_PAGE_ITEMS } from '../../../protocol/index.ts'
import { LevelStore } from '../../../actors/store.ts'
import { DevChain } from '../../../actors/chain/dev-chain.ts'
import { RemoteChain, serveChain, HEAD_RETRY_MS, HEAD_WARN_AFTER_MS } from '../../../actors/chain/remote.ts'
import { ChainError, type EpochClose } from '../../../actors/chain/ports.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { silentLogger, capturingLogger } from '../../helpers/logger.ts'
import { linkedMessengers } from '../../helpers/linked-messengers.ts'

const BLOCK_MS = 1_000
const EPOCH_BLOCKS = 5

async function setup (allowRemoteSales = false) {
  await cryptoReady()
  const clock = new ManualClock()
  const link = linkedMessengers(clock, { a: 'orchestrator', b: 'validator' })
  await link.settle()
  const chain = await DevChain.open({ clock, store: new LevelStore(new MemoryLevel() as never), logger: silentLogger(), blockTimeMs: BLOCK_MS, blocksPerEpoch: EPOCH_BLOCKS, emissionPerEpochRao: 1_000n })
  serveChain(chain, link.a, link.a, { logger: silentLogger(), allowRemoteSales })
  const remote = new RemoteChain({ net: link.b, inbox: link.b, host: link.keyA.address, clock, logger: silentLogger(), timeoutMs: 5_000 })
  return { clock, link, chain, remote }
}

const codeOf = async (p: Promise<unknown>) => p.then(() => 'ok', (e: ChainError) => e.code)

t.test('a remote validator registers, reads the head, sets weights and reads them back', async t => {
  const { clock, link, chain, remote } = await setup()
  const V = link.keyB.address
  const O = link.keyA.address
  chain.start()
  clock.advance(3 * BLOCK_MS)
  await chain.settled()
  t.match(await remote.head(), { block: 3, epoch: 0, blockTimeMs: BLOCK_MS, blocksPerEpoch: EPOCH_BLOCKS })
  t.match(await remote.register(V, 'validator'), { hotkey: V, uid: 1, role: 'validator' })
  t.equal(await codeOf(remote.register(O, 'orchestrator')), 'BWN_ERR_CHAIN_FORBIDDEN', 'a peer cannot register another hotkey')
  await chain.register(O, 'orchestrator')
  t.equal(await remote.uidOf(O), 2)
  t.same((await remote.registrations()).map(r => r.uid), [1, 2])
  const proof = await remote.setWeights(V, 0, [2], [65535])
  t.match(proof, { epoch: 0, block: 3, validatorHotkey: V, txId: /^0x/ })
  t.same(await remote.weightsOf(0), await chain.weightsOf(0))
  t.equal(await codeOf(remote.setWeights(V, 0, [7], [1])), 'BWN_ERR_CHAIN_BAD_WEIGHTS', 'chain errors keep their code')
  t.equal(await codeOf(remote.setWeights(O, 0, [2], [1])), 'BWN_ERR_CHAIN_FORBIDDEN', 'weights only for the sender')
  clock.advance(2 * BLOCK_MS)
  await chain.settled()
  t.same(await remote.emissionsFor(O, 0, 100), await chain.emissionsFor(O, 0, 100))
  t.same((await remote.emissionsFor(O, 0, 100)).map(e => e.alphaRao), [1_000n])
  t.same(await remote.epochClose(0), await chain.epochClose(0))
  t.equal(await remote.epochClose(1), null)
  t.equal(await codeOf(remote.recordSale(O, 1n)), 'BWN_ERR_CHAIN_FORBIDDEN', 'remote sales are off by default')
  await chain.stop()
  remote.close()
})

t.test('lists page past the frame budget; remote sales when the host allows them', async t => {
  const { clock, link, chain, remote } = await setup(true)
  const V = link.keyB.address
  const O = link.keyA.address
  chain.start()
  await chain.register(V, 'validator')
  const o = await chain.register(O, 'orchestrator')
  await chain.setWeights(V, 0, [o.uid], [1])
  clock.advance(EPOCH_BLOCKS * BLOCK_MS)
  await chain.settled()
  const total = CHAIN_PAGE_ITEMS + 7
  for (let i = 0; i < total - 1; i++) await chain.recordSale(O, 1n)
  const last = await remote.recordSale(O, 1n, 4)
  t.match(last, { hotkey: O, block: 4, alphaRao: 1n })
  const sales = await remote.salesFor(O, 0, 100)
  t.equal(sales.length, total, 'every page fetched')
  t.equal(new Set(sales.map(s => s.txId)).size, total)
  t.same(sales.map(s => s.txId), (await chain.salesFor(O, 0, 100)).map(s => s.txId))
  await chain.stop()
  remote.close()
})

t.test('subscribe reports every epoch that closed, polling on the clock', async t => {
  const { clock, chain, remote } = await setup()
  chain.start()
  const closes: EpochClose[] = []
  const blocks: number[] = []
  const off = remote.subscribe({ block: h => blocks.push(h.block), epochClosed: c => closes.push(c) })
  await new Promise(resolve => setImmediate(resolve))
  for (let i = 0; i < 12; i++) {
    clock.advance(BLOCK_MS)
    await chain.settled()
    await remote.poll()
  }
  t.ok(blocks.length >= 10, `block events (${blocks.length})`)
  t.same(closes.map(c => c.epoch), [0, 1])
  t.same(closes[1], await chain.epochClose(1))
  off()
  await chain.stop()
  remote.close()
})

t.test('a silent host times out on the clock; no connection fails at once', async t => {
  await cryptoReady()
  const clock = new ManualClock()
  const link = linkedMessengers(clock, { a: 'orchestrator', b: 'validator' })
  await link.settle()
  // Side A never serves the chain.
  const remote = new RemoteChain({ net: link.b, inbox: link.b, host: link.keyA.address, clock, timeoutMs: 5_000 })
  const pending = codeOf(remote.head())
  await link.settle()
  clock.advance(5_000)
  t.equal(await pending, 'BWN_ERR_CHAIN_TIMEOUT')
  link.cut()
  t.equal(await codeOf(remote.head()), 'BWN_ERR_CHAIN_UNAVAILABLE')
  remote.close()
})

t.test('a subscription made before the host answers polls once it does, without a warning', async t => {
  await cryptoReady()
  const clock = new ManualClock()
  const link = linkedMessengers(clock, { a: 'orchestrator', b: 'validator' })
  await link.settle()
  const chain = await DevChain.open({ clock, store: new LevelStore(new MemoryLevel() as never), logger: silentLogger(), blockTimeMs: BLOCK_MS, blocksPerEpoch: EPOCH_BLOCKS, emissionPerEpochRao: 1_000n })
  const { logger, lines } = capturingLogger('warn')
  const remote = new RemoteChain({ net: link.b, inbox: link.b, host: link.keyA.address, clock, logger, timeoutMs: 5_000 })
  // As a node subscribes while it starts: its host does not answer yet (here: not serving the chain).
  const blocks: number[] = []
  const off = remote.subscribe({ block: h => blocks.push(h.block) })
  await link.settle()
  clock.advance(5_000) // the first head request times out
  await link.settle()
  t.same(blocks, [], 'nothing while the host is silent')
  serveChain(chain, link.a, link.a, { logger: silentLogger() })
  chain.start()
  for (let i = 0; i < 6; i++) {
    clock.advance(Math.max(HEAD_RETRY_MS, BLOCK_MS))
    await chain.settled()
    await link.settle()
  }
  t.ok(blocks.length >= 2, `block events once the host answers (${blocks.length})`)
  t.same(lines, [], 'no warning while the connection comes up')
  off()
  await chain.stop()
  remote.close()
})

t.test('a head unreadable for long is warned about once', async t => {
  await cryptoReady()
  const clock = new ManualClock()
  const link = linkedMessengers(clock, { a: 'orchestrator', b: 'validator' })
  await link.settle()
  link.cut()
  const { logger, lines } = capturingLogger('warn')
  const remote = new RemoteChain({ net: link.b, inbox: link.b, host: link.keyA.address, clock, logger, timeoutMs: 5_000 })
  const off = remote.subscribe({})
  for (let ms = 0; ms <= 2 * HEAD_WARN_AFTER_MS; ms += HEAD_RETRY_MS) {
    clock.advance(HEAD_RETRY_MS)
    await new Promise(resolve => setImmediate(resolve))
  }
  t.equal(lines.filter(l => l.event === 'chain_head_unavailable').length, 1, 'one warning')
  off()
  remote.close()
})
