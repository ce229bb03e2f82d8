// The Subtensor adapter against the real Subtensor runtime (spec 218, run by chopsticks from the chain
// spec in test/fixtures/subtensor): a validator's epoch weights land in the chain's Weights storage,
// commit-reveal survives a validator restart, rate limits and version-key changes are handled.
import t from 'tap'
import { Keyring } from '../../../node/adapters/subtensor/polkadot.ts'
import { MemoryLevel } from 'memory-level'
import { cryptoReady, hotkeyFromSeed } from '../../../protocol/keys.ts'
import { LevelStore } from '../../../actors/store.ts'
import { startSystem, stopActor } from '../../../actors/runtime.ts'
import { systemClock } from '../../../node/clock.ts'
import { SubtensorChain, checkRegistration } from '../../../node/adapters/subtensor/chain.ts'
import { maxUpscaleU16 } from '../../../actors/domain/subtensor.ts'
import { epochSummary } from '../../../actors/domain/epoch-weights.ts'
import { startValidatorEpochs, epochCandidates, summaryVector, type TaskEvidence } from '../../../actors/validator/epochs.ts'
import { KEYS } from '../../../actors/validator/snapshots.ts'
import { startSubtensor, type Subtensor } from '../../helpers/subtensor.ts'
import { capturingLogger } from '../../helpers/logger.ts'
import { runCliOnce } from '../../helpers/proc.ts'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runChainCommand as runChain } from '../../helpers/chain-cli.ts'

const TAO = 1_000_000_000n
const MIB = 1_048_576
/** Upper bound of blocks any single step may need (two epochs of tempo 10, and slack). */
const MAX_PUMP_BLOCKS = 60

// A chain in manual block mode on a shared 2-core machine: a minute idle, a few under load.
t.setTimeout(600_000)

const seed = (n: number): Uint8Array => { const s = new Uint8Array(32); s[0] = n; s[31] = 7; return s }

/** Builds blocks until `done` resolves to true (or the promise settles), at most MAX_PUMP_BLOCKS. */
async function pump (s: Subtensor, done: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < MAX_PUMP_BLOCKS; i++) {
    if (await done()) return
    await s.newBlocks(1)
  }
  if (!(await done())) throw new Error(`${what} did not happen within ${MAX_PUMP_BLOCKS} blocks`)
}

/** Awaits `p` while building blocks, so extrinsics it sends get included. */
async function withBlocks<T> (s: Subtensor, p: Promise<T>, what: string): Promise<T> {
  let settled = false
  p.then(() => { settled = true }, () => { settled = true })
  // Let the extrinsic reach the pool before the first block is built.
  await pump(s, async () => { await new Promise(resolve => setImmediate(resolve)); return settled }, what)
  return await p
}

