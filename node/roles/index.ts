// Role wiring: what each role adds on top of the membership every node runs.
import type { RoleContext, RoleHandle } from './types.ts'

export async function startRole (ctx: RoleContext): Promise<RoleHandle> {
  switch (ctx.role) {
    case 'orchestrator':
    case 'worker':
    case 'validator':
      return { stop: async () => {} }
  }
}
export type { RoleContext, RoleHandle }
