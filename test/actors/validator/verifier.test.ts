// The validator's verifier: readiness transitions reach PRISM, and every PRISM input survives a restart
// (docs/formulas.md#readiness-transitions). Expected values are worked from the formula text.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { MemoryLevel } from 'memory-level'
import { cryptoReady, newHotkey, type PrismScores, type VerifyRequest } from '../../../protocol/index.ts'
import { LevelStore, collect, prefixRange } from '../../../actors/store.ts'
import { startSystem, stopActor, tell } from '../../../actors/runtime.ts'
import { startVerifier, PRISM_KEYS, READINESS_MIN_GAP_MS, type Verifier, type RangeReader, type VerifierDeps } from '../../../actors/validator/verifier.ts'
import { HOUR_MS, DAY_MS, TRANSITION_PENDING_REASON } from '../../../actors/domain/prism.ts'
import type { Network, Store } from '../../../actors/ports.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { silentLogger } from '../../helpers/logger.ts'

const SHA = 'a'.repeat(64)
const close = (t: { ok: (v: boolean, m: string) => unknown }, a: number, b: number, msg: string): void => { t.ok(Math.abs(a - b) < 1e-9, `${msg}: ${a} ≈ ${b}`) }

/** A verifier on `store` whose network hands each verdict and published score set to the test. */
function harness (t: { teardown (fn: () => unknown): void }, clock: ManualClock, store: Store, current: Map<string, { ready: boolean, connected: boolean }>, reader: RangeReader = { sha256Of: async (_target, length) => ({ sha256: SHA, bytes: length }) }, penalties: unknown[] = [], extra: Partial<VerifierDeps> = {}) {
  const system = startSystem()
  const verdicts = new Map<string, (v: unknown) => void>()
  const published: Array<(s: PrismScores) => void> = []
  const net: Network = {
    self: 'validator',
    send: (_to, type, body) => { if (type === 'verify_verdict') verdicts.get((body as { attemptId: string }).attemptId)?.(body); return true },
    broadcast: (type, body) => { if (type === 'prism_scores') published.shift()?.(body as PrismScores); return 1 }
  }
  const verifier: Verifier = startVerifier(system, {
    env: { clock, logger: silentLogger() }, self: 'validator', net, store, sampleRate: 1,
    reader,
    evidence: { submitEvidence: async () => {}, submitPenalties: async (rows) => { penalties.push(...rows) } },
    readiness: (h) => current.get(h) ?? { ready: false, connected: false },
    ...extra
  })
  let stopped = false
  const stop = (): void => { if (!stopped) { stopped = true; stopActor(system) } }
  t.teardown(stop)
  return {
    verifier,
    stop,
    /** One verified delivery of 8 MiB in 1 s (≈ 67 Mbps) by `orchestrator`; resolves once the verdict is out. */
    verify (orchestrator: string, attemptId: string = randomUUID(), over: Partial<VerifyRequest> = {}): Promise<unknown> {
      const body: VerifyRequest = {
        transferId: randomUUID(), taskId: randomUUID(), attemptId, chunkIndex: 0, orchestrator, worker: orchestrator,
        length: 8 * 1_048_576, sha256: SHA, trustedDurationMs: 1_000, read: { method: 'GET', url: 'http://127.0.0.1:1/x', headers: {}, expiresAt: clock.now() + 60_000 }, ...over
      }
      const verdict = new Promise(resolve => verdicts.set(attemptId, resolve))
      tell(verifier.ref, { type: 'request', from: 'coordinator', body })
      return verdict
    },
    readiness (hotkey: string, ready: boolean, connected: boolean): void {
      current.set(hotkey, { ready, connected })
      tell(verifier.ref, { type: 'readiness', hotkey, atMs: clock.now(), ready, connected })
    },
    /** Closes an epoch and resolves with what the verifier published. */
    epoch (epoch: number): Promise<PrismScores> {
      const p = new Promise<PrismScores>(resolve => published.push(resolve))
      tell(verifier.ref, { type: 'epoch', epoch })
      return p
    }
  }
}

