// The registry's drivers. The node's own sink listens on a port picked at each start, so its built-in
// row holds the last run's URL until ensureDefault stores this run's. Transfers recovered on start can
// ask for their driver before the API listens: that driver must wait for the new URL, not be built on
// the old one (a kill -9 restart then failed the transfer with destination_unavailable).
import t from 'tap'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../../actors/store.ts'
import { cryptoReady, newHotkey } from '../../../protocol/index.ts'
import { DestinationRegistry } from '../../../node/transfers/destinations.ts'

await cryptoReady()
const clock = { now: () => Date.parse('2030-01-01T00:00:00Z') }
const UPLOAD = { kind: 'node' as const, uploadId: 'a'.repeat(64), filename: 'f.bin', totalSize: 10, chunkSize: 10, totalChunks: 1 }
const CHUNK = { index: 0, offset: 0, length: 10, attemptSlot: 1 }

t.test("the built-in sink's driver waits for this run's URL", async t => {
  const store = new LevelStore(new MemoryLevel() as never)
  const lastRun = new DestinationRegistry(store, newHotkey(), clock as never)
  const id = (await lastRun.ensureDefault('http://127.0.0.1:1111')).id

  // A restart: a new registry on the same store, the API not listening yet.
  const registry = new DestinationRegistry(store, newHotkey(), clock as never)
  let built = false
  const driver = registry.driverFor(id).then(d => { built = true; return d })
  for (let turn = 0; turn < 20; turn++) await new Promise(resolve => setImmediate(resolve)) // the store's reads are done by then
  t.notOk(built, 'no driver before the URL is known')

  await registry.ensureDefault('http://127.0.0.1:2222')
  const target = await (await driver).target(UPLOAD, CHUNK as never, clock.now() + 60_000)
  t.match(target.url, /^http:\/\/127\.0\.0\.1:2222\/sink\/uploads\//, "built on this run's URL")
  t.equal(await registry.driverFor(id), await driver, 'and kept')
})

t.test('a first start: the driver is there once the row is created', async t => {
  const registry = new DestinationRegistry(new LevelStore(new MemoryLevel() as never), newHotkey(), clock as never)
  const id = (await registry.ensureDefault('http://127.0.0.1:3333')).id
  const target = await (await registry.driverFor(id)).target(UPLOAD, CHUNK as never, clock.now() + 60_000)
  t.match(target.url, /^http:\/\/127\.0\.0\.1:3333\//)
})

t.test('an s3 destination: concurrent first uses, while the S3 driver loads, get one driver', async t => {
  const store = new LevelStore(new MemoryLevel() as never)
  const row = { id: 's3-1', name: 'bucket', kind: 's3', builtin: false, org_id: 'org', created_at: new Date(clock.now()).toISOString(), config: { endpoint: 'http://127.0.0.1:9', region: 'us-east-1', bucket: 'b', accessKeyId: 'k', secretAccessKey: 's' } }
  await store.table('destinations').put(row.id, row)
  const registry = new DestinationRegistry(store, newHotkey(), clock as never)
  const drivers = await Promise.all([registry.driverFor(row.id), registry.driverFor(row.id), registry.driverFor(row.id)])
  t.equal(drivers[1], drivers[0])
  t.equal(drivers[2], drivers[0], 'one S3 client, not one per caller')
  t.equal(await registry.driverFor(row.id), drivers[0], 'and kept')
})

t.test('only the built-in sink\'s driver says its bytes are the workers\' alone; a tenant\'s `node` destination does not', async t => {
  const store = new LevelStore(new MemoryLevel() as never)
  const registry = new DestinationRegistry(store, newHotkey(), clock as never)
  const own = (await registry.ensureDefault('http://127.0.0.1:4444')).id
  // A tenant's `node` destination, pointing wherever it likes (here, as it happens, at the same URL).
  const row = { id: 'tenant-node', name: 'mine', kind: 'node', builtin: false, org_id: 'org', created_at: new Date(clock.now()).toISOString(), config: { baseUrl: 'http://127.0.0.1:4444' } }
  await store.table('destinations').put(row.id, row)
  t.equal((await registry.driverFor(own)).attributable, true, 'the node\'s own sink: a failed check strikes, a mismatch penalizes')
  t.equal((await registry.driverFor(row.id)).attributable, false, 'a tenant\'s: neither')
})
