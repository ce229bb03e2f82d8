// Plans are the operator's to set: an organization admin cannot issue itself (or anyone) a key on a
// plan other than its own, so it cannot lift its organization's limits; the operator can.
import t from 'tap'
import { PLANS } from '../../api/accounts/model.ts'
import { adminApp } from '../helpers/api.ts'

const { as, operator } = await adminApp(t)
const orgB = (await operator('POST', '/admin/organizations', { name: 'B' })).body
const freeAdmin = (await operator('POST', `/admin/organizations/${orgB.id}/keys`, { role: 'admin' })).body
const proAdmin = (await operator('POST', `/admin/organizations/${orgB.id}/keys`, { role: 'admin', plan: 'pro' })).body
const keysOfB = async (): Promise<number> => (await operator('GET', `/admin/organizations/${orgB.id}/keys`)).body.items.length

t.test('a Free organization admin cannot issue an Enterprise (or Pro) key, of any role', async t => {
  t.equal(freeAdmin.apiKey.plan, 'free')
  const b = as(freeAdmin.key)
  const before = await keysOfB()
  for (const plan of ['enterprise', 'pro']) {
    for (const role of ['client', 'admin', 'console']) {
      const res = await b('POST', `/admin/organizations/${orgB.id}/keys`, { role, plan })
      t.equal(res.status, 403, `${role} on ${plan}`)
      t.equal(res.body.code, 'BWN_ERR_OPERATOR_ONLY')
      t.match(res.body.detail, /plan/)
    }
  }
  t.equal(await keysOfB(), before, 'no key was issued')
})

t.test('a Pro organization admin cannot go up, nor hand out another plan', async t => {
  const b = as(proAdmin.key)
  for (const plan of ['enterprise', 'free']) {
    const res = await b('POST', `/admin/organizations/${orgB.id}/keys`, { role: 'client', plan })
    t.equal(res.status, 403, plan)
    t.equal(res.body.code, 'BWN_ERR_OPERATOR_ONLY')
  }
})

t.test('an organization admin issues keys on its own plan, by default or by name', async t => {
  for (const [admin, plan] of [[freeAdmin, 'free'], [proAdmin, 'pro']] as const) {
    const b = as(admin.key)
    const implicit = await b('POST', `/admin/organizations/${orgB.id}/keys`, { role: 'client' })
    t.equal(implicit.status, 201)
    t.equal(implicit.body.apiKey.plan, plan, `no plan given: the admin's own (${plan})`)
    const named = await b('POST', `/admin/organizations/${orgB.id}/keys`, { role: 'client', plan })
    t.equal(named.status, 201)
    t.equal(named.body.apiKey.plan, plan)
  }
})

t.test('the operator sets any plan; its default is free', async t => {
  for (const plan of PLANS) {
    const res = await operator('POST', `/admin/organizations/${orgB.id}/keys`, { role: 'client', plan })
    t.equal(res.status, 201)
    t.equal(res.body.apiKey.plan, plan)
  }
  t.equal((await operator('POST', `/admin/organizations/${orgB.id}/keys`, { role: 'client' })).body.apiKey.plan, 'free')
})

t.test('the plan an organization admin cannot choose is not lifted through the key it issues', async t => {
  // A new admin issued by a Free admin is itself Free, so it cannot mint Enterprise either.
  const child = (await as(freeAdmin.key)('POST', `/admin/organizations/${orgB.id}/keys`, { role: 'admin' })).body
  t.equal(child.apiKey.plan, 'free')
  t.equal((await as(child.key)('POST', `/admin/organizations/${orgB.id}/keys`, { role: 'client', plan: 'enterprise' })).status, 403)
})
