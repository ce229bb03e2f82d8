import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../../actors/store.ts'
import { DevChain, DEFAULT_EMISSION_PER_EPOCH_RAO } from '../../../actors/chain/dev-chain.ts'
import { yumaConsensus, YUMA_SCALE } from '../../../actors/domain/yuma.ts'
import { ChainError, type EpochClose, type ChainHead } from '../../../actors/chain/ports.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { silentLogger } from '../../helpers/logger.ts'

const BLOCK_MS = 1_000
const EPOCH_BLOCKS = 10
const V = '5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY'
const M1 = '5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty'
const M2 = '5FLSigC9HGRKVhB9FiEo4Y3koPsNmBmLJbpXg2mp1hXcS59Y'

async function open (db = new MemoryLevel<string, string>(), clock = new ManualClock(), emissionPerEpochRao?: bigint) {
  const store = new LevelStore(db as never)
  const chain = await DevChain.open({ clock, store, logger: silentLogger(), blockTimeMs: BLOCK_MS, blocksPerEpoch: EPOCH_BLOCKS, ...(emissionPerEpochRao !== undefined ? { emissionPerEpochRao } : {}) })
  return { db, clock, store, chain }
}

async function run (clock: ManualClock, chain: DevChain, blocks: number) {
  clock.advance(blocks * BLOCK_MS)
  await chain.settled()
}

t.test('blocks and epochs advance on the clock; epoch closes carry their time span', async t => {
  const { clock, chain } = await open()
  const start = clock.now()
  const heads: ChainHead[] = []
  const closes: EpochClose[] = []
  const off = chain.subscribe({ block: h => heads.push(h), epochClosed: c => closes.push(c) })
  chain.start()
  t.match(await chain.head(), { block: 0, epoch: 0, atMs: start, blockTimeMs: BLOCK_MS, blocksPerEpoch: EPOCH_BLOCKS })
  await run(clock, chain, 25)
  t.match(await chain.head(), { block: 25, epoch: 2, atMs: start + 25 * BLOCK_MS })
  t.same(heads.map(h => h.block), Array.from({ length: 25 }, (_, i) => i + 1))
  t.same(closes.map(c => [c.epoch, c.firstBlock, c.lastBlock]), [[0, 0, 9], [1, 10, 19]])
  t.equal(closes[0]!.startAtMs, start)
  t.equal(closes[0]!.endAtMs, start + 9 * BLOCK_MS)
  t.equal(closes[1]!.startAtMs, closes[0]!.endAtMs)
  t.equal(closes[1]!.endAtMs, start + 19 * BLOCK_MS)
  t.same(await chain.epochClose(1), closes[1])
  t.equal(await chain.epochClose(2), null, 'the open epoch has no close')
  off()
  await run(clock, chain, 10)
  t.equal(closes.length, 2, 'no events after unsubscribe')
  await chain.stop()
  await run(clock, chain, 10)
  t.equal((await chain.head()).block, 35, 'no blocks after stop')
})

t.test('registration gives stable UIDs from 1 (UID 0 burns) and is idempotent', async t => {
  const { chain } = await open()
  const v = await chain.register(V, 'validator')
  const m1 = await chain.register(M1, 'orchestrator')
  t.match(v, { hotkey: V, uid: 1, role: 'validator', registeredAtBlock: 0 })
  t.equal(m1.uid, 2)
  t.same(await chain.register(M1, 'worker'), m1, 'same hotkey keeps its UID and first role')
  t.equal(await chain.uidOf(M1), 2)
  t.equal(await chain.uidOf(M2), null)
  t.same((await chain.registrations()).map(r => r.uid), [1, 2])
})

