// A validator reads back only for the coordinator of a delivery: the orchestrator's own signed result,
// addressed to that coordinator and describing the same attempt, worker and hash, must come with it.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { cryptoReady, newHotkey, encodeFrame, type Envelope } from '../../protocol/index.ts'
import { checkVerifyRequest } from '../../node/verify-evidence.ts'

await cryptoReady()
const orch = newHotkey(); const coord = newHotkey(); const worker = newHotkey(); const rogue = newHotkey()
const now = Date.now()
const ids = { transferId: randomUUID(), taskId: randomUUID(), attemptId: randomUUID() }
const SHA = 'cd'.repeat(32)
const result = { ...ids, worker: worker.address, success: true, bytes: 10, durationMs: 1, sha256: SHA, etag: null, error: null, via: 'http' as const }
const evidence = (key = orch, to = coord.address, body = result): string => Buffer.from(encodeFrame(key, 'task_result', body, { ts: now, to })).toString('base64')
const request = (from: string, ev: string | undefined, over: Record<string, unknown> = {}): Envelope => ({
  v: 2, type: 'verify_request', from, to: null, id: 'x', ts: now,
  body: { ...ids, chunkIndex: 0, orchestrator: orch.address, worker: worker.address, length: 10, sha256: SHA, trustedDurationMs: 1, read: { method: 'GET', url: 'http://127.0.0.1:1/r', headers: {}, expiresAt: now + 1000 }, ...(ev !== undefined ? { evidence: ev } : {}), ...over } as never
})

t.test('the coordinator with the orchestrator\'s signed result is believed', async t => {
  t.same(checkVerifyRequest(request(coord.address, evidence()), now), { ok: true })
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
    ['not a frame', request(coord.address, Buffer.from('nope').toString('base64'))]
  ]
  for (const [name, msg] of cases) t.equal(checkVerifyRequest(msg, now).ok, false, name)
  t.equal(checkVerifyRequest(request(coord.address, evidence()), now + 10 * 60_000).ok, false, 'stale evidence')
})
