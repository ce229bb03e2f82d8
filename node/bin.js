#!/usr/bin/env node
// Entry for `bwnet` (npx, a global install, the npm tarball). Runs the compiled JavaScript in dist/
// when it is there (`npm run build`; the published package always has it): no TypeScript loader, so
// `bwnet --version` starts fast. Otherwise, in a source checkout, loads the TypeScript: by itself where
// Node.js strips types (the choice node/ts-runtime.ts makes), else through tsx.
import { existsSync, readFileSync } from 'node:fs'
import { sep } from 'node:path'
import { fileURLToPath } from 'node:url'

// `bwnet --version` answers from package.json without loading the program (the node's SOFTWARE
// string carries the same version; test/node/packaging.test.ts keeps them equal).
const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V' || args[0] === '-v')) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`${pkg.version}\n`)
  process.exit(0)
}

const compiled = fileURLToPath(new URL('../dist/node/cli.js', import.meta.url))
// Node.js does not strip types of files under node_modules: a checkout installed there goes through tsx.
const strips = Boolean(process.features.typescript) && !fileURLToPath(import.meta.url).split(sep).includes('node_modules')
if (existsSync(compiled)) {
  await import(compiled)
} else if (strips) {
  await import('./cli.ts')
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import('./cli.ts')
}
