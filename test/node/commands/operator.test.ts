// The operator's commands: `bwnet bootstrap` (binds exactly the address given, logs it, stops on
// SIGTERM), `bwnet admin init` (first admin key once, refused while the node runs or an admin exists),
// and the node flags --dht-port, repeatable --bootstrap, --metrics-port.
import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSocket } from 'node:dgram'
import { Level } from 'level'
import { runCli, runCliOnce } from '../../helpers/proc.ts'
import { resolveConfig, NodeSettings, NODE_SETTINGS, NODE_DEFAULTS } from '../../../node/config.ts'
import { nodeCommand } from '../../../node/commands/run.ts'
import { LevelStore } from '../../../actors/store.ts'
import { AccountsService } from '../../../api/accounts/service.ts'

async function freeUdpPort (): Promise<number> {
  const s = createSocket('udp4')
  await new Promise<void>(resolve => s.bind(0, '127.0.0.1', resolve))
  const { port } = s.address()
  await new Promise<void>(resolve => s.close(() => resolve()))
  return port
}

t.test('bwnet bootstrap: logs its address, answers as a DHT node, stops cleanly on SIGTERM', async t => {
  const port = await freeUdpPort()
  const p = runCli(['bootstrap', '--host', '127.0.0.1', '--port', String(port)])
  t.teardown(() => p.stop('SIGKILL'))
  const ready = await p.waitFor(l => l.event === 'bootstrap_ready', 30_000, 'bootstrap ready')
  t.equal(ready.address, `127.0.0.1:${port}`)
  // A node bootstrapping from it joins the DHT (its routing table gets the bootstrap node).
  const { default: DHT } = await import('hyperdht')
  const node = new DHT({ bootstrap: [`127.0.0.1:${port}`], host: '127.0.0.1', ephemeral: true })
  t.teardown(() => node.destroy())
  await node.fullyBootstrapped()
  t.ok((node as unknown as { table: { toArray (): unknown[] } }).table.toArray().length >= 1, 'the bootstrap node answered')
  const { code } = await p.stop('SIGTERM')
  t.equal(code, 0, 'clean exit on SIGTERM')
})

t.test('bwnet bootstrap refuses 0.0.0.0 and bad ports', async t => {
  const any = await runCliOnce(['bootstrap', '--host', '0.0.0.0', '--port', '49737'])
  t.not(any.code, 0)
  t.match(any.stderr, /not 0\.0\.0\.0/)
  const bad = await runCliOnce(['bootstrap', '--host', '127.0.0.1', '--port', '70000'])
  t.not(bad.code, 0)
})

t.test('bwnet admin init: the first admin key once; refused when one exists (unless --force) and while the node runs', async t => {
  const data = await mkdtemp(join(tmpdir(), 'bwnet-init-'))
  t.teardown(() => rm(data, { recursive: true, force: true }))
  const first = await runCliOnce(['admin', 'init', '--data', data, '--name', 'acme'])
  t.equal(first.code, 0, first.stderr)
  const created = JSON.parse(first.stdout)
  t.match(created, { organizationId: String, keyId: String, key: /^bwn_/, created: 'organization' })
  t.match(first.stderr, /not shown again/)

  const again = await runCliOnce(['admin', 'init', '--data', data])
  t.equal(again.code, 1, 'a second init is refused')
  t.match(again.stderr, /already exists.*--force/)
  t.notMatch(again.stderr, created.key, 'the existing key is never printed again')

  const forced = await runCliOnce(['admin', 'init', '--data', data, '--force'])
  t.equal(forced.code, 0)
  const second = JSON.parse(forced.stdout)
  t.equal(second.organizationId, created.organizationId, '--force adds a key to the same organization')
  t.equal(second.created, 'key')

  // The node's database is open (the node runs): init refuses instead of writing behind its back.
  const db = new Level<string, string>(join(data, 'db'))
  await db.open()
  try {
    const locked = await runCliOnce(['admin', 'init', '--data', data, '--force'])
    t.equal(locked.code, 1)
    t.match(locked.stderr, /in use: stop the node first/)
    const accounts = new AccountsService({ store: new LevelStore(db as never) })
    const keys = await accounts.listKeys(created.organizationId)
    t.equal(keys.filter(k => k.role === 'admin').length, 2, 'exactly the two admin keys; nothing written while locked')
    const auth = await accounts.authenticate(created.key)
    t.equal(auth.ok, true, 'the printed key authenticates')
  } finally { await db.close() }
})

t.test('every node setting has its flag on `bwnet node`', async t => {
  const accepted = new Set(nodeCommand().options.map(o => o.long))
  t.same(Object.values(NODE_SETTINGS).map(m => m.flag).filter(f => !accepted.has(f)), [], 'no documented flag is refused as unknown')
  const cmd = nodeCommand()
  const [a, b] = ['5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY', '5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty']
  cmd.parseOptions(['--role', 'orchestrator', '--bootstrap', '127.0.0.1:1', '--max-workers', '40', '--max-workers-per-address', '4', '--worker-allowlist', `${a},${b}`])
  const flags = Object.fromEntries(Object.entries(cmd.opts()).filter(([, v]) => v !== undefined))
  const cfg = resolveConfig(NodeSettings, NODE_SETTINGS, NODE_DEFAULTS, { flags, env: {} })
  t.equal(cfg.maxWorkers, 40)
  t.equal(cfg.maxWorkersPerAddress, 4)
  t.same(cfg.workerAllowlist, [a, b])
  t.equal(resolveConfig(NodeSettings, NODE_SETTINGS, NODE_DEFAULTS, { flags: { role: 'orchestrator', bootstrap: ['127.0.0.1:1'] }, env: {} }).maxWorkersPerAddress, 16, 'default')
})

t.test('node flags: --dht-port, --bootstrap repeated and comma-separated, --metrics-port', async t => {
  const cmd = nodeCommand()
  cmd.parseOptions(['--bootstrap', '10.0.0.1:49737,10.0.0.9:49737', '--bootstrap', '10.0.0.8:1', '--dht-port', '49738', '--metrics-port', '9464', '--role', 'worker'])
  const flags = Object.fromEntries(Object.entries(cmd.opts()).filter(([, v]) => v !== undefined))
  const cfg = resolveConfig(NodeSettings, NODE_SETTINGS, NODE_DEFAULTS, { flags, env: {} })
  t.same(cfg.bootstrap, ['10.0.0.1:49737', '10.0.0.9:49737', '10.0.0.8:1'])
  t.equal(cfg.dhtPort, 49738)
  t.equal(cfg.metricsPort, 9464)
  t.equal(cfg.metricsHost, '127.0.0.1')
  const env = resolveConfig(NodeSettings, NODE_SETTINGS, NODE_DEFAULTS, { env: { BWN_ROLE: 'worker', BWN_BOOTSTRAP: 'a:1,b:2', BWN_DHT_PORT: '5000', BWN_METRICS_PORT: '0' } })
  t.same(env.bootstrap, ['a:1', 'b:2'])
  t.equal(env.dhtPort, 5000)
  t.equal(env.metricsPort, 0)
  t.throws(() => resolveConfig(NodeSettings, NODE_SETTINGS, NODE_DEFAULTS, { env: { BWN_ROLE: 'worker', BWN_BOOTSTRAP: 'a:1', BWN_DHT_PORT: '0' } }), /dhtPort/)
})
