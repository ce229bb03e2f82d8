// An API app with only the chain routes over a given Chain.
import { buildApp } from '../../api/app.ts'
import chainRoutes from '../../api/routes/chain.ts'
import type { Chain } from '../../actors/chain/ports.ts'
import { silentLogger } from './logger.ts'

export async function chainApp (chain: Chain, dev = true, writeGuard?: Parameters<typeof chainRoutes>[1]['writeGuard']) {
  const app = await buildApp({
    logger: silentLogger(),
    self: { hotkey: '5C4hrfjw9DjXZTzV3MwzrrAr9P1MJhSrvWGWqi1eSuyUpnhM', role: 'orchestrator', software: 'bwnet/test' },
    membership: { counts: async () => ({ orchestrator: 1, worker: 0, validator: 0 }), peers: async () => [] },
    ready: () => true
  })
  await app.register(chainRoutes, { chain, dev, ...(writeGuard ? { writeGuard } : {}) })
  return app
}
