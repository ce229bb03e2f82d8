// The epoch listings pin their version on every request, before the rate limit and the credit check
// (a matching If-None-Match is 304 whatever the balance or the rate: seed §4.4 rule 1). The pin reads
// the source's versions once per generation, not once per request: requests refused with 402 or 429
// cost no listing of the retained set. A publication (a new generation) is seen at once.
import t from 'tap'
import { telemetryApp, epochVersion, orgConsoleKey, MemoryEpochSource } from '../../helpers/telemetry.ts'
import type { EpochSnapshot } from '../../../actors/telemetry/index.ts'

/** A source that counts its listings and has a generation, bumped by `publish`. */
class CountingSource extends MemoryEpochSource {
  lists = 0
  #generation = 0
  override async list (): Promise<EpochSnapshot[]> { this.lists++; return await super.list() }
  generation (): number { return this.#generation }
  publish (v: EpochSnapshot): void { this.versions.push(v); this.#generation++ }
}

const source = new CountingSource()
const T = await telemetryApp({ epochs: source })
t.teardown(() => T.app.close())
const now = (): number => T.env.clock.now()
source.publish(epochVersion(20, 1, null, now() - 2000))
source.publish(epochVersion(21, 1, null, now() - 1000))
const URLS = ['/v1/telemetry/epochs', '/v1/telemetry/realtime/epochs']

t.test('refused requests (402, 429) list nothing; a held ETag still gets 304 with an empty balance', async t => {
  const etags = new Map<string, string>()
  for (const url of URLS) {
    const res = await T.get(url)
    t.equal(res.statusCode, 200, url)
    etags.set(url, res.headers.etag as string)
  }
  const { orgId: brokeId, key: brokeKey } = await orgConsoleKey(T, 'broke')
  const { key: freeKey } = await orgConsoleKey(T, 'busy', { plan: 'free', credits: 1_000_000 })
  // The busy key spends its plan's minute first.
  let limited = 0
  for (let i = 0; i < 70; i++) if ((await T.get(URLS[i % 2]!, freeKey)).statusCode === 429) limited++
  t.ok(limited > 0, 'the Free plan limit is reached')

  const before = source.lists
  const statuses = new Map<number, number>()
  for (let i = 0; i < 100; i++) {
    for (const url of URLS) {
      for (const [key, headers] of [[brokeKey, {}], [brokeKey, { 'if-none-match': '"stale"' }], [freeKey, {}], [freeKey, { 'if-none-match': '"stale"' }]] as const) {
        const res = await T.get(url, key, headers)
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
      }
    }
  }
  t.same([...statuses].sort(), [[402, 400], [429, 400]], 'every request refused: 402 for the empty balance, 429 over the plan')
  t.equal(source.lists - before, 0, '800 refused requests: no listing of the epoch versions')

  for (const url of URLS) {
    const hit = await T.get(url, brokeKey, { 'if-none-match': etags.get(url)! })
    t.equal(hit.statusCode, 304, `${url}: 304 on the held ETag with an empty balance`)
  }
  t.same(await T.env.accounts.ledger(brokeId), [], 'nothing charged')
  t.equal(source.lists - before, 0, 'nor for the 304s')
})

t.test('a publication is read at once, and a new pin', async t => {
  const first = await T.get('/v1/telemetry/epochs')
  const lists = source.lists
  source.publish(epochVersion(22, 1, null, now()))
  const hit = await T.get('/v1/telemetry/epochs', undefined, { 'if-none-match': first.headers.etag as string })
  t.equal(hit.statusCode, 200, 'the old ETag no longer matches')
  t.same(hit.json().items.map((e: EpochSnapshot) => e.data.epoch), [20, 21, 22])
  t.equal(source.lists - lists, 1, 'one listing for the new generation')
  const rt = await T.get('/v1/telemetry/realtime/epochs')
  t.same(rt.json().items.map((e: EpochSnapshot) => e.data.epoch), [20, 21, 22])
  t.equal(source.lists - lists, 1, 'and no more while nothing is published')
})
