// A real Subtensor runtime for tests: the local chain of node/adapters/subtensor/local.ts (chopsticks
// running the chain's own WebAssembly runtime from the raw chain spec in test/fixtures/subtensor, see
// its README) on a free loopback port, building blocks only when asked (`dev_newBlock`), so a test
// decides when time passes on chain. Stopped at the end of the test.
import { startLocalSubtensor, type LocalSubtensor } from '../../node/adapters/subtensor/local.ts'
export { SUBTENSOR_SPEC, dispatchErrorOf } from '../../node/adapters/subtensor/local.ts'

interface Teardownable { teardown (fn: () => unknown): void }

export type Subtensor = LocalSubtensor

/** Starts chopsticks on the fixture spec and returns a connected API; stopped at the end of `t`. */
export async function startSubtensor (t: Teardownable): Promise<Subtensor> {
  const s = await startLocalSubtensor()
  t.teardown(() => s.stop())
  return s
}
