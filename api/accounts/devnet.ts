// The devnet's keys: one organization holding the operator's admin key (every organization, see
// docs/security.md), a Free client key and a console key with both telemetry scopes, granted credits.
// devnet.json carries the plain keys (DESIGN §8).
import type { AccountsService } from './service.ts'

export const DEVNET_CREDITS = 1_000_000 // enough for any local session

export interface DevnetKeys { admin: string, client: string, console: string }

export async function bootstrapDevnetKeys (accounts: AccountsService): Promise<DevnetKeys> {
  const org = await accounts.createOrganization({ name: 'devnet' })
  const admin = await accounts.createKey(org.id, { role: 'admin', operator: true, plan: 'enterprise', name: 'devnet admin' })
  const client = await accounts.createKey(org.id, { role: 'client', plan: 'free', name: 'devnet client' })
  const console = await accounts.createKey(org.id, {
    role: 'console', plan: 'enterprise', name: 'devnet console', scopes: ['telemetry:read', 'telemetry:realtime:read']
  })
  await accounts.grantCredits(org.id, DEVNET_CREDITS, 'devnet bootstrap')
  return { admin: admin.key, client: client.key, console: console.key }
}