t.before(cryptoReady)

t.test('readiness transitions feed PRISM, and every input survives a restart', async t => {
  const clock = new ManualClock()
  // On disk, closed and reopened across the restart, as the node's own store.
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-verifier-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  let db = new Level<string, string>(dir)
  await db.open()
  let store = new LevelStore(db as never)
  t.teardown(() => db.close())
  const current = new Map<string, { ready: boolean, connected: boolean }>()
  const o = newHotkey().address
  const t0 = clock.now()
  // Every read-back the verifier starts, counted: a repeat read shows here whenever its verdict would land.
  let reads = 0
  const reader: RangeReader = { sha256Of: async (_target, length) => { reads++; return { sha256: SHA, bytes: length } } }
  let v = harness(t, clock, store, current, reader)
  v.readiness(o, true, true) // connects at t0
  clock.advance(HOUR_MS)
  const attempt = randomUUID()
  await v.verify(o, attempt)
  clock.advance(HOUR_MS)
  v.readiness(o, true, false) // link down at t0 + 2 h
  clock.advance(HOUR_MS)
  v.readiness(o, true, true) // back at t0 + 3 h
  clock.advance(HOUR_MS)
  // Window [t0, t0 + 4 h] (first seen at t0), down 1 h → ratio 3/4; gate 1. Lone member of its pool:
  // throughput 0.2, reliability 0.2 → performance 0.2 → final 0.2 × 0.75 = 0.15.
  const before = await v.epoch(1)
  const s = before.scores.find(x => x.hotkey === o)!
  close(t, s.activeTimeRatio, 0.75, 'active time ratio')
  close(t, s.readinessMultiplier, 0.75, 'readiness')
  close(t, s.finalScore, 0.15, 'final')
  t.equal(s.pool, 'qualifying')

  // Restart: the store closed and reopened, a new actor system, same instant.
  v.stop()
  await db.close()
  db = new Level<string, string>(dir)
  await db.open()
  store = new LevelStore(db as never)
  v = harness(t, clock, store, current, reader)
  await new Promise<void>(resolve => tell(v.verifier.ref, { type: 'scores', reply: () => resolve() }))
  close(t, v.verifier.scoreOf(o), 0.15, 'the last close\'s score is back before any new close')
  const after = await v.epoch(1)
  t.same(after.scores, before.scores, 'the same scores after a restart')
  // The same attempt asked again is not counted twice (its evidence is in the store), and gets no verdict.
  let answered = false
  const readsBefore = reads
  void v.verify(o, attempt).then(() => { answered = true })
  // The request is handled before this query is: a read it started would be counted by now.
  await new Promise<void>(resolve => tell(v.verifier.ref, { type: 'scores', reply: () => resolve() }))
  t.equal(reads, readsBefore, 'the repeat request starts no read-back')
  clock.advance(HOUR_MS)
  const later = await v.epoch(2)
  t.notOk(answered, 'an attempt verified before the restart is not read again')
  t.equal((await collect(store.table('meta'), prefixRange(`prism/ev/${o}/`))).length, 1, 'one evidence row')
  // t0 + 5 h: window 5 h, down 1 h → 0.8.
  close(t, later.scores.find(x => x.hotkey === o)!.activeTimeRatio, 0.8, 'ratio an hour later')

  // Two days on, up all along: evidence and transitions older than the lookback are gone, except the
  // transition that carries the state into the window; up all the window → 1.
  clock.advance(2 * DAY_MS)
  const old = (await v.epoch(3)).scores.find(x => x.hotkey === o)!
  t.equal(old.activeTimeRatio, 1)
  t.equal(old.finalScore, 0, 'no evidence in the lookback: performance 0')
  const transitions = await collect(store.table<{ atMs: number }>('meta'), prefixRange(`prism/tr/${o}/`))
  t.same(transitions.map(([, tr]) => tr.atMs), [t0 + 3 * HOUR_MS], 'only the transition before the window start is kept')
  t.equal((await collect(store.table('meta'), prefixRange(`prism/ev/${o}/`))).length, 0, 'old evidence pruned')
})

