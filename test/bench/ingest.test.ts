// The ingest bench runs end to end with tiny sizes: both paths measured in every round and each
// reported median is the median of its rounds, the ratio is the ratio of the medians, every chunk is
// read back and verified on both paths, the flood phase's oversized bodies are all refused with 413
// at the excess byte while /healthz answers, and the same result is written to --out.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { runBench, BENCH_OWN_TIMEOUT_S } from '../helpers/bench.ts'

const MIB = 1024 * 1024
const median = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2 }

t.test('ingest bench: throughput of both paths, their ratio, and the flood refused at the excess byte', async t => {
  const { code, stdout, stderr, result, out } = await runBench(t, 'ingest', ['--chunk-mib', '1', '--chunks', '3', '--rounds', '3', '--floods', '2', '--flood-mib', '96', '--timeout-s', BENCH_OWN_TIMEOUT_S])
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)

  t.match(result, { bench: 'ingest', chunkBytes: MIB, chunksPerRound: 3, rounds: 3, parallel: 4 })
  for (const path of ['bwnet', 'baseline']) {
    const rounds: number[] = result.perRoundMbPerSec[path]
    t.equal(rounds.length, 3, `${path} measured in every round`)
    t.ok(rounds.every(x => Number.isFinite(x)), `${path}: a finite throughput in every round`)
    t.ok(Math.abs(result.mbPerSec[path] - median(rounds)) <= 0.01, `${path}: the reported figure is the median of its rounds`)
  }
  t.ok(Math.abs(result.ratio.bwnetOverBaseline - result.mbPerSec.bwnet / result.mbPerSec.baseline) <= 0.01 + 0.01 * result.ratio.bwnetOverBaseline, 'ratio of the medians')
  t.equal(result.chunksVerified, 2 * (1 + 3 * 3), 'every chunk (warm-up included) read back and hashed on both paths')

  const flood = result.flood
  t.same(flood.statuses, [413, 413], 'every oversized body refused with 413')
  t.same(flood.codes, ['BWN_ERR_CHUNK_TOO_LARGE', 'BWN_ERR_CHUNK_TOO_LARGE'])
  t.ok(flood.sentMiB.every((m: number) => m < 96), `no body sent in full before its answer (${flood.sentMiB.join(', ')} MiB of 96)`)
  t.equal(flood.refusedAtExcess, true, 'refused at the excess byte')
  t.ok(flood.healthz.answers >= 1 && flood.healthz.allOk, '/healthz answered 200 during the flood')
  if (result.rssMiB.bwnet.idle !== null) t.ok(flood.rssMiB.peak - flood.rssMiB.before < 128, `server RSS ${flood.rssMiB.before} → ${flood.rssMiB.peak} MiB during the flood`)

  t.match(stdout, /bwnet\/baseline = /, 'human table printed')
  t.match(stdout, /flood: 2 × 96 MiB/, 'flood line printed')
  t.same(JSON.parse(await readFile(out, 'utf8')), result, 'same result written to --out')
})
