// PRISM readiness on the devnet (issue 19, acceptance): an orchestrator that disconnects and reconnects
// is published with the readiness share of the window it was really up. The test measures, on the
// validator's own membership events (announce and heartbeat as they arrive, the link drop bounded by
// when the stop began and when the validator no longer had the link), when the orchestrator was
// connected and had workers; the expected ratio is that share of [first seen, computedAt]
// (docs/formulas.md#prism), with a tolerance that is the measured uncertainty of the drop.
import t from 'tap'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { startTestDevnet, apiClient, upload, waitForStatus, testBytes } from '../../helpers/devnet.ts'
import { eventually } from '../../helpers/proc.ts'

interface Change { at: number, connected?: boolean, workers?: number | null }

/** Share of [from, to] during which connected ∧ (workers unknown ∨ workers > 0) held, walking `changes`. */
function upShare (changes: readonly Change[], from: number, to: number): number {
  let connected = false
  let workers: number | null = null
  let cursor = from
  let up = 0
  for (const c of [...changes].sort((a, b) => a.at - b.at)) {
    const at = Math.min(Math.max(c.at, from), to)
    if (connected && (workers ?? 1) > 0) up += at - cursor
    cursor = at
    if (c.connected !== undefined) connected = c.connected
    if (c.workers !== undefined) workers = c.workers
  }
  if (connected && (workers ?? 1) > 0) up += to - cursor
  return up / (to - from)
}

t.test('an orchestrator that drops and comes back is published with the share of the window it was up', async t => {
  const net = await startTestDevnet(t, { workers: 1 })
  // How long this process's event loop was held up (a busy machine): a stamp can trail by that much.
  const loopDelay = monitorEventLoopDelay({ resolution: 10 })
  loopDelay.enable()
  t.teardown(() => loopDelay.disable())
  const a = net.devnet.orchestrator
  const validator = net.devnet.nodes.find(n => n.node.config.role === 'validator')!.node
  const prismAt = async (): Promise<any> => (await fetch(`${net.file.baseUrl}/chain/prism`)).json()

  // What the validator sees of every peer, stamped as it arrives (B's key is known only once it started).
  const seen: Array<Change & { from: string }> = []
  validator.messenger.on('announce', (m) => { seen.push({ from: m.from, at: Date.now(), connected: true }) })
  validator.messenger.on('heartbeat', (m) => { seen.push({ from: m.from, at: Date.now(), workers: (m.body as { workers: number }).workers }) })

  const bConfig = { role: 'orchestrator' as const, chainHost: a.key.address }
  let b = await net.addNode('orchestrator-b', bConfig)
  const bKey = b.key.address
  const changesOfB = (): Change[] => seen.filter(c => c.from === bKey)
  await net.addNode('worker-b', { role: 'worker', attachTo: bKey })
  await eventually(async () => (await a.membership.view()).peers.some(p => p.hotkey === bKey && p.workers === 1), 20_000, 'orchestrator B with its worker')

  // B earns evidence (only orchestrators with verified work are scored).
  const api = apiClient(net.file.baseUrl, await net.clientKey('enterprise'))
  const transfer = await upload(api, testBytes(48 * 1024 * 1024, 7), { filename: 'ready.bin', hotkey: net.file.nodes[0]!.hotkey })
  await api(`/transfers/${transfer.id}/finalize`, { method: 'POST' })
  t.equal((await waitForStatus(api, transfer.id, ['completed', 'failed'], 120_000)).status, 'completed')
  await eventually(async () => (await prismAt()).scores.some((s: any) => s.hotkey === bKey), 60_000, 'PRISM for B', 200)

  // B goes away: the drop happened between the start of the stop and the validator losing the link.
  const dropFrom = Date.now()
  await b.stop()
  await eventually(async () => validator.messenger.peerOf(bKey) === undefined, 30_000, 'the validator to lose B', 10)
  const dropTo = Date.now()
  const down = await eventually(async () => {
    const p = await prismAt()
    return p.computedAt > dropTo ? p.scores.find((s: any) => s.hotkey === bKey) : undefined
  }, 60_000, 'PRISM computed while B is down', 200)
  t.equal(down.readinessMultiplier, 0, 'disconnected: readiness gate 0')
  t.equal(down.routingScore, 0, 'so B gets no work while down')

  // B comes back with the same identity; its worker reattaches.
  const gone = changesOfB().length
  b = await net.addNode('orchestrator-b', bConfig)
  t.equal(b.key.address, bKey, 'same hotkey after the restart')
  await eventually(async () => (await validator.membership.view()).peers.some(p => p.hotkey === bKey && p.workers === 1), 30_000, 'B back with its worker at the validator')
  const backAt = Date.now()
  const published = await eventually(async () => {
    const p = await prismAt()
    const s = p.computedAt > backAt ? p.scores.find((x: any) => x.hotkey === bKey) : undefined
    return s === undefined ? undefined : { computedAt: p.computedAt as number, s }
  }, 60_000, 'PRISM computed after B is back', 200)

  const changes = changesOfB()
  const firstSeen = changes.find(c => c.connected === true)!.at
  const { computedAt, s } = published
  t.ok(changes.slice(gone).some(c => c.connected === true), 'the validator saw B announce again')
  // The drop at dropFrom or at dropTo bounds the share; each stamp may trail the validator's own by a
  // little (both taken in the same dispatch of the same message), allowed as 2 ms per change, plus the
  // longest the event loop was held up when the machine is busy.
  const lo = upShare([...changes, { at: dropTo, connected: false, workers: null }], firstSeen, computedAt)
  const hi = upShare([...changes, { at: dropFrom, connected: false, workers: null }], firstSeen, computedAt)
  const [min, max] = [Math.min(lo, hi), Math.max(lo, hi)]
  const slack = ((2 + loopDelay.max / 1e6) * changes.length) / (computedAt - firstSeen)
  t.comment(`window ${computedAt - firstSeen} ms, drop measured within ${dropTo - dropFrom} ms, expected ratio in [${min.toFixed(4)}, ${max.toFixed(4)}] ± ${slack.toFixed(4)}, published ${s.activeTimeRatio}`)
  t.ok(max < 1, 'the downtime is a measurable share of the window')
  t.ok(s.activeTimeRatio >= min - slack && s.activeTimeRatio <= max + slack, `published active-time ratio ${s.activeTimeRatio} within [${min}, ${max}] ± ${slack}`)
  t.equal(s.readinessMultiplier, s.activeTimeRatio, 'connected with workers now: readiness = gate 1 × ratio')
})
