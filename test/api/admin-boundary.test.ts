// Issue 10 item 7: an organization admin is confined to its organization; only the operator's admin
// key (the devnet's `admin`) reaches every organization, creates organizations and grants credits.
import t from 'tap'
import { adminApp } from '../helpers/api.ts'

const { as, operator } = await adminApp(t)
const orgA = (await operator('POST', '/admin/organizations', { name: 'A' })).body
const orgB = (await operator('POST', '/admin/organizations', { name: 'B' })).body
const projectA = (await operator('POST', `/admin/organizations/${orgA.id}/projects`, { name: 'pa' })).body
const keyA = (await operator('POST', `/admin/organizations/${orgA.id}/keys`, { role: 'client' })).body.apiKey
const adminB = (await operator('POST', `/admin/organizations/${orgB.id}/keys`, { role: 'admin' })).body
const b = as(adminB.key)

t.test('the devnet admin key is the operator key and reaches every organization', async t => {
  t.equal(adminB.apiKey.operator, false, 'an admin key is an organization admin unless issued as operator')
  const orgs = await operator('GET', '/admin/organizations')
  t.ok(orgs.body.items.length >= 3)
  t.equal((await operator('GET', `/admin/organizations/${orgA.id}/keys`)).status, 200)
  t.equal((await operator('POST', `/admin/organizations/${orgB.id}/credits`, { amount: 5 })).status, 201)
})

t.test('an organization admin of B cannot reach A', async t => {
  const rows: Array<[string, string, object | undefined, number, string]> = [
    ['GET', `/admin/organizations/${orgA.id}`, undefined, 404, 'BWN_ERR_ORGANIZATION_NOT_FOUND'],
    ['GET', `/admin/organizations/${orgA.id}/keys`, undefined, 404, 'BWN_ERR_ORGANIZATION_NOT_FOUND'],
    ['POST', `/admin/organizations/${orgA.id}/keys`, { role: 'client' }, 404, 'BWN_ERR_ORGANIZATION_NOT_FOUND'],
    ['POST', `/admin/organizations/${orgA.id}/keys`, { role: 'admin' }, 404, 'BWN_ERR_ORGANIZATION_NOT_FOUND'],
    ['GET', `/admin/keys/${keyA.id}`, undefined, 404, 'BWN_ERR_API_KEY_NOT_FOUND'],
    ['DELETE', `/admin/keys/${keyA.id}`, undefined, 404, 'BWN_ERR_API_KEY_NOT_FOUND'],
    ['POST', `/admin/organizations/${orgA.id}/projects`, { name: 'x' }, 404, 'BWN_ERR_ORGANIZATION_NOT_FOUND'],
    ['GET', `/admin/organizations/${orgA.id}/projects`, undefined, 404, 'BWN_ERR_ORGANIZATION_NOT_FOUND'],
    ['POST', `/admin/projects/${projectA.id}/environments`, { name: 'x' }, 404, 'BWN_ERR_PROJECT_NOT_FOUND'],
    ['GET', `/admin/projects/${projectA.id}/environments`, undefined, 404, 'BWN_ERR_PROJECT_NOT_FOUND'],
    ['GET', `/admin/organizations/${orgA.id}/credits`, undefined, 404, 'BWN_ERR_ORGANIZATION_NOT_FOUND'],
    ['GET', `/admin/organizations/${orgA.id}/credits/ledger`, undefined, 404, 'BWN_ERR_ORGANIZATION_NOT_FOUND'],
    ['POST', `/admin/organizations/${orgA.id}/credits`, { amount: 1000 }, 403, 'BWN_ERR_OPERATOR_ONLY'],
    ['POST', `/admin/organizations/${orgB.id}/credits`, { amount: 1000 }, 403, 'BWN_ERR_OPERATOR_ONLY'],
    ['POST', '/admin/organizations', { name: 'mine' }, 403, 'BWN_ERR_OPERATOR_ONLY'],
    ['POST', `/admin/organizations/${orgB.id}/keys`, { role: 'admin', operator: true }, 403, 'BWN_ERR_OPERATOR_ONLY'],
    ['POST', `/admin/organizations/${orgB.id}/keys`, { role: 'validator' }, 403, 'BWN_ERR_OPERATOR_ONLY']
  ]
  for (const [method, url, payload, status, code] of rows) {
    const res = await b(method, url, payload)
    t.equal(res.status, status, `${method} ${url} ${JSON.stringify(payload) ?? ''}`)
    t.equal(res.body.code, code, `${method} ${url}`)
  }
  const listed = await b('GET', '/admin/organizations')
  t.same(listed.body.items.map((o: { id: string }) => o.id), [orgB.id], 'lists only its own organization')
  t.equal((await operator('GET', `/admin/keys/${keyA.id}`)).body.revokedAt, null, 'A\'s key was not revoked')
  t.equal((await operator('GET', `/admin/organizations/${orgA.id}/keys`)).body.items.length, 1, 'no key was minted in A')
  t.equal((await operator('GET', `/admin/organizations/${orgB.id}/credits`)).body.balance, 5, 'B granted itself nothing')
})

