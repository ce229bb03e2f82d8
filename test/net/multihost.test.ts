// Across hosts: 1 orchestrator, 3 workers (links capped at 100 Mbit/s), 1 validator, an http
// destination and a client, each in its own network namespace and process. A 256 MiB file arrives with
// the same sha256; one worker's link goes down mid-transfer and the transfer still completes, the
// overseer's intervention rows naming that worker. Needs root (skipped otherwise, with the reason).
import t from 'tap'
import { join } from 'node:path'
import { Level } from 'level'
import { skipReason } from './harness/netns.ts'
import { startNetwork, putSummary } from './harness/network.ts'
import { writeRandomFile, sha256File } from './harness/files.ts'
import { LevelStore } from '../../actors/store.ts'
import { collect, prefixRange } from '../../actors/store.ts'

// Longer than the suite's per-file default: it starts several processes (and the machine may be shared).
t.setTimeout(540_000)

const MIB = 1024 * 1024
const SIZE = 256 * MIB

const skip = skipReason()
t.test('a 256 MiB transfer across hosts survives a worker link going down', { skip: skip ?? false, timeout: 480_000 }, async t => {
  const net = await startNetwork({ workers: 3, workerMbit: 100, edgeMbit: 1000 })
  t.teardown(() => net.stop()) // on failure too (idempotent)

  const file = join(net.dir, 'payload.bin')
  const expected = await writeRandomFile(file, SIZE)
  const put = net.lab.bwnet('client', ['transfer', 'put', file, '--api', net.api, '--key', net.clientKey, '--dest', net.destinationId,
    '--no-progress', '--state', join(net.dir, 'put-state.json'), '--wait-timeout-s', '400'])

  // The first worker's link goes down once it has delivered something (it holds more work by then).
  const victim = net.workers[0]!
  await victim.waitFor(l => l.event === 'delivery', 120_000, 'a delivery by worker 1')
  net.lab.linkDown('w1')
  t.pass('worker 1 link down')

  const code = await new Promise<number | null>(resolve => put.child.once('exit', resolve))
  const stdout = put.lines.map(l => l.unparsed === true ? l.msg : JSON.stringify(l)).join('\n')
  t.equal(code, 0, `transfer put exits 0; stderr: ${put.stderr().slice(-1000)}`)
  const { id, summary } = putSummary(stdout)
  t.equal(summary.status, 'completed')
  t.equal(await sha256File(join(net.destDir, id)), expected, 'the destination holds the exact bytes (sha256)')

  // The orchestrator's rows, read from its store once it has stopped.
  await net.orchestrator.stop()
  const db = new Level<string, string>(join(net.orchestratorData, 'db'))
  await db.open()
  try {
    const store = new LevelStore(db as never)
    const interventions = (await collect(store.table<any>('overseer_interventions'), prefixRange(`${id}/`))).map(([, r]) => r)
    t.ok(interventions.length >= 1, `intervention rows recorded (${interventions.length})`)
    t.ok(interventions.some(r => r.previous_worker_id === net.workerHotkeys[0]), 'an intervention took work from the worker whose link went down')
    const accepted = (await collect(store.table<any>('task_results'), prefixRange(`${id}/`))).map(([, r]) => r).filter(r => r.outcome === 'accepted')
    t.equal(new Set(accepted.map(r => r.chunk_index)).size, SIZE / (16 * MIB), 'every chunk has an accepted delivery')
    t.ok(new Set(accepted.map(r => r.worker_id)).size >= 2, 'more than one worker delivered')
  } finally { await db.close() }
  await net.stop()
  t.same(net.lab.leftovers(), [], 'every namespace of the run is gone')
})
