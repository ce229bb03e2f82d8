// GET /chain/prism: the PRISM scores this orchestrator routes by: the stake-weighted consensus of the
// permitted validators' latest vectors (actors/domain/prism-consensus.ts, kept by
// actors/validator/intake.ts), with each vector and the stake it counts with.
import { Type } from '@sinclair/typebox'
import type { TypedApp } from '../typed-app.ts'
import type { PrismLatest } from '../../actors/validator/intake.ts'

export interface PrismRoutesOptions {
  latest (): Promise<PrismLatest>
}

const Scores = Type.Array(Type.Object({ hotkey: Type.String(), pool: Type.String(), routingScore: Type.Number(), finalScore: Type.Number(), penaltyMultiplier: Type.Number(), readinessMultiplier: Type.Optional(Type.Number()), activeTimeRatio: Type.Optional(Type.Number()) }))
const Rao = Type.String({ pattern: '^[0-9]+$', description: 'rao (1 α = 10⁹ rao), as a decimal string' })

const PrismLatestWire = Type.Object({
  validator: Type.Union([Type.String(), Type.Null()], { description: 'the validator that holds the deciding stake alone (the consensus is its vector); null when several combine or none count' }),
  epoch: Type.Union([Type.Integer(), Type.Null()], { description: 'the latest epoch validators holding at least half the stake have reported; null without consensus' }),
  computedAt: Type.Union([Type.Integer(), Type.Null()]),
  scores: Type.Array(Scores.items, { description: 'the consensus: orchestrators scored by validators holding at least half the stake (docs/formulas.md#prism-consensus)' }),
  totalStakeRao: Type.Union([Rao, Type.Null()], { description: 'stake of every permitted validator, the consensus\'s denominator; null until the chain answered' }),
  validators: Type.Array(Type.Object({
    hotkey: Type.String(),
    stakeRao: Rao,
    epoch: Type.Integer(),
    computedAt: Type.Integer(),
    scores: Scores
  }), { description: 'each permitted validator\'s latest vector that counts (fresh epoch), most stake first' })
})

export default async function prismRoutes (app: TypedApp, opts: PrismRoutesOptions): Promise<void> {
  app.get('/chain/prism', {
    schema: {
      tags: ['chain'], summary: 'The PRISM scores this orchestrator routes by: the stake-weighted consensus of the validators\' latest scores, and each vector',
      response: { 200: PrismLatestWire }
    }
  }, async () => await opts.latest())
}
