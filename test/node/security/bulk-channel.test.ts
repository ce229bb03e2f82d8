// The coordinator's bulk channel (the fallback data path) as a node wires it: a connection that is not
// admitted is served nothing; an admitted peer is served a staged chunk streamed from its blob file
// (never read whole); a forged path is refused and costs its sender score.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { startTestDevnet, apiClient, upload, testBytes, sha256 } from '../../helpers/devnet.ts'
import { eventually } from '../../helpers/proc.ts'
import { Rogue } from '../../helpers/rogue.ts'
import { signChunkSource } from '../../../node/transfers/data-endpoint.ts'
import { newHotkey } from '../../../protocol/index.ts'

t.test('the bulk channel serves admitted peers only, each chunk streamed from its file', async t => {
  const net = await startTestDevnet(t, { workers: 0 })
  const orch = net.devnet.orchestrator
  const O = orch.transport.publicKey
  // A staged chunk, and a path signed for it as an offer carries one.
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const data = testBytes(1024 * 1024 + 17, 9)
  const transfer = await upload(api, data, { filename: 'bulk.bin', hotkey: orch.key.address })
  const source = { key: orch.key, store: orch.store, blobs: orch.blobs, clock: orch.clock, baseUrl: () => orch.config.publicUrl ?? orch.url! }
  const { path } = signChunkSource(source, transfer.id, 0, randomUUID(), Date.now() + 60_000)

  // A connection that never announced: its request is dropped unread, never answered.
  const stranger = await Rogue.join(net.devnet.testnet.createNode(), net.devnet.network, undefined, { server: false })
  t.teardown(() => stranger.stop())
  await stranger.until(() => stranger.up.has(O), 30_000, 'the stranger connected to the orchestrator')
  const droppedBefore = orch.transport.bulkDropped.get('not_admitted') ?? 0
  const unanswered = stranger.transport.fetchBulk(O, path, 600_000).then(() => 'served', (err: Error) => err.message)
  await eventually(async () => (orch.transport.bulkDropped.get('not_admitted') ?? 0) > droppedBefore, 15_000, 'the stranger\'s request dropped')
  await stranger.stop()
  t.match(await unanswered, /transport stopped/, 'the stranger was never answered')

  // A registered worker: admitted, and served the chunk from its file.
  const key = newHotkey()
  await orch.devChain!.enroll(key.address, 'worker')
  const worker = await Rogue.join(net.devnet.testnet.createNode(), net.devnet.network, key, { autoAnnounce: 'worker' })
  t.teardown(() => worker.stop())
  await eventually(async () => orch.messenger.gate.isAdmitted(worker.publicKey) && worker.up.has(O), 15_000, 'the worker admitted')
  let wholeReads = 0
  const get = orch.blobs.get.bind(orch.blobs)
  orch.blobs.get = async (sha) => { wholeReads++; return await get(sha) }
  t.teardown(() => { orch.blobs.get = get })
  const got = await worker.transport.fetchBulk(O, path)
  t.equal(sha256(got), sha256(data), 'the staged chunk, exactly')
  t.equal(wholeReads, 0, 'streamed from its file, not read whole')

  // A forged path: refused, and it costs the sender score.
  const scoreBefore = orch.messenger.scoreOf(worker.publicKey)
  await t.rejects(worker.transport.fetchBulk(O, path.replace('attempt=', 'attempt=0')), { code: 'BWN_ERR_BULK', message: /not_found/ }, 'a forged path refused')
  t.ok(orch.messenger.scoreOf(worker.publicKey) < scoreBefore, 'and penalized')
})
