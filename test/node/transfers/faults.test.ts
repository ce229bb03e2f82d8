// Acceptance: a worker killed mid-transfer (a separate process, SIGKILL) does not stop the transfer,
// and an intervention row records the reassignment; a corrupting worker never produces a wrong object.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startTestDevnet, sinkFile, apiClient, upload, sendChunks, waitForStatus, sha256, testBytes } from '../../helpers/devnet.ts'
import { runCli, eventually } from '../../helpers/proc.ts'
import { collect, prefixRange } from '../../../actors/store.ts'

t.test('a worker killed mid-transfer: the transfer completes and an intervention row records it', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const key = await net.clientKey('enterprise')
  const api = apiClient(net.file.baseUrl, key)
  const orch = net.devnet.orchestrator
  // A worker in its own process with many slots, so the router keeps giving it work while it is frozen. The devnet registers
  // it (roles come from the chain) and it reads registrations from the devnet's chain host.
  await net.devnet.enroll(join(net.data, 'victim'), 'worker')
  const victim = runCli(['node', '--role', 'worker', '--data', join(net.data, 'victim'), '--bootstrap', net.file.bootstrap.join(','),
    '--dht-host', '127.0.0.1', '--network', net.file.network, '--port', '0', '--slots', '8', '--allow-private-destinations', '--chain-host', orch.key.address])
  t.teardown(() => victim.stop('SIGKILL'))
  const ready = await victim.waitFor(l => l.event === 'attached', 60_000, 'victim attached')
  const victimKey = ready.hotkey as string

  const data = testBytes(128 * 1024 * 1024, 3)
  const created = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: net.file.nodes[0]!.hotkey, total_size: data.byteLength, filename: 'killed.bin', tier: 'STANDARD' } })
  const transfer = created.body
  // Eight uploads at once, so offers keep coming while the victim is frozen.
  const lanes = Array.from({ length: 8 }, (_, lane) => sendChunks(api, transfer, data, i => i % 8 === lane))
  // Kill it while it holds work it cannot have finished: freeze it (SIGSTOP) once it holds work, then wait
  // until the router assigns it more while it is frozen (its slots keep its load low), or the orchestrator
  // already takes work back from it (a frozen peer stops answering). A result it sent before the freeze may
  // still land, but an attempt assigned after the freeze is unfinished for sure. A victim left holding
  // nothing is let go on (SIGCONT) to be given work again.
  let frozenAt: number | null = null
  let frozenPolls = 0
  await eventually(async () => {
    const held = (await collect(orch.store.table<any>('task_attempts'), prefixRange(`${transfer.id}/`)))
      .map(([, a]) => a).filter(a => a.worker_id === victimKey && a.state === 'accepted')
    if (frozenAt === null) {
      if (held.length > 0) { victim.child.kill('SIGSTOP'); frozenAt = Date.now(); frozenPolls = 0 }
      return false
    }
    // Offered (so routed to it) after the freeze: it reached a stopped process.
    if (held.some(a => Date.parse(a.offered_at) > frozenAt! + 5)) return true
    const taken = (await collect(orch.store.table<any>('overseer_interventions'), prefixRange(`${transfer.id}/`)))
      .some(([, r]) => r.previous_worker_id === victimKey && Date.parse(r.intervened_at) > frozenAt!)
    if (taken) return true
    if (held.length === 0 && ++frozenPolls >= 100) { victim.child.kill('SIGCONT'); frozenAt = null }
    return false
  }, 90_000, 'the frozen victim to be given work', 10)
  const killed = await victim.stop('SIGKILL')
  await Promise.all(lanes)
  t.equal(killed.code, null, 'killed by signal')

  await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 90_000)
  t.equal(done.status, 'completed', JSON.stringify(done.error))
  t.equal(sha256(await readFile(sinkFile(net.data, await net.orgId(), 'killed.bin'))), sha256(data), 'destination object intact')
  const interventions = (await collect(orch.store.table<any>('overseer_interventions'), prefixRange(`${transfer.id}/`))).map(([, r]) => r)
  const moved = interventions.filter(r => r.previous_worker_id === victimKey)
  t.ok(moved.length >= 1, `${moved.length} intervention rows for the killed worker`)
  for (const r of moved) {
    t.match(r, { intervention_type: 'overseer_recovery', reason: /^(worker_lost|result_gap|wave_timeout)$/, replacement_attempt_id: String })
  }
})

t.test('a corrupting worker never produces a wrong destination object', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const liar = await net.addNode('liar', { role: 'worker', testFaults: ['corrupt'], slots: 4 })
  await eventually(async () => (await (await fetch(`${net.file.baseUrl}/health`)).json() as any).nodes.worker === 2, 15_000, 'liar to join')
  const orch = net.devnet.orchestrator
  await eventually(async () => (await collect(orch.store.table<any>('workers'), prefixRange('session/'))).filter(([, w]) => w.status === 'active').length === 2, 15_000, 'both workers attached')

  const data = testBytes(96 * 1024 * 1024, 5)
  const transfer = await upload(api, data, { filename: 'corrupt.bin', hotkey: net.file.nodes[0]!.hotkey })
  await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 90_000)
  t.equal(done.status, 'completed', JSON.stringify(done.error))
  t.equal(sha256(await readFile(sinkFile(net.data, await net.orgId(), 'corrupt.bin'))), sha256(data), 'the object is right, whatever the liar wrote')

  const results = (await collect(orch.store.table<any>('task_results'), prefixRange(`${transfer.id}/`))).map(([, r]) => r)
  const caught = results.filter(r => r.worker_id === liar.key.address)
  t.ok(caught.length >= 1, 'the liar was given work')
  t.ok(caught.every(r => r.outcome === 'integrity_mismatch'), 'every delivery of the liar failed its destination check')
  t.ok(results.filter(r => r.outcome === 'accepted').every(r => r.worker_id !== liar.key.address))
  const interventions = (await collect(orch.store.table<any>('overseer_interventions'), prefixRange(`${transfer.id}/`))).map(([, r]) => r)
  t.ok(interventions.some(r => r.reason === 'integrity_mismatch' && r.previous_worker_id === liar.key.address), 'redelivery recorded')
})
