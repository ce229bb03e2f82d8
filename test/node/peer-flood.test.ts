// A registered peer (a worker: an unregistered one is disconnected at its refused announce, see
// peer-sybils) floods an orchestrator with valid-signature frames (pre-signed heartbeats and chain requests,
// resent over and over) from another process for a bounded 10 s. The orchestrator's frame budget and
// peer score disconnect it and refuse it again (back-off), its frames change no state, and /healthz
// keeps answering. The latency bound itself is measured by bench/peer-flood (wall-clock budgets are
// not test assertions on this shared machine); here its p99 is reported.
import t from 'tap'
import { startTestDevnet } from '../helpers/devnet.ts'
import { startFlood, sampleLatency, percentile } from '../helpers/flood.ts'
import { eventually } from '../helpers/proc.ts'
import { randomBytes } from 'node:crypto'
import { hotkeyFromSeed } from '../../protocol/index.ts'

t.test('a flooding peer is disconnected and banned; /healthz keeps answering; nothing changes', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const orch = net.devnet.orchestrator
  const health = async (): Promise<any> => (await (await fetch(`${net.file.baseUrl}/health`)).json()).nodes
  const before = await health()
  const seed = randomBytes(32)
  await orch.devChain!.enroll(hotkeyFromSeed(seed).address, 'worker')
  const flood = startFlood({ bootstrap: net.file.bootstrap, network: net.devnet.network, target: orch.transport.publicKey, durationMs: 10_000, maxFrames: 100_000, seed: seed.toString('hex') })
  t.teardown(() => flood.kill())
  const rogue = await flood.connected
  // The flood of a registered peer: it starts once the orchestrator has bound the rogue's announce.
  await eventually(async () => orch.messenger.peerOf(rogue.hotkey) === rogue.publicKey, 30_000, 'the rogue\'s announce to be bound')
  flood.go()
  const { latencies, failures } = await sampleLatency(`${net.file.baseUrl}/healthz`, flood.done)
  const report = await flood.done
  t.comment(`dropped: ${JSON.stringify([...orch.messenger.dropped])}`)
  t.comment(`flood: ${report.sent} frames sent, disconnected after ${report.disconnectedAtMs} ms; /healthz p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms over ${latencies.length} requests`)
  t.equal(failures, 0, 'every /healthz answered 200')
  t.ok(latencies.length >= 10, `sampled /healthz throughout (${latencies.length})`)
  t.not(report.disconnectedAtMs, null, 'the flooding peer was disconnected')
  t.equal(report.reconnected, false, 'and not let back in during the flood')
  const ban = orch.messenger.disconnected.get(rogue.publicKey)
  t.ok(ban !== undefined && ban.until > Date.now(), 'its connection key is banned')
  t.equal(ban!.hotkey, rogue.hotkey, 'as is its hotkey')
  t.ok((orch.messenger.dropped.get('rate_limited') ?? 0) > 0, 'frames beyond the budget were dropped before decoding')
  t.ok(report.sent > 20 + 100, `the flood exceeded the budget (${report.sent} frames)`)
  t.equal(orch.messenger.disconnects.get('score'), 1, 'disconnected for its score, once')
  t.same(await health(), before, 'membership unchanged')
  t.equal(orch.messenger.peerOf(rogue.hotkey), undefined, 'the rogue is bound to no connection')
})
