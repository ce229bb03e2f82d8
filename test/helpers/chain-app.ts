// An API app with only the chain routes over a given Chain.
import { buildApp } from '../../api/app.ts'
import chainRoutes from '../../api/routes/chain.ts'
import type { Chain } from '../../actors/chain/ports.ts'
import { testDeps } from './api.ts'

export async function chainApp (chain: Chain, dev = true, writeAuth?: Parameters<typeof chainRoutes>[1]['writeAuth']) {
  const app = await buildApp({ ...testDeps().deps, logger: (await import('./logger.ts')).silentLogger() })
  await app.register(chainRoutes, { chain, dev, ...(writeAuth ? { writeAuth } : {}) })
  return app
}
