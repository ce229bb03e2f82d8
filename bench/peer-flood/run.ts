// Peer flood: /healthz latency of a devnet orchestrator while one peer floods it with valid-signature
// frames (100,000 in 10 s: pre-signed heartbeats and chain requests, resent), against the same
// orchestrator's /healthz with no flood, measured in the same run. The flooding rogue runs in its own
// process (test/helpers/rogue-flood.ts), registered as a worker first (an unregistered peer is
// disconnected at its refused announce, before it can flood). Target: flood p99 < 50 ms and the peer disconnected.
// Usage: npm run bench:peer-flood [-- --seconds 10 --frames 100000]
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { randomBytes } from 'node:crypto'
import { hotkeyFromSeed } from '../../protocol/index.ts'
import { Devnet, DEVNET_NETWORK_ID } from '../../node/devnet.ts'
import { createLogger } from '../../node/logger.ts'
import { startFlood, sampleLatency, percentile } from '../../test/helpers/flood.ts'

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, frames: { type: 'string', default: '100000' } } })
const durationMs = Number(values.seconds) * 1000
const maxFrames = Number(values.frames)
const TARGET_P99_MS = 50

const data = await mkdtemp(join(tmpdir(), 'bwnet-flood-'))
const devnet = new Devnet({ port: 0, data, workers: 1, logLevel: 'warn' }, createLogger({ level: 'error' }))
try {
  const file = await devnet.start()
  const url = `${file.baseUrl}/healthz`
  const stats = (l: number[]) => ({ n: l.length, p50: +percentile(l, 50).toFixed(2), p99: +percentile(l, 99).toFixed(2), max: +Math.max(...l).toFixed(2) })
  // Baseline: the same node, the same sampling, no flood, for the same time.
  const baseline = await sampleLatency(url, new Promise(resolve => setTimeout(resolve, durationMs)))
  const seed = randomBytes(32)
  await devnet.orchestrator.devChain!.enroll(hotkeyFromSeed(seed).address, 'worker')
  const flood = startFlood({ bootstrap: file.bootstrap, network: DEVNET_NETWORK_ID, target: devnet.orchestrator.transport.publicKey, durationMs, maxFrames, seed: seed.toString('hex') })
  const rogue = await flood.connected
  // A registered peer's flood: it starts once the orchestrator has bound the rogue's announce.
  for (const t0 = Date.now(); devnet.orchestrator.messenger.peerOf(rogue.hotkey) !== rogue.publicKey; await new Promise(resolve => setTimeout(resolve, 20))) {
    if (Date.now() - t0 > 30_000) throw new Error('the orchestrator did not bind the rogue\'s announce in 30 s')
  }
  flood.go()
  const during = await sampleLatency(url, flood.done)
  const report = await flood.done
  const b = stats(baseline.latencies); const f = stats(during.latencies)
  const result = {
    bench: 'peer-flood', durationMs, framesSent: report.sent, disconnectedAtMs: report.disconnectedAtMs, reconnected: report.reconnected,
    rateLimitedFrames: devnet.orchestrator.messenger.dropped.get('rate_limited') ?? 0,
    baseline: b, flood: f, p99Ratio: +(f.p99 / b.p99).toFixed(2), failures: baseline.failures + during.failures,
    pass: f.p99 < TARGET_P99_MS && report.disconnectedAtMs !== null && !report.reconnected
  }
  console.log(JSON.stringify(result, null, 2))
  process.exitCode = result.pass ? 0 : 1
} finally {
  await devnet.stop()
  await rm(data, { recursive: true, force: true })
}
