// An API app with only the chain routes over a given Chain.
import { buildApp } from '../../api/app.ts'
import chainRoutes from '../../api/routes/chain.ts'
import type { Chain } from '../../actors/chain/ports.ts'
import { testDeps } from './api.ts'

export async function chainApp (chain: Chain, dev = true, writeGuard?: Parameters<typeof chainRoutes>[1]['writeGuard']) {
  const app = await buildApp({ ...testDeps().deps, logger: (await import('./logger.ts')).silentLogger() })
  await app.register(chainRoutes, { chain, dev, ...(writeGuard ? { writeGuard } : {}) })
  return app
}
