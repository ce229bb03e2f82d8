// The Chain port: hotkeys, UIDs, blocks, epochs, weights, alpha emission and sales. `DevChain` is the
// embedded deterministic implementation, `RemoteChain` reaches one over the swarm; a Subtensor adapter
// is the production path behind the same interface. Alpha amounts are bigint rao (1 α = 10⁹ rao).
import type { Role } from '../../protocol/index.ts'

export interface ChainHead {
  /** Latest produced block. */
  block: number
  /** Epoch of that block: ⌊block / blocksPerEpoch⌋. */
  epoch: number
  /** When that block was produced (ms since the Unix epoch, on the chain's clock). */
  atMs: number
  blockTimeMs: number
  blocksPerEpoch: number
}

export interface Registration {
  hotkey: string
  uid: number
  role: Role
  registeredAtBlock: number
}

/** A registration with its stake and validator permit (what a peer may do on the network). */
export interface Standing extends Registration {
  stakeRao: bigint
  /** Whether the hotkey holds a validator permit now (top validators by stake). */
  validatorPermit: boolean
}

/** What `setWeights` returns: the transaction that carries the vector, as the validator records it. */
export interface WeightsProof {
  txId: string
  /** Block that includes the transaction. */
  block: number
  /** Epoch the vector was computed for (the caller's label, not the block's epoch). */
  epoch: number
  validatorHotkey: string
}

export interface WeightsRecord extends WeightsProof {
  uids: number[]
  /** uint16 weights, same order as `uids`. */
  weights: number[]
}

export interface EmissionRecord {
  /** null for the burn UID. */
  hotkey: string | null
  uid: number
  epoch: number
  block: number
  alphaRao: bigint
}

export interface SaleRecord {
  txId: string
  hotkey: string
  block: number
  alphaRao: bigint
}

/** One closed epoch: its blocks, its time span and the alpha it emitted. */
export interface EpochClose {
  epoch: number
  firstBlock: number
  lastBlock: number
  /** Time of the previous epoch's last block (exclusive start), or of genesis for epoch 0. */
  startAtMs: number
  /** Time of this epoch's last block (inclusive end). */
  endAtMs: number
  emittedRao: bigint
  burnedRao: bigint
}

export interface ChainListener {
  block? (head: ChainHead): void
  epochClosed? (close: EpochClose): void
}

export type Unsubscribe = () => void

export interface Chain {
  head (): Promise<ChainHead>
  /** Registers a hotkey (idempotent: the same hotkey keeps its UID and first role). */
  register (hotkey: string, role: Role): Promise<Registration>
  uidOf (hotkey: string): Promise<number | null>
  /** A hotkey's registration with its stake and validator permit, or null when it is not registered. */
  standing (hotkey: string): Promise<Standing | null>
  /** Every registration, ascending by UID. */
  registrations (): Promise<Registration[]>
  /** Sets a validator's uint16 weight vector; the chain records it in the current block. */
  setWeights (validatorHotkey: string, epoch: number, uids: readonly number[], uint16Weights: readonly number[]): Promise<WeightsProof>
  /** Vectors labelled with `epoch`, the latest per validator, ascending by validator hotkey. */
  weightsOf (epoch: number): Promise<WeightsRecord[]>
  /** Emissions credited to `hotkey` in blocks [fromBlock, toBlock], ascending by block. */
  emissionsFor (hotkey: string, fromBlock: number, toBlock: number): Promise<EmissionRecord[]>
  /** Sales by `hotkey` in blocks [fromBlock, toBlock], ascending by block. */
  salesFor (hotkey: string, fromBlock: number, toBlock: number): Promise<SaleRecord[]>
  /** Records an alpha sale by `hotkey` (dev chains; in the current block unless `block` is given). */
  recordSale (hotkey: string, alphaRao: bigint, block?: number): Promise<SaleRecord>
  /** A closed epoch, or null while it is open or unknown. */
  epochClose (epoch: number): Promise<EpochClose | null>
  /** Block and epoch-close events; returns the function that stops them. */
  subscribe (listener: ChainListener): Unsubscribe
}

// Coded chain errors live in the actor layer's one error module.
export { ChainError, CHAIN_ERROR_CODES, isChainErrorCode, type ChainErrorCode } from '../errors.ts'
