// Handlers are typed from their schemas (api/typed-app.ts): no `req.params as …`, `req.query as …` or
// `req.body as …` anywhere in api/, nor in the route plugins that live with their adapters.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { tsFiles } from '../helpers/sources.ts'

const REPO = join(import.meta.dirname, '..', '..')
const CAST = /\breq\.(params|query|body) as\b/
const ADAPTER_ROUTES = ['node/adapters/destinations/node-sink.ts', 'node/adapters/destinations/sink-names.ts', 'node/transfers/data-endpoint.ts']

t.test('no route handler casts its request', async t => {
  const files = [...ADAPTER_ROUTES.map(f => join(REPO, f))]
  for await (const f of tsFiles(join(REPO, 'api'))) files.push(f)
  t.ok(files.length > 20, `scanned ${files.length} files`)
  for (const f of files) {
    (await readFile(f, 'utf8')).split('\n').forEach((line, i) => {
      if (CAST.test(line)) t.fail(`${relative(REPO, f)}:${i + 1}: ${line.trim()}`)
    })
  }
  t.ok(CAST.test('const { id } = req.params as { id: string }'), 'the pattern finds a cast')
})
