import t from 'tap'
import { maxUpscaleU16, subtensorEpochBlocks, subtensorEpochOf } from '../../../actors/domain/subtensor.ts'

t.test('max-upscale to u16, as the chain stores a submitted vector', async t => {
  t.same(maxUpscaleU16([1_000, 3_000]), [21_845, 65_535], '1000 × 65535 / 3000 = 21845 exactly')
  t.same(maxUpscaleU16([40_000, 12_345]), [65_535, 20_226], 'max above 32768: 12345 × ⌊65535/40000⌋₃₂ = 20225.74… → 20226')
  t.same(maxUpscaleU16([32_768, 1]), [65_535, 2], 'max at 32768: round(65535 / 32768) = 2')
  t.same(maxUpscaleU16([3, 1]), [65_535, 21_845], 'round(65535 / 3) = 21845')
  t.same(maxUpscaleU16([65_535, 1]), [65_535, 1], 'already at the maximum: unchanged')
  t.same(maxUpscaleU16([0, 0]), [0, 0], 'all zero stays zero')
  t.same(maxUpscaleU16([7]), [65_535])
  t.same(maxUpscaleU16([]), [])
})

t.test('epoch index of a block on a subnet: the epoch runs where (block + netuid + 1) divides by tempo + 1', async t => {
  // netuid 2, tempo 10: runs at blocks 8, 19, 30, …
  t.equal(subtensorEpochOf(7, 2, 10), 0)
  t.equal(subtensorEpochOf(8, 2, 10), 1, 'the run block opens the next epoch')
  t.equal(subtensorEpochOf(18, 2, 10), 1)
  t.equal(subtensorEpochOf(19, 2, 10), 2)
  t.same(subtensorEpochBlocks(1, 2, 10), { firstBlock: 8, lastBlock: 18 })
  t.same(subtensorEpochBlocks(0, 2, 10), { firstBlock: 0, lastBlock: 7 })
  t.same(subtensorEpochBlocks(3, 1, 360), { firstBlock: 1081, lastBlock: 1441 })
})
