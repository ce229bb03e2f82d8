// node/errors.ts is a leaf every layer imports: it imports nothing from node/commands/, and no chain of
// imports (type imports included) leads from it back to itself. The CLI's modules form no cycle either.
import t from 'tap'
import { readFile, readdir } from 'node:fs/promises'
import { dirname, join, normalize, relative } from 'node:path'
import { REPO } from '../helpers/proc.ts'

async function graph (): Promise<Map<string, string[]>> {
  const files: string[] = []
  for (const top of ['node', 'api', 'actors', 'protocol']) {
    for (const e of await readdir(join(REPO, top), { recursive: true, withFileTypes: true })) {
      if (e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) files.push(relative(REPO, join(e.parentPath, e.name)))
    }
  }
  const known = new Set(files)
  const g = new Map<string, string[]>()
  for (const f of files) {
    const text = await readFile(join(REPO, f), 'utf8')
    const deps = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"\n]*?from\s+'(\.[^']+)'|import\('(\.[^']+)'\)/g)]
      .map(m => normalize(join(dirname(f), m[1] ?? m[2]!))).filter(p => known.has(p))
    g.set(f, deps)
  }
  return g
}

/** A path of imports from `from` back to `from`, or null. */
function cycleThrough (g: Map<string, string[]>, from: string): string[] | null {
  const seen = new Set<string>()
  const walk = (at: string, path: string[]): string[] | null => {
    for (const next of g.get(at) ?? []) {
      if (next === from) return [...path, next]
      if (seen.has(next)) continue
      seen.add(next)
      const found = walk(next, [...path, next])
      if (found !== null) return found
    }
    return null
  }
  return walk(from, [from])
}

t.test('node/errors.ts: no import from node/commands/, no cycle through it', async t => {
  const g = await graph()
  t.same((g.get('node/errors.ts') ?? []).filter(d => d.startsWith('node/commands/')), [])
  t.equal(cycleThrough(g, 'node/errors.ts')?.join(' → ') ?? null, null)
  for (const f of [...g.keys()].filter(k => k.startsWith('node/commands/'))) {
    t.equal(cycleThrough(g, f)?.join(' → ') ?? null, null, `no cycle through ${f}`)
  }
})
