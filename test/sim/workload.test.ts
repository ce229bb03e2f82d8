// The client's upload in the simulator: chunks a few at a time sharing the client's bandwidth, each
// staged as soon as its bytes are in (sim/workload.ts uploadSchedule), as the CLI's uploads are.
import t from 'tap'
import { uploadSchedule, DEFAULT_UPLOAD_PARALLEL } from '../../sim/workload.ts'
import { DEFAULT_PARALLEL } from '../../node/commands/transfer/shared.ts'

const MIB = 1024 * 1024
const msAt = (bytes: number, mbps: number): number => bytes * 8 / (mbps * 1000)

t.test('chunks in flight share the link; each group ends together, the next starts then', async t => {
  const ends = uploadSchedule(Array(8).fill(16 * MIB), 1000, 4)
  const group = msAt(4 * 16 * MIB, 1000) // four chunks at a quarter of the rate each
  t.same(ends.map(ms => +ms.toFixed(6)), [group, group, group, group, 2 * group, 2 * group, 2 * group, 2 * group].map(ms => +ms.toFixed(6)))
})

t.test('a shorter last chunk alone at the end gets the whole link', async t => {
  const ends = uploadSchedule([16 * MIB, 16 * MIB, 4 * MIB], 1000, 2)
  t.equal(+ends[0]!.toFixed(6), +msAt(32 * MIB, 1000).toFixed(6))
  t.equal(+ends[2]!.toFixed(6), +(msAt(32 * MIB, 1000) + msAt(4 * MIB, 1000)).toFixed(6))
})

t.test('a short chunk beside long ones ends first and hands its share on', async t => {
  // 2 in flight: chunk 1 (4 MiB) ends when each has moved 4 MiB; chunk 2 then shares with chunk 0.
  const ends = uploadSchedule([16 * MIB, 4 * MIB, 16 * MIB], 100, 2)
  t.equal(+ends[1]!.toFixed(6), +msAt(8 * MIB, 100).toFixed(6), 'the short one first')
  t.ok(ends[0]! < ends[2]!, 'then the one started first')
  t.equal(+ends[2]!.toFixed(6), +msAt(36 * MIB, 100).toFixed(6), 'all bytes at the full rate: the link never idles')
})

t.test('one at a time is the plain sum; bad rates and counts are refused', async t => {
  t.same(uploadSchedule([MIB, MIB], 8, 1).map(ms => +ms.toFixed(6)), [msAt(MIB, 8), 2 * msAt(MIB, 8)].map(ms => +ms.toFixed(6)))
  t.throws(() => uploadSchedule([MIB], 0, 4), RangeError)
  t.throws(() => uploadSchedule([MIB], 100, 0), RangeError)
  t.throws(() => uploadSchedule([MIB], 100, 1.5), RangeError)
  t.same(uploadSchedule([], 100, 4), [])
})

t.test('the default matches the CLI', async t => {
  t.equal(DEFAULT_UPLOAD_PARALLEL, DEFAULT_PARALLEL)
})
