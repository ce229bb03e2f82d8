// The devnet's keys: one organization holding the operator's admin key (every organization, see
// docs/security.md), a client key on the Enterprise plan (no request limit: local work is never
// throttled), a client key on the Free plan (to try the limits), and a console key with both telemetry
// scopes, granted credits. devnet.json carries the plain keys (DESIGN §8). The store holds only their
// hashes, so a restart on the same data directory hands back the keys of the last devnet.json that
// still authenticate as what they were issued for, and issues only what is missing: one organization
// and the same keys across restarts.
import type { AccountsService } from './service.ts'
import type { NewKey, Organization, Principal } from './model.ts'

export const DEVNET_CREDITS = 1_000_000 // enough for any local session
export const DEVNET_ORGANIZATION = 'devnet'

export type DevnetKeys = { admin: string, client: string, clientFree: string, console: string }

/** What each devnet key is issued as. */
export const DEVNET_KEY_SPECS: Record<keyof DevnetKeys, NewKey> = {
  admin: { role: 'admin', operator: true, plan: 'enterprise', name: 'devnet admin' },
  client: { role: 'client', plan: 'enterprise', name: 'devnet client' },
  clientFree: { role: 'client', plan: 'free', name: 'devnet client (Free plan)' },
  console: { role: 'console', plan: 'enterprise', name: 'devnet console', scopes: ['telemetry:read', 'telemetry:realtime:read'] }
}

/**
 * The devnet's keys in its one organization. `previous`: the keys of the devnet.json an earlier run
 * wrote (any names): each one still valid, in the devnet's organization and issued exactly as a spec
 * asks is kept under that spec's name (so an older devnet's Free `client` becomes `clientFree`).
 */
export async function bootstrapDevnetKeys (accounts: AccountsService, previous: Partial<Record<string, string>> = {}): Promise<DevnetKeys> {
  const known = new Map<string, { key: string, principal: Principal }>()
  for (const key of new Set(Object.values(previous))) {
    if (typeof key !== 'string') continue
    const auth = await accounts.authenticate(key)
    if (auth.ok) known.set(key, { key, principal: auth.principal })
  }
  const orgs = await accounts.listOrganizations()
  // The organization of the earlier admin key, else the oldest one named for the devnet, else a new one.
  const adminOrg = [...known.values()].find(k => k.principal.role === 'admin' && k.principal.operator)?.principal.organizationId
  let org: Organization | undefined = orgs.find(o => o.id === adminOrg) ??
    orgs.filter(o => o.name === DEVNET_ORGANIZATION).sort((a, b) => a.createdAt.localeCompare(b.createdAt))[0]
  const created = org === undefined
  org ??= await accounts.createOrganization({ name: DEVNET_ORGANIZATION })
  const out: Partial<DevnetKeys> = {}
  const taken = new Set<string>()
  for (const [name, spec] of Object.entries(DEVNET_KEY_SPECS) as Array<[keyof DevnetKeys, NewKey]>) {
    const match = (k: { key: string, principal: Principal }): boolean =>
      !taken.has(k.key) && k.principal.organizationId === org.id && k.principal.grant === 'organization' &&
      k.principal.role === spec.role && k.principal.plan === spec.plan && (k.principal.operator === true) === (spec.operator === true) &&
      [...k.principal.scopes].sort().join() === [...(spec.scopes ?? [])].sort().join()
    // The key under the same name first, then any other that fits.
    const same = previous[name] !== undefined ? known.get(previous[name]) : undefined
    const kept = same !== undefined && match(same) ? same : [...known.values()].find(match)
    if (kept !== undefined) {
      out[name] = kept.key
      taken.add(kept.key)
    } else {
      out[name] = (await accounts.createKey(org.id, spec)).key
    }
  }
  if (created) await accounts.grantCredits(org.id, DEVNET_CREDITS, 'devnet bootstrap')
  return out as DevnetKeys
}
