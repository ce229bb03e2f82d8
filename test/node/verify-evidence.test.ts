// A validator reads back only for the coordinator of a delivery: the orchestrator's own signed result,
// addressed to that coordinator and describing the same attempt, worker and hash, must come with it.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { cryptoReady, newHotkey, encodeFrame, MAX_CLOCK_SKEW_MS, MAX_WORKER_ACCEPT_CHARS, PROTOCOL_VERSION, type Envelope } from '../../protocol/index.ts'
import { checkVerifyRequest, checkWorkerAccept, checkWorkerClaim, EVIDENCE_MAX_AGE_MS } from '../../node/verify-evidence.ts'

await cryptoReady()
const orch = newHotkey(); const coord = newHotkey(); const worker = newHotkey(); const rogue = newHotkey()
const now = Date.now()
const ids = { transferId: randomUUID(), taskId: randomUUID(), attemptId: randomUUID() }
const SHA = 'cd'.repeat(32)
const said = { ...ids, worker: worker.address, success: true, bytes: 10, durationMs: 1, sha256: SHA, etag: null, error: null, via: 'http' as const, coordinator: coord.address }
/** The worker's own signed result, as its orchestrator relays it. */
const claim = (key = worker, to = orch.address, body: Record<string, unknown> = said, ts = now): string => Buffer.from(encodeFrame(key, 'task_result', body as never, { ts, to })).toString('base64')
const result = { ...said, workerClaim: claim() }
const evidence = (key = orch, to = coord.address, body: Record<string, unknown> = result): string => Buffer.from(encodeFrame(key, 'task_result', body as never, { ts: now, to })).toString('base64')
const request = (from: string, ev: string | undefined, over: Record<string, unknown> = {}): Envelope => ({
  v: PROTOCOL_VERSION, type: 'verify_request', from, to: null, id: 'x', ts: now,
  body: { ...ids, chunkIndex: 0, orchestrator: orch.address, worker: worker.address, length: 10, sha256: SHA, trustedDurationMs: 1, read: { method: 'GET', url: 'http://127.0.0.1:1/r', headers: {}, expiresAt: now + 1000 }, ...(ev !== undefined ? { evidence: ev } : {}), ...over } as never
})

t.test('the coordinator with the orchestrator\'s signed result is believed', async t => {
  t.same(checkVerifyRequest(request(coord.address, evidence()), now), { ok: true, workerDurationMs: said.durationMs }, 'with the move\'s duration its worker signed (a throughput sample is never shorter)')
})

t.test('every forgery is refused', async t => {
  const cases: Array<[string, Envelope]> = [
    ['no evidence', request(coord.address, undefined)],
    ['evidence signed by someone else', request(coord.address, evidence(rogue))],
    ['evidence sent to another coordinator, replayed', request(rogue.address, evidence())],
    ['another worker named', request(coord.address, evidence(), { worker: rogue.address })],
    ['another hash named', request(coord.address, evidence(), { sha256: 'ef'.repeat(32) })],
    ['another attempt', request(coord.address, evidence(), { attemptId: randomUUID() })],
    ['a failed delivery', request(coord.address, evidence(orch, coord.address, { ...result, success: false }))],
    ['not a frame', request(coord.address, Buffer.from('nope').toString('base64'))],
    // The worker's own word, inside the orchestrator's: without it an orchestrator could name any worker.
    ['no worker claim', request(coord.address, evidence(orch, coord.address, said))],
    ['a claim signed by someone else for the worker', request(coord.address, evidence(orch, coord.address, { ...said, workerClaim: claim(rogue) }))],
    ['a claim signed by the orchestrator itself', request(coord.address, evidence(orch, coord.address, { ...said, workerClaim: claim(orch) }))],
    ['a claim the worker sent to another orchestrator', request(coord.address, evidence(orch, coord.address, { ...said, workerClaim: claim(worker, rogue.address) }))],
    ['a claim of other bytes', request(coord.address, evidence(orch, coord.address, { ...said, workerClaim: claim(worker, orch.address, { ...said, sha256: 'ef'.repeat(32) }) }))],
    ['a claim of another attempt', request(coord.address, evidence(orch, coord.address, { ...said, workerClaim: claim(worker, orch.address, { ...said, attemptId: randomUUID() }) }))],
    ['a claim of a failure', request(coord.address, evidence(orch, coord.address, { ...said, workerClaim: claim(worker, orch.address, { ...said, success: false }) }))],
    ['a claim for another coordinator, taken to this one', request(coord.address, evidence(orch, coord.address, { ...said, coordinator: rogue.address, workerClaim: claim(worker, orch.address, { ...said, coordinator: rogue.address }) }))],
    ['an old claim wrapped in fresh evidence', request(coord.address, evidence(orch, coord.address, { ...said, workerClaim: claim(worker, orch.address, said, now - EVIDENCE_MAX_AGE_MS - 1) }))],
    ['a claim that is not a result', request(coord.address, evidence(orch, coord.address, { ...said, workerClaim: Buffer.from(encodeFrame(worker, 'heartbeat', { workers: 0 } as never, { ts: now, to: orch.address })).toString('base64') }))]
  ]
  for (const [name, msg] of cases) t.equal(checkVerifyRequest(msg, now).ok, false, name)
})