t.test('within its own organization an organization admin administers', async t => {
  t.equal((await b('GET', `/admin/organizations/${orgB.id}`)).status, 200)
  const project = await b('POST', `/admin/organizations/${orgB.id}/projects`, { name: 'pb' })
  t.equal(project.status, 201)
  t.equal((await b('POST', `/admin/projects/${project.body.id}/environments`, { name: 'prod' })).status, 201)
  const client = await b('POST', `/admin/organizations/${orgB.id}/keys`, { role: 'client' })
  t.equal(client.status, 201)
  t.equal((await b('GET', `/admin/organizations/${orgB.id}/keys`)).body.items.length, 2)
  t.equal((await b('DELETE', `/admin/keys/${client.body.apiKey.id}`)).status, 200)
  t.equal((await b('GET', `/admin/organizations/${orgB.id}/credits/ledger`)).status, 200)
})

t.test('an organization admin cannot revoke the operator key of its own organization', async t => {
  const devnetOrg = (await operator('GET', '/admin/organizations')).body.items.find((o: { name: string }) => o.name === 'devnet')
  const orgAdmin = as((await operator('POST', `/admin/organizations/${devnetOrg.id}/keys`, { role: 'admin' })).body.key)
  const opKey = (await operator('GET', `/admin/organizations/${devnetOrg.id}/keys`)).body.items.find((k: { operator: boolean }) => k.operator)
  t.match(await orgAdmin('DELETE', `/admin/keys/${opKey.id}`), { status: 403, body: { code: 'BWN_ERR_OPERATOR_ONLY' } })
  t.equal((await operator('GET', '/admin/organizations')).status, 200, 'the operator key still works')
  t.match(await operator('POST', `/admin/organizations/${orgB.id}/keys`, { role: 'client', operator: true }), { status: 400, body: { code: 'BWN_ERR_BAD_REQUEST' } }, 'operator is only for admin keys')
})

t.test('validator keys read every organization\'s audit rows: only the operator issues them', async t => {
  const before = (await operator('GET', `/admin/organizations/${orgB.id}/keys`)).body.items.length
  for (const payload of [{ role: 'validator' }, { role: 'validator', name: 'v', plan: 'free' }]) {
    t.match(await b('POST', `/admin/organizations/${orgB.id}/keys`, payload), { status: 403, body: { code: 'BWN_ERR_OPERATOR_ONLY' } }, JSON.stringify(payload))
  }
  const keys = (await operator('GET', `/admin/organizations/${orgB.id}/keys`)).body.items
  t.equal(keys.length, before, 'no key was minted')
  t.notOk(keys.some((k: { role: string }) => k.role === 'validator'), 'B holds no validator key')
  // What an organization admin may issue reads no other organization's rows (test/api/telemetry/audit-tenants.test.ts).
  for (const role of ['client', 'console', 'admin', 'orchestrator', 'worker']) {
    t.equal((await b('POST', `/admin/organizations/${orgB.id}/keys`, { role })).status, 201, `${role}: issued`)
  }
  const issued = await operator('POST', `/admin/organizations/${orgB.id}/keys`, { role: 'validator' })
  t.equal(issued.status, 201, 'the operator issues a validator key')
  t.equal(issued.body.apiKey.role, 'validator')
})
