// Sell allowance: how much of a miner hotkey's weight it keeps after selling alpha, from a 7-day window
// of base emission and sales, a carried sell debt and a new-hotkey ramp (docs/formulas.md#sell-allowance).
import { blockToMs, isoFromMs, BLOCKS_PER_EPOCH, type BlockReference } from './chain-time.ts'
import { toUint16 } from './epoch-weights.ts'

export const SELL_ALLOWANCE_FORMULA_VERSION = 'sell_allowance_7d_80pct_debt2x_freq_ramp_v1'
/** 7 days of 12 s blocks. */
export const SELL_WINDOW_BLOCKS = 50_400 // blocks
/** Penalty-free share of the 7-day base emission: 80 % (as a fraction of integers, exact in bigint). */
export const ALLOWANCE_NUMERATOR = 4n
export const ALLOWANCE_DENOMINATOR = 5n
/** Each alpha sold above the allowance costs this many alpha of emission. */
export const DEBT_PER_EXCESS_ALPHA = 2n
export const SELL_MULTIPLIER_FLOOR = 0.60
export const SELL_EXCESS_SLOPE = 2
export const FREQUENCY_MULTIPLIER_FLOOR = 0.10
export const FREQUENCY_SLOPE = 1.5
export const COMBINED_MULTIPLIER_FLOOR = 0.10
export const RAMP_START = 0.10
export const RAMP_BLOCKS = SELL_WINDOW_BLOCKS // linear to 1.00 over 7 days
/** Multipliers turn into withheld rao with this resolution (parts per million). */
export const MULTIPLIER_PPM = 1_000_000n

export interface EmissionEvent { block: number, baseAlphaRao: bigint }
export interface SaleEvent { block: number, alphaRao: bigint }
export interface DebtTransfer { block: number, alphaRao: bigint }

export interface SellAllowanceInput {
  hotkey: string
  uid: number
  epoch: number
  /** Evaluation block: the window is (atBlock − 50,400, atBlock]. */
  atBlock: number
  /** First block of the epoch for baseAlphaRao; defaults to the epoch of atBlock. */
  epochStartBlock?: number
  /** Base (pre-adjustment) emission of this hotkey; full history, debt repayment depends on it. */
  emissions: readonly EmissionEvent[]
  /** Sales attributed to this hotkey (already split across the coldkey's miner hotkeys). */
  sales: readonly SaleEvent[]
  /** Debt moved onto this hotkey from the coldkey's other hotkeys. */
  debtTransfers?: readonly DebtTransfer[]
  /** Normalized weight before the sell adjustment. */
  baseWeight: number
  /** Weight received from other coldkeys' reductions (see redistributeSellPressure). */
  redistributedWeight?: number
  blockReference: BlockReference
  computedAtMs: number
}

export interface SellAllowanceResult {
  hotkey: string
  uid: number
  epoch: number
  formulaVersion: string
  atBlock: number
  windowStartBlock: number
  windowEndBlock: number
  baseWeight: number
  receivedWeight: number
  baseAlphaRao: bigint
  baseAlpha7dRao: bigint
  soldAlpha7dRao: bigint
  excessAlpha7dRao: bigint
  allowanceRemainingAlphaRao: bigint
  transferableAlphaRao: bigint
  sales7d: number
  lastSaleBlock: number | null
  nextPenaltyFreeSaleBlock: number
  nextPenaltyFreeSaleEstimatedAtMs: number
  sellDebtAlphaRao: bigint
  sellMultiplier: number
  frequencyMultiplier: number
  newHotkeyRamp: number
  sellAllowanceMultiplier: number
  holding: number
  computedAtMs: number
}

const maxBig = (a: bigint, b: bigint): bigint => (a > b ? a : b)
const minBig = (a: bigint, b: bigint): bigint => (a < b ? a : b)

/** 80 % of the 7-day base emission (floored to whole rao). */
export function allowanceOf (baseAlpha7dRao: bigint): bigint {
  return maxBig(0n, baseAlpha7dRao) * ALLOWANCE_NUMERATOR / ALLOWANCE_DENOMINATOR
}

