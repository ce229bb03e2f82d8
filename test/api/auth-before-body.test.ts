// Every authenticated route checks the key before it reads or validates anything the caller sent: with
// no key, a bad body, bad params or a bad query answer 401, never 400. The routes are taken from the
// app's own OpenAPI document (every operation that declares `security`), so a route added later is
// covered without touching this file.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { buildApp } from '../../api/app.ts'
import chainRoutes from '../../api/routes/chain.ts'
import { TelemetryProjection } from '../../actors/telemetry/index.ts'
import { storeAuditReader } from '../../actors/telemetry/audit.ts'
import { testDeps } from '../helpers/api.ts'
import type { ApiDeps } from '../../api/deps.ts'

const env = testDeps()
let reached = 0
/** A service whose every method records that a handler ran (none may, without a key). */
const untouchable = <T>(extra: Record<string, unknown> = {}): T => new Proxy(extra, {
  get: (target, name) => name in target ? target[name as string] : () => { reached++; throw new Error(`reached ${String(name)}`) }
}) as T
env.deps.transfers = untouchable<NonNullable<ApiDeps['transfers']>>({ maxChunkBytes: 1024 })
env.deps.destinations = untouchable<NonNullable<ApiDeps['destinations']>>()
env.deps.transferEvents = untouchable<NonNullable<ApiDeps['transferEvents']>>()
env.deps.telemetry = { projection: new TelemetryProjection({ epochAt: () => 0 }), clock: env.clock, cursorKey: randomBytes(32), epochs: null, sellAllowance: null }
env.deps.audit = storeAuditReader({ store: env.store })
const app = await buildApp(env.deps)
const chain = untouchable<never>()
await app.register(chainRoutes, { chain, dev: true, enroll: async () => { reached++ }, writeAuth: { roles: ['admin'], operator: true } })
await app.ready()
t.teardown(() => app.close())

const spec = (app as unknown as { swagger (): { paths: Record<string, Record<string, { security?: unknown[] }>> } }).swagger()
const guarded: Array<{ method: string, path: string }> = []
for (const [path, ops] of Object.entries(spec.paths)) {
  for (const [method, op] of Object.entries(ops)) if (Array.isArray(op.security) && op.security.length > 0) guarded.push({ method: method.toUpperCase(), path })
}

t.test('the document lists the guarded writes this test is about', async t => {
  for (const want of ['POST /chain/registrations', 'POST /chain/sales', 'POST /transfers/create', 'POST /transfers/{id}/chunks', 'POST /destinations', 'POST /admin/organizations', 'POST /admin/organizations/{organizationId}/keys']) {
    t.ok(guarded.some(g => `${g.method} ${g.path}` === want), `${want} declares security`)
  }
  t.ok(guarded.length >= 20, `${guarded.length} guarded operations`)
})

const BAD_BODIES = ['{"hotkey":"nonsense","role":"nobody","extra":true}', 'not json at all', '[]']

t.test('no key and a bad request: 401 on every guarded operation, the handler never runs', async t => {
  for (const { method, path } of guarded) {
    // Params filled with values no schema accepts, and a query no schema accepts.
    const url = path.replace(/\{[^}]+\}/g, '%00bad') + '?limit=-5&unknown=1'
    const bodies = method === 'GET' || method === 'DELETE' || method === 'HEAD' ? [undefined] : BAD_BODIES
    for (const payload of bodies) {
      const res = await app.inject({ method: method as 'GET', url, ...(payload !== undefined ? { payload, headers: { 'content-type': 'application/json' } } : {}) })
      t.equal(res.statusCode, 401, `${method} ${path} ${payload ?? ''}`)
      // A HEAD answer has no body: the problem's code is the GET's (checked on the GET of the same path).
      if (method !== 'HEAD') t.equal(res.json().code, 'BWN_ERR_KEY_MISSING', `${method} ${path}: the missing key is what is reported`)
    }
  }
  t.equal(reached, 0, 'no handler or service was reached')
})

t.test('a route that documents a key without declaring config.auth is refused at registration', async t => {
  const other = await buildApp(testDeps().deps)
  t.teardown(() => other.close())
  t.throws(() => other.post('/sneaky', { schema: { security: [{ apiKey: [] }], body: { type: 'object' } }, preHandler: async () => {} }, async () => ({})), /declares security without config\.auth/)
})
