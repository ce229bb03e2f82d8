// GET /chain/prism: the latest PRISM scores a validator published, which an orchestrator uses as its
// routing weights (kept by actors/validator/intake.ts).
import { Type } from '@sinclair/typebox'
import type { TypedApp } from '../typed-app.ts'
import type { PrismLatest } from '../../actors/validator/intake.ts'

export interface PrismRoutesOptions {
  latest (): Promise<PrismLatest>
}

const PrismLatestWire = Type.Object({
  validator: Type.Union([Type.String(), Type.Null()]),
  epoch: Type.Union([Type.Integer(), Type.Null()]),
  computedAt: Type.Union([Type.Integer(), Type.Null()]),
  scores: Type.Array(Type.Object({ hotkey: Type.String(), pool: Type.String(), routingScore: Type.Number(), finalScore: Type.Number(), penaltyMultiplier: Type.Number(), readinessMultiplier: Type.Optional(Type.Number()), activeTimeRatio: Type.Optional(Type.Number()) }))
})

export default async function prismRoutes (app: TypedApp, opts: PrismRoutesOptions): Promise<void> {
  app.get('/chain/prism', {
    schema: {
      tags: ['chain'], summary: 'The latest PRISM scores a validator published (the routing weights this orchestrator uses)',
      response: { 200: PrismLatestWire }
    }
  }, async () => await opts.latest())
}
