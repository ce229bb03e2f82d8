// Pure network formulas: chunk plans, allocation, PRISM (and its consensus over validators), epoch weights, sell allowance
// (documented in docs/formulas.md).
export * from './chain-time.ts'
export * from './chunk-plan.ts'
export * from './allocation.ts'
export * from './prism.ts'
export * from './prism-consensus.ts'
export * from './epoch-weights.ts'
export * from './sell-allowance.ts'
