// A verify request's evidence must be signed by a registered orchestrator (docs/security.md#peers). A
// registered orchestrator acting as a coordinator can sign task_results with key pairs it makes up, one
// per "orchestrator", each addressed to itself. Before, the validator read each delivery back and gave
// every made-up hotkey a PRISM track, kept for good and sent in every prism_scores: some 1,600 of them
// push that message past the frame limit, every receiver drops it and the validator's scores count for
// nothing. Now a request naming an orchestrator without a registration is refused before anything is read.
import t from 'tap'
import { createHash, randomUUID } from 'node:crypto'
import { startTestDevnet } from '../../helpers/devnet.ts'
import { eventually } from '../../helpers/proc.ts'
import { capturingLogger } from '../../helpers/logger.ts'
import { rogueCoordinator } from '../../helpers/rogue-coordinator.ts'
import { collect, prefixRange } from '../../../actors/store.ts'
import { encodeFrame, newHotkey, type KeyPair, type MessageBody } from '../../../protocol/index.ts'
import { PRISM_KEYS } from '../../../actors/validator/verifier.ts'
import type { BwnetNode } from '../../../node/node.ts'

const LENGTH = 64 * 1024
const bytes = Buffer.alloc(LENGTH, 3)
const sha256 = createHash('sha256').update(bytes).digest('hex')

t.test('a verify request is read back only for evidence a registered orchestrator signed', async t => {
  const { logger, lines } = capturingLogger('warn')
  const net = await startTestDevnet(t, { workers: 1, logger })
  const node = (name: string): BwnetNode => net.devnet.nodes.find(n => n.name === name)!.node
  const validator = node('validator')
  const V = validator.transport.publicKey

  // `worker`: a registered worker the rogue holds the key of.
  const { rogue, worker, url, reads } = await rogueCoordinator(t, net, validator, bytes)

  /** The rogue, as coordinator, forwards a delivery "reported" by `orchestrator`, which signs the evidence. */
  const ask = (orchestrator: KeyPair): void => {
    const ids = { transferId: randomUUID(), taskId: randomUUID(), attemptId: randomUUID() }
    const said = { ...ids, worker: worker.address, success: true, bytes: LENGTH, durationMs: 5, sha256, etag: null, error: null, via: 'http' as const, coordinator: rogue.hotkey }
    const workerClaim = Buffer.from(encodeFrame(worker, 'task_result', said, { ts: Date.now(), to: orchestrator.address })).toString('base64')
    const evidence = Buffer.from(encodeFrame(orchestrator, 'task_result', { ...said, workerClaim }, { ts: Date.now(), to: rogue.hotkey })).toString('base64')
    const body: MessageBody<'verify_request'> = {
      ...ids, chunkIndex: 0, orchestrator: orchestrator.address, worker: worker.address, length: LENGTH, sha256, trustedDurationMs: 5,
      read: { method: 'GET', url, headers: {}, expiresAt: Date.now() + 60_000 }, evidence
    }
    t.ok(rogue.send(V, 'verify_request', body, validator.key.address))
  }
  const tracks = async (): Promise<string[]> =>
    (await collect(validator.store.table<unknown>('meta'), prefixRange('prism/track/'))).map(([key]) => key)

  // Made-up orchestrators: refused, nothing read, no track.
  const made = [newHotkey(), newHotkey(), newHotkey()]
  for (const fake of made) ask(fake)
  await eventually(async () => lines.filter(l => l.event === 'verify_request_refused' && l.reason === 'orchestrator not registered').length >= made.length ? true : undefined,
    15_000, 'the requests naming made-up orchestrators refused', 50)
  t.match(lines.filter(l => l.event === 'verify_request_refused' && l.reason === 'orchestrator not registered').map(l => l.orchestrator).sort(), made.map(k => k.address).sort())

  // The rogue's own registered hotkey as the orchestrator: read back, and tracked (the refusals above were for the signer alone).
  ask(rogue.key)
  await eventually(async () => (await tracks()).includes(PRISM_KEYS.track(rogue.hotkey)) ? true : undefined, 30_000, 'the registered orchestrator tracked', 100)
  t.equal(reads(), 1, 'only the registered orchestrator\'s delivery was read back')
  for (const fake of made) t.notOk((await tracks()).includes(PRISM_KEYS.track(fake.address)), 'no PRISM track for a made-up orchestrator')
})
