// What the telemetry reads answer: envelopes and data of seed §2, realtime vs published evidence,
// ETags with a free 304, epoch and sell-allowance retention, and honest empties without sources.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { telemetryApp, settled, epochVersion, ORCH, ORCH_B, WORKER, WORKER_B, EPOCH_MS } from '../../helpers/telemetry.ts'
import { snapshotIdOf } from '../../../actors/validator/envelope.ts'

const DAY = 86_400_000
const T = await telemetryApp()
t.teardown(() => T.app.close())
const { projection, env } = T
const now = (): number => env.clock.now()
const ENVELOPE_KEYS = ['snapshotId', 'version', 'observedAt', 'sourceEpoch', 'formulaReference', 'publishedAt', 'evidenceSequence', 'data']

function checkEnvelope (t: any, e: any): void {
  t.same(Object.keys(e).sort(), [...ENVELOPE_KEYS].sort())
  const { snapshotId, ...content } = e
  t.equal(snapshotId, snapshotIdOf(content), 'snapshotId derives from the content')
}

t.test('network summary: every §2.2 field; realtime counts work in progress, published only terminal transfers', async t => {
  const done = randomUUID()
  const running = randomUUID()
  const at = now()
  // done: 2 verified (one a recovery), 1 failed, 1 neutral failure; running: 1 verified, 1 checking.
  for (const ev of [
    settled({ transferId: done, index: 0, offeredAtMs: at - 2000, receivedAtMs: at - 1000, bytes: 4_000_000 }),
    settled({ transferId: done, index: 1, offeredAtMs: at - 2000, receivedAtMs: at - 1000, bytes: 2_000_000, recovery: true, worker: WORKER_B }),
    settled({ transferId: done, index: 2, offeredAtMs: at - 2000, receivedAtMs: at - 1500, outcome: 'failed', attemptState: 'failed', error: 'BWN_ERR_DESTINATION_REFUSED' }),
    settled({ transferId: done, index: 3, offeredAtMs: at - 2000, receivedAtMs: at - 1500, outcome: 'failed', attemptState: 'failed', error: 'session_displaced' }),
    settled({ transferId: running, index: 0, offeredAtMs: at - 500, receivedAtMs: at, bytes: 1_000_000, orchestrator: ORCH_B }),
    settled({ transferId: running, index: 1, offeredAtMs: at - 500, receivedAtMs: at, bytes: 1_000_000, attemptState: 'checking', orchestrator: ORCH_B })
  ]) projection.apply({ type: 'result', ...ev }, at)
  projection.apply({ type: 'transfer', id: done, status: 'completed', completedAtMs: at }, at)

  const res = await T.get('/v1/telemetry/network')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^application\/json/)
  const pub = res.json()
  checkEnvelope(t, pub)
  t.same(Object.keys(pub.data).sort(), ['completedTransfers', 'lookbackDays', 'measurementWindowEnd', 'measurementWindowStart', 'observationHour', 'orchestratorCount', 'providers', 'reportedCapacityMbps', 'transferredBytes', 'validatorCount', 'weights', 'workerCount', 'workloads'])
  const w = pub.data.workloads[0]
  t.same(Object.keys(w).sort(), ['attemptCount', 'failedTasks', 'measuredBytes', 'measuredDurationMs', 'measurementWindowEnd', 'measurementWindowStart', 'metricDescription', 'neutralExcludedTasks', 'orchestratorCount', 'originalTaskCount', 'pendingVerificationTasks', 'recoveryAttemptCount', 'recoveryVerifiedBytes', 'reportedCapacityMbps', 'successfulTasks', 'verifiedBandwidthMbps', 'verifiedBytes', 'workload'])
  t.match(w, { workload: 'standard_transfers', metricDescription: 'duration_weighted_mean_assignment_goodput', attemptCount: 4, successfulTasks: 2, failedTasks: 1, neutralExcludedTasks: 1, pendingVerificationTasks: 0, recoveryAttemptCount: 1, originalTaskCount: 3, verifiedBytes: 6_000_000, recoveryVerifiedBytes: 2_000_000, measuredBytes: 6_000_000, measuredDurationMs: 2000, orchestratorCount: 1 })
  t.equal(w.verifiedBandwidthMbps, 6_000_000 * 8 / (2000 * 1000), 'Σ verified bits / Σ trusted duration')
  t.equal(pub.data.completedTransfers, 1)
  t.equal(pub.data.transferredBytes, 6_000_000)
  t.equal(pub.data.lookbackDays, 7)

  const live = (await T.get('/v1/telemetry/realtime/network')).json()
  checkEnvelope(t, live)
  t.match(live.data.workloads[0], { attemptCount: 6, successfulTasks: 3, pendingVerificationTasks: 1, verifiedBytes: 7_000_000, orchestratorCount: 2 })

  // Tasks: published holds the terminal transfer's four; realtime all six, pending apart from verified.
  const tasks = (await T.get('/v1/telemetry/tasks')).json()
  t.equal(tasks.items.length, 4)
  t.same(new Set(tasks.items.map((i: any) => i.data.state)), new Set(['verified', 'failed']))
  const item = tasks.items[0]
  checkEnvelope(t, item)
  t.same(Object.keys(item.data).sort(), ['attemptId', 'batchId', 'finishedAt', 'neutral', 'orchestratorId', 'pool', 'recovery', 'state', 'taskId', 'trustedDurationMs', 'verifiedBandwidthMbps', 'verifiedBytes', 'workerId', 'workload'])
  t.match(item.data, { state: 'verified', trustedDurationMs: 1000, verifiedBytes: 4_000_000, verifiedBandwidthMbps: 32, pool: 'unscored', workload: 'standard_transfers', neutral: false })
  const rt = (await T.get(`/v1/telemetry/realtime/tasks?transferId=${running}`)).json()
  t.same(rt.items.map((i: any) => i.data.state).sort(), ['pending_verification', 'verified'])
  t.equal((await T.get(`/v1/telemetry/tasks?transferId=${running}`)).json().items.length, 0, 'no published evidence of a transfer in progress')
  const byWorker = (await T.get(`/v1/telemetry/tasks?participantId=${WORKER_B}`)).json()
  t.equal(byWorker.items.length, 1)
  t.equal((await T.get(`/v1/telemetry/tasks?participantId=${ORCH}`)).json().items.length, 4)
  t.equal((await T.get(`/v1/telemetry/tasks?since=${new Date(at - 1200).toISOString()}`)).json().items.length, 2)
  t.equal((await T.get(`/v1/telemetry/tasks?until=${new Date(at - 1200).toISOString()}`)).json().items.length, 2)
  t.equal((await T.get(`/v1/telemetry/tasks?snapshotId=${item.snapshotId}`)).json().items[0].snapshotId, item.snapshotId)

  // The checking attempt of the running transfer is cancelled when the transfer ends (neutral).
  projection.apply({ type: 'transfer', id: running, status: 'cancelled', completedAtMs: now() }, now())
  const settledRt = (await T.get(`/v1/telemetry/tasks?transferId=${running}`)).json()
  t.same(settledRt.items.map((i: any) => i.data.state).sort(), ['cancelled', 'verified'])
  t.ok(settledRt.items.find((i: any) => i.data.state === 'cancelled').data.neutral)
  // WORKER moved chunks 0, 2, 3 of the finished transfer and both of the now-cancelled one; WORKER_B the other.
  const mine = (await T.get(`/v1/telemetry/tasks?participantId=${WORKER}`)).json().items
  t.equal(mine.length, 5, 'the worker\'s own tasks, once both transfers are terminal')
  t.ok(mine.every((i: any) => i.data.workerId === WORKER), 'and only its own')
})