t.test('the transition override survives a restart and ends on the first qualified verified task', async t => {
  const clock = new ManualClock()
  const store = new LevelStore(new MemoryLevel() as never)
  const current = new Map<string, { ready: boolean, connected: boolean }>()
  const o = newHotkey().address
  let v = harness(t, clock, store, current)
  v.readiness(o, true, true)
  clock.advance(DAY_MS) // a day old: maturity 1
  // 120 verified tasks, none failed → confidence 1 ≥ 0.9: graduates at the next close.
  for (let i = 0; i < 120; i++) await v.verify(o)
  const graduated = (await v.epoch(1)).scores[0]!
  t.equal(graduated.pool, 'qualified')
  close(t, graduated.routingScore, 0.5, 'routes at 0.5 × readiness 1 while the transition is pending')

  v.stop()
  v = harness(t, clock, store, current)
  clock.advance(HOUR_MS)
  // Qualifying evidence is not qualified evidence: still pending after the restart.
  const pending = (await v.epoch(2)).scores[0]!
  t.equal(pending.pool, 'qualified')
  t.equal(pending.finalScore, 0, 'no qualified evidence yet')
  close(t, pending.routingScore, 0.5, 'still on the override')
  const track = await store.table<{ transitionPending: boolean }>('meta').get(PRISM_KEYS.track(o))
  t.equal(track?.transitionPending, true, 'the pending flag is in the store')

  await v.verify(o)
  const cleared = (await v.epoch(3)).scores[0]!
  // Lone qualified member with one verified task: 0.4·0.2 + 0.6·0.2 = 0.2, readiness 1.
  close(t, cleared.finalScore, 0.2, 'final from qualified evidence')
  t.equal(cleared.routingScore, cleared.finalScore, 'the override ended')
  t.not(TRANSITION_PENDING_REASON, '')
})

t.test('a read-back that fails with a non-string code (a DOMException\'s) ends in an unreadable verdict, not a crash', async t => {
  const clock = new ManualClock()
  const timeout = Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError', code: 23 })
  const h = harness(t, clock, new LevelStore(new MemoryLevel() as never), new Map(), { sha256Of: async () => { throw timeout } })
  t.match(await h.verify(newHotkey().address), { verdict: 'unreadable', sha256: null }, 'the coordinator hears it could not be read')
})

t.test('a mismatch penalizes the worker only where the bytes are its alone (a node sink); at a tenant\'s own destination no one', async t => {
  const clock = new ManualClock()
  const penalties: any[] = []
  const h = harness(t, clock, new LevelStore(new MemoryLevel() as never), new Map(), { sha256Of: async (_target, length) => ({ sha256: 'b'.repeat(64), bytes: length }) }, penalties)
  const orchestrator = newHotkey().address
  const worker = newHotkey().address
  t.match(await h.verify(orchestrator, randomUUID(), { worker }), { verdict: 'mismatch' }, 'a tenant\'s server served other bytes')
  t.same(penalties, [], 'no penalty: the tenant could have written them')
  t.match(await h.verify(orchestrator, randomUUID(), { worker, attributable: true }), { verdict: 'mismatch' })
  t.match(penalties, [{ kind: 'integrity_chunk_mismatch', workerHotkey: worker, orchestratorHotkey: orchestrator }], 'at a node sink: the worker\'s own penalty')
})