t.test('set_weights is recorded; bad vectors are refused with codes', async t => {
  const { clock, chain } = await open()
  chain.start()
  await chain.register(V, 'validator')
  const m1 = await chain.register(M1, 'orchestrator')
  const m2 = await chain.register(M2, 'orchestrator')
  await run(clock, chain, 3)
  const proof = await chain.setWeights(V, 0, [m1.uid, m2.uid], [40000, 25535])
  t.match(proof, { block: 3, epoch: 0, validatorHotkey: V, txId: /^0x[0-9a-f]{64}$/ })
  t.same(await chain.weightsOf(0), [{ ...proof, uids: [m1.uid, m2.uid], weights: [40000, 25535] }])
  t.same(await chain.weightsOf(1), [])
  const code = async (p: Promise<unknown>) => p.then(() => 'ok', (e: ChainError) => e.code)
  t.equal(await code(chain.setWeights(M1, 0, [2], [1])), 'BWN_ERR_CHAIN_NOT_VALIDATOR')
  t.equal(await code(chain.setWeights(M2 + 'x', 0, [2], [1])), 'BWN_ERR_CHAIN_NOT_REGISTERED')
  t.equal(await code(chain.setWeights(V, 0, [2, 3], [1])), 'BWN_ERR_CHAIN_BAD_WEIGHTS')
  t.equal(await code(chain.setWeights(V, 0, [2, 2], [1, 1])), 'BWN_ERR_CHAIN_BAD_WEIGHTS')
  t.equal(await code(chain.setWeights(V, 0, [99], [1])), 'BWN_ERR_CHAIN_BAD_WEIGHTS')
  t.equal(await code(chain.setWeights(V, 0, [2], [65536])), 'BWN_ERR_CHAIN_BAD_WEIGHTS')
  t.equal(await code(chain.setWeights(V, 0, [2], [1.5])), 'BWN_ERR_CHAIN_BAD_WEIGHTS')
  t.equal(await code(chain.setWeights(V, 5, [2], [1])), 'BWN_ERR_CHAIN_BAD_WEIGHTS', 'a future epoch')
  t.equal(await code(chain.setWeights(V, 0, [], [])), 'BWN_ERR_CHAIN_BAD_WEIGHTS')
  await chain.stop()
})

t.test('each epoch emits its alpha to UIDs by the latest weights, exactly in rao; no weights burns it', async t => {
  const { clock, chain } = await open(undefined, undefined, 1_000n)
  chain.start()
  await chain.register(V, 'validator')
  const m1 = await chain.register(M1, 'orchestrator')
  const m2 = await chain.register(M2, 'orchestrator')
  await run(clock, chain, 10) // epoch 0 closes at block 9 with no weights
  t.match(await chain.epochClose(0), { emittedRao: 1_000n, burnedRao: 1_000n })
  t.same(await chain.emissionsFor(M1, 0, 100), [])
  // 2 : 1 between the miners, and a share to the burn UID.
  await chain.setWeights(V, 0, [0, m1.uid, m2.uid], [1, 2, 1].map(x => x * 1000))
  await run(clock, chain, 10) // epoch 1 closes at block 19
  const e1 = await chain.emissionsFor(M1, 0, 100)
  const e2 = await chain.emissionsFor(M2, 0, 100)
  t.same(e1, [{ hotkey: M1, uid: m1.uid, epoch: 1, block: 19, alphaRao: 500n }])
  t.same(e2, [{ hotkey: M2, uid: m2.uid, epoch: 1, block: 19, alphaRao: 250n }])
  t.match(await chain.epochClose(1), { emittedRao: 1_000n, burnedRao: 250n })
  // Thirds do not divide 1000 rao: the leftover rao goes by largest remainder, nothing is lost.
  await chain.setWeights(V, 1, [m1.uid, m2.uid], [1, 2])
  await run(clock, chain, 10)
  const a = (await chain.emissionsFor(M1, 20, 29))[0]!.alphaRao
  const b = (await chain.emissionsFor(M2, 20, 29))[0]!.alphaRao
  t.equal(a + b, 1_000n)
  t.same([a, b], [333n, 667n])
  t.same((await chain.emissionsFor(M1, 20, 100)).map(e => e.block), [29], 'range filter by block')
  await chain.stop()
})

