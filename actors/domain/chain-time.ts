// Block ↔ time conversion from a reference point, and ISO-8601 text from epoch ms without a Date
// (actors never construct dates; docs/formulas.md#block-time).

export const DEFAULT_BLOCK_TIME_MS = 12_000 // 12 s
export const BLOCKS_PER_EPOCH = 360 // blocks (tempo)

export interface BlockReference { block: number, atMs: number, blockTimeMs?: number }

/** Estimated time of `block`: ref.atMs + (block − ref.block) × blockTime. */
export function blockToMs (block: number, ref: BlockReference): number {
  return ref.atMs + (block - ref.block) * (ref.blockTimeMs ?? DEFAULT_BLOCK_TIME_MS)
}

/** Last block produced at or before `atMs`, estimated from the reference. */
export function msToBlock (atMs: number, ref: BlockReference): number {
  return ref.block + Math.floor((atMs - ref.atMs) / (ref.blockTimeMs ?? DEFAULT_BLOCK_TIME_MS))
}

export function epochOfBlock (block: number, blocksPerEpoch = BLOCKS_PER_EPOCH): number {
  return Math.floor(block / blocksPerEpoch)
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0')

// The last conversion: actors stamp every row of one instant with the same time.
let lastMs = Number.NaN
let lastIso = ''

/** `YYYY-MM-DDTHH:mm:ss.sssZ` for epoch ms (UTC, proleptic Gregorian, years 0..9999). */
export function isoFromMs (ms: number): string {
  if (ms === lastMs) return lastIso
  if (!Number.isFinite(ms)) throw new RangeError(`not a time: ${ms}`)
  lastIso = civilIso(ms)
  lastMs = ms
  return lastIso
}

function civilIso (ms: number): string {
  const whole = Math.floor(ms)
  const days = Math.floor(whole / 86_400_000)
  let rest = whole - days * 86_400_000
  const hh = Math.floor(rest / 3_600_000); rest -= hh * 3_600_000
  const mm = Math.floor(rest / 60_000); rest -= mm * 60_000
  const ss = Math.floor(rest / 1000)
  const milli = rest - ss * 1000
  // civil-from-days (H. Hinnant): era-based, exact for every day count.
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0)
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hh)}:${pad(mm)}:${pad(ss)}.${pad(milli, 3)}Z`
}
