// A stall is held against a worker only on the worker's own word (task_accepted, protocol 4;
// docs/transfers.md#worker-standing). A registered orchestrator answers a coordinator's offers with
// `task_assigned` naming an honest worker's hotkey, then sends nothing more. Before, each stall of that
// work was a `no_progress` strike on the named worker, and the third excluded it from the coordinator's
// offers for a cool-down, though it never saw the work. Now the attempt is still taken back, but no
// strike lands without the worker's signed accept: not on the orchestrator's word alone, nor with an
// accept relayed without the worker's frame, nor with one the orchestrator signed itself. An accept the
// worker did sign (the rogue holds a worker key of its own) still strikes it, to exclusion, unless the
// chunk was read from the coordinator's data endpoint under the offer's signed URL: the coordinator's own
// evidence that the worker acted on it (the endpoint tells the coordinator, node/roles/index.ts).
// (griefing.test.ts shows the same for a real stalling worker relayed by an honest orchestrator.)
import t from 'tap'
import { readFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { startTestDevnet, apiClient, sendChunks, waitForStatus, sinkFile, sha256, testBytes } from '../../helpers/devnet.ts'
import { eventually } from '../../helpers/proc.ts'
import { capturingLogger } from '../../helpers/logger.ts'
import { Rogue } from '../../helpers/rogue.ts'
import { collect, prefixRange } from '../../../actors/store.ts'
import { STRIKE_LIMIT } from '../../../actors/transfer/worker-standing.ts'
import { loadOrCreateKeystore } from '../../../node/keystore.ts'
import { encodeFrame, newHotkey, type KeyPair, type MessageBody } from '../../../protocol/index.ts'

const LENGTH = 64 * 1024 // one chunk per transfer
type Name = 'victim' | 'accomplice' | 'reader'

t.test('an orchestrator cannot get a worker struck for stalls by naming it; a worker\'s own signed accept still strikes it', async t => {
  const { logger, lines } = capturingLogger('info')
  // No worker is attached to the honest orchestrator while the rogue is at work: the rogue is then the
  // only candidate with workers, so every offer (first and recovery) goes to it, whatever the routing
  // scores (PRISM may score both orchestrators meanwhile). The honest worker starts once the rogue is done.
  const net = await startTestDevnet(t, { workers: 0, logger })
  const orch = net.devnet.orchestrator
  const O = orch.transport.publicKey
  // The honest worker: its key made now (where the devnet keeps its first worker's), its node started later.
  const victimDir = join(net.data, 'worker-1')
  await mkdir(victimDir, { recursive: true, mode: 0o700 })
  const victim = (await loadOrCreateKeystore(join(victimDir, 'hotkey.json'))).key.address
  const accomplice = newHotkey() // a worker whose key the rogue holds: its signed word is real
  const reader = newHotkey() // another such worker, which reads each chunk it is offered before it stalls

  // The rogue: registered before it connects (so its announce is admitted at once), then advertising an
  // attached worker in its heartbeats (Heartbeat.workers: a coordinator routes only to orchestrators with some).
  const rogueKey = newHotkey()
  await orch.devChain!.enroll(rogueKey.address, 'orchestrator')
  const rogue = await Rogue.join(net.devnet.testnet.createNode(), net.devnet.network, rogueKey, { autoAnnounce: 'orchestrator' })
  t.teardown(() => rogue.stop())
  await rogue.until(() => rogue.up.has(O) && rogue.got('announce', orch.key.address).length > 0, 30_000, 'a connection to the orchestrator')
  await eventually(async () => orch.auth.allows(rogue.hotkey, 'orchestrator'), 30_000, 'the rogue admitted as an orchestrator', 100)
  let advertised = 1
  rogue.heartbeat(O, 'orchestrator', advertised)
  const beat = setInterval(() => rogue.heartbeat(O, 'orchestrator', advertised), 2_000) // well within the membership's peer timeout
  t.teardown(() => clearInterval(beat))
  await eventually(async () => (await orch.membership.view()).peers.some(p => p.hotkey === rogue.hotkey && p.workers > 0), 15_000, 'the rogue a candidate with workers', 100)

  // Each offer of transfer `victim.bin` the rogue answers naming the honest worker; of `accomplice.bin`,
  // naming its accomplice, with the accomplice's signed accept. STRIKE_LIMIT stalls each: enough to
  // exclude a worker they strike. Then it gives the work back (no worker) and advertises none.
  const transfers = new Map<string, { name: Name, worker: string, key: KeyPair | null, offers: number }>()
  const reads: Array<Promise<number>> = []
  const word = (by: KeyPair, body: MessageBody<'task_accepted'>): string => Buffer.from(encodeFrame(by, 'task_accepted', body, { ts: Date.now(), to: rogue.hotkey })).toString('base64')
  rogue.onCapture = ({ msg }) => {
    if (msg.type !== 'task_offer_batch' || msg.from !== orch.key.address) return
    const batch = msg.body as MessageBody<'task_offer_batch'>
    const tr = transfers.get(batch.transferId)
    if (tr === undefined) return
    const offers = batch.offers.map(o => ({ o, n: ++tr.offers }))
    rogue.send(O, 'task_assigned', { transferId: batch.transferId, batchId: batch.batchId, assignments: offers.map(({ o, n }) => ({ attemptId: o.attemptId, worker: n <= STRIKE_LIMIT ? tr.worker : null })) }, orch.key.address)
    for (const { o, n } of offers) {
      if (n > STRIKE_LIMIT) continue
      const said = { transferId: o.transferId, attemptId: o.attemptId, taskId: o.taskId, worker: tr.worker, coordinator: orch.key.address }
      // The accomplice's own word, every time. For the victim: the rogue's task_assigned alone, then an
      // accept relayed without the worker's frame, then one carrying a frame the rogue signed itself.
      if (tr.key !== null) rogue.send(O, 'task_accepts', { accepts: [{ ...said, workerAccept: word(tr.key, said) }] }, orch.key.address)
      if (tr.name === 'reader') reads.push(fetch(o.source.url).then(async r => r.status === 200 ? (await r.arrayBuffer()).byteLength : -r.status))
      if (tr.key !== null) continue
      if (n === 2) rogue.send(O, 'task_accepts', { accepts: [said] }, orch.key.address)
      else if (n === 3) rogue.send(O, 'task_accepts', { accepts: [{ ...said, workerAccept: word(rogue.key, said) }] }, orch.key.address)
    }
    if (advertised > 0 && [...transfers.values()].every(x => x.offers >= STRIKE_LIMIT)) { advertised = 0; rogue.heartbeat(O, 'orchestrator', 0) }
  }

  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const sender = net.file.nodes[0]!.hotkey
  const data: Record<Name, Buffer> = { victim: testBytes(LENGTH, 71), accomplice: testBytes(LENGTH, 72), reader: testBytes(LENGTH, 73) }
  const ids = {} as Record<Name, string>
  const keyOf: Record<Name, KeyPair | null> = { victim: null, accomplice, reader }
  for (const name of ['victim', 'accomplice', 'reader'] as const) {
    const created = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: sender, total_size: LENGTH, filename: `${name}.bin`, tier: 'STANDARD' } })
    t.equal(created.status, 201, `${name}.bin created`)
    ids[name] = created.body.id
    transfers.set(created.body.id, { name, worker: keyOf[name]?.address ?? victim, key: keyOf[name], offers: 0 })
  }
  for (const name of ['victim', 'accomplice', 'reader'] as const) {
    const transfer = (await api(`/transfers/${ids[name]}`)).body
    await sendChunks(api, transfer, data[name])
    const fin = await api(`/transfers/${ids[name]}/finalize`, { method: 'POST' })
    t.ok([200, 202].includes(fin.status), `${name}.bin finalized (${fin.status})`)
  }

  // The coordinator takes each of the rogue's attempts back when its result gap passes.
  const attempts = async (name: Name): Promise<any[]> => (await collect(orch.store.table<any>('task_attempts'), prefixRange(`${ids[name]}/`))).map(([, r]) => r)
  const stalled = async (name: Name): Promise<any[]> => (await attempts(name)).filter(a => a.orchestrator_id === rogue.hotkey && a.state === 'superseded' && a.failure_reason === 'result_gap')
  await eventually(async () => (await stalled('victim')).length >= STRIKE_LIMIT && (await stalled('accomplice')).length >= STRIKE_LIMIT && (await stalled('reader')).length >= STRIKE_LIMIT, 30_000, `${STRIKE_LIMIT} stalls of each transfer at the rogue`, 100)
  t.ok((await stalled('victim')).every(a => a.worker_id === victim), 'the rogue named the honest worker on each')

  const standing = async (hotkey: string): Promise<any> => await orch.store.table<any>('workers').get(`standing/${hotkey}`)
  // The worker whose signed word the rogue relayed answers for the stalls: struck each time, then excluded.
  const struck = await eventually(async () => { const s = await standing(accomplice.address); return s?.status === 'excluded' ? s : undefined }, 15_000, 'the accomplice excluded', 100)
  t.match(struck, { status: 'excluded', exclusion_reason: 'no_progress', strikes: Array(STRIKE_LIMIT).fill({ reason: 'no_progress', transfer_id: ids.accomplice }) }, 'its own word struck the accomplice to exclusion')
  // The honest worker, named on the rogue's word alone: no strike, no exclusion.
  t.equal(await standing(victim), undefined, 'no standing row, no strike, no exclusion for the honest worker')
  // The reader's word is as real as the accomplice's, but it read every chunk it stalled on.
  t.same(await Promise.all(reads), Array(STRIKE_LIMIT).fill(LENGTH), 'the reader read each chunk whole from the data endpoint')
  t.equal(await standing(reader.address), undefined, 'a worker that read its chunk is not struck for the stall')
  const unclaimed = await eventually(async () => { const l = lines.filter(l => l.event === 'stall_unclaimed' && l.worker === victim); return l.length >= STRIKE_LIMIT ? l : undefined }, 10_000, 'the unclaimed stalls logged', 100)
  t.ok(unclaimed.every(l => l.orchestrator === rogue.hotkey && l.transferId === ids.victim), `${unclaimed.length} stall_unclaimed lines name the rogue as the orchestrator`)
  t.same(lines.filter(l => l.event === 'stall_unclaimed' && l.worker !== victim), [], 'no other stall went unclaimed')
  t.same(lines.filter(l => l.event === 'worker_accept_refused' && l.peer === rogue.hotkey).map(l => [l.worker, l.reason]),
    [[victim, 'none'], [victim, 'not signed by the named worker']], 'the accepts without the worker\'s word were refused, the accomplice\'s taken')

  // The honest worker starts (attached to the honest orchestrator: the rogue attaches nobody) and gets
  // both chunks: it is in no exclusion list, and both transfers complete with the exact bytes.
  const worker = await net.addNode('worker-1', { role: 'worker', attachTo: orch.key.address }, { enroll: false })
  t.equal(worker.key.address, victim, 'the honest worker is the one the rogue named')
  for (const name of ['victim', 'accomplice', 'reader'] as const) {
    const done = await waitForStatus(api, ids[name], ['completed', 'failed'], 30_000)
    t.equal(done.status, 'completed', `${name}.bin completed`)
    t.equal(sha256(await readFile(sinkFile(net.data, await net.orgId(), done.stored_filename ?? `${name}.bin`))), sha256(data[name]), `${name}.bin: the destination holds the exact bytes`)
    const delivered = (await attempts(name)).filter(a => a.state === 'succeeded')
    t.match(delivered, [{ orchestrator_id: orch.key.address, worker_id: victim }], `${name}.bin delivered by the honest worker, through the honest orchestrator`)
  }
  t.equal(await standing(victim), undefined, 'still nothing held against the honest worker')

  // The worker audit route shows the rogue's attempts naming it, taken back, and no standing with strikes.
  const res = await fetch(`${net.file.baseUrl}/api/audit/worker/${victim}/transfers/${ids.victim}`, { headers: { 'x-api-key': net.file.keys.admin! } })
  t.equal(res.status, 200)
  const audit = await res.json() as any
  t.equal(audit.task_attempts.filter((a: any) => a.failure_reason === 'result_gap').length, STRIKE_LIMIT, 'the rogue\'s stalled attempts are on the worker audit route')
  t.notOk(audit.workers.some((w: any) => w.strikes !== undefined), 'with no strikes')
})
