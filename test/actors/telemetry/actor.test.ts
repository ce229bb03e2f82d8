// The telemetry actor: events copied at once, network snapshots at start and every hour on the
// injected clock, participants from the membership view, a cursor key that survives a restart.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { MemoryLevel } from 'memory-level'
import { LevelStore } from '../../../actors/store.ts'
import { startSystem, stopActor } from '../../../actors/runtime.ts'
import { startTelemetry, NETWORK_PUBLISH_INTERVAL_MS, PARTICIPANTS_REFRESH_MS } from '../../../actors/telemetry/index.ts'
import { ManualClock } from '../../helpers/clock.ts'
import { silentLogger } from '../../helpers/logger.ts'
import { eventually } from '../../helpers/proc.ts'
import { settled } from '../../helpers/telemetry.ts'

t.test('telemetry actor', async t => {
  const store = new LevelStore(new MemoryLevel() as never)
  const clock = new ManualClock()
  const system = startSystem()
  t.teardown(() => stopActor(system))
  let workers = 2
  const tel = await startTelemetry(system, {
    env: { clock, logger: silentLogger() }, store,
    participants: async () => ({ counts: { orchestrator: 1, worker: workers, validator: 1 }, workers: Array.from({ length: workers }, () => ({ bandwidthMbps: 100 })) })
  })
  t.teardown(() => tel.stop())
  const p = tel.reader.projection
  t.equal(p.publishedNetwork().length, 1, 'a snapshot at start')
  await eventually(async () => p.current(clock.now()).env.data.workerCount === 2, 2000, 'participants counted')
  t.equal(p.current(clock.now()).env.data.reportedCapacityMbps, 200)
  t.same(p.current(clock.now()).env.data.providers, [{ provider: 'unknown', workerCount: 2 }])

  // Events are copied when they fire: the coordinator mutates its rows afterwards.
  const transferId = randomUUID()
  const before = p.eventSeq
  const ev = settled({ transferId, offeredAtMs: clock.now() - 100, receivedAtMs: clock.now() })
  tel.onCoordinatorEvent({ type: 'checking', row: ev.row, attempt: { ...ev.attempt, state: 'checking' } })
  ev.row.bytes = 1
  await eventually(async () => p.eventSeq === before + 1, 2000, 'event applied')
  const live = p.liveTasks(p.current(clock.now()).seq, 0, {}, 10).items
  t.equal(live.length, 1)
  t.equal(live[0]!.data.state, 'pending_verification')
  tel.onCoordinatorEvent({ type: 'intervention', row: {} as never })
  tel.onCoordinatorEvent({ type: 'transfer', row: { id: transferId, status: 'completed', completed_at: new Date(clock.now()).toISOString() } as never })
  await eventually(async () => p.publishedTasks().length === 1, 2000, 'published on completion')
  t.equal(p.publishedTasks()[0]!.env.data.state, 'cancelled', 'a check still running when the transfer ended')
  t.equal(p.publishedNetwork().length, 2, 'a snapshot at the terminal transfer')

  workers = 5
  clock.advance(NETWORK_PUBLISH_INTERVAL_MS)
  await eventually(async () => p.publishedNetwork().length === 3, 2000, 'hourly snapshot')
  await eventually(async () => p.current(clock.now()).env.data.workerCount === 5, 2000, 'participants refreshed')
  // Between snapshots the participants refresh on their own, shorter period.
  workers = 7
  clock.advance(PARTICIPANTS_REFRESH_MS)
  await eventually(async () => p.current(clock.now()).env.data.workerCount === 7, 2000, 'participants refreshed after one refresh period')
  t.equal(p.current(clock.now()).env.data.reportedCapacityMbps, 700)
  t.equal(p.publishedNetwork().length, 3, 'with no new snapshot')

  const system2 = startSystem()
  t.teardown(() => stopActor(system2))
  const again = await startTelemetry(system2, { env: { clock, logger: silentLogger() }, store })
  t.teardown(() => again.stop())
  t.same(Buffer.from(again.reader.cursorKey), Buffer.from(tel.reader.cursorKey), 'cursor key kept in the meta table')
})
