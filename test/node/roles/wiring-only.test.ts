// Role wiring only wires: no store access, timers or routes in node/roles/index.ts. The logic lives in
// actors (actors/validator/intake.ts, actors/validator/lifecycle.ts, actors/chain/registration.ts,
// actors/transfer/inbound.ts) and the routes in api/routes, each with its own tests.
import t from 'tap'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

const FILE = join(import.meta.dirname, '..', '..', '..', 'node', 'roles', 'index.ts')
const FORBIDDEN: Array<[string, RegExp]> = [
  ['store access', /\.table\(|\.batch\(|\.put\(|\.del\(/],
  ['timers', /\.every\(|\.setTimer\(|setTimeout|setInterval/],
  ['inline routes', /\bapp\.(get|post|put|patch|delete|head|route)\(/]
]

t.test('node/roles/index.ts has no store writes, timers or routes', async t => {
  const lines = (await readFile(FILE, 'utf8')).split('\n')
  t.ok(lines.length > 100, `read ${lines.length} lines`)
  for (const [what, re] of FORBIDDEN) {
    const hits = lines.flatMap((l, i) => re.test(l) ? [`${i + 1}: ${l.trim()}`] : [])
    t.same(hits, [], `no ${what}`)
  }
  // The checks can fail: each pattern matches what it forbids.
  t.ok(FORBIDDEN[0]![1].test("store.table('meta').put('x', 1)"))
  t.ok(FORBIDDEN[1]![1].test('clock.every(2_000, register)'))
  t.ok(FORBIDDEN[2]![1].test("app.get('/chain/prism', {"))
})
