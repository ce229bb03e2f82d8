// Many validators, one routing (issue "An open network", point 1; docs/security.md#peers): a permitted
// validator holding 1 α, beside two honest ones holding 1000 α each, sends PRISM scores that put the
// honest orchestrator at 0 and its own hotkey at 1, for epoch 99999 and for the current epoch. Neither
// the consensus GET /chain/prism serves nor the routing score of the next transfer's plan moves. The
// same scores sent by both 1000 α validators move both.
import t from 'tap'
import { startTestDevnet, apiClient, upload, waitForStatus, testBytes } from '../helpers/devnet.ts'
import { eventually } from '../helpers/proc.ts'
import { capturingLogger } from '../helpers/logger.ts'
import { Rogue } from '../helpers/rogue.ts'
import { collect, prefixRange } from '../../actors/store.ts'
import { RAO_PER_ALPHA, epochsAt } from '../../actors/chain/index.ts'
import { newHotkey, type PrismScores } from '../../protocol/index.ts'

const score = (hotkey: string, routingScore: number): PrismScores['scores'][number] =>
  ({ hotkey, pool: 'qualified', routingScore, finalScore: routingScore, penaltyMultiplier: 1, readinessMultiplier: 1, activeTimeRatio: 1 })

t.test('a 1 α validator moves neither the served consensus nor the next plan; both 1000 α validators together do', async t => {
  const { logger, lines } = capturingLogger('warn')
  const net = await startTestDevnet(t, { workers: 1, logger })
  const orch = net.devnet.orchestrator
  const O = orch.key.address
  const v1 = net.devnet.nodes.find(n => n.name === 'validator')!.node
  const v2 = await net.addNode('validator-2', { role: 'validator' }, { stakeRao: 1_000n * RAO_PER_ALPHA })
  const rogueKey = newHotkey()
  await orch.devChain!.enroll(rogueKey.address, 'validator', { stakeRao: RAO_PER_ALPHA })
  t.match(await orch.devChain!.standing(rogueKey.address), { role: 'validator', validatorPermit: true, stakeRao: RAO_PER_ALPHA }, 'the small validator holds a permit')
  const api = async (path: string): Promise<any> => await (await fetch(`${net.file.baseUrl}${path}`)).json()
  const client = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const routingOf = (p: any, hotkey: string): number | undefined => p.scores.find((s: any) => s.hotkey === hotkey)?.routingScore
  const vectorOf = (p: any, hotkey: string): any => p.validators.find((v: any) => v.hotkey === hotkey)
  /** The routing score the first plan of a new transfer gives this orchestrator. */
  const planned = async (name: string): Promise<number> => {
    const transfer = await upload(client, testBytes(4 * 1024 * 1024, name.length), { filename: name, hotkey: O })
    const plan = await eventually(async () => (await collect(orch.store.table<any>('transfer_assignment_plans'), prefixRange(`${transfer.id}/`)))[0]?.[1], 30_000, `a plan for ${name}`, 100)
    const mine = plan.deliveries.find((d: any) => d.orchestrator_id === O)
    t.ok(mine !== undefined, `${name}: the orchestrator is in its plan`)
    return mine.routing_score
  }

  // Both 1000 α validators verify deliveries (the coordinator takes turns), so both score the orchestrator.
  await eventually(async () => orch.auth.allows(v2.key.address, 'validator') && orch.messenger.peerOf(v2.key.address) !== undefined, 30_000, 'the second validator known to the orchestrator', 100)
  const honest = await upload(client, testBytes(24 * 1024 * 1024, 3), { filename: 'honest.bin', hotkey: O })
  await client(`/transfers/${honest.id}/finalize`, { method: 'POST' })
  t.equal((await waitForStatus(client, honest.id, ['completed', 'failed'], 120_000)).status, 'completed')
  await eventually(async () => {
    const p = await api('/chain/prism')
    return [v1, v2].every(v => vectorOf(p, v.key.address)?.scores.some((s: any) => s.hotkey === O)) && routingOf(p, O) !== undefined
  }, 60_000, 'both validators\' scores of the orchestrator, and their consensus', 250)

  // The chain stands still from here: no epoch closes, so the honest validators publish nothing more
  // once they have published for the last closed epoch, and every vector stays in the window.
  await orch.devChain!.stop()
  const head = await orch.devChain!.head()
  const { lastClosed } = epochsAt(head)
  const before = await eventually(async () => {
    const p = await api('/chain/prism')
    return [v1, v2].every(v => vectorOf(p, v.key.address)?.epoch === lastClosed) ? p : undefined
  }, 60_000, `both validators' scores for epoch ${lastClosed}`, 250)
  const honestScore = routingOf(before, O)!
  t.ok(honestScore > 0, `the honest consensus routes to the orchestrator (${honestScore})`)
  t.equal(before.totalStakeRao, (2_001n * RAO_PER_ALPHA).toString(), 'taken over 1000 + 1000 + 1 α')
  t.equal(before.validator, null, 'no validator decides alone')
  t.equal(await planned('before.bin'), honestScore, 'the next plan routes by the consensus')

  // The 1 α validator speaks: for epoch 99999, then for the current epoch.
  const rogue = await Rogue.join(net.devnet.testnet.createNode(), net.devnet.network, rogueKey)
  t.teardown(() => rogue.stop())
  await rogue.until(() => rogue.up.has(orch.transport.publicKey), 30_000, 'a connection to the orchestrator')
  t.ok(rogue.announce(orch.transport.publicKey, 'validator'))
  await eventually(async () => orch.messenger.peerOf(rogue.hotkey) !== undefined, 10_000, 'the small validator bound to its connection')
  const steer = [score(O, 0), score(rogue.hotkey, 1)]
  rogue.send(orch.transport.publicKey, 'prism_scores', { epoch: 99_999, computedAt: Date.now(), scores: steer })
  await eventually(async () => lines.some(l => l.event === 'prism_scores_refused' && l.validator === rogue.hotkey && l.epoch === 99_999 && l.reason === 'future_epoch'), 30_000, 'epoch 99999 refused')
  t.equal(vectorOf(await api('/chain/prism'), rogue.hotkey), undefined, 'epoch 99999 is not stored')
  rogue.send(orch.transport.publicKey, 'prism_scores', { epoch: head.epoch, computedAt: Date.now(), scores: steer })
  const afterRogue = await eventually(async () => {
    const p = await api('/chain/prism')
    return vectorOf(p, rogue.hotkey)?.epoch === head.epoch ? p : undefined
  }, 30_000, 'the small validator\'s current-epoch vector taken in', 250)
  t.same(vectorOf(afterRogue, rogue.hotkey).scores.map((s: any) => [s.hotkey, s.routingScore]), [[O, 0], [rogue.hotkey, 1]], 'its vector is listed as sent, with its stake')
  t.equal(vectorOf(afterRogue, rogue.hotkey).stakeRao, RAO_PER_ALPHA.toString())
  // Routing and pools (an honest validator may still send a second vector for the same epoch, its
  // readiness figures a moment later: those move, what the small validator sent must not).
  const routed = (p: any): any[] => p.scores.map((s: any) => [s.hotkey, s.pool, s.routingScore])
  t.same(routed(afterRogue), routed(before), 'the consensus is unchanged')
  t.equal(routingOf(afterRogue, O), honestScore, 'the orchestrator keeps its honest routing score')
  t.equal(routingOf(afterRogue, rogue.hotkey), undefined, 'the small validator\'s own hotkey is not scored')
  t.equal(await planned('after-rogue.bin'), honestScore, 'the next plan is unchanged')
  t.equal(orch.auth.refused.get('prism_scores') ?? 0, 0, 'a permitted validator\'s scores are taken in and outweighed, not refused as unauthorized')

  // The same scores from both 1000 α validators, signed and sent by the nodes themselves.
  for (const v of [v1, v2]) t.ok(v.messenger.send(O, 'prism_scores', { epoch: head.epoch, computedAt: Date.now(), scores: steer }), `${v === v1 ? 'validator' : 'validator-2'} sends`)
  // Waited for by content, not by epoch: when the chain stopped on an epoch's last block, that epoch is
  // both the current and the last closed one, and the honest vectors already carry its number.
  const steered = (p: any, v: { key: { address: string } }): boolean => {
    const vector = vectorOf(p, v.key.address)
    return vector?.epoch === head.epoch && vector.scores.some((s: any) => s.hotkey === O && s.routingScore === 0) && vector.scores.some((s: any) => s.hotkey === rogue.hotkey)
  }
  const changed = await eventually(async () => {
    const p = await api('/chain/prism')
    return [v1, v2].every(v => steered(p, v)) ? p : undefined
  }, 30_000, 'both large validators\' new vectors taken in', 250)
  t.equal(routingOf(changed, O), 0, 'the consensus follows the stake majority: the orchestrator at 0')
  t.equal(routingOf(changed, rogue.hotkey), 1, 'and the hotkey both scored at 1')
  t.equal(changed.epoch, head.epoch)
  t.equal(await planned('after-majority.bin'), 0, 'the next plan routes by it')
})
