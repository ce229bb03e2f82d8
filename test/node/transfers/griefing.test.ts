// Acceptance: griefing workers answer for their work. A worker that accepts offers and never moves them
// loses each chunk within max(3 s, 2 × the chunk's time at the measured rate) (plus one overseer tick),
// and a 64 MiB transfer still completes within 3 × its healthy time; a worker that writes wrong bytes is
// excluded from offers past the strike limit. Both leave rows on the worker audit route, and nothing of
// it lands on the orchestrator's PRISM inputs (docs/transfers.md#overseer, #worker-standing).
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startTestDevnet, sinkFile, apiClient, upload, waitForStatus, sha256, testBytes, type TestDevnet, type Api } from '../../helpers/devnet.ts'
import { eventually } from '../../helpers/proc.ts'
import { collect, prefixRange } from '../../../actors/store.ts'
import type { TableName } from '../../../actors/ports.ts'
import { OVERSEER_TICK_MS } from '../../../actors/transfer/state.ts'
import { STRIKE_LIMIT } from '../../../actors/transfer/worker-standing.ts'

const MiB = 1024 * 1024

async function rows (net: TestDevnet, table: TableName, transferId: string): Promise<any[]> {
  return (await collect(net.devnet.orchestrator.store.table<any>(table), prefixRange(`${transferId}/`))).map(([, r]) => r)
}

/** Create → completed, through the API, with the destination's bytes checked. */
async function timedTransfer (t: { equal (a: unknown, b: unknown, msg: string): unknown }, net: TestDevnet, api: Api, data: Buffer, filename: string): Promise<{ id: string, ms: number }> {
  const t0 = Date.now()
  const transfer = await upload(api, data, { filename, hotkey: net.file.nodes[0]!.hotkey })
  await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  const done = await waitForStatus(api, transfer.id, ['completed', 'failed'], 120_000)
  const ms = Date.now() - t0
  t.equal(done.status, 'completed', `${filename} completed`)
  t.equal(sha256(await readFile(sinkFile(net.data, await net.orgId(), filename))), sha256(data), `${filename}: the destination holds the exact bytes`)
  return { id: transfer.id, ms }
}

/** What a validator holds against an orchestrator in its PRISM inputs: penalties and failed outcomes. */
async function prismCharges (net: TestDevnet, orchestrator: string): Promise<{ penalties: number, failed: number }> {
  const validator = net.devnet.nodes.find(n => n.name === 'validator')!.node
  const meta = validator.store.table<any>('meta')
  const penalties = (await collect(meta, prefixRange(`prism/pen/${orchestrator}/`))).length
  const failed = (await collect(meta, prefixRange(`prism/ev/${orchestrator}/`))).filter(([, e]) => e.verified !== true).length
  return { penalties, failed }
}

async function auditWorker (net: TestDevnet, worker: string, transferId: string): Promise<any> {
  const res = await fetch(`${net.file.baseUrl}/api/audit/worker/${worker}/transfers/${transferId}`, { headers: { 'x-api-key': net.file.keys.admin! } })
  if (res.status !== 200) throw new Error(`worker audit answered ${res.status}: ${await res.text()}`)
  return await res.json()
}

t.test('a worker that accepts offers and never moves them loses each chunk within its stall window; the transfer stays fast', async t => {
  const net = await startTestDevnet(t, { workers: 3 })
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const orch = net.devnet.orchestrator
  await timedTransfer(t, net, api, testBytes(16 * MiB, 21), 'warm-up.bin')
  const healthy = await timedTransfer(t, net, api, testBytes(64 * MiB, 22), 'healthy.bin')
  // The chunk's time at the rate this network measured: acceptance to result of the healthy deliveries.
  const attempts = new Map((await rows(net, 'task_attempts', healthy.id)).map(a => [a.id, a]))
  const chunkMs = (await rows(net, 'task_results', healthy.id)).filter(r => r.outcome === 'accepted')
    .map(r => Date.parse(r.received_at) - Date.parse(attempts.get(r.attempt_id)!.accepted_at)).sort((x, y) => x - y)
  t.ok(chunkMs.length >= 1, `${chunkMs.length} healthy deliveries measured`)
  const bound = Math.max(3000, 2 * chunkMs[chunkMs.length >> 1]!)
  const before = await prismCharges(net, orch.key.address)

  const griefer = await net.addNode('griefer', { role: 'worker', testFaults: ['stall'], slots: 4 })
  await eventually(async () => (await collect(orch.store.table<any>('workers'), prefixRange('session/'))).filter(([, w]) => w.status === 'active').length === 4, 15_000, 'the griefer attached')
  const grief = await timedTransfer(t, net, api, testBytes(64 * MiB, 23), 'griefed.bin')

  const held = (await rows(net, 'task_attempts', grief.id)).filter(a => a.worker_id === griefer.key.address)
  t.ok(held.length >= 1, `the griefer accepted ${held.length} chunk(s)`)
  const interventions = (await rows(net, 'overseer_interventions', grief.id)).filter(r => r.previous_worker_id === griefer.key.address)
  for (const a of held) {
    t.match(a, { state: 'superseded', failure_reason: 'result_gap' }, `chunk ${a.chunk_index} taken back from the griefer`)
    const iv = interventions.find(r => r.previous_attempt_id === a.id)
    t.ok(iv !== undefined, `an intervention row for chunk ${a.chunk_index}`)
    const lostAfter = Date.parse(iv.intervened_at) - Date.parse(a.accepted_at)
    t.ok(lostAfter <= bound + OVERSEER_TICK_MS, `lost its chunk ${lostAfter} ms after accepting it (bound max(3 s, 2 × ${chunkMs[chunkMs.length >> 1]} ms) = ${bound} ms, plus one ${OVERSEER_TICK_MS} ms tick)`)
  }
  t.ok(grief.ms <= 3 * healthy.ms, `64 MiB with a griefer: ${grief.ms} ms, healthy ${healthy.ms} ms (≤ 3×)`)

  // The worker audit route shows what it did, and the strike this coordinator holds against it.
  const audit = await auditWorker(net, griefer.key.address, grief.id)
  t.ok(audit.task_attempts.some((a: any) => a.failure_reason === 'result_gap'), 'its superseded attempts are on the worker audit route')
  t.ok(audit.overseer_interventions.some((r: any) => r.reason === 'result_gap'), 'and the interventions')
  t.match(audit.workers.find((w: any) => w.strikes !== undefined), { hotkey: griefer.key.address, strikes: [{ reason: 'no_progress', transfer_id: grief.id }] }, 'and its standing, with the strike')
  t.same(await prismCharges(net, orch.key.address), before, 'nothing of it lands on the orchestrator\'s PRISM inputs')
  t.same(before, { penalties: 0, failed: 0 })
})

