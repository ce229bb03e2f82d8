// The devnet's second thread (`threads: 2`): its workers and its validator, each a whole BwnetNode with
// its own DHT node, exactly as on the main thread. They reach the orchestrator over loopback sockets
// and the DHT as separate hosts would, so the thread needs nothing from the main thread but its
// plan; the devnet's one process then keeps two cores busy (docs/node.md#settings, `threads`).
//
// Messages: the main thread sends `stop` (and waits for the thread to exit); this thread sends `ready`
// (or `failed`) and `log` for every log line (written by the main thread's logger, so lines from both
// threads never interleave).
import { parentPort, workerData } from 'node:worker_threads'
import DHT from 'hyperdht'
import type { DestinationStream } from 'pino'
import { BwnetNode, type NodeInfo } from './node.ts'
import { createLogger } from './logger.ts'
import type { NodeConfig } from './config.ts'
import { releaseStartupHeap } from './heap.ts'

export interface DevnetThreadData {
  plans: Array<{ name: string, cfg: NodeConfig }>
  bootstrap: Array<{ host: string, port: number }>
  logLevel: string
}
export type DevnetThreadMessage =
  | { op: 'ready', nodes: Array<{ name: string, info: NodeInfo }> }
  | { op: 'failed', error: string }
  | { op: 'log', line: string }

const port = parentPort
if (port === null) throw new Error('devnet-thread runs as a worker thread of a devnet')
const send = (m: DevnetThreadMessage): void => { port.postMessage(m) }
const { plans, bootstrap, logLevel } = workerData as DevnetThreadData
const toMain: DestinationStream = { write: (line: string) => { send({ op: 'log', line }) } }
const logger = createLogger({ level: logLevel, destination: toMain })
// Loopback and ephemeral, as the main thread's testnet.createNode() builds them, and declared not
// firewalled (true on loopback): left to find that out, a DHT node in this thread took 1-28 s to reach
// the orchestrator, while nodes that share the testnet's thread join at once.
const nodes = plans.map(({ name, cfg }) => {
  const dht = new DHT({ bootstrap, host: '127.0.0.1', ephemeral: true, firewalled: false })
  return { name, dht, node: new BwnetNode({ config: cfg, logger: logger.child({ node: name }), dht }) }
})

let stopping: Promise<void> | null = null
const stop = (): Promise<void> => (stopping ??= (async () => {
  await Promise.allSettled([...nodes].reverse().map(n => n.node.stop()))
  await Promise.allSettled(nodes.map(n => n.dht.destroy())) // a swarm does not close a DHT it was given
})())
port.on('message', (m: { op?: unknown }) => {
  if (m.op === 'stop') void stop().then(() => { port.close() })
})

try {
  await Promise.all(nodes.map(n => n.node.start()))
  await releaseStartupHeap() // what starting the nodes left on this thread's heap (node/heap.ts)
  send({ op: 'ready', nodes: nodes.map(n => ({ name: n.name, info: n.node.info() })) })
} catch (err) {
  await stop()
  send({ op: 'failed', error: err instanceof Error ? err.message : String(err) })
  port.close()
}
