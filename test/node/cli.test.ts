// The CLI surface: help for every command, clear one-line errors for bad settings, keys new/show.
import t from 'tap'
import { mkdtemp, rm, writeFile, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCliOnce } from '../helpers/proc.ts'
import { resolveConfig, NodeSettings, NODE_SETTINGS, NODE_DEFAULTS } from '../../node/config.ts'

t.test('every command has --help', async t => {
  for (const args of [['--help'], ['devnet', '--help'], ['node', '--help'], ['keys', '--help'], ['keys', 'new', '--help'], ['keys', 'show', '--help']]) {
    const res = await runCliOnce(args)
    t.equal(res.code, 0, args.join(' '))
    t.match(res.stdout, /Usage: bwnet/, args.join(' '))
  }
})

t.test('a bad setting exits non-zero with one line naming it', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-cli-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const cases: Array<[string, string[], Record<string, string>, RegExp]> = [
    ['flag out of range', ['devnet', '--port', '70000', '--data', dir], {}, /invalid setting "port" = 70000 \(from --port\)/],
    ['env not a number', ['devnet', '--data', dir], { BWN_WORKERS: 'many' }, /invalid setting "workers" = "many" \(from BWN_WORKERS\)/],
    ['bad role', ['node', '--role', 'miner', '--bootstrap', '127.0.0.1:1', '--data', dir], {}, /invalid setting "role"/],
    ['missing bootstrap', ['node', '--role', 'worker', '--data', dir], {}, /missing setting "bootstrap" \(--bootstrap or BWN_BOOTSTRAP\)/],
    ['bad bootstrap', ['node', '--role', 'worker', '--bootstrap', 'nohost', '--data', dir], {}, /invalid setting "bootstrap"/]
  ]
  for (const [name, args, env, re] of cases) {
    const res = await runCliOnce(args, env)
    t.equal(res.code, 2, `${name}: exit 2`)
    const lines = res.stderr.trim().split('\n')
    t.equal(lines.length, 1, `${name}: one line`)
    t.match(lines[0], re, name)
  }
  const file = join(dir, 'bad.json')
  await writeFile(file, JSON.stringify({ workers: 0 }))
  const res = await runCliOnce(['devnet', '--config', file])
  t.equal(res.code, 2)
  t.match(res.stderr, /invalid setting "workers" = 0 \(from config file .*bad\.json\)/)
  await writeFile(file, JSON.stringify({ colour: 'blue' }))
  t.match((await runCliOnce(['devnet', '--config', file])).stderr, /unknown setting "colour"/)
})

t.test('precedence: flags > env > config file > defaults', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-cfg-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const file = join(dir, 'c.json')
  await writeFile(file, JSON.stringify({ role: 'worker', bootstrap: ['127.0.0.1:1'], port: 1000, slots: 2 }))
  const cfg = resolveConfig(NodeSettings, NODE_SETTINGS, NODE_DEFAULTS, { configFile: file, env: { BWN_PORT: '2000', BWN_SLOTS: '3' }, flags: { slots: '9' } })
  t.equal(cfg.port, 2000, 'env beats file')
  t.equal(cfg.slots, 9, 'flag beats env')
  t.equal(cfg.host, '127.0.0.1', 'default')
  t.same(cfg.bootstrap, ['127.0.0.1:1'])
  t.throws(() => resolveConfig(NodeSettings, NODE_SETTINGS, NODE_DEFAULTS, { env: { BWN_ROLE: 'worker', BWN_BOOTSTRAP: '127.0.0.1:1', BWN_SLOTS: '0' } }), { code: 'BWN_ERR_CONFIG' })
})

t.test('keys new and show', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-keys-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const ks = join(dir, 'k', 'hotkey.json')
  const created = await runCliOnce(['keys', 'new', '--keystore', ks])
  t.equal(created.code, 0, created.stderr)
  const made = JSON.parse(created.stdout)
  t.match(made.address, /^5[1-9A-HJ-NP-Za-km-z]{47}$/)
  t.equal((await stat(ks)).mode & 0o777, 0o600, 'keystore is private to its owner')
  const shown = JSON.parse((await runCliOnce(['keys', 'show', '--keystore', ks])).stdout)
  t.same(shown, made)
  const again = await runCliOnce(['keys', 'new', '--keystore', ks])
  t.equal(again.code, 1)
  t.match(again.stderr, /exists; pass --force/)
  const missing = await runCliOnce(['keys', 'show', '--keystore', join(dir, 'nope.json')])
  t.equal(missing.code, 1)
  t.match(missing.stderr, /cannot read keystore .*ENOENT/)
  await writeFile(ks, JSON.stringify({ ...JSON.parse(JSON.stringify(made)), version: 1 }))
  t.match((await runCliOnce(['keys', 'show', '--keystore', ks])).stderr, /keystore/)
})