t.test('a relayed result is the worker\'s only when it states what the worker signed, to the orchestrator relaying it', async t => {
  t.same(checkWorkerClaim(result, orch.address, coord.address), { ok: true })
  t.match(checkWorkerClaim(result, rogue.address, coord.address), { ok: false, reason: 'sent to another orchestrator' }, 'taken by another orchestrator')
  t.match(checkWorkerClaim(result, orch.address, rogue.address), { ok: false, reason: 'for another coordinator' }, 'taken to another coordinator')
  t.match(checkWorkerClaim({ ...result, etag: '"x"' }, orch.address, coord.address), { ok: false, reason: 'etag differs from what the worker said' })
  t.match(checkWorkerClaim({ ...result, durationMs: 2 }, orch.address, coord.address), { ok: false, reason: 'durationMs differs from what the worker said' })
  t.match(checkWorkerClaim(said, orch.address, coord.address), { ok: false, reason: 'none' })
  const nested = { ...said, workerClaim: claim(worker, orch.address, result) }
  t.match(checkWorkerClaim(nested, orch.address, coord.address), { ok: false, reason: 'a relayed copy' }, 'a worker\'s frame carries no claim of its own')
  t.same(checkWorkerClaim(result, orch.address, coord.address, now + EVIDENCE_MAX_AGE_MS), { ok: true }, 'relayed within the skew')
  t.match(checkWorkerClaim(result, orch.address, coord.address, now + EVIDENCE_MAX_AGE_MS + 1), { ok: false, reason: /signed \d+ ms before its relay/ }, 'not after it')
})

t.test('the evidence\'s age is judged against its request: an orchestrator cannot make it expire in the coordinator\'s hands', async t => {
  const at = (ts: number): string => Buffer.from(encodeFrame(orch, 'task_result', result, { ts, to: coord.address })).toString('base64')
  // Signed just inside the frame window, forwarded a minute later: still good evidence.
  const edge = { ...request(coord.address, at(now - MAX_CLOCK_SKEW_MS + 1000)), ts: now + 60_000 }
  t.match(checkVerifyRequest(edge, now + 60_000), { ok: true })
  t.ok(EVIDENCE_MAX_AGE_MS >= MAX_CLOCK_SKEW_MS + 60_000)
  const old = { ...request(coord.address, at(now - EVIDENCE_MAX_AGE_MS - 1)), ts: now }
  t.match(checkVerifyRequest(old, now), { ok: false, blameless: true }, 'older than that: refused, and not the forwarder\'s fault')
  const future = { ...request(coord.address, at(now + 2 * MAX_CLOCK_SKEW_MS)), ts: now }
  t.match(checkVerifyRequest(future, now), { ok: false, blameless: true }, 'signed in the future: refused the same way')
  t.notOk((checkVerifyRequest(request(coord.address, evidence(rogue)), now) as { blameless?: true }).blameless, 'a forgery is not blameless')
})

t.test('a relayed accept is the worker\'s word only when it states what the worker signed, to the orchestrator relaying it', async t => {
  const word = { ...ids, worker: worker.address, coordinator: coord.address }
  const signed = (key = worker, to = orch.address, body: Record<string, unknown> = word, type: 'task_accepted' | 'task_result' = 'task_accepted'): string =>
    Buffer.from(encodeFrame(key, type, body as never, { ts: now, to })).toString('base64')
  const relayed = { ...word, workerAccept: signed() }
  t.same(checkWorkerAccept(relayed, orch.address, coord.address), { ok: true })
  t.ok(relayed.workerAccept.length <= MAX_WORKER_ACCEPT_CHARS, `an honest word (${relayed.workerAccept.length} characters) fits the relay's limit`)
  t.same(checkWorkerAccept({ ...word, workerAccept: Buffer.from(encodeFrame(worker, 'task_accepted', word as never, { ts: now - 3_600_000, to: orch.address })).toString('base64') }, orch.address, coord.address), { ok: true }, 'an hour old: still the word on that attempt')
  t.match(checkWorkerAccept(word, orch.address, coord.address), { ok: false, reason: 'none' })
  t.match(checkWorkerAccept({ ...word, workerAccept: signed(rogue) }, orch.address, coord.address), { ok: false, reason: 'not signed by the named worker' }, 'signed by the orchestrator itself')
  t.match(checkWorkerAccept(relayed, rogue.address, coord.address), { ok: false, reason: 'sent to another orchestrator' })
  t.match(checkWorkerAccept(relayed, orch.address, rogue.address), { ok: false, reason: 'for another coordinator' })
  t.match(checkWorkerAccept({ ...relayed, attemptId: randomUUID() }, orch.address, coord.address), { ok: false, reason: 'attemptId differs from what the worker said' }, 'moved to another attempt')
  t.match(checkWorkerAccept({ ...relayed, taskId: randomUUID() }, orch.address, coord.address), { ok: false, reason: 'taskId differs from what the worker said' })
  t.match(checkWorkerAccept({ ...relayed, workerAccept: signed(worker, orch.address, result, 'task_result') }, orch.address, coord.address), { ok: false, reason: 'a task_result' }, 'a result is not an accept')
  t.match(checkWorkerAccept({ ...word, workerAccept: 'AAAA' }, orch.address, coord.address), { ok: false }, 'not a frame')
})