/** max(0.10, 1 / (1 + 1.5·(sales − 1))); 1 with no sale. */
export function frequencyMultiplier (sales7d: number): number {
  if (sales7d <= 0) return 1
  return Math.max(FREQUENCY_MULTIPLIER_FLOOR, 1 / (1 + FREQUENCY_SLOPE * (sales7d - 1)))
}

/**
 * 1 without debt; with debt: max(0.60, 1 − 2·excess7d/base7d) while excess sales are in the window,
 * 0.60 once they have aged out (or with no base emission) until the debt is repaid.
 */
export function sellMultiplier (excessAlpha7dRao: bigint, baseAlpha7dRao: bigint, debtRao: bigint): number {
  if (debtRao <= 0n) return 1
  if (excessAlpha7dRao <= 0n || baseAlpha7dRao <= 0n) return SELL_MULTIPLIER_FLOOR
  return Math.max(SELL_MULTIPLIER_FLOOR, 1 - SELL_EXCESS_SLOPE * Number(excessAlpha7dRao) / Number(baseAlpha7dRao))
}

/** min(ramp, max(0.10, sell × frequency)). */
export function combinedMultiplier (sell: number, frequency: number, ramp: number): number {
  return Math.min(ramp, Math.max(COMBINED_MULTIPLIER_FLOOR, sell * frequency))
}

/**
 * 0.10 at the first emission of a streak, linear to 1.00 after 7 days. A gap of 7 days or more between
 * emissions starts a new streak; with no emission in the last 7 days the ramp reads 0.10.
 */
export function newHotkeyRamp (emissionBlocks: readonly number[], atBlock: number): number {
  const blocks = emissionBlocks.filter(b => b <= atBlock).sort((a, b) => a - b)
  if (blocks.length === 0 || atBlock - blocks[blocks.length - 1] >= SELL_WINDOW_BLOCKS) return RAMP_START
  let streakStart = blocks[0]
  for (let i = 1; i < blocks.length; i++) if (blocks[i] - blocks[i - 1] >= SELL_WINDOW_BLOCKS) streakStart = blocks[i]
  return Math.min(1, RAMP_START + (1 - RAMP_START) * (atBlock - streakStart) / RAMP_BLOCKS)
}

/** Share kept: max(0, 1 − sold7d/base7d); 1 with neither, 0 when selling without base emission. */
export function holdingOf (soldAlpha7dRao: bigint, baseAlpha7dRao: bigint): number {
  if (baseAlpha7dRao <= 0n) return soldAlpha7dRao > 0n ? 0 : 1
  return Math.max(0, 1 - Number(soldAlpha7dRao) / Number(baseAlpha7dRao))
}

/**
 * Rao withheld from an emission at multiplier m: base − floor(base·m̂/1e6), m̂ = m rounded to the nearest
 * ppm. The floor rounds the withheld part up against m̂; m̂ may differ from m by half a ppm either way.
 */
export function withheldRao (baseRao: bigint, multiplier: number): bigint {
  const ppm = BigInt(Math.round(Math.min(1, Math.max(0, multiplier)) * Number(MULTIPLIER_PPM)))
  return baseRao - baseRao * ppm / MULTIPLIER_PPM
}

interface WindowSale { block: number, alphaRao: bigint, excessRao: bigint }