t.test('Yuma consensus: vectors are normalized, weighted by stake, and clipped at the stake-weighted median', async t => {
  // Without stake (every vector at 0) each validator counts once, and agreeing vectors are not clipped.
  t.same(yumaConsensus([{ stake: 0n, uids: [1, 2], weights: [1, 1] }, { stake: 0n, uids: [1, 2], weights: [5, 5] }, { stake: 0n, uids: [3], weights: [0] }]),
    [{ uid: 1, consensus: YUMA_SCALE / 2n, rank: YUMA_SCALE / 2n }, { uid: 2, consensus: YUMA_SCALE / 2n, rank: YUMA_SCALE / 2n }])
  t.same(yumaConsensus([]), [])
  // An honest validator with 90% of the stake puts everything on UID 1; a rogue with 10% on UID 2.
  const ranks = yumaConsensus([{ stake: 900n, uids: [1], weights: [65535] }, { stake: 100n, uids: [2], weights: [65535] }])
  t.same(ranks.map(r => r.uid), [1, 2])
  t.equal(ranks[0]!.consensus, YUMA_SCALE, 'the majority weight is the consensus')
  t.equal(ranks[1]!.consensus, 0n, 'no majority supports UID 2')
  t.equal(ranks[1]!.rank, 0n, 'the rogue\'s weight is clipped away')
  t.equal(ranks[0]!.rank, YUMA_SCALE * 900n / 1000n)
  // A minority can only lower a weight, never raise it above what the majority gives.
  const split = yumaConsensus([{ stake: 600n, uids: [1, 2], weights: [1, 1] }, { stake: 400n, uids: [1, 2], weights: [0, 1] }])
  t.equal(split[0]!.consensus, YUMA_SCALE / 2n)
  t.equal(split[1]!.consensus, YUMA_SCALE / 2n, 'UID 2 keeps the half the majority gave it')
  t.equal(split[1]!.rank, YUMA_SCALE / 2n, 'the minority\'s excess on UID 2 is clipped to the consensus')
})

t.test('registration costs alpha; stake buys a validator permit; only permits count, by stake', async t => {
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const clock = new ManualClock()
  const chain = await DevChain.open({ clock, store, logger: silentLogger(), blockTimeMs: BLOCK_MS, blocksPerEpoch: EPOCH_BLOCKS, emissionPerEpochRao: 1_000n, registrationCostRao: 10n, minValidatorStakeRao: 100n, maxValidators: 1 })
  chain.start()
  const R = '5DAAnrj7VHTznn2AWBemMuyBwZWs6FNFjdyVXUeYum3PTXFy' // a rogue with no alpha
  await t.rejects(chain.register(R, 'validator'), { code: 'BWN_ERR_CHAIN_INSUFFICIENT_ALPHA' }, 'a fresh hotkey cannot register')
  t.equal(await chain.standing(R), null)
  const v = await chain.enroll(V, 'validator', { stakeRao: 500n })
  t.match(v, { hotkey: V, role: 'validator', stakeRao: 500n, validatorPermit: true })
  t.equal(chain.balanceOf(V), 0n, 'the registration cost was burned')
  const m1 = await chain.enroll(M1, 'orchestrator')
  const m2 = await chain.enroll(M2, 'orchestrator')
  // The rogue buys a registration and a small stake: the permit stays with the top validator (K = 1).
  await chain.fund(R, 210n)
  await chain.register(R, 'validator')
  await chain.addStake(R, 200n)
  t.match(await chain.standing(R), { stakeRao: 200n, validatorPermit: false })
  await t.rejects(chain.setWeights(R, 0, [m2.uid], [65535]), { code: 'BWN_ERR_CHAIN_NOT_VALIDATOR' }, 'no permit, no weights')
  await t.rejects(chain.addStake(R, 1n), { code: 'BWN_ERR_CHAIN_INSUFFICIENT_ALPHA' })
  await chain.setWeights(V, 0, [m1.uid], [65535])
  await run(clock, chain, EPOCH_BLOCKS)
  t.same((await chain.emissionsFor(M1, 0, 100)).map(e => e.alphaRao), [1_000n], 'the permitted validator decides the emission')
  t.same(await chain.emissionsFor(M2, 0, 100), [])
  // Reopened, balances and stakes are still there.
  await chain.stop()
  const again = await DevChain.open({ clock, store, logger: silentLogger(), registrationCostRao: 10n, minValidatorStakeRao: 100n, maxValidators: 1 })
  t.match(await again.standing(V), { stakeRao: 500n, validatorPermit: true })
  t.equal(again.balanceOf(R), 0n)
})

