// Subtensor's own arithmetic that a client must reproduce exactly: the epoch index of a block on a
// subnet, and the max-upscale the chain applies to a submitted u16 weight vector before storing it.
// Both are documented in docs/chain.md (Subtensor adapter).

const U16_MAX = 65535n
const FRAC_BITS = 32n // I32F32: 32 fractional bits
const ONE = 1n << FRAC_BITS
const HALF = 1n << (FRAC_BITS - 1n)
const UPSCALE_THRESHOLD = 32768n

/**
 * Epoch index of `block` on subnet `netuid` with tempo `tempo`: ⌊(block + netuid + 1) / (tempo + 1)⌋.
 * The subnet's epoch runs at the first block of each index, so epoch E's last block is the block
 * before the run that opens E + 1.
 */
export function subtensorEpochOf (block: number, netuid: number, tempo: number): number {
  return Math.floor((block + netuid + 1) / (tempo + 1))
}

/** First and last block of epoch `epoch` (see `subtensorEpochOf`); the first may be negative for epoch 0. */
export function subtensorEpochBlocks (epoch: number, netuid: number, tempo: number): { firstBlock: number, lastBlock: number } {
  const firstBlock = epoch * (tempo + 1) - netuid - 1
  return { firstBlock: Math.max(0, firstBlock), lastBlock: firstBlock + tempo }
}

/**
 * The vector Subtensor stores for a submitted u16 vector: scaled so its maximum becomes 65535, in the
 * chain's I32F32 fixed point (32 fractional bits, truncating multiply and divide, then round half up).
 * A maximum above 32768 scales by the truncated ratio 65535 / max; otherwise each value is
 * round(value × 65535 / max). An all-zero vector stays zero.
 */
export function maxUpscaleU16 (values: readonly number[]): number[] {
  if (values.length === 0) return []
  const max = BigInt(Math.max(...values))
  if (max === 0n) return values.map(() => 0)
  const round = (fixed: bigint): number => Number(((fixed + HALF) >> FRAC_BITS) > U16_MAX ? U16_MAX : (fixed + HALF) >> FRAC_BITS)
  if (max > UPSCALE_THRESHOLD) {
    const ratio = (U16_MAX * ONE) / max // I32F32 quotient, truncated
    return values.map(v => round(BigInt(v) * ratio))
  }
  return values.map(v => round((BigInt(v) * U16_MAX * ONE) / max))
}
