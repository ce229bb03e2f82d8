// What loading a node costs every thread that runs one: the devnet's second thread (workers and a
// validator) must not load Fastify or the AWS SDK, which only an orchestrator serving the API, or one
// with an s3 destination, uses (docs/benchmarks.md#memory). A resolve hook records every package a fresh
// process loads while it imports node/node.ts.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const REPO = fileURLToPath(new URL('../..', import.meta.url))

// A synchronous resolve hook in the process's own thread (module.registerHooks): what it records is in
// memory when the import ends, unlike output written from an off-thread hook, which a process may exit
// without flushing.
const MAIN = `
import { registerHooks } from 'node:module'
const seen = new Set()
registerHooks({
  resolve (specifier, context, next) {
    const r = next(specifier, context)
    const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(r.url)
    if (m) seen.add(m[1])
    return r
  }
})
await import(process.argv[1])
process.stdout.write([...seen].map(p => 'package ' + p + '\\n').join('') + 'imported\\n')`

function packagesLoadedBy (modulePath: string): Set<string> {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', MAIN, new URL(modulePath, `file://${REPO}/`).href], { cwd: REPO, encoding: 'utf8', timeout: 60_000 })
  if (!run.stdout.includes('imported\n')) throw new Error(`import failed (${run.status}): ${run.stderr}`)
  return new Set(run.stdout.split('\n').filter(l => l.startsWith('package ')).map(l => l.slice('package '.length)))
}

t.test('a node loads neither Fastify nor the AWS SDK until it serves the API or uses an s3 destination', async t => {
  const node = packagesLoadedBy('node/node.ts')
  t.ok(node.has('hyperswarm') && node.has('level'), `the hook sees the node's packages (${[...node].length} loaded)`)
  t.notOk(node.has('fastify'), 'no Fastify')
  t.notOk(node.has('@aws-sdk/client-s3'), 'no AWS SDK')

  // The hook would see them: the modules that need them do load them.
  t.ok(packagesLoadedBy('api/app.ts').has('fastify'), 'the API loads Fastify')
  t.ok(packagesLoadedBy('node/adapters/destinations/s3.ts').has('@aws-sdk/client-s3'), 'the s3 driver loads the AWS SDK')
})