t.test('a coordinator has at most maxReadsPerCoordinator read-backs in flight: more are answered busy at once', async t => {
  const clock = new ManualClock()
  const held: Array<() => void> = []
  const reader: RangeReader = { sha256Of: async (_target, length) => { await new Promise<void>(resolve => held.push(resolve)); return { sha256: SHA, bytes: length } } }
  const h = harness(t, clock, new LevelStore(new MemoryLevel() as never), new Map(), reader, [], { maxReadsPerCoordinator: 2 })
  const orchestrator = newHotkey().address
  const first = h.verify(orchestrator)
  const second = h.verify(orchestrator)
  t.match(await h.verify(orchestrator), { verdict: 'unreadable', sha256: null, detail: 'busy' }, 'a third while two are read: busy, without a read')
  t.equal(held.length, 2, 'two reads started')
  for (const release of held.splice(0)) release()
  t.match(await first, { verdict: 'verified' })
  t.match(await second, { verdict: 'verified' })
  const third = h.verify(orchestrator)
  await new Promise<void>(resolve => { const check = (): void => { if (held.length > 0) resolve(); else setImmediate(check) }; check() })
  held.shift()!()
  t.match(await third, { verdict: 'verified' }, 'once they ended, the next is read')
})

t.test('readiness flipping in every heartbeat adds no rows: a change within READINESS_MIN_GAP_MS of the last replaces or undoes it', async t => {
  const clock = new ManualClock()
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const current = new Map<string, { ready: boolean, connected: boolean }>()
  const o = newHotkey().address
  const v = harness(t, clock, store, current)
  const rows = async (): Promise<Array<{ atMs: number, ready: boolean }>> =>
    (await collect(store.table<{ atMs: number, ready: boolean }>('meta'), prefixRange(`prism/tr/${o}/`))).map(([, r]) => r)
  v.readiness(o, true, true)
  await v.verify(o) // a track: the epoch publishes its scores
  clock.advance(HOUR_MS)
  // 1,000 flips 10 ms apart: ready, not ready, ready, …
  for (let i = 0; i < 1000; i++) { clock.advance(10); v.readiness(o, i % 2 === 1, true) }
  await v.epoch(1)
  const flipped = await rows()
  t.ok(flipped.length <= 2, `${flipped.length} rows after 1,000 flips`)
  t.equal(flipped.at(-1)!.ready, true, 'the state now is the last one sent')
  // Changes further apart than the gap are each recorded: one down hour after ten quiet minutes.
  clock.advance(READINESS_MIN_GAP_MS)
  v.readiness(o, false, true)
  clock.advance(HOUR_MS)
  v.readiness(o, true, true)
  clock.advance(HOUR_MS)
  const s = (await v.epoch(2)).scores.find(x => x.hotkey === o)!
  const after = await rows()
  t.same(after.slice(-2).map(r => r.ready), [false, true], 'a change past the gap is a row of its own')
  // Window: 1 h + 10 s + 2 s ready, 1 h down, 1 h ready → ratio ≈ 2/3 (the flips' 10 s count as ready).
  t.ok(Math.abs(s.activeTimeRatio - 2 / 3) < 0.01, `active time ratio ${s.activeTimeRatio} ≈ 2/3`)
})

t.test('readiness changes a heartbeat apart are each recorded', async t => {
  const clock = new ManualClock()
  const store = new LevelStore(new MemoryLevel<string, string>() as never)
  const o = newHotkey().address
  const v = harness(t, clock, store, new Map())
  v.readiness(o, false, true)
  await v.verify(o)
  // An honest orchestrator's workers come and go at heartbeats (5 s apart, give or take a second).
  for (let i = 0; i < 10; i++) { clock.advance(i % 2 === 0 ? 4_000 : 6_000); v.readiness(o, i % 2 === 0, true) }
  await v.epoch(1)
  const rows = (await collect(store.table<{ ready: boolean }>('meta'), prefixRange(`prism/tr/${o}/`))).map(([, r]) => r.ready)
  t.same(rows, [false, true, false, true, false, true, false, true, false, true, false], 'eleven states, eleven rows')
})