/** Replays every event up to atBlock (per block: debt transfers, then emissions, then sales). */
export function computeSellAllowance (input: SellAllowanceInput): SellAllowanceResult {
  const { atBlock } = input
  type Ev = { block: number, order: number, seq: number, kind: 'debt' | 'emission' | 'sale', rao: bigint }
  const events: Ev[] = []
  let seq = 0
  for (const d of input.debtTransfers ?? []) events.push({ block: d.block, order: 0, seq: seq++, kind: 'debt', rao: d.alphaRao })
  for (const e of input.emissions) events.push({ block: e.block, order: 1, seq: seq++, kind: 'emission', rao: e.baseAlphaRao })
  for (const s of input.sales) events.push({ block: s.block, order: 2, seq: seq++, kind: 'sale', rao: s.alphaRao })
  events.sort((a, b) => a.block - b.block || a.order - b.order || a.seq - b.seq)

  const emissionWindow: EmissionEvent[] = []
  const saleWindow: WindowSale[] = []
  let base7d = 0n
  let sold7d = 0n
  let excess7d = 0n
  let debt = 0n
  let lastSaleBlock: number | null = null
  const evict = (block: number): void => {
    const cutoff = block - SELL_WINDOW_BLOCKS
    while (emissionWindow.length > 0 && emissionWindow[0].block <= cutoff) base7d -= (emissionWindow.shift() as EmissionEvent).baseAlphaRao
    while (saleWindow.length > 0 && saleWindow[0].block <= cutoff) {
      const old = saleWindow.shift() as WindowSale
      sold7d -= old.alphaRao
      excess7d -= old.excessRao
    }
  }
  for (const ev of events) {
    if (ev.block > atBlock) break
    const rao = maxBig(0n, ev.rao)
    evict(ev.block)
    if (ev.kind === 'debt') {
      debt += rao
    } else if (ev.kind === 'emission') {
      if (rao === 0n) continue
      emissionWindow.push({ block: ev.block, baseAlphaRao: rao })
      base7d += rao
      // Only the sell multiplier's cut repays debt; frequency and ramp cuts are deterrents, not repayment.
      debt -= minBig(debt, withheldRao(rao, sellMultiplier(excess7d, base7d, debt)))
    } else {
      const remaining = maxBig(0n, allowanceOf(base7d) - sold7d)
      const excess = maxBig(0n, rao - remaining)
      saleWindow.push({ block: ev.block, alphaRao: rao, excessRao: excess })
      sold7d += rao
      excess7d += excess
      debt += DEBT_PER_EXCESS_ALPHA * excess
      lastSaleBlock = ev.block
    }
  }
  evict(atBlock)

  const sales7d = saleWindow.length
  const sell = sellMultiplier(excess7d, base7d, debt)
  const frequency = frequencyMultiplier(sales7d)
  const ramp = newHotkeyRamp(input.emissions.filter(e => e.baseAlphaRao > 0n).map(e => e.block), atBlock)
  const combined = combinedMultiplier(sell, frequency, ramp)
  const allowanceRemaining = maxBig(0n, allowanceOf(base7d) - sold7d)
  const nextFree = sales7d === 0 ? atBlock : (saleWindow[saleWindow.length - 1].block + SELL_WINDOW_BLOCKS)
  const epochStart = input.epochStartBlock ?? Math.floor(atBlock / BLOCKS_PER_EPOCH) * BLOCKS_PER_EPOCH
  const baseThisEpoch = input.emissions.filter(e => e.block >= epochStart && e.block <= atBlock)
    .reduce((a, e) => a + maxBig(0n, e.baseAlphaRao), 0n)
  const baseWeight = Number.isFinite(input.baseWeight) && input.baseWeight > 0 ? input.baseWeight : 0
  return {
    hotkey: input.hotkey,
    uid: input.uid,
    epoch: input.epoch,
    formulaVersion: SELL_ALLOWANCE_FORMULA_VERSION,
    atBlock,
    windowStartBlock: atBlock - SELL_WINDOW_BLOCKS + 1,
    windowEndBlock: atBlock,
    baseWeight,
    receivedWeight: baseWeight * combined + Math.max(0, input.redistributedWeight ?? 0),
    baseAlphaRao: baseThisEpoch,
    baseAlpha7dRao: base7d,
    soldAlpha7dRao: sold7d,
    excessAlpha7dRao: excess7d,
    allowanceRemainingAlphaRao: allowanceRemaining,
    // Sellable now with no penalty at all: only when no sale is in the window (else frequency drops).
    transferableAlphaRao: sales7d === 0 ? allowanceRemaining : 0n,
    sales7d,
    lastSaleBlock,
    nextPenaltyFreeSaleBlock: nextFree,
    nextPenaltyFreeSaleEstimatedAtMs: blockToMs(nextFree, input.blockReference),
    sellDebtAlphaRao: debt,
    sellMultiplier: sell,
    frequencyMultiplier: frequency,
    newHotkeyRamp: ramp,
    sellAllowanceMultiplier: combined,
    holding: holdingOf(sold7d, base7d),
    computedAtMs: input.computedAtMs
  }
}

