// The validator's epoch machinery: evidence in, epoch snapshots, corrections, sell-allowance proofs
// and weights on chain out; plus the read functions telemetry serves them with.
export * from './envelope.ts'
export * from './snapshots.ts'
export * from './epochs.ts'
export * from './sell-allowance.ts'
