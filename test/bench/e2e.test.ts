// The e2e bench runs end to end with a tiny file: a devnet delivery, a direct PUT and (--bare) the
// bare pipeline, each verified against the source's sha256, timed in every round, the ratios of the
// medians, the devnet's RSS and CPU sampled, the orchestrator's attempts counted, the result in --out;
// and an RSS limit that the devnet cannot meet makes the bench fail.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { runBench, BENCH_OWN_TIMEOUT_S } from '../helpers/bench.ts'

/**
 * A ratio the bench printed is the ratio of the two unrounded medians; the seconds it printed are
 * rounded to the millisecond and the ratio to 0.01. It must lie within what those roundings allow:
 * a fixed tolerance failed when a 2 MiB baseline took a few milliseconds (one ms is then several %).
 */
function ratioOf (t: { ok (v: unknown, m: string): unknown }, ratio: number, num: number, den: number, what: string): void {
  const lo = (num - 0.0005) / (den + 0.0005) - 0.005
  const hi = (num + 0.0005) / Math.max(den - 0.0005, 1e-9) + 0.005
  t.ok(ratio >= lo && ratio <= hi, `${what}: ratio of the medians, ${ratio} within [${lo.toFixed(3)}, ${hi.toFixed(3)}] of ${num} s / ${den} s`)
}

t.test('e2e bench prints devnet delivery, direct PUT and bare pipeline times with their ratios', async t => {
  const { code, stdout, stderr, result, out } = await runBench(t, 'e2e', ['--size-mib', '2', '--rounds', '1', '--bare', '--idle-s', '1', '--rss-every-ms', '100', '--timeout-s', BENCH_OWN_TIMEOUT_S])
  t.equal(code, 0, `bench exits 0; stderr: ${stderr.slice(-2000)}`)

  t.match(result, { bench: 'e2e', sizeBytes: 2 * 1024 * 1024, rounds: 1, workers: 2, parallel: 4, verified: true, sha256: /^[0-9a-f]{64}$/ })
  for (const path of ['bwnet', 'baseline']) {
    t.equal(result.perRoundSeconds[path].length, 1, `one ${path} round`)
    t.equal(result.seconds[path], result.perRoundSeconds[path][0], `${path}: the median of one round is that round`)
  }
  ratioOf(t, result.ratio.bwnetOverBaseline, result.seconds.bwnet, result.seconds.baseline, 'bwnet over the baseline')
  t.ok(result.bwnetCliSeconds[0] >= result.seconds.bwnet * 0.5, 'the CLI saw the whole delivery')
  // A 2 MiB file is one 16 MiB-plan chunk: the orchestrator's own rows say so, and it was accepted.
  t.equal(result.attempts.length, 1)
  t.equal(result.attempts[0].tasks, 1, 'one task for one chunk')
  t.equal(result.attempts[0].results.accepted, 1, 'its delivery accepted')
  t.ok(result.attempts[0].attempts >= 1, 'at least the one attempt')
  // RSS of a real devnet process (five nodes in one Node process): tens to hundreds of MiB, never 0.
  t.ok(result.rssMiB.idle >= 50 && result.rssMiB.idle <= 4096, `idle RSS ${result.rssMiB.idle} MiB is a process's`)
  t.ok(result.rssMiB.peak >= result.rssMiB.perRoundPeak[0] && result.rssMiB.peak <= 4096, `peak RSS ${result.rssMiB.peak} MiB`)
  t.equal(result.rssMiB.limit, null, 'no limit asked')
  t.equal(result.rssMiB.idleLimit, null, 'no idle limit asked')
  // --idle-s 1 sampled every 100 ms: about ten samples (a busy machine may stretch the period).
  t.equal(result.rssMiB.idleSeconds, 1)
  t.ok(result.rssMiB.idleSamples >= 2 && result.rssMiB.idleSamples <= 11, `${result.rssMiB.idleSamples} idle samples in 1 s at 100 ms`)
  t.ok(result.rssMiB.idleMax >= result.rssMiB.idle, `the highest idle sample (${result.rssMiB.idleMax} MiB) is at least their median (${result.rssMiB.idle} MiB)`)
  t.match(stdout, /devnet RSS idle over 1 s \([0-9]+ samples\): median [0-9.]+ MiB, highest [0-9.]+ MiB\n/, 'idle line printed')
  t.equal(result.devnetCpuSeconds.length, 1, 'devnet CPU time measured for the round')
  // The bare pipeline: the same stages in plain node:http (its stored file and read-backs are checked
  // by the bench itself, which exits 1 on a mismatch).
  t.equal(result.bare.perRoundSeconds.length, 1, 'one bare round')
  t.equal(result.bare.seconds, result.bare.perRoundSeconds[0], 'bare: the median of one round is that round')
  t.ok(result.bare.seconds > 0, 'bare round timed')
  ratioOf(t, result.bare.overBaseline, result.bare.seconds, result.seconds.baseline, 'bare over the baseline')
  ratioOf(t, result.bare.bwnetOverBare, result.seconds.bwnet, result.bare.seconds, 'bwnet over bare')
  t.equal(result.bare.cpuSeconds.length, 1, 'bare CPU time measured for the round')
  // Measured, not necessarily non-zero: a 2 MiB round can fit inside /proc's clock tick and the 0.1 s
  // rounding. An unreadable /proc gives NaN (null in JSON); no round can use more CPU than its cores had.
  const bareCpu = result.bare.cpuSeconds[0]
  t.ok(typeof bareCpu === 'number' && Number.isFinite(bareCpu) && bareCpu >= 0, `the bare server's and sender's CPU was measured (${bareCpu} s)`)
  t.ok(bareCpu <= result.bare.seconds * availableParallelism() + 0.1, `bare CPU ${bareCpu} s fits the round's ${result.bare.seconds} s on ${availableParallelism()} cores`)
  t.match(stdout, /bwnet\/baseline = /, 'human table printed')
  t.match(stdout, /bare\/baseline = [0-9.]+, bwnet\/bare = [0-9.]+/, 'bare line printed')
  t.match(stdout, /devnet RSS: idle [0-9.]+ MiB, peak [0-9.]+ MiB/, 'RSS line printed')
  t.same(JSON.parse(await readFile(out, 'utf8')), result, 'same result written to --out')
})

t.test('e2e bench fails when the devnet RSS goes over --max-rss-mib or --max-idle-rss-mib', async t => {
  const { code, stdout, stderr, result } = await runBench(t, 'e2e', ['--size-mib', '1', '--skip-baseline', '--max-rss-mib', '1', '--max-idle-rss-mib', '1', '--timeout-s', BENCH_OWN_TIMEOUT_S])
  t.equal(code, 1, 'a devnet cannot live in 1 MiB: the bench fails')
  t.match(stderr, /idle devnet RSS reached [0-9.]+ MiB, over --max-idle-rss-mib 1; devnet RSS peaked at [0-9.]+ MiB, over --max-rss-mib 1/, 'both limits named')
  t.match(result, { bench: 'e2e', seconds: { baseline: null }, ratio: { bwnetOverBaseline: null }, rssMiB: { limit: 1, idleLimit: 1 }, verified: true }, 'the result is still printed')
  t.match(stdout, /\(limit 1 MiB\)/, 'the idle line names its limit')
  t.equal(result.bare, null, 'no --bare, no bare pipeline')
  t.notMatch(stdout, /bwnet\/baseline = /, 'no baseline, no ratio')
})
