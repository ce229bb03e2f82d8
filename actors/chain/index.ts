// The chain: the Chain port, the embedded DevChain, and chain access over the swarm.
export * from './ports.ts'
export * from './dev-chain.ts'
export * from './remote.ts'
export * from './validator-stakes.ts'
