// Sell pressure in the simulator: orchestrators that sell their alpha, judged by the validator's pure
// functions (computeSellAllowance per hotkey, then applySellPressure on the served vector; actors/domain/
// sell-allowance.ts, docs/formulas.md#sell-pressure), exactly as the validator's epoch close does.
//
// Emission: each epoch every orchestrator's base emission is its served weight × the epoch's miner
// emission (EMISSION_RAO_PER_BLOCK per block; only ratios matter). The simulated network is established:
// seven days of equal emission precede the start (one per 360 blocks), so no hotkey is on its new-hotkey
// ramp. Every `everyHours` a seller sells `fraction` of its base emission of the last seven days (the
// allowance is 0.8 of it: 1 sells 0.2 over it, into debt; two sales in the window cut the frequency multiplier).
import {
  computeSellAllowance, applySellPressure, SELL_WINDOW_BLOCKS,
  type EmissionEvent, type SaleEvent, type UidPressure, type ServedVector
} from '../actors/domain/index.ts'

export const EMISSION_RAO_PER_BLOCK = 1_000_000_000n // 1 α per block to the miners
const HISTORY_EMISSION_BLOCKS = 360 // one emission per mainnet-sized epoch before the start
const PPM = 1_000_000

interface Book { uid: number, emissions: EmissionEvent[], sales: SaleEvent[], lastSaleMs: number, seller: { fraction: number, everyMs: number } | null }

export interface SellOutcome { weights: Map<string, number>, multipliers: Map<string, number>, sum: number }

export class SimSellers {
  readonly #o: { startMs: number, blockTimeMs: number, epochBlocks: number }
  readonly #books = new Map<string, Book>()
  readonly #epochRao: bigint

  constructor (orchestrators: readonly string[], sellers: ReadonlyMap<string, { fraction: number, everyMs: number }>, o: { startMs: number, blockTimeMs: number, epochBlocks: number }) {
    this.#o = o
    this.#epochRao = EMISSION_RAO_PER_BLOCK * BigInt(o.epochBlocks)
    const historyRao = EMISSION_RAO_PER_BLOCK * BigInt(HISTORY_EMISSION_BLOCKS) / BigInt(Math.max(1, orchestrators.length))
    orchestrators.forEach((id, i) => {
      const emissions: EmissionEvent[] = []
      for (let b = 0; b < SELL_WINDOW_BLOCKS; b += HISTORY_EMISSION_BLOCKS) emissions.push({ block: b, baseAlphaRao: historyRao })
      this.#books.set(id, { uid: i + 1, emissions, sales: [], lastSaleMs: o.startMs, seller: sellers.get(id) ?? null })
    })
  }

  /** Block height at a virtual time: the seven days of history come first. */
  blockAt (ms: number): number { return SELL_WINDOW_BLOCKS + Math.floor((ms - this.#o.startMs) / this.#o.blockTimeMs) }

  /** Sales due at this close, then each UID's allowance at the close's block, applied to the served vector; then the epoch's emission. */
  apply (epoch: number, atMs: number, served: ServedVector): SellOutcome {
    const atBlock = this.blockAt(atMs)
    for (const b of this.#books.values()) {
      if (b.seller === null || atMs - b.lastSaleMs < b.seller.everyMs) continue
      let base7d = 0n
      for (const e of b.emissions) if (e.block > atBlock - SELL_WINDOW_BLOCKS && e.block <= atBlock) base7d += e.baseAlphaRao
      const amount = (base7d * BigInt(Math.round(b.seller.fraction * PPM))) / BigInt(PPM)
      if (amount > 0n) b.sales.push({ block: atBlock, alphaRao: amount })
      b.lastSaleMs = atMs
    }
    const pressure = new Map<number, UidPressure>()
    const multipliers = new Map<string, number>()
    const weightOfUid = new Map(served.uids.map((u, i) => [u, served.weights[i] ?? 0]))
    for (const [id, b] of this.#books) {
      const r = computeSellAllowance({
        hotkey: id, uid: b.uid, epoch, atBlock, emissions: b.emissions, sales: b.sales, baseWeight: weightOfUid.get(b.uid) ?? 0,
        blockReference: { block: atBlock, atMs, blockTimeMs: this.#o.blockTimeMs }, computedAtMs: atMs
      })
      pressure.set(b.uid, { hotkey: id, coldkey: id, multiplier: r.sellAllowanceMultiplier, holding: r.holding })
      multipliers.set(id, r.sellAllowanceMultiplier)
    }
    const pressured = served.source === 'burn' ? served : applySellPressure(served, pressure)
    const weights = new Map<string, number>()
    const byUid = new Map(pressured.uids.map((u, i) => [u, pressured.weights[i] ?? 0]))
    let sum = 0
    for (const [id, b] of this.#books) {
      const w = byUid.get(b.uid) ?? 0
      weights.set(id, w)
      sum += w
      // The epoch's base emission (before this adjustment), on the next block.
      const base = BigInt(Math.floor((weightOfUid.get(b.uid) ?? 0) * PPM)) * this.#epochRao / BigInt(PPM)
      if (base > 0n) b.emissions.push({ block: atBlock + 1, baseAlphaRao: base })
    }
    return { weights, multipliers, sum }
  }
}
