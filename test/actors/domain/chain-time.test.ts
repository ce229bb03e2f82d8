import t from 'tap'
import { blockToMs, msToBlock, epochOfBlock, isoFromMs } from '../../../actors/domain/index.ts'

t.test('block ↔ time from a reference point', async t => {
  const ref = { block: 1000, atMs: 1_700_000_000_000 }
  t.equal(blockToMs(1010, ref), ref.atMs + 120_000)
  t.equal(blockToMs(990, { ...ref, blockTimeMs: 6000 }), ref.atMs - 60_000)
  t.equal(msToBlock(ref.atMs + 119_999, ref), 1009)
  t.equal(msToBlock(ref.atMs + 120_000, ref), 1010)
  t.equal(epochOfBlock(6_453_000), 17925)
})

t.test('ISO text matches the platform for assorted instants', async t => {
  const cases = [0, 1, -1, 951_782_400_000, 1_709_164_800_123, 4_102_444_799_999, -62_135_596_800_000, 253_402_300_799_999]
  for (let i = 0; i < 500; i++) cases.push(Math.floor((i * 7_919_113_117_771) % 253_402_300_799_999))
  for (const ms of cases) t.equal(isoFromMs(ms), new Date(ms).toISOString(), String(ms))
  t.throws(() => isoFromMs(Number.NaN), RangeError)
})