t.test('ETag on every success; If-None-Match answers 304 without a charge', async t => {
  const org = (await T.env.accounts.authenticate(T.keys.console) as any).principal.organizationId
  for (const url of ['/v1/telemetry/network', '/v1/telemetry/realtime/network', '/v1/telemetry/tasks?limit=3', '/v1/telemetry/realtime/tasks', '/v1/telemetry/network/history', '/v1/telemetry/realtime/network/history', '/v1/telemetry/epochs', '/v1/telemetry/realtime/epochs']) {
    const first = await T.get(url)
    t.equal(first.statusCode, 200, url)
    const etag = first.headers.etag as string
    t.match(etag, /^"[A-Za-z0-9_-]+"$/, `${url} has an ETag`)
    t.ok(Number(first.headers['x-credits-charged']) > 0, `${url} charged`)
    const before = (await T.env.accounts.balance(org)).balance
    const again = await T.get(url, undefined, { 'if-none-match': etag })
    t.equal(again.statusCode, 304, `${url} → 304`)
    t.equal(again.body, '')
    t.equal(again.headers['x-credits-charged'], undefined)
    t.equal((await T.env.accounts.balance(org)).balance, before, `${url}: 304 is free`)
  }
  const a = await T.get('/v1/telemetry/realtime/network')
  projection.apply({ type: 'result', ...settled({ transferId: randomUUID(), offeredAtMs: now() - 10, receivedAtMs: now() }) }, now())
  const b = await T.get('/v1/telemetry/realtime/network', undefined, { 'if-none-match': a.headers.etag as string })
  t.equal(b.statusCode, 200, 'a new live version has a new ETag')
})

