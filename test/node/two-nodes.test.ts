// Two `bwnet node` processes find each other through a local testnet bootstrap and exchange signed
// messages; a hostile peer's tampered, forged, oversized and malformed frames are dropped with a
// logged reason and neither node crashes.
import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import createTestnet from 'hyperdht/testnet.js'
import { runCli, eventually } from '../helpers/proc.ts'
import { SwarmTransport } from '../../node/adapters/swarm-transport.ts'
import { cryptoReady, newHotkey, encodeFrame, pack, unpack, sign, PROTOCOL_VERSION, MAX_FRAME_BYTES } from '../../protocol/index.ts'
import { writeKeystore } from '../../node/keystore.ts'
import { silentLogger } from '../helpers/logger.ts'

t.test('two node processes exchange signed messages; tampered frames are rejected', async t => {
  await cryptoReady()
  const testnet = await createTestnet(3, { host: '127.0.0.1' })
  t.teardown(() => testnet.destroy())
  const bootstrap = testnet.bootstrap.map(b => `${b.host}:${b.port}`).join(',')
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-two-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const network = `t${process.pid}`
  const common = ['--bootstrap', bootstrap, '--dht-host', '127.0.0.1', '--network', network, '--port', '0']
  // No chain between them: a test network's config trusts each other's hotkey in its role.
  const oKey = newHotkey(); const wKey = newHotkey()
  await writeKeystore(join(dir, 'o', 'hotkey.json'), oKey)
  await writeKeystore(join(dir, 'w', 'hotkey.json'), wKey)

  const orch = runCli(['node', '--role', 'orchestrator', '--data', join(dir, 'o'), ...common, '--trusted-peers', `worker:${wKey.address}`])
  const worker = runCli(['node', '--role', 'worker', '--data', join(dir, 'w'), ...common, '--trusted-peers', `orchestrator:${oKey.address}`])
  t.teardown(async () => { await orch.stop('SIGKILL'); await worker.stop('SIGKILL') })
  const orchReady = await orch.waitFor(l => l.event === 'node_ready', 30_000, 'orchestrator ready')
  const workerReady = await worker.waitFor(l => l.event === 'node_ready', 30_000, 'worker ready')

  await orch.waitFor(l => l.event === 'peer_joined' && l.peer === workerReady.hotkey, 15_000, 'orchestrator to verify the worker announce')
  await worker.waitFor(l => l.event === 'peer_joined' && l.peer === orchReady.hotkey, 15_000, 'worker to verify the orchestrator announce')
  const health = await (await fetch(`${orchReady.url}/health`)).json() as any
  t.same(health.nodes, { orchestrator: 1, worker: 1, validator: 0 })

  // A hostile peer joins the same topic and speaks the control channel directly.
  const mallory = newHotkey()
  const connected: string[] = []
  const disconnected: string[] = []
  const raw = new SwarmTransport({
    dht: testnet.createNode(), networkId: network, logger: silentLogger(),
    events: { onFrame: () => {}, onPeerUp: (p) => { connected.push(p) }, onPeerDown: (p) => { disconnected.push(p) } }
  })
  t.teardown(() => raw.stop())
  await raw.start()
  const orchPeer = orchReady.swarmKey as string
  await eventually(async () => connected.includes(orchPeer), 15_000, 'hostile peer to reach the orchestrator')

  const now = Date.now()
  // Mallory claims a role only a registration gives: a worker claim is attached on first contact, within
  // the orchestrator's limits (docs/node.md#attaching-workers; test/node/attachments.test.ts).
  const announce = { role: 'validator' as const, hotkey: mallory.address, software: 'evil/1', capacity: { slots: 1, bandwidthMbps: 1 }, dataUrl: null, attachTo: null, noiseKey: raw.publicKey, peerNoiseKey: orchPeer, nonce: '0'.repeat(32) }
  const good = encodeFrame(mallory, 'announce', announce, { ts: now })
  const [payload, sig] = unpack<[Uint8Array, Uint8Array]>(good)
  const tampered = Uint8Array.from(payload); tampered[tampered.length - 5] ^= 0xff
  const forgedBody = unpack<Record<string, any>>(payload)
  forgedBody.from = orchReady.hotkey // claims to be the orchestrator, signed by mallory
  const forgedBytes = pack(forgedBody)
  const wrongVersion = pack({ ...unpack<Record<string, any>>(payload), v: PROTOCOL_VERSION + 7 })

  const expectations: Array<[string, Uint8Array, string]> = [
    ['tampered', pack([tampered, sig]), 'bad_signature'],
    ['forged', pack([forgedBytes, sign(mallory, forgedBytes)]), 'bad_signature'],
    ['unsigned', pack([payload]), 'unsigned'],
    ['malformed', Uint8Array.from([0x93, 0xc1, 0x00, 0xff]), 'malformed'],
    ['wrong version', pack([wrongVersion, sign(mallory, wrongVersion)]), 'wrong_version'],
    ['heartbeat before announce', encodeFrame(mallory, 'heartbeat', { role: 'worker', seq: 1, capacity: { slots: 1, bandwidthMbps: 1 }, load: 0, workers: 0 }, { ts: now }), 'not_announced']
  ]
  for (const [name, frame, reason] of expectations) {
    t.ok(raw.send(orchPeer, frame), `sent ${name}`)
    await orch.waitFor(l => l.event === 'message_dropped' && l.reason === reason, 10_000, `drop of ${name} (${reason})`)
    t.pass(`${name} dropped as ${reason}`)
  }
  // An oversized frame never reaches the codec's decoder.
  t.ok(raw.send(orchPeer, new Uint8Array(MAX_FRAME_BYTES + 10)))
  await orch.waitFor(l => l.event === 'message_dropped' && l.reason === 'oversized', 10_000, 'oversized drop')

  // Neither dropped frame made mallory a member; nor does its genuine announce: it is not registered.
  const before = await (await fetch(`${orchReady.url}/health`)).json() as any
  t.equal(before.nodes.worker, 1, 'no forged member')
  t.ok(raw.send(orchPeer, good))
  await orch.waitFor(l => l.event === 'message_refused' && l.peer === mallory.address && l.type === 'announce', 10_000, 'mallory\'s announce refused')
  // A refused announce ends the connection, and the hotkey is banned for a while (docs/security.md#peers);
  // a repeat of the same frame is dropped as one (test/node/messenger.test.ts).
  await orch.waitFor(l => l.event === 'peer_disconnected' && l.reason === 'refused' && l.hotkey === mallory.address, 10_000, 'mallory disconnected')
  await eventually(async () => disconnected.includes(orchPeer), 10_000, 'mallory\'s connection closed')
  t.notOk(raw.send(orchPeer, good), 'nothing more can be sent on it')
  const still = await (await fetch(`${orchReady.url}/health`)).json() as any
  t.same(still.nodes, { orchestrator: 1, worker: 1, validator: 0 }, 'membership unchanged')

  t.equal(orch.child.exitCode, null, 'orchestrator still running')
  t.equal(worker.child.exitCode, null, 'worker still running')
  const after = await fetch(`${orchReady.url}/health`)
  t.equal(after.status, 200)

  const a = await orch.stop('SIGTERM'); const b = await worker.stop('SIGTERM')
  t.equal(a.code, 0); t.equal(b.code, 0)
})