interface SellAllowanceCommon {
  baseWeight: number
  receivedWeight: number
  baseAlpha7dRao: string
  soldAlpha7dRao: string
  sales7d: number
  lastSaleBlock: number | null
  sellDebtAlphaRao: string
  sellMultiplier: number
  frequencyMultiplier: number
  newHotkeyRamp: number
  sellAllowanceMultiplier: number
  holding: number
  baseAlphaRao: string
  excessAlpha7dRao: string
  computedAt: string
}
export interface SellAllowancePaid extends SellAllowanceCommon {
  transferableAlphaRao: string
  windowEndBlock: number
  nextPenaltyFreeSaleBlock: number
  nextPenaltyFreeSaleEstimatedAt: string
}
export interface SellAllowanceFree extends SellAllowanceCommon { allowanceRemainingAlphaRao: string }
export interface SellAllowanceData<S> { hotkey: string, uid: number, epoch: number, formulaVersion: string, sellAllowance: S }

function commonFields (r: SellAllowanceResult): SellAllowanceCommon {
  return {
    baseWeight: r.baseWeight,
    receivedWeight: r.receivedWeight,
    baseAlpha7dRao: r.baseAlpha7dRao.toString(),
    soldAlpha7dRao: r.soldAlpha7dRao.toString(),
    sales7d: r.sales7d,
    lastSaleBlock: r.lastSaleBlock,
    sellDebtAlphaRao: r.sellDebtAlphaRao.toString(),
    sellMultiplier: r.sellMultiplier,
    frequencyMultiplier: r.frequencyMultiplier,
    newHotkeyRamp: r.newHotkeyRamp,
    sellAllowanceMultiplier: r.sellAllowanceMultiplier,
    holding: r.holding,
    baseAlphaRao: r.baseAlphaRao.toString(),
    excessAlpha7dRao: r.excessAlpha7dRao.toString(),
    computedAt: isoFromMs(r.computedAtMs)
  }
}

/** Seed §2.5 data, paid variant. */
export function sellAllowancePaidData (r: SellAllowanceResult): SellAllowanceData<SellAllowancePaid> {
  return {
    hotkey: r.hotkey,
    uid: r.uid,
    epoch: r.epoch,
    formulaVersion: r.formulaVersion,
    sellAllowance: {
      ...commonFields(r),
      transferableAlphaRao: r.transferableAlphaRao.toString(),
      windowEndBlock: r.windowEndBlock,
      nextPenaltyFreeSaleBlock: r.nextPenaltyFreeSaleBlock,
      nextPenaltyFreeSaleEstimatedAt: isoFromMs(r.nextPenaltyFreeSaleEstimatedAtMs)
    }
  }
}

/** Seed §2.5 data, free audit variant. */
export function sellAllowanceFreeData (r: SellAllowanceResult): SellAllowanceData<SellAllowanceFree> {
  return {
    hotkey: r.hotkey,
    uid: r.uid,
    epoch: r.epoch,
    formulaVersion: r.formulaVersion,
    sellAllowance: { ...commonFields(r), allowanceRemainingAlphaRao: r.allowanceRemainingAlphaRao.toString() }
  }
}

export interface PressureEntry { hotkey: string, coldkey: string, baseWeight: number, multiplier: number, holding: number }
export interface PressureOutcome { hotkey: string, baseWeight: number, keptWeight: number, redistributedWeight: number, receivedWeight: number }

/**
 * Fleet step: each reduced hotkey loses baseWeight·(1 − m); that weight goes to hotkeys of other
 * coldkeys with m = 1, positive base weight and positive holding, in proportion to holding. With no
 * such recipient the hotkey keeps its weight (nothing is burned). Output keeps input order.
 */
