// The live OpenAPI document (a real orchestrator's /openapi.json) is lint-clean under
// `@redocly/cli lint` (0 errors), declares what a client generator needs, documents the seed's
// 8 / 7 / 5 JSON response entries on the real /v1 routes, and the committed typed client in
// api/client/schema.ts is exactly what that document generates (no drift).
import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { liveOpenApi, clientSchemaSource, CLIENT_SCHEMA_FILE } from '../../node/openapi.ts'

const REPO = join(import.meta.dirname, '..', '..')
const REDOCLY = join(REPO, 'node_modules', '.bin', 'redocly')
const REDOCLY_CONFIG = join(REPO, 'redocly.yaml')
// Offline: no usage telemetry, no update check.
const OFFLINE_ENV = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_UPDATE_NOTIFIER: '1', CI: 'true' }
const METHODS = ['get', 'put', 'post', 'delete', 'patch']

const spec = await liveOpenApi()
const dir = await mkdtemp(join(tmpdir(), 'bwnet-lint-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))

async function lint (doc: unknown): Promise<{ errors: Array<{ ruleId: string, pointer: string }>, warnings: Array<{ ruleId: string, pointer: string }> }> {
  const file = join(dir, `spec-${Math.random().toString(36).slice(2)}.json`)
  await writeFile(file, JSON.stringify(doc))
  const out = await promisify(execFile)(REDOCLY, ['lint', file, '--format=json', `--config=${REDOCLY_CONFIG}`], { env: OFFLINE_ENV, cwd: dir, maxBuffer: 64 * 1024 * 1024 })
    .catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' })) // exits 1 when there are errors
  const report = JSON.parse(out.stdout) as { problems: Array<{ severity: string, ruleId: string, location: Array<{ pointer: string }> }> }
  return {
    errors: report.problems.filter(p => p.severity === 'error').map(p => ({ ruleId: p.ruleId, pointer: p.location[0]?.pointer ?? '' })),
    warnings: report.problems.filter(p => p.severity === 'warn').map(p => ({ ruleId: p.ruleId, pointer: p.location[0]?.pointer ?? '' }))
  }
}

const operations = (): Array<{ path: string, method: string, op: any }> => Object.entries(spec.paths as Record<string, any>)
  .flatMap(([path, item]) => METHODS.filter(m => item[m] !== undefined).map(method => ({ path, method, op: item[method] })))

t.test('@redocly/cli lint: 0 errors and 0 warnings on the live document', async t => {
  const { errors, warnings } = await lint(spec)
  t.same(errors, [], 'no lint errors')
  t.same(warnings, [], 'no lint warnings (rules switched off in redocly.yaml say why)')
})

t.test('the lint does report warnings: an unused component', async t => {
  const broken = structuredClone(spec)
  broken.components.schemas.NeverReferenced = { type: 'string' }
  const { warnings } = await lint(broken)
  t.same(warnings.map(w => w.ruleId), ['no-unused-components'])
})

t.test('the lint does fail a broken document', async t => {
  const broken = structuredClone(spec)
  delete broken.servers
  delete broken.paths['/v1/telemetry/network'].get.security
  const { errors } = await lint(broken)
  t.same(new Set(errors.map(e => e.ruleId)), new Set(['no-empty-servers', 'security-defined']))
})

t.test('what a client generator needs: operationIds, servers, security, bodies, named schemas', async t => {
  const ops = operations()
  t.ok(ops.length >= 40, `${ops.length} operations`)
  const ids = ops.map(o => o.op.operationId)
  t.ok(ids.every(id => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id)), 'every operation has an operationId')
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique')
  t.ok(ops.every(o => Array.isArray(o.op.security)), 'security declared on every operation')
  t.same(spec.paths['/chain/sales'].post.security, [{ bearerAuth: [] }, { apiKey: [] }], 'the guarded dev-chain route declares its key')
  t.same(spec.paths['/v1/audit/sell-allowance/{hotkey}'].get.security, [], 'the free audit route is public')
  t.ok(spec.servers.length > 0)
  t.match(spec.paths['/transfers/{id}/chunks'].post.requestBody, { required: true, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } })
  const problem = spec.components.schemas.Problem
  for (const member of ['errors', 'balance', 'price', 'missing_chunks', 'missing_count']) t.ok(member in problem.properties, `Problem declares ${member}`)
  for (const name of ['NetworkSummaryEnvelope', 'TaskEvidenceEnvelopeList', 'EpochSummaryEnvelopeList', 'SellAllowancePaidEnvelope', 'SellAllowanceFreeEnvelope', 'TransferRecord', 'OrchestratorAudit', 'WorkerAudit']) {
    t.ok(spec.components.schemas[name] !== undefined, `component ${name}`)
  }
  t.same(spec.paths['/v1/telemetry/network'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/NetworkSummaryEnvelope' })
})

const TELEMETRY = ['/v1/telemetry/network', '/v1/telemetry/realtime/network', '/v1/telemetry/network/history', '/v1/telemetry/realtime/network/history',
  '/v1/telemetry/tasks', '/v1/telemetry/realtime/tasks', '/v1/telemetry/epochs', '/v1/telemetry/realtime/epochs']
const SELL = '/v1/telemetry/sell-allowance/{hotkey}'
const FREE = '/v1/audit/sell-allowance/{hotkey}'
const DASHBOARD = ['/api/audit/orchestrator/{orchestratorId}/transfers/{transferId}', '/api/audit/worker/{workerId}/transfers/{transferId}']

t.test('the real /v1 routes list 8 / 7 / 5 JSON response entries, and 304', async t => {
  const json = (path: string) => Object.entries(spec.paths[path].get.responses as Record<string, any>).filter(([, r]) => r.content?.['application/json'] !== undefined).map(([code]) => code).sort()
  for (const path of TELEMETRY) t.same(json(path), ['200', '400', '401', '402', '403', '404', '429', '500'], path)
  t.same(json(SELL), ['200', '400', '401', '402', '403', '404', '429'], SELL)
  t.same(json(FREE), ['200', '400', '404', '429', '500'], FREE)
  for (const path of [...TELEMETRY, SELL, FREE, ...DASHBOARD]) t.ok(spec.paths[path].get.responses['304'] !== undefined, `${path} documents 304`)
})

t.test('If-None-Match is declared on every telemetry and audit route', async t => {
  for (const path of [...TELEMETRY, SELL, FREE, ...DASHBOARD]) {
    const header = (spec.paths[path].get.parameters as any[]).find(p => p.in === 'header' && p.name.toLowerCase() === 'if-none-match')
    t.ok(header !== undefined, path)
    t.notOk(header?.required, 'optional')
  }
})

t.test('the committed client is what the live document generates', async t => {
  const committed = await readFile(CLIENT_SCHEMA_FILE, 'utf8')
  const generated = await clientSchemaSource(spec)
  t.ok(committed === generated, 'api/client/schema.ts is current; run `npm run client:generate` after changing a route schema')
  const drifted = structuredClone(spec)
  drifted.paths['/v1/telemetry/network'].get.summary = 'changed'
  t.not(await clientSchemaSource(drifted), committed, 'a changed document changes the client (the check can fail)')
})