t.test('sales are recorded against the alpha a hotkey received', async t => {
  const { clock, chain } = await open(undefined, undefined, 1_000n)
  chain.start()
  await chain.register(V, 'validator')
  const m1 = await chain.register(M1, 'orchestrator')
  await chain.setWeights(V, 0, [m1.uid], [65535])
  await run(clock, chain, 12)
  const code = async (p: Promise<unknown>) => p.then(() => 'ok', (e: ChainError) => e.code)
  t.equal(await code(chain.recordSale(M1, 1_001n)), 'BWN_ERR_CHAIN_INSUFFICIENT_ALPHA')
  t.equal(await code(chain.recordSale(M1, 0n)), 'BWN_ERR_CHAIN_BAD_AMOUNT')
  t.equal(await code(chain.recordSale(M2, 1n)), 'BWN_ERR_CHAIN_NOT_REGISTERED')
  t.equal(await code(chain.recordSale(M1, 1n, 13)), 'BWN_ERR_CHAIN_BAD_BLOCK', 'a future block')
  const s1 = await chain.recordSale(M1, 600n)
  const s2 = await chain.recordSale(M1, 400n, 10)
  t.match(s1, { hotkey: M1, block: 12, alphaRao: 600n, txId: /^0x/ })
  t.not(s1.txId, s2.txId)
  t.same((await chain.salesFor(M1, 0, 100)).map(s => [s.block, s.alphaRao]), [[10, 400n], [12, 600n]])
  t.same((await chain.salesFor(M1, 11, 12)).map(s => s.block), [12])
  t.equal(await code(chain.recordSale(M1, 1n)), 'BWN_ERR_CHAIN_INSUFFICIENT_ALPHA', 'everything sold')
  await chain.stop()
})

t.test('the chain persists across reopen of the same database', async t => {
  const first = await open(undefined, undefined, 1_000n)
  first.chain.start()
  await first.chain.register(V, 'validator')
  const m1 = await first.chain.register(M1, 'orchestrator')
  await first.chain.setWeights(V, 0, [m1.uid], [65535])
  await run(first.clock, first.chain, 15)
  await first.chain.recordSale(M1, 10n)
  await first.chain.stop()

  const again = await open(first.db, first.clock, 1_000n)
  t.match(await again.chain.head(), { block: 15, epoch: 1 })
  t.same(await again.chain.registrations(), await first.chain.registrations())
  t.equal((await again.chain.register(M2, 'orchestrator')).uid, 3, 'UIDs continue')
  t.same(await again.chain.weightsOf(0), await first.chain.weightsOf(0))
  t.same((await again.chain.salesFor(M1, 0, 100)).map(s => s.alphaRao), [10n])
  again.chain.start()
  await run(again.clock, again.chain, 5)
  t.same((await again.chain.emissionsFor(M1, 0, 100)).map(e => [e.block, e.alphaRao]), [[9, 1_000n], [19, 1_000n]], 'latest weights survive the reopen')
  t.match(await again.chain.epochClose(0), { lastBlock: 9 })
  await again.chain.stop()
})

t.test('default emission is 180 α per epoch', async t => {
  t.equal(DEFAULT_EMISSION_PER_EPOCH_RAO, 180_000_000_000n)
})
