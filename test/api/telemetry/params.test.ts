// Acceptance 1: every parameter of every telemetry and audit route at its bound, just inside it and
// just outside it. Outside is a 400 problem+json (BWN_ERR_VALIDATION); at or inside, validation passes.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { telemetryApp, ORCH, WORKER } from '../../helpers/telemetry.ts'
import { storeAuditReader } from '../../../actors/telemetry/audit.ts'
import { testDeps } from '../../helpers/api.ts'

const audit = storeAuditReader({ store: testDeps().store })
const T = await telemetryApp({ audit })
t.teardown(() => T.app.close())

const LISTS = ['/v1/telemetry/network/history', '/v1/telemetry/realtime/network/history', '/v1/telemetry/tasks', '/v1/telemetry/realtime/tasks', '/v1/telemetry/epochs', '/v1/telemetry/realtime/epochs']
const TASK_LISTS = ['/v1/telemetry/tasks', '/v1/telemetry/realtime/tasks']
const SINGLES = ['/v1/telemetry/network', '/v1/telemetry/realtime/network']
const HOTKEY_ROUTES = ['/v1/telemetry/sell-allowance/', '/v1/audit/sell-allowance/']
const AUDIT_ROUTES = [`/api/audit/orchestrator/${ORCH}/transfers/`, `/api/audit/worker/${WORKER}/transfers/`]
const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
const hotkeyOf = (n: number): string => Array.from({ length: n }, (_, i) => B58[(i * 7) % B58.length]).join('')

interface Case { url: string, ok: boolean, key?: string, /** when ok: the status expected (default 200) */ status?: number }
const cases: Case[] = []
const q = (base: string, query: string): string => `${base}${base.includes('?') ? '&' : '?'}${query}`

for (const route of LISTS) {
  for (const [v, ok] of [['0', false], ['1', true], ['2', true], ['99', true], ['100', true], ['101', false], ['-1', false], ['1.5', false], ['x', false]] as const) cases.push({ url: q(route, `limit=${v}`), ok })
  cases.push({ url: q(route, `cursor=${'A'.repeat(1025)}`), ok: false })
  // At and inside the length bound the cursor passes validation and is then refused as not ours.
  cases.push({ url: q(route, `cursor=${'A'.repeat(1024)}`), ok: true, status: 400 })
  cases.push({ url: q(route, `cursor=${'A'.repeat(1023)}`), ok: true, status: 400 })
  for (const [v, ok] of [['2030-01-01T00:00:00Z', true], ['2030-01-01T00:00:00.123+02:00', true], ['2030-01-01', false], ['2030-01-01T00:00:00', false], ['2030-13-01T00:00:00Z', false], ['yesterday', false]] as const) {
    cases.push({ url: q(route, `since=${encodeURIComponent(v)}`), ok }, { url: q(route, `until=${encodeURIComponent(v)}`), ok })
  }
  const realtimeTasks = route === '/v1/telemetry/realtime/tasks'
  // On realtime/tasks a snapshotId pins a live version: an unknown one is a 404, not a 400.
  cases.push({ url: q(route, `snapshotId=${randomUUID()}`), ok: true, status: realtimeTasks ? 404 : 200 })
  for (const v of ['not-a-uuid', randomUUID().replaceAll('-', ''), randomUUID() + 'a']) cases.push({ url: q(route, `snapshotId=${v}`), ok: false })
}
for (const route of TASK_LISTS) {
  cases.push({ url: q(route, `transferId=${randomUUID()}`), ok: true }, { url: q(route, 'transferId=123'), ok: false }, { url: q(route, `transferId=${randomUUID().slice(0, 35)}`), ok: false })
  for (const [v, ok] of [['a', true], ['A'.repeat(128), true], ['A'.repeat(127), true], ['A'.repeat(129), false], ['', false], ['a.b', false], ['a b', false], ['a_b-C9', true]] as const) cases.push({ url: q(route, `participantId=${encodeURIComponent(v)}`), ok })
}
for (const route of SINGLES) {
  cases.push({ url: route, ok: true }, { url: q(route, `snapshotId=${randomUUID()}`), ok: true, status: 404 }, { url: q(route, 'snapshotId=abc'), ok: false }, { url: q(route, `snapshotId=${randomUUID()}0`), ok: false })
}
for (const route of HOTKEY_ROUTES) {
  for (const [n, ok] of [[45, false], [46, true], [47, true], [48, true], [49, false]] as const) cases.push({ url: route + hotkeyOf(n), ok, status: 404 })
  cases.push({ url: route + hotkeyOf(47).slice(0, 46) + '0', ok: false }, { url: route + hotkeyOf(47).slice(0, 46) + 'l', ok: false })
  for (const [v, ok] of [['0', true], ['1', true], ['9999999999', true], ['999999999', true], ['99999999999', false], ['', false], ['-1', false], ['1e3', false], ['a', false]] as const) cases.push({ url: `${route}${ORCH}?epoch=${v}`, ok, status: 404 })
}
for (const route of AUDIT_ROUTES) {
  const base = route + randomUUID()
  for (const [v, ok] of [['0', false], ['1', true], ['1000', true], ['4999', true], ['5000', true], ['5001', false], ['x', false]] as const) cases.push({ url: `${base}?limit=${v}`, ok, key: T.keys.admin, status: 404 })
  for (const [v, ok] of [['-1', false], ['0', true], ['1', true], ['x', false]] as const) cases.push({ url: `${base}?offset=${v}`, ok, key: T.keys.admin, status: 404 })
  cases.push({ url: route + 'not-a-uuid', ok: false, key: T.keys.admin }, { url: route + randomUUID().slice(0, 35), ok: false, key: T.keys.admin })
}
cases.push(
  { url: `/api/audit/orchestrator/${'x'.repeat(129)}/transfers/${randomUUID()}`, ok: false, key: T.keys.admin },
  { url: `/api/audit/orchestrator/a.b/transfers/${randomUUID()}`, ok: false, key: T.keys.admin },
  { url: `/api/audit/orchestrator/17/transfers/${randomUUID()}`, ok: true, key: T.keys.admin, status: 404 },
  { url: `/api/audit/orchestrator/${randomUUID()}/transfers/${randomUUID()}`, ok: true, key: T.keys.admin, status: 404 }
)

t.test(`${cases.length} parameter cases`, async t => {
  for (const c of cases) {
    const key = c.key ?? (c.url.startsWith('/v1/audit/') ? null : T.keys.console)
    const res = await T.get(c.url, key)
    if (!c.ok) {
      t.equal(res.statusCode, 400, `${c.url} → 400`)
      t.match(res.headers['content-type'], /application\/problem\+json/)
      t.equal(res.json().code, 'BWN_ERR_VALIDATION', c.url)
    } else {
      t.equal(res.statusCode, c.status ?? 200, `${c.url.slice(0, 160)} → ${c.status ?? 200}: ${res.body.slice(0, 200)}`)
      if (res.statusCode === 400) t.not(res.json().code, 'BWN_ERR_VALIDATION', c.url)
    }
  }
})
