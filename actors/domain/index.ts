// Pure network formulas: chunk plans, allocation, PRISM, epoch weights, sell allowance
// (documented in docs/formulas.md).
export * from './chain-time.ts'
export * from './chunk-plan.ts'
export * from './allocation.ts'
export * from './prism.ts'
export * from './epoch-weights.ts'
export * from './sell-allowance.ts'
