import { startNetwork } from '../test/net/harness/network.ts'
import { writeFile } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
const net = await startNetwork({ workers: 3 }); const DOWN = process.env.DOWN === "1"
try {
  const buf = Buffer.alloc(256 * 1024 * 1024); for (let o = 0; o < buf.length; o += 1 << 24) randomBytes(1 << 24).copy(buf, o)
  await writeFile(net.dir + '/f.bin', buf)
  const t0 = Date.now()
  const put = net.lab.bwnet('client', ['transfer', 'put', net.dir + '/f.bin', '--api', net.api, '--key', net.clientKey, '--dest', net.destinationId, '--no-progress', '--state', net.dir + '/s.json', '--wait-timeout-s', '200'])
  await net.workers[0]!.waitFor(l => l.event === 'delivery', 120_000).catch(e => console.log('no delivery', put.stderr().slice(-800)))
  if (DOWN) net.lab.linkDown("w1")
  const code = await new Promise(r => put.child.once('exit', r))
  console.log('code', code, Date.now() - t0, put.stderr().slice(-500))
  for (const [i, p] of [net.orchestrator, ...net.workers, net.validator].entries()) for (const l of p.lines) if (true) console.log(i, (l.time - t0), JSON.stringify({ ...l, time: undefined, pid: undefined, hotkey: undefined, name: undefined }).slice(0, 1500))
} finally { await net.stop() }
