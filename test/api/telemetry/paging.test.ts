// Acceptance 2 and 3: walking several hundred items with limit 7 while new events arrive returns every
// item of the pinned set exactly once; a cursor with other filters is refused; a realtime snapshotId
// answers for 10 minutes after it is superseded (virtual clock) and not after.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { telemetryApp, settled, ORCH, WORKER, WORKER_B, epochVersion } from '../../helpers/telemetry.ts'
import { LIVE_VERSION_TTL_MS } from '../../../actors/telemetry/index.ts'

const T = await telemetryApp()
t.teardown(() => T.app.close())
const { projection, env } = T
const now = (): number => env.clock.now()

let index = 0
function feed (transferId: string, n: number, worker = WORKER): void {
  for (let i = 0; i < n; i++) {
    const at = now()
    projection.apply({ type: 'result', ...settled({ transferId, index: index++, worker, offeredAtMs: at - 500, receivedAtMs: at }) }, at)
    env.clock.advance(10)
  }
}
const finish = (id: string): void => projection.apply({ type: 'transfer', id, status: 'completed', completedAtMs: now() }, now())

async function walk (url: string, between: () => void): Promise<{ ids: string[], pages: number }> {
  const ids: string[] = []
  let cursor = ''
  let pages = 0
  for (;;) {
    const sep = url.includes('?') ? '&' : '?'
    const res = await T.get(`${url}${sep}limit=7${cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`}`)
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`)
    const body = res.json()
    t.ok(body.items.length <= 7)
    for (const item of body.items) ids.push(item.data.attemptId ?? item.snapshotId)
    pages++
    between()
    cursor = body.nextCursor
    if (cursor === '') break
    if (pages > 500) throw new Error('walk does not end')
  }
  return { ids, pages }
}

t.test('history tasks: 350 published items, limit 7, new transfers finishing between pages', async t => {
  const first = randomUUID()
  feed(first, 350)
  finish(first)
  const expected = projection.publishedTasks().map(i => i.env.data.attemptId)
  t.equal(expected.length, 350)
  const { ids, pages } = await walk('/v1/telemetry/tasks', () => { const id = randomUUID(); feed(id, 3); finish(id) })
  t.equal(pages, 50)
  t.equal(new Set(ids).size, ids.length, 'no duplicates')
  t.same(ids, expected, 'every item of the pinned set, in order, no gaps')
  t.ok(projection.publishedTasks().length > 350, 'new items did arrive meanwhile')
})

t.test('realtime tasks: pinned live version, transfers in progress, items changing state between pages', async t => {
  const transferId = randomUUID()
  feed(transferId, 300, WORKER_B)
  const pinned = projection.current(now())
  const res = await T.get(`/v1/telemetry/realtime/tasks?participantId=${WORKER_B}&limit=100`)
  t.equal(res.json().items.length, 100)
  const expected: string[] = []
  for (const page of [0, 1, 2, 3]) expected.push(...projection.liveTasks(pinned.seq, page === 0 ? 0 : -1, { participantId: WORKER_B }, 1000).items.map(e => e.data.attemptId).slice(0, page === 0 ? 1000 : 0))
  const { ids } = await walk(`/v1/telemetry/realtime/tasks?participantId=${WORKER_B}`, () => {
    feed(transferId, 2, WORKER_B) // in progress: more evidence while walking
  })
  t.equal(new Set(ids).size, ids.length, 'no duplicates')
  t.same(ids, expected, 'exactly the set of the version pinned at the first page')
})

t.test('realtime network history and epochs page the same way', async t => {
  // Several live versions, each cut by a read after a change.
  for (let i = 0; i < 30; i++) { feed(randomUUID(), 1); projection.current(now()) }
  const versions = projection.liveVersions(now()).map(v => v.env.snapshotId)
  const { ids } = await walk('/v1/telemetry/realtime/network/history', () => { feed(randomUUID(), 1); projection.current(now()) })
  t.same(ids, versions)

  let prev = null
  for (let e = 1; e <= 40; e++) { prev = epochVersion(e, 1, null, now()); T.epochs.versions.push(prev); env.clock.advance(1000) }
  const expected = T.epochs.versions.map(v => v.snapshotId)
  const walked = await walk('/v1/telemetry/epochs', () => {
    // A correction of an early epoch and a new epoch land while walking.
    const e = T.epochs.versions.length
    T.epochs.versions.push(epochVersion(3, e, T.epochs.versions[2]!, now(), [10, 20]), epochVersion(100 + e, 1, null, now()))
    env.clock.advance(1000)
  })
  t.same(walked.ids, expected)
})

