// The version-aware layer between the Subtensor adapter and the runtime's extrinsics. It reads what the
// connected runtime offers from its metadata (not from its spec number alone), builds the weight
// calls bwnet needs, and refuses clearly on a runtime whose weight calls it does not know.
import type { ApiPromise } from '@polkadot/api'
import type { SubmittableExtrinsic } from '@polkadot/api/types'
import { blake2AsHex } from './polkadot.ts'
import { ChainError } from '../../../actors/chain/ports.ts'

/** Runtime spec versions the adapter is tested against (test/node/adapters/subtensor.test.ts). */
export const TESTED_SPEC_VERSIONS: readonly number[] = [218]

export interface WeightCalls {
  specVersion: number
  tested: boolean
  setWeights (netuid: number, uids: readonly number[], weights: readonly number[], versionKey: bigint): SubmittableExtrinsic<'promise'>
  commitWeights (netuid: number, commitHash: string): SubmittableExtrinsic<'promise'>
  revealWeights (netuid: number, uids: readonly number[], weights: readonly number[], salt: readonly number[], versionKey: bigint): SubmittableExtrinsic<'promise'>
  /** The hash a commit carries: blake2-256 of SCALE(account, netuid, uids, values, salt, version_key). */
  commitHash (account: string, netuid: number, uids: readonly number[], weights: readonly number[], salt: readonly number[], versionKey: bigint): string
}

const argNames = (api: ApiPromise, call: string): string[] | null => {
  const fn = (api.tx.subtensorModule as unknown as Record<string, unknown>)[call] as { meta: { args: Array<{ name: { toString (): string } }> } } | undefined
  return fn === undefined ? null : fn.meta.args.map(a => a.name.toString())
}

const same = (a: string[] | null, b: string[]): boolean => a !== null && a.length === b.length && a.every((x, i) => x === b[i])

/** The weight calls of the connected runtime; throws BWN_ERR_CHAIN_UNAVAILABLE on an unknown shape. */
export function weightCalls (api: ApiPromise): WeightCalls {
  const specVersion = api.runtimeVersion.specVersion.toNumber()
  // The shapes of spec 218; later runtimes keep these three calls (and add timelocked commits).
  const shapes: Array<[string, string[]]> = [
    ['setWeights', ['netuid', 'dests', 'weights', 'versionKey']],
    ['commitWeights', ['netuid', 'commitHash']],
    ['revealWeights', ['netuid', 'uids', 'values', 'salt', 'versionKey']]
  ]
  for (const [call, args] of shapes) {
    if (!same(argNames(api, call), args)) {
      throw new ChainError('BWN_ERR_CHAIN_UNAVAILABLE', `subtensor runtime spec ${specVersion} has no ${call}(${args.join(', ')}); tested runtimes: ${TESTED_SPEC_VERSIONS.join(', ')}`)
    }
  }
  const tx = api.tx.subtensorModule
  return {
    specVersion,
    tested: TESTED_SPEC_VERSIONS.includes(specVersion),
    setWeights: (netuid, uids, weights, versionKey) => tx.setWeights(netuid, [...uids], [...weights], versionKey),
    commitWeights: (netuid, commitHash) => tx.commitWeights(netuid, commitHash),
    revealWeights: (netuid, uids, weights, salt, versionKey) => tx.revealWeights(netuid, [...uids], [...weights], [...salt], versionKey),
    commitHash: (account, netuid, uids, weights, salt, versionKey) => {
      const encoded = api.createType('(AccountId, u16, Vec<u16>, Vec<u16>, Vec<u16>, u64)', [account, netuid, [...uids], [...weights], [...salt], versionKey]).toU8a()
      return blake2AsHex(encoded, 256)
    }
  }
}