export function redistributeSellPressure (entries: readonly PressureEntry[]): PressureOutcome[] {
  const base = entries.map(e => (Number.isFinite(e.baseWeight) && e.baseWeight > 0 ? e.baseWeight : 0))
  const mult = entries.map(e => (Number.isFinite(e.multiplier) ? Math.min(1, Math.max(0, e.multiplier)) : 0))
  const kept = base.slice()
  const extra = entries.map(() => 0)
  entries.forEach((e, i) => {
    const removed = base[i] * (1 - mult[i])
    if (!(removed > 0)) return
    const recipients = entries.map((r, j) => j).filter(j => entries[j].coldkey !== e.coldkey && mult[j] === 1 && base[j] > 0 && entries[j].holding > 0)
    const totalHolding = recipients.reduce((a, j) => a + entries[j].holding, 0)
    if (!(totalHolding > 0)) return
    kept[i] = base[i] - removed
    for (const j of recipients) extra[j] += removed * entries[j].holding / totalHolding
  })
  return entries.map((e, i) => ({ hotkey: e.hotkey, baseWeight: base[i], keptWeight: kept[i], redistributedWeight: extra[i], receivedWeight: kept[i] + extra[i] }))
}

/**
 * Splits `amountRao` over parts in proportion to their weights (e.g. a coldkey-level sale over its miner
 * hotkeys by 7-day emission): floors, then the leftover rao one each by largest remainder, ties by id asc.
 * Zero total weight splits equally.
 */
export function splitProRata (amountRao: bigint, parts: ReadonlyArray<{ id: string, weightRao: bigint }>): Array<{ id: string, amountRao: bigint }> {
  if (amountRao < 0n) throw new RangeError('cannot split a negative amount')
  if (parts.length === 0) return []
  const weights = parts.map(p => maxBig(0n, p.weightRao))
  let total = weights.reduce((a, b) => a + b, 0n)
  const w = total > 0n ? weights : parts.map(() => 1n)
  if (total <= 0n) total = BigInt(parts.length)
  const shares = w.map(x => amountRao * x / total)
  const remainders = w.map((x, i) => amountRao * x - shares[i] * total)
  let leftover = amountRao - shares.reduce((a, b) => a + b, 0n)
  const order = parts.map((_, i) => i).sort((a, b) => (remainders[b] > remainders[a] ? 1 : remainders[b] < remainders[a] ? -1 : (parts[a].id < parts[b].id ? -1 : parts[a].id > parts[b].id ? 1 : 0)))
  for (let k = 0; leftover > 0n; k = (k + 1) % parts.length, leftover--) shares[order[k]]++
  return parts.map((p, i) => ({ id: p.id, amountRao: shares[i] }))
}

/** One UID's sell pressure for the weights: its multiplier and holding (from its sell allowance). */
export interface UidPressure { hotkey: string, coldkey: string, multiplier: number, holding: number }
export interface PressuredVector { uids: number[], weights: number[], uint16Weights: number[], outcomes: PressureOutcome[] }

/**
 * The weights a validator sets on chain: the served (normalized) vector with each UID's sell
 * pressure applied by the fleet step (redistributeSellPressure), normalized again, then converted to
 * uint16. A UID without an entry is unreduced (multiplier 1, holding 1, its own coldkey). Order of
 * `uids` is kept. docs/formulas.md#sell-pressure.
 */
export function applySellPressure (vector: { uids: readonly number[], weights: readonly number[] }, pressure: ReadonlyMap<number, UidPressure>): PressuredVector {
  const entries: PressureEntry[] = vector.uids.map((uid, i) => {
    const p = pressure.get(uid)
    return { hotkey: p?.hotkey ?? `uid:${uid}`, coldkey: p?.coldkey ?? `uid:${uid}`, baseWeight: vector.weights[i] ?? 0, multiplier: p?.multiplier ?? 1, holding: p?.holding ?? 1 }
  })
  const outcomes = redistributeSellPressure(entries)
  const total = outcomes.reduce((a, o) => a + o.receivedWeight, 0)
  const weights = total > 0 ? outcomes.map(o => o.receivedWeight / total) : vector.weights.map(w => w)
  return { uids: [...vector.uids], weights, uint16Weights: weights.map(toUint16), outcomes }
}
