// What the chain says about the validators as a whole: who holds a permit now and with what stake (the
// stake a combination of validators' views is taken over), and which epochs are current and closed.
import type { Chain, ChainHead } from './ports.ts'

/** Every validator holding a permit now, with its stake (rao). */
export async function permittedValidatorStakes (chain: Pick<Chain, 'registrations' | 'standing'>): Promise<Map<string, bigint>> {
  const validators = (await chain.registrations()).filter(r => r.role === 'validator')
  const standings = await Promise.all(validators.map(async r => await chain.standing(r.hotkey)))
  const out = new Map<string, bigint>()
  for (const s of standings) if (s !== null && s.validatorPermit) out.set(s.hotkey, s.stakeRao)
  return out
}

/** The epoch of the head block, and the last epoch that has closed (-1 before the first close). */
export function epochsAt (head: Pick<ChainHead, 'block' | 'epoch' | 'blocksPerEpoch'>): { current: number, lastClosed: number } {
  // An epoch closes with its last block (dev-chain.ts): at that block it is both current and closed.
  return { current: head.epoch, lastClosed: Math.floor((head.block + 1) / head.blocksPerEpoch) - 1 }
}

/**
 * The chain's epochs and permitted validators, read from `chain()` when asked (the chain may open after
 * its reader is built). `unstaked`: validators a test network trusts without a registration, counted
 * with no stake (they weigh equally only while no validator holds stake).
 */
export function validatorsView (chain: () => Pick<Chain, 'head' | 'registrations' | 'standing'>, unstaked: readonly string[] = []): {
  epochs (): Promise<{ current: number, lastClosed: number }>
  validatorStakes (): Promise<Map<string, bigint>>
} {
  return {
    epochs: async () => epochsAt(await chain().head()),
    validatorStakes: async () => new Map([...unstaked.map(h => [h, 0n] as const), ...await permittedValidatorStakes(chain())])
  }
}
