#!/usr/bin/env node
// Entry for `bwnet` (npx, a global install, the npm tarball, `make run`). In a checkout it runs the
// TypeScript sources with Node's own type stripping; the published package runs the compiled dist/
// (`npm run build`). tsx loads the sources only where the runtime cannot strip types.
import { existsSync, readFileSync } from 'node:fs'
import module from 'node:module'
import { sep } from 'node:path'
import { fileURLToPath } from 'node:url'

// Supported: the LTS lines 24 and 26 (README#set-up). An older Node is refused before anything loads.
const MIN_NODE_MAJOR = 24
const major = Number(process.versions.node.split('.')[0])
if (major < MIN_NODE_MAJOR) {
  process.stderr.write(`bwnet: Node.js ${process.versions.node} is not supported; bwnet runs on the LTS lines 24 and 26 ` +
    '(in a checkout, `make` installs Node 26 into .toolchain/; `export PATH="$(bash .ci/node.sh):$PATH"` puts it first)\n')
  process.exit(1)
}

// `bwnet --version` answers from package.json without loading the program (the node's SOFTWARE
// string carries the same version; test/node/packaging.test.ts keeps them equal).
const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V' || args[0] === '-v')) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`${pkg.version}\n`)
  process.exit(0)
}

// Node keeps what it compiled (and the TypeScript it stripped) between runs: a devnet or a CLI call
// from source starts faster than a compiled one without it. NODE_COMPILE_CACHE picks the directory;
// set here, the devnet's second thread and child processes use the same cache.
const cache = module.enableCompileCache?.()
if (cache?.directory !== undefined) process.env.NODE_COMPILE_CACHE ??= cache.directory

// In a checkout, the TypeScript beside this file runs as it is, so an edit never meets a stale dist/.
// The published package (no sources; under node_modules, where Node does not strip types) runs dist/.
const source = fileURLToPath(new URL('./cli.ts', import.meta.url))
const compiled = fileURLToPath(new URL('../dist/node/cli.js', import.meta.url))
const strips = Boolean(process.features.typescript) && !source.split(sep).includes('node_modules')
if (strips && existsSync(source)) {
  await import('./cli.ts')
} else if (existsSync(compiled)) {
  await import(compiled)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import('./cli.ts')
}