t.test('a worker that writes wrong bytes is excluded from offers once it reaches the strike limit', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const orch = net.devnet.orchestrator
  const liar = await net.addNode('liar', { role: 'worker', testFaults: ['corrupt'], slots: 4 })
  await eventually(async () => (await collect(orch.store.table<any>('workers'), prefixRange('session/'))).filter(([, w]) => w.status === 'active').length === 2, 15_000, 'both workers attached')
  const standing = async (): Promise<any> => await orch.store.table<any>('workers').get(`standing/${liar.key.address}`)

  const transfers: string[] = []
  for (let i = 0; i < 6 && (await standing())?.status !== 'excluded'; i++) {
    transfers.push((await timedTransfer(t, net, api, testBytes(64 * MiB, 30 + i), `lie-${i}.bin`)).id)
  }
  const row = await standing()
  t.match(row, { status: 'excluded', exclusion_reason: 'failed_check', exclusions: 1 }, `excluded after ${transfers.length} transfer(s)`)
  t.ok(row.strikes.filter((s: any) => s.reason === 'failed_check').length >= STRIKE_LIMIT, `${row.strikes.length} strikes`)
  const failedChecks = (await Promise.all(transfers.map(async id => (await rows(net, 'task_results', id)).filter(r => r.worker_id === liar.key.address && r.outcome === 'integrity_mismatch')))).flat()
  t.ok(failedChecks.length >= STRIKE_LIMIT, `${failedChecks.length} of its deliveries failed their check`)

  // Excluded: the next transfer is offered to it not once, and completes through the honest worker.
  const after = await timedTransfer(t, net, api, testBytes(64 * MiB, 40), 'after-exclusion.bin')
  const given = (await rows(net, 'task_attempts', after.id)).filter(a => a.worker_id === liar.key.address)
  t.same(given, [], 'no attempt went to the excluded worker')
  t.equal((await collect(orch.store.table<any>('workers'), prefixRange('session/'))).find(([, w]) => w.hotkey === liar.key.address)?.[1].status, 'active', 'it stays attached: excluded from offers, not disconnected')

  const audit = await auditWorker(net, liar.key.address, transfers[transfers.length - 1]!)
  t.match(audit.workers.find((w: any) => w.strikes !== undefined), { status: 'excluded', excluded_until: String }, 'the exclusion row is on the worker audit route')
  t.ok(audit.task_results.some((r: any) => r.outcome === 'integrity_mismatch'), 'with its failed deliveries')
  t.same(await prismCharges(net, orch.key.address), { penalties: 0, failed: 0 }, 'the orchestrator\'s PRISM inputs carry none of it')
  // The score the validator publishes after the lies (an epoch closed since) carries no penalty either.
  const liedBy = (await (await fetch(`${net.file.baseUrl}/chain/head`)).json() as { epoch: number }).epoch
  const scored = await eventually(async () => {
    const p = await (await fetch(`${net.file.baseUrl}/chain/prism`)).json() as any
    return p.epoch !== null && p.epoch >= liedBy ? p.scores.find((s: any) => s.hotkey === orch.key.address) : undefined
  }, 60_000, 'PRISM scores published after the lies', 500)
  t.equal(scored.penaltyMultiplier, 1, 'the orchestrator\'s published PRISM score carries no penalty for its worker\'s lies')
})