t.test('epochs: complete closed epochs, corrections, realtime = current revisions, 30 days', async t => {
  T.epochs.versions.length = 0
  const e1 = epochVersion(10, 1, null, now() - 31 * DAY)
  const e2 = epochVersion(11, 1, null, now() - 2 * EPOCH_MS)
  const e3 = epochVersion(12, 1, null, now() - EPOCH_MS)
  const e2r2 = epochVersion(11, 2, e2, now() - EPOCH_MS, [50, 50])
  T.epochs.versions.push(e3, e1, e2r2, e2)
  const hist = (await T.get('/v1/telemetry/epochs')).json()
  t.same(hist.items.map((i: any) => [i.data.epoch, i.data.revision]), [[11, 1], [11, 2], [12, 1]], 'publication order; the 31-day-old epoch is gone')
  t.equal(hist.items[1].data.previousSnapshotId, e2.snapshotId)
  t.equal(hist.items[1].data.correctionReason, 'verified_evidence_updated')
  t.equal(hist.items[0].data.correctionReason, null)
  for (const i of hist.items) { checkEnvelope(t, i); t.equal(i.data.sumFinalShare, 1) }
  const rt = (await T.get('/v1/telemetry/realtime/epochs')).json()
  t.same(rt.items.map((i: any) => [i.data.epoch, i.data.revision]), [[11, 2], [12, 1]])
  t.equal((await T.get(`/v1/telemetry/epochs?snapshotId=${e3.snapshotId}`)).json().items.length, 1)
})

t.test('sell allowance: paid 7 days, free 30 days, epoch selects a retained proof', async t => {
  T.sell.add(ORCH, 20, now() - 8 * DAY)
  T.sell.add(ORCH, 21, now() - DAY)
  const paid = await T.get(`/v1/telemetry/sell-allowance/${ORCH}`)
  t.equal(paid.statusCode, 200)
  checkEnvelope(t, paid.json())
  t.equal(paid.json().data.epoch, 21)
  t.same(Object.keys(paid.json().data.sellAllowance).sort(), ['baseAlpha7dRao', 'baseAlphaRao', 'baseWeight', 'computedAt', 'excessAlpha7dRao', 'frequencyMultiplier', 'holding', 'lastSaleBlock', 'newHotkeyRamp', 'nextPenaltyFreeSaleBlock', 'nextPenaltyFreeSaleEstimatedAt', 'receivedWeight', 'sales7d', 'sellAllowanceMultiplier', 'sellDebtAlphaRao', 'sellMultiplier', 'soldAlpha7dRao', 'transferableAlphaRao', 'windowEndBlock'])
  t.equal((await T.get(`/v1/telemetry/sell-allowance/${ORCH}?epoch=20`)).statusCode, 404, 'past the paid retention')
  const free = await T.get(`/v1/audit/sell-allowance/${ORCH}?epoch=20`, null)
  t.equal(free.statusCode, 200, 'the free audit keeps 30 days, without a key')
  t.equal(free.headers['x-credits-charged'], undefined)
  t.ok('allowanceRemainingAlphaRao' in free.json().data.sellAllowance)
  for (const k of ['transferableAlphaRao', 'windowEndBlock', 'nextPenaltyFreeSaleBlock', 'nextPenaltyFreeSaleEstimatedAt']) t.notOk(k in free.json().data.sellAllowance, `free omits ${k}`)
  const f304 = await T.get(`/v1/audit/sell-allowance/${ORCH}?epoch=20`, null, { 'if-none-match': free.headers.etag as string })
  t.equal(f304.statusCode, 304)
  t.equal((await T.get(`/v1/audit/sell-allowance/${ORCH_B}`, null)).statusCode, 404)
  t.equal((await T.get(`/v1/telemetry/sell-allowance/${ORCH}`, T.keys.snapshotOnly)).statusCode, 200, 'telemetry:read suffices')
})

t.test('no sources wired: empty lists and 404 single reads', async t => {
  const bare = await telemetryApp({ sources: false })
  t.teardown(() => bare.app.close())
  for (const url of ['/v1/telemetry/epochs', '/v1/telemetry/realtime/epochs', '/v1/telemetry/tasks', '/v1/telemetry/realtime/tasks']) t.same((await bare.get(url)).json(), { nextCursor: '', items: [] }, url)
  t.equal((await bare.get(`/v1/telemetry/sell-allowance/${ORCH}`)).statusCode, 404)
  t.equal((await bare.get(`/v1/audit/sell-allowance/${ORCH}`, null)).statusCode, 404)
  t.equal((await bare.get('/v1/telemetry/network')).statusCode, 200, 'a network summary of nothing yet is still a summary')
})
