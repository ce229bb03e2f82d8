// Packaging: `npm pack` builds dist/ (prepack) into a tarball that installs globally into an empty
// prefix; the installed `bwnet --version` answers and `bwnet devnet` starts and stops. The install
// is --offline (npm's cache); only when the cache lacks registry metadata (ENOTCACHED) does it fall
// back to --prefer-offline, which fetches just that metadata from the configured registry.
import t from 'tap'
import { spawn, execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { once } from 'node:events'
import { REPO } from '../helpers/proc.ts'
import { SOFTWARE } from '../../node/node.ts'
import { CLI_VERSION } from '../../node/commands/common.ts'

// Longer than the suite's per-file default: it starts several processes (and the machine may be shared).
t.setTimeout(600_000)

const run = promisify(execFile)

t.test('the version the binary reports is the package version', async t => {
  const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: string }
  t.equal(SOFTWARE, `bwnet/${pkg.version}`)
  t.equal(CLI_VERSION, pkg.version, 'bwnet --version from the CLI (it does not load the node)')
})

t.test('npm pack → global install into an empty prefix → bwnet --version and bwnet devnet', { timeout: 600_000 }, async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-pack-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const npmEnv = { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' }
  await run('npm', ['pack', '--pack-destination', dir], { cwd: REPO, env: npmEnv, maxBuffer: 16 * 1024 * 1024 })
  const tarball = (await readdir(dir)).find(f => f.endsWith('.tgz'))
  t.ok(tarball, 'a tarball')
  const prefix = join(dir, 'prefix')
  const install = (mode: '--offline' | '--prefer-offline') =>
    run('npm', ['install', '-g', mode, '--prefix', prefix, join(dir, tarball!)], { cwd: dir, env: npmEnv, maxBuffer: 16 * 1024 * 1024 })
  try {
    await install('--offline')
  } catch (err) {
    // `npm ci` caches the tarballs of the lockfile but not always the registry metadata a global install
    // of a tarball resolves its dependencies with; then (once) that metadata comes from the configured
    // registry, as it would for an operator, and the tarballs still come from the cache.
    if (!String((err as { stderr?: string }).stderr ?? '').includes('ENOTCACHED')) throw err
    t.comment('npm cache without registry metadata: installing with --prefer-offline')
    await install('--prefer-offline')
  }
  const bin = join(prefix, 'bin', 'bwnet')

  const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: string, exports: Record<string, string> }
  const t0 = process.hrtime.bigint()
  const v = await run(bin, ['--version'], { cwd: dir })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  t.equal(v.stdout.trim(), pkg.version, `bwnet --version from the installed package (${ms.toFixed(0)} ms)`)
  const installed = await readdir(join(prefix, 'lib', 'node_modules', 'bwnet'))
  t.ok(installed.includes('dist'), 'the package carries the compiled dist/')
  t.notOk(installed.includes('test'), 'and not the tests')
  // Every subpath the package exports is importable from the installed copy (no TypeScript loader).
  const expected: Record<string, string> = { './protocol': 'MESSAGES', './sim': 'runSimulation' }
  t.same(Object.keys(pkg.exports).filter(s => s !== './package.json').sort(), Object.keys(expected).sort(), 'the exported subpaths')
  for (const [sub, name] of Object.entries(expected)) {
    const probe = await run(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(`bwnet/${sub.slice(2)}`)}); console.log(typeof m[${JSON.stringify(name)}])`], { cwd: join(prefix, 'lib'), env: { ...process.env, NODE_OPTIONS: '' } })
    t.not(probe.stdout.trim(), 'undefined', `import('bwnet/${sub.slice(2)}') from the installed package exports ${name}`)
  }

  // The installed devnet: up (it prints where its API is), then a clean stop on SIGTERM.
  const data = join(dir, 'devnet')
  const child = spawn(bin, ['devnet', '--port', '0', '--data', data, '--workers', '1', '--log-level', 'silent'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  let stderr = ''
  const up = new Promise<string>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d
      const m = /devnet up: .*\n +API +(\S+)\n/.exec(stderr)
      if (m !== null) resolve(m[1]!)
    })
    child.once('exit', (code) => reject(new Error(`devnet exited ${code}: ${stderr}`)))
  })
  const baseUrl = await up
  const health = await fetch(`${baseUrl}/healthz`)
  t.equal(health.status, 200, 'the installed devnet answers /healthz')
  const devnetFile = JSON.parse(await readFile(join(data, 'devnet.json'), 'utf8')) as { keys: Record<string, string> }
  t.ok(devnetFile.keys.client?.startsWith('bwn_'), 'devnet.json carries a client key')
  child.kill('SIGTERM')
  const [code] = await once(child, 'exit') as [number | null]
  t.equal(code, 0, 'stops cleanly on SIGTERM')
})
