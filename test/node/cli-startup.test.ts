// A client command starts light: `bwnet transfer …`, `login`, `profiles` and `--version` load the
// client's modules only, never the sr25519 WebAssembly, the codec, the node or its API server. They
// started in ~0.6 s and 215 MB before (the protocol barrel pulled @polkadot in), ~0.12 s and 77 MB now.
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { REPO } from '../helpers/proc.ts'

const run = promisify(execFile)
/** Packages a client command must not load: they belong to the node, its keys and its servers. */
const HEAVY = ['@polkadot/', 'msgpackr', 'fastify', 'hyperswarm', 'hyperdht', 'classic-level', 'nact', 'prom-client']

/**
 * The modules `bwnet ARGS` resolves, as file URLs: a synchronous resolve hook (module.registerHooks, which
 * sees `require` as well as `import`: the @polkadot libraries are loaded as CommonJS) appends each to a file.
 */
async function modulesOf (t: Test, args: string[]): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-cli-startup-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const register = join(dir, 'register.mjs')
  await writeFile(register, `import { registerHooks } from 'node:module'
import { appendFileSync } from 'node:fs'
registerHooks({
  resolve (specifier, context, next) {
    const r = next(specifier, context)
    appendFileSync(process.env.BWN_TEST_MODULES, r.url + '\\n')
    return r
  }
})
`)
  const list = join(dir, 'modules.txt')
  // Without the test runner's own NODE_OPTIONS: the CLI as a user starts it.
  const { NODE_OPTIONS: _, ...env } = process.env
  await run(process.execPath, ['--import', pathToFileURL(register).href, join(REPO, 'node/cli.ts'), ...args], { env: { ...env, BWN_TEST_MODULES: list } })
  return (await readFile(list, 'utf8')).trim().split('\n')
}

t.test('client commands and --version load no node-side package', async t => {
  for (const args of [['transfer', 'status', '--help'], ['transfer', 'put', '--help'], ['profiles', '--help'], ['--version']]) {
    const modules = await modulesOf(t, args)
    t.ok(modules.some(m => m.endsWith('/node/cli.ts')) && modules.length > 10, `${args.join(' ')}: the hook saw the CLI load (${modules.length} modules)`)
    t.same(modules.filter(m => HEAVY.some(p => m.includes(`/node_modules/${p}`))), [], `${args.join(' ')}: none of ${HEAVY.join(', ')}`)
  }
})

t.test('a node command still loads the whole CLI (the check above can fail)', async t => {
  const modules = await modulesOf(t, ['keys', '--help'])
  const polkadot = modules.filter(m => /\/node_modules\/@polkadot\/[^/]+\//.test(m) && !/\/@polkadot\/[^/]+\/node_modules\//.test(m))
  t.ok(polkadot.length > 10, `keys --help loads @polkadot (the whole CLI): ${polkadot.length} modules`)
  // Loaded as CommonJS (docs/node.md#start-up): through ESM each of these modules costs a parse of its
  // package's 50 KB exports map.
  t.same(polkadot.filter(m => !m.includes('/cjs/')), [], 'every @polkadot module it loads is the CommonJS build')
})

t.test('no source module imports a @polkadot value through ESM (types only): they load as CommonJS', async t => {
  const found: string[] = []
  let scanned = 0
  for (const top of ['node', 'actors', 'protocol', 'api', 'sim', 'test', 'bench']) {
    for (const f of await readdir(join(REPO, top), { recursive: true })) {
      if (!f.endsWith('.ts') || f.includes('node_modules') || f.startsWith('out/')) continue
      scanned++
      const src = await readFile(join(REPO, top, f), 'utf8')
      for (const m of src.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^'"]*?from\s+['"](@polkadot\/[^'"]+)['"]|^\s*import\s+['"](@polkadot\/[^'"]+)['"]|(?<!typeof\s+)(?<!\btype\s+\w+\s*=\s*)import\(\s*['"](@polkadot\/[^'"]+)['"]\s*\)/gm)) {
        found.push(`${top}/${f}: ${m[0].trim().slice(0, 120)}`)
      }
    }
  }
  t.ok(scanned > 300, `scanned ${scanned} TypeScript files`)
  t.same(found, [], 'no ESM value import of @polkadot')
})
