// Handlers are typed from their schemas (api/typed-app.ts): no `req.params as …`, `req.query as …` or
// `req.body as …` anywhere in api/, nor in the route plugins that live with their adapters.
import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'

const REPO = join(import.meta.dirname, '..', '..')
const CAST = /\breq\.(params|query|body) as\b/
const ADAPTER_ROUTES = ['node/adapters/destinations/node-sink.ts', 'node/adapters/destinations/sink-names.ts', 'node/transfers/data-endpoint.ts']

async function * sources (dir: string): AsyncGenerator<string> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) yield * sources(p)
    else if (e.name.endsWith('.ts')) yield p
  }
}

t.test('no route handler casts its request', async t => {
  const files = [...ADAPTER_ROUTES.map(f => join(REPO, f))]
  for await (const f of sources(join(REPO, 'api'))) files.push(f)
  t.ok(files.length > 20, `scanned ${files.length} files`)
  for (const f of files) {
    (await readFile(f, 'utf8')).split('\n').forEach((line, i) => {
      if (CAST.test(line)) t.fail(`${relative(REPO, f)}:${i + 1}: ${line.trim()}`)
    })
  }
  t.ok(CAST.test('const { id } = req.params as { id: string }'), 'the pattern finds a cast')
})