t.test('Subtensor adapter on the real runtime', async t => {
  await cryptoReady()
  const s = await startSubtensor(t)
  const { api } = s
  const keyring = new Keyring({ type: 'sr25519', ss58Format: 42 })
  const vali = hotkeyFromSeed(seed(1))
  const orchestrators = [hotkeyFromSeed(seed(2)), hotkeyFromSeed(seed(3))]
  const must = (what: string) => (err: string | null) => { if (err !== null) throw new Error(`${what}: ${err}`) }

  // A subnet owned by the dev coldkey, its owner hotkey being the validator's; two orchestrators.
  await s.newBlocks(12) // the runtime's network rate limit
  must('register network')(await s.submit(api.tx.subtensorModule.registerNetwork(vali.address, 1), s.owner))
  const netuid = Number((await api.query.subtensorModule.totalNetworks()).toString()) - 1
  t.ok((await api.query.subtensorModule.networksAdded(netuid) as unknown as { isTrue: boolean }).isTrue, `subnet ${netuid} exists`)
  for (const o of orchestrators) must('burned register')(await s.submit(api.tx.subtensorModule.burnedRegister(netuid, o.address), s.owner))
  must('tempo')(await s.sudo(api.tx.adminUtils.sudoSetTempo(netuid, 10)))
  must('rate limit')(await s.sudo(api.tx.adminUtils.sudoSetWeightsSetRateLimit(netuid, 0)))
  must('stake')(await s.submit(api.tx.subtensorModule.addStake(vali.address, netuid, 1_000n * TAO), s.owner))
  must('fees')(await s.sudo(api.tx.balances.forceSetBalance(keyring.addFromSeed(vali.seed).address, 1_000n * TAO)))

  const store = new LevelStore(new MemoryLevel() as never)
  const { logger, lines } = capturingLogger('info')
  const connect = async (): Promise<SubtensorChain> => await SubtensorChain.connect({ url: s.url, netuid, key: vali, store, clock: systemClock, logger, validatorMinStakeRao: TAO, backfillBlocks: 0 })
  let chain = await connect()
  t.teardown(async () => { await chain.close() })
  const valiUid = (await chain.uidOf(vali.address))!
  // Permits are handed out at the subnet's epoch run.
  await pump(s, async () => ((await api.query.subtensorModule.validatorPermit(netuid)).toJSON() as boolean[])[valiUid] === true, 'validator permit')
  const onChain = async (): Promise<Array<[number, number]>> => (await api.query.subtensorModule.weights(netuid, valiUid)).toJSON() as Array<[number, number]>

  await t.test('registrations: roles from permit and stake; miners check their UID', async t => {
    const regs = await chain.registrations()
    t.same(regs.map(r => [r.hotkey, r.role]), [[vali.address, 'validator'], ...orchestrators.map(o => [o.address, 'orchestrator'])])
    t.equal(await checkRegistration(chain, orchestrators[0]!.address, netuid), regs[1]!.uid)
    t.match(await chain.standing(vali.address), { uid: valiUid, role: 'validator', validatorPermit: true })
    t.ok((await chain.standing(vali.address))!.stakeRao >= TAO, 'the stake is read from chain state')
    t.equal(await chain.standing(hotkeyFromSeed(seed(97)).address), null)
    await t.rejects(checkRegistration(chain, hotkeyFromSeed(seed(99)).address, netuid), { code: 'BWN_ERR_CHAIN_NOT_REGISTERED' })
    const head = await chain.head()
    t.equal(head.blocksPerEpoch, 11)
    t.equal(head.epoch, Math.floor((head.block + netuid + 1) / 11), 'epoch index as the runtime computes it')
  })

  await t.test('bwnet chain reads the subnet; a miner without a UID refuses to start', async t => {
    const subnet = ['--chain-url', s.url, '--netuid', String(netuid)]
    const head = await runChain([...subnet, 'head'])
    t.equal(head.code, 0, head.err)
    t.match(JSON.parse(head.out), { blocksPerEpoch: 11, blockTimeMs: 3_000 })
    const reg = await runChain([...subnet, 'registration', '--hotkey', orchestrators[1]!.address])
    t.match(JSON.parse(reg.out), { hotkey: orchestrators[1]!.address, uid: 2, role: 'orchestrator' })
    const none = await runChain([...subnet, 'registration', '--hotkey', hotkeyFromSeed(seed(98)).address])
    t.equal(none.code, 1)
    t.match(none.err, /BWN_ERR_CHAIN_NOT_REGISTERED: .*no UID on subnet/)
    const weights = await runChain([...subnet, 'weights', '--uid', String(valiUid)])
    t.match(JSON.parse(weights.out), { uids: [], weights: [] }, 'no vector before the validator sets one')

    const data = await mkdtemp(join(tmpdir(), 'bwnet-miner-'))
    t.teardown(() => rm(data, { recursive: true, force: true }))
    // An orchestrator (the subnet's miner) needs a UID; a worker needs none (docs/node.md#attaching-workers).
    const miner = await runCliOnce(['node', '--role', 'orchestrator', '--port', '0', '--data', data, '--bootstrap', '127.0.0.1:9', '--dht-host', '127.0.0.1', ...['--chain', 'subtensor'], ...subnet], { LOG_LEVEL: 'warn' })
    t.equal(miner.code, 1, 'exits 1')
    t.match(miner.stderr, /has no UID on subnet \d+; register it/, 'and says why')
  })

  await t.test('the chain stores exactly the max-upscaled vector', async t => {
    for (const [i, vector] of [[1_000, 3_000], [40_000, 12_345], [65_535, 1]].entries()) {
      await withBlocks(s, chain.setWeights(vali.address, 900 + i, [1, 2], vector), 'set weights')
      const expected = maxUpscaleU16(vector)
      t.same(await onChain(), [[1, expected[0]], [2, expected[1]]], `[${vector.join(', ')}] stored as [${expected.join(', ')}]`)
    }
  })

  await t.test('a validator publishes an epoch and its weights land on chain as the formulas give', async t => {
    const system = startSystem()
    t.teardown(() => stopActor(system as never))
    const scoreOf = (): number => 1
    const epochs = await startValidatorEpochs(system as never, { clock: systemClock, logger }, { store, chain, hotkey: vali.address, logger, scoreOf })
    t.teardown(() => epochs.stop())
    const head = await chain.head()
    const verifiedAt = head.atMs + 1
    const evidence: TaskEvidence[] = [[orchestrators[0]!, 300], [orchestrators[1]!, 100]].map(([o, mib], i) => ({
      taskId: `task-${i}`, attemptId: `attempt-${i}`, transferId: 'transfer-1', orchestratorHotkey: (o as { address: string }).address,
      workerHotkey: (o as { address: string }).address, bytes: (mib as number) * MIB, verifiedAt, durationMs: 1_000, verdict: 'verified'
    }))
    t.match(await epochs.submitEvidence(evidence), { accepted: 2 })
    // The epoch holding the evidence is published (and its weights set) when the next one closes.
    let epoch = -1
    await pump(s, async () => {
      for (const e of [head.epoch, head.epoch + 1]) {
        const c = await chain.epochClose(e)
        if (c !== null && verifiedAt > c.startAtMs && verifiedAt <= c.endAtMs) epoch = e
      }
      return epoch >= 0 && await store.table('epochs').get(KEYS.proof(epoch)) !== undefined
    }, 'weights of the epoch with evidence')
    const close = (await chain.epochClose(epoch))!
    const expected = summaryVector(epochSummary(epoch, epochCandidates(close, await chain.registrations(), evidence, [], scoreOf)))
    t.same(expected.uids, [1, 2], 'both orchestrators in the vector, by UID')
    t.ok(expected.uint16Weights[0]! > expected.uint16Weights[1]!, 'more verified bytes, more weight')
    const upscaled = maxUpscaleU16(expected.uint16Weights)
    t.same(await onChain(), expected.uids.map((uid, i) => [uid, upscaled[i]]), 'Weights storage holds the formula vector, max-upscaled')
    const proof = await store.table<{ txId: string, block: number }>('epochs').get(KEYS.proof(epoch))
    t.match(proof, { txId: /^0x[0-9a-f]{64}$/ })
    t.equal(((await api.query.subtensorModule.lastUpdate(netuid)).toJSON() as number[])[valiUid], proof!.block, 'the proof names the block that set them')
    t.ok(lines.some(l => l.event === 'epoch_published' && l.epoch === epoch))
  })

  await t.test('a changed weights version key is re-read and the set retried once', async t => {
    must('version key')(await s.sudo(api.tx.adminUtils.sudoSetWeightsVersionKey(netuid, 7)))
    const proof = await withBlocks(s, chain.setWeights(vali.address, 910, [1, 2], [2, 4]), 'set weights after a version change')
    t.ok(proof.block > 0)
    t.ok(lines.some(l => l.event === 'weights_version_key_changed' && l.epoch === 910))
    t.same(await onChain(), [[1, 32768], [2, 65535]])
  })

  await t.test('a rate-limited set waits for the allowed block', async t => {
    must('rate limit')(await s.sudo(api.tx.adminUtils.sudoSetWeightsSetRateLimit(netuid, 4)))
    const first = await withBlocks(s, chain.setWeights(vali.address, 920, [1, 2], [1, 1]), 'first set')
    const second = await withBlocks(s, chain.setWeights(vali.address, 921, [1, 2], [1, 3]), 'rate-limited set')
    t.ok(second.block - first.block >= 4, `second set in block ${second.block}, at least 4 after ${first.block}`)
    t.ok(lines.some(l => l.event === 'weights_rate_limited' && l.epoch === 921))
    t.same(await onChain(), [[1, 21845], [2, 65535]])
    must('rate limit')(await s.sudo(api.tx.adminUtils.sudoSetWeightsSetRateLimit(netuid, 0)))
  })

  await t.test('commit-reveal: commit, restart the validator, reveal in the next epoch', async t => {
    must('commit reveal')(await s.sudo(api.tx.adminUtils.sudoSetCommitRevealWeightsEnabled(netuid, true)))
    const before = await onChain()
    const vector = [5_000, 10_000]
    const proof = await withBlocks(s, chain.setWeights(vali.address, 930, [1, 2], vector), 'commit')
    t.ok(lines.some(l => l.event === 'weights_committed' && l.epoch === 930 && l.block === proof.block))
    t.same(await onChain(), before, 'nothing visible before the reveal')
    const pending = await collectKeys(store, `subtensor/${netuid}/commit/`)
    t.equal(pending.length, 1, 'the commit and its salt are in the store')

    await chain.close() // the validator stops between commit and reveal
    const revealedBefore = lines.filter(l => l.event === 'weights_revealed').length
    chain = await connect()
    const expected = maxUpscaleU16(vector)
    await pump(s, async () => JSON.stringify(await onChain()) === JSON.stringify([[1, expected[0]], [2, expected[1]]]), 'reveal after restart')
    t.pass('revealed by the restarted validator')
    await pump(s, () => lines.filter(l => l.event === 'weights_revealed').length > revealedBefore, 'reveal logged')
    t.same(await collectKeys(store, `subtensor/${netuid}/commit/`), [], 'the pending commit is cleared')
    const records = await chain.weightsOf(930)
    t.match(records, [{ validatorHotkey: vali.address, uids: [1, 2], weights: vector }])
  })
})


async function collectKeys (store: LevelStore, prefix: string): Promise<string[]> {
  const out: string[] = []
  for await (const [k] of store.table('chain').entries({ gte: prefix, lt: prefix + '\xff' })) out.push(k)
  return out
}
