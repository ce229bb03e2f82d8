// A rogue node in its own process that floods one peer with valid-signature frames (pre-signed
// heartbeats and chain requests, resent over and over) for a bounded time and count, then reports.
// Frames go out at an even rate of maxFrames per durationMs (the attack seen: 100,000 in 10 s).
// Usage: node test/helpers/rogue-flood.ts '{"bootstrap":["127.0.0.1:port"],"network":"devnet","target":"<swarm key hex>","durationMs":10000,"maxFrames":100000}'
// With "seed" (hex, 32 bytes) the rogue's hotkey is made from it, so a test can register it first: an
// unregistered peer is disconnected at its refused announce, before any flood (node/peer-gate.ts).
// Prints JSON lines: {"event":"connected"}, then waits for a line "go" on stdin (the caller checks that
// the target has bound the rogue's announce: a flood before that is refused as unannounced, and tests
// nothing about a registered peer's flood), then floods and prints
// {"event":"done","sent","refusedSends","disconnectedAtMs","reconnected"}.
import DHT from 'hyperdht'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { cryptoReady, hotkeyFromSeed } from '../../protocol/index.ts'
import { Rogue } from './rogue.ts'

interface Args { bootstrap: string[], network: string, target: string, durationMs: number, maxFrames: number, seed?: string }

const PRESIGNED = 2_000 // distinct frames, resent cyclically (repeats are part of the attack)
const TICK_MS = 10 // frames go out in a batch every tick, at the rate maxFrames / durationMs

async function main (): Promise<void> {
  const args = JSON.parse(process.argv[2] ?? '{}') as Args
  await cryptoReady()
  const dht = new DHT({ bootstrap: args.bootstrap.map(b => { const [host, port] = b.split(':'); return { host: host!, port: Number(port) } }), host: '127.0.0.1', ephemeral: true })
  const rogue = await Rogue.join(dht, args.network, args.seed === undefined ? undefined : hotkeyFromSeed(Buffer.from(args.seed, 'hex')))
  rogue.autoAnnounce = 'validator' // also on a connection that replaces the first (swarm de-duplication)
  await rogue.until(() => rogue.up.has(args.target), 90_000, 'connection to the target')
  // The target's own announce proves its side of the connection is up before the flood starts.
  await rogue.until(() => rogue.captured.some(c => c.peer === args.target && c.msg.type === 'announce'), 90_000, 'the target\'s announce')
  console.log(JSON.stringify({ event: 'connected', hotkey: rogue.hotkey, publicKey: rogue.publicKey }))
  const [line] = await once(createInterface({ input: process.stdin }), 'line') as [string]
  if (line.trim() !== 'go') throw new Error(`expected "go" on stdin, got ${JSON.stringify(line)}`)
  const frames: Uint8Array[] = []
  for (let i = 0; i < PRESIGNED; i++) {
    frames.push(i % 2 === 0
      ? rogue.frame('heartbeat', { role: 'validator', seq: i, capacity: { slots: 1, bandwidthMbps: 1 }, load: 0, workers: 0 })
      : rogue.frame('chain_request', { requestId: `flood-${i}`, request: { op: 'head' } }))
  }
  const start = Date.now()
  let sent = 0; let refusedSends = 0; let disconnectedAtMs: number | null = null; let reconnected = false
  const perMs = args.maxFrames / args.durationMs
  while (Date.now() - start < args.durationMs && sent < args.maxFrames) {
    const due = Math.min(args.maxFrames, Math.ceil((Date.now() - start + TICK_MS) * perMs))
    while (sent < due) {
      if (rogue.transport.send(args.target, frames[sent % PRESIGNED]!)) sent++
      else { refusedSends++; break }
    }
    if (disconnectedAtMs === null && rogue.down.has(args.target)) disconnectedAtMs = Date.now() - start
    if (disconnectedAtMs !== null && rogue.up.has(args.target)) reconnected = true
    await new Promise(resolve => setTimeout(resolve, TICK_MS))
  }
  console.log(JSON.stringify({ event: 'done', sent, refusedSends, disconnectedAtMs, reconnected, ms: Date.now() - start }))
  await rogue.stop()
  await dht.destroy()
}

main().then(() => process.exit(0), (err: Error) => { console.error(err); process.exit(1) })
