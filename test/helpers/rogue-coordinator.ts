// A registered orchestrator a test holds the key of, acting as coordinator towards a devnet's validator:
// enrolled on the dev chain, connected, and admitted as an orchestrator there; with a worker key it also
// holds (registered as a worker), and a read-back target serving the bytes it chooses, its reads counted.
import { createServer } from 'node:http'
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { newHotkey, type KeyPair } from '../../protocol/index.ts'
import type { BwnetNode } from '../../node/node.ts'
import type { TestDevnet } from './devnet.ts'
import { eventually } from './proc.ts'
import { Rogue } from './rogue.ts'

export interface RogueCoordinator { rogue: Rogue, worker: KeyPair, url: string, reads (): number }

export async function rogueCoordinator (t: { teardown (fn: () => unknown): void }, net: TestDevnet, validator: BwnetNode, served: Buffer): Promise<RogueCoordinator> {
  let reads = 0
  const server = createServer((_req, res) => { reads++; res.writeHead(200, { 'content-length': served.length }); res.end(served) })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => server.close())
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/chunk`
  const rogue = await Rogue.join(net.devnet.testnet.createNode(), net.devnet.network, newHotkey(), { autoAnnounce: 'orchestrator' })
  t.teardown(() => rogue.stop())
  const chain = net.devnet.orchestrator.devChain!
  await chain.enroll(rogue.hotkey, 'orchestrator')
  const worker = newHotkey()
  await chain.enroll(worker.address, 'worker')
  await rogue.until(() => rogue.up.has(validator.transport.publicKey) && rogue.got('announce', validator.key.address).length > 0, 30_000, 'a connection to the validator')
  await eventually(async () => validator.auth.allows(rogue.hotkey, 'orchestrator'), 30_000, 'the rogue admitted as an orchestrator', 100)
  return { rogue, worker, url, reads: () => reads }
}
