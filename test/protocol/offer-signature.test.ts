// An offer carries its coordinator's signature over its terms: the orchestrator relaying it can change
// nothing a worker acts on (source, hash, target, times, ids) without the worker noticing; only the
// routing advice (excludeWorkers) is its own to change.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { cryptoReady, newHotkey, signOffer, offerSigned, encodeFrame, decodeFrame, MAX_CHUNK_BODY_BYTES, type TaskOffer } from '../../protocol/index.ts'

await cryptoReady()
const coordinator = newHotkey(); const orchestrator = newHotkey()
const terms: TaskOffer = {
  taskId: randomUUID(), attemptId: randomUUID(), transferId: randomUUID(), chunkIndex: 3, length: 1024, sha256: 'ab'.repeat(32),
  source: { url: 'http://127.0.0.1:9/data/x?sig=1', path: '/data/x?sig=1', coordinator: coordinator.address },
  target: { method: 'PUT', url: 'http://127.0.0.1:9/sink/u/chunks/3?sig=2', headers: { 'x-b': '2', 'x-a': '1' }, expiresAt: 1000 },
  expiresAt: 1000, excludeWorkers: []
}
const offer: TaskOffer = { ...terms, signature: signOffer(coordinator, terms) }

t.test('signed by its coordinator: taken; the routing advice may change on the way', async t => {
  t.ok(offerSigned(offer))
  t.ok(offerSigned({ ...offer, excludeWorkers: [orchestrator.address] }))
  t.ok(offerSigned({ ...offer, target: { ...offer.target, headers: { 'x-a': '1', 'x-b': '2' } } }), 'header order is not a change')
})

t.test('any change to its terms, or another signer, is refused', async t => {
  const changed: Array<[string, TaskOffer]> = [
    ['unsigned', { ...terms }],
    ['signed by the orchestrator', { ...terms, signature: signOffer(orchestrator, terms) }],
    ['signed by the orchestrator, naming itself the coordinator', { ...terms, source: { ...terms.source, coordinator: orchestrator.address }, signature: signOffer(coordinator, terms) }],
    ['another chunk', { ...offer, chunkIndex: 4 }],
    ['another hash', { ...offer, sha256: 'cd'.repeat(32) }],
    ['another length', { ...offer, length: 1023 }],
    ['another attempt', { ...offer, attemptId: randomUUID() }],
    ['another source', { ...offer, source: { ...offer.source, url: 'http://127.0.0.1:9/data/y?sig=1' } }],
    ['another target', { ...offer, target: { ...offer.target, url: 'http://127.0.0.1:9/sink/u/chunks/4?sig=9' } }],
    ['another target header', { ...offer, target: { ...offer.target, headers: { 'x-a': '1', 'x-b': '3' } } }],
    ['a later expiry', { ...offer, expiresAt: 2000 }],
    ['a garbage signature', { ...offer, signature: '00'.repeat(64) }],
    // Fields that would run together in a plain text join: a line break inside one moves the rest.
    ['a field boundary moved', { ...offer, source: { ...offer.source, url: `${offer.source.url}\nPUT` } }]
  ]
  for (const [name, o] of changed) t.notOk(offerSigned(o), name)
})

t.test('an offer over the largest chunk a node moves is refused where it is decoded, signed or not', async t => {
  const now = Date.now()
  const batchId = randomUUID()
  for (const length of [MAX_CHUNK_BODY_BYTES + 1, 50 * 1024 ** 3]) {
    const huge = { ...terms, length }
    const signed = { ...huge, signature: signOffer(coordinator, huge) }
    const res = decodeFrame(encodeFrame(coordinator, 'task_offer', { batchId, offer: signed }, { ts: now }), { now })
    t.equal(res.ok ? 'taken' : res.reason, 'invalid_body', `task_offer of ${length} bytes`)
    const batch = decodeFrame(encodeFrame(coordinator, 'task_offer_batch', { batchId, transferId: terms.transferId, waveKind: 'initial', offers: [signed] }, { ts: now }), { now })
    t.equal(batch.ok ? 'taken' : batch.reason, 'invalid_body', `task_offer_batch with one of ${length} bytes`)
  }
  const largest = { ...terms, length: MAX_CHUNK_BODY_BYTES }
  t.ok(decodeFrame(encodeFrame(coordinator, 'task_offer', { batchId, offer: { ...largest, signature: signOffer(coordinator, largest) } }, { ts: now }), { now }).ok, 'the largest chunk is taken')
})