t.test('a cursor is refused with other filters, on another route, or altered', async t => {
  const first = await T.get(`/v1/telemetry/tasks?limit=7&participantId=${ORCH}`)
  const cursor = first.json().nextCursor as string
  t.not(cursor, '')
  t.ok(cursor.length <= 1024)
  const same = await T.get(`/v1/telemetry/tasks?limit=3&participantId=${ORCH}&cursor=${encodeURIComponent(cursor)}`)
  t.equal(same.statusCode, 200, 'limit may change between pages')
  for (const url of [
    `/v1/telemetry/tasks?limit=7&participantId=${WORKER}&cursor=${encodeURIComponent(cursor)}`,
    `/v1/telemetry/tasks?limit=7&cursor=${encodeURIComponent(cursor)}`,
    `/v1/telemetry/tasks?limit=7&participantId=${ORCH}&since=2020-01-01T00:00:00Z&cursor=${encodeURIComponent(cursor)}`
  ]) {
    const res = await T.get(url)
    t.equal(res.statusCode, 400, url)
    t.equal(res.json().code, 'BWN_ERR_CURSOR_MISMATCH')
  }
  const other = await T.get(`/v1/telemetry/realtime/tasks?participantId=${ORCH}&cursor=${encodeURIComponent(cursor)}`)
  t.equal(other.json().code, 'BWN_ERR_CURSOR_MISMATCH')
  const [body, mac] = cursor.split('.')
  const state = JSON.parse(Buffer.from(body!, 'base64url').toString())
  state.p = 0
  const forged = `${Buffer.from(JSON.stringify(state)).toString('base64url')}.${mac}`
  const res = await T.get(`/v1/telemetry/tasks?participantId=${ORCH}&cursor=${encodeURIComponent(forged)}`)
  t.equal(res.statusCode, 400)
  t.equal(res.json().code, 'BWN_ERR_CURSOR_INVALID')
})

t.test('a superseded realtime version answers for 10 minutes, then is gone', async t => {
  const first = (await T.get('/v1/telemetry/realtime/network')).json()
  feed(randomUUID(), 1)
  const second = (await T.get('/v1/telemetry/realtime/network')).json()
  t.not(second.snapshotId, first.snapshotId, 'a change cuts a new version')
  const supersededAt = now()
  const pinned = (await T.get(`/v1/telemetry/realtime/network?snapshotId=${first.snapshotId}`))
  t.equal(pinned.statusCode, 200)
  t.same(pinned.json(), first, 'the pinned version answers with its own content')
  // Lists pinned to it too.
  t.equal((await T.get(`/v1/telemetry/realtime/tasks?snapshotId=${first.snapshotId}&limit=1`)).statusCode, 200)
  env.clock.advance(LIVE_VERSION_TTL_MS - 1 - (now() - supersededAt))
  t.equal((await T.get(`/v1/telemetry/realtime/network?snapshotId=${first.snapshotId}`)).statusCode, 200, 'still readable 1 ms before 10 min')
  env.clock.advance(1)
  const gone = await T.get(`/v1/telemetry/realtime/network?snapshotId=${first.snapshotId}`)
  t.equal(gone.statusCode, 404, 'gone at 10 min')
  t.equal(gone.json().code, 'BWN_ERR_SNAPSHOT_NOT_FOUND')
  t.equal((await T.get(`/v1/telemetry/realtime/tasks?snapshotId=${first.snapshotId}`)).statusCode, 404)
  t.equal((await T.get(`/v1/telemetry/realtime/network?snapshotId=${randomUUID()}`)).statusCode, 404)
})

t.test('live versions re-cut by age alone keep distinct list positions', async t => {
  const before = projection.liveVersions(now()).length
  env.clock.advance(61_000)
  projection.current(now())
  env.clock.advance(61_000)
  projection.current(now())
  const all = projection.liveVersions(now())
  t.equal(all.length, before + 2)
  t.same(all.map(v => v.seq), [...all.map(v => v.seq)].sort((a, b) => a - b))
  t.equal(new Set(all.map(v => v.seq)).size, all.length)
  const listed = (await T.get('/v1/telemetry/realtime/network/history?limit=100')).json().items.map((i: any) => i.snapshotId)
  t.same(listed, all.map(v => v.env.snapshotId))
})
