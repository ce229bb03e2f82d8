// Telemetry survives a restart: the journal in the `telemetry` table rebuilds the same published
// network snapshots, task evidence, live versions (within their 10 minutes), sequences and snapshot
// ids; a pool scored at arrival stays the pool after the restart.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../../actors/store.ts'
import { startSystem, stopActor } from '../../../actors/runtime.ts'
import { startTelemetry, LIVE_VERSION_TTL_MS, TelemetryProjection } from '../../../actors/telemetry/index.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { silentLogger } from '../../helpers/logger.ts'
import { eventually } from '../../helpers/proc.ts'
import { settled, ORCH, ORCH_B, WORKER } from '../../helpers/telemetry.ts'

const ids = (items: ReadonlyArray<{ env: { snapshotId: string } }>): string[] => items.map(i => i.env.snapshotId)

t.test('a restarted telemetry actor serves the same history, ids and live versions', async t => {
  const store = new LevelStore(new MemoryLevel() as never)
  const clock = new ManualClock()
  const system = startSystem()
  t.teardown(() => stopActor(system))
  const pools = new Map<string, 'qualified' | 'qualifying'>([[ORCH, 'qualified']])
  const tel = await startTelemetry(system, { env: { clock, logger: silentLogger() }, store, poolOf: (h) => pools.get(h) ?? 'unscored' })
  const p = tel.reader.projection

  const done = randomUUID()
  const running = randomUUID()
  let events = 0
  const send = (e: Parameters<typeof tel.onCoordinatorEvent>[0]): void => { events++; tel.onCoordinatorEvent(e) }
  for (let i = 0; i < 3; i++) {
    const ev = settled({ transferId: done, index: i, offeredAtMs: clock.now() - 1000, receivedAtMs: clock.now(), orchestrator: i === 2 ? ORCH_B : ORCH, worker: WORKER })
    send({ type: 'result', row: ev.row, attempt: ev.attempt })
  }
  const ev = settled({ transferId: running, index: 0, offeredAtMs: clock.now() - 500, receivedAtMs: clock.now() })
  send({ type: 'checking', row: ev.row, attempt: { ...ev.attempt, state: 'checking' } })
  await eventually(async () => p.eventSeq === events, 2000, 'events applied')
  const firstLive = p.current(clock.now())
  clock.advance(1000)
  send({ type: 'transfer', row: { id: done, status: 'completed', completed_at: new Date(clock.now()).toISOString() } as never })
  await eventually(async () => p.publishedTasks().length === 3, 2000, 'published on completion')
  const secondLive = p.current(clock.now())
  t.not(secondLive.id, firstLive.id, 'a new live version; the first is superseded, still readable')
  pools.set(ORCH, 'qualifying') // changes after arrival must not rewrite what was published

  const before = {
    network: ids(p.publishedNetwork()), tasks: ids(p.publishedTasks()), live: ids(p.liveVersions(clock.now())),
    liveTasks: p.liveTasks(secondLive.seq, 0, {}, 100).items.map(e => e.snapshotId),
    networkSeq: p.networkSeq, taskSeq: p.taskSeq, eventSeq: p.eventSeq,
    pools: p.publishedTasks().map(i => i.env.data.pool)
  }
  t.same(before.pools, ['qualified', 'qualified', 'unscored'])
  await tel.stop()
  stopActor(system)

  clock.advance(60_000) // a minute later, within the live versions' 10 minutes
  const system2 = startSystem()
  t.teardown(() => stopActor(system2))
  const again = await startTelemetry(system2, { env: { clock, logger: silentLogger() }, store, poolOf: (h) => pools.get(h) ?? 'unscored' })
  t.teardown(() => again.stop())
  const q = again.reader.projection
  t.same(ids(q.publishedNetwork()), before.network, 'the same published network snapshots, no new one at start')
  t.same(ids(q.publishedTasks()), before.tasks, 'the same published task evidence')
  t.same(q.publishedTasks().map(i => i.env.data.pool), before.pools, 'pools as scored at arrival')
  t.same({ networkSeq: q.networkSeq, taskSeq: q.taskSeq, eventSeq: q.eventSeq }, { networkSeq: before.networkSeq, taskSeq: before.taskSeq, eventSeq: before.eventSeq }, 'the same sequences (cursor positions)')
  t.equal(q.version(firstLive.id, clock.now())?.id, firstLive.id, 'a superseded live version is still readable')
  t.same(q.liveTasks(q.version(secondLive.id, clock.now())!.seq, 0, {}, 100).items.map(e => e.snapshotId), before.liveTasks, 'live evidence at the pinned version')
  t.same(ids(q.liveVersions(clock.now())).slice(0, before.live.length), before.live)

  clock.advance(LIVE_VERSION_TTL_MS)
  t.equal(q.version(firstLive.id, clock.now()), null, 'the 10-minute window still applies after a restart')
})

t.test('replaying a journal rebuilds a projection entry for entry', async t => {
  const journal: Parameters<TelemetryProjection['replay']>[0][] = []
  const a = new TelemetryProjection({ epochAt: () => 7, journal: (e) => journal.push(e) })
  const at = 1_800_000_000_000
  const ev = settled({ transferId: randomUUID(), offeredAtMs: at - 100, receivedAtMs: at })
  a.apply({ type: 'result', row: ev.row, attempt: ev.attempt }, at)
  a.current(at + 1)
  a.apply({ type: 'transfer', id: ev.row.transfer_id, status: 'completed', completedAtMs: at + 2 }, at + 2)
  a.setParticipants({ workerCount: 1, orchestratorCount: 1, validatorCount: 0, reportedCapacityMbps: 5, providers: [] }, {})
  a.publishNetwork(at + 3)
  a.prune(at + 4)
  t.same(journal.map(e => e.k), ['event', 'cut', 'event', 'participants', 'publish', 'prune'], 'a terminal transfer\'s own snapshot is not journaled apart')
  const b = new TelemetryProjection({ epochAt: () => 7 })
  for (const e of journal) b.replay(e)
  t.same(ids(b.publishedNetwork()), ids(a.publishedNetwork()))
  t.same(ids(b.publishedTasks()), ids(a.publishedTasks()))
  t.equal(b.current(at + 5).id, a.current(at + 5).id)
})
