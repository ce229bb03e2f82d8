// Prints the top self-time frames of a V8 CPU profile (`node --cpu-prof`), as the tables in
// docs/benchmarks.md show them: `node bench/profile-top.ts FILE.cpuprofile [N] [--skip-ms MS]`
// (--skip-ms: leave out the first MS of the profile, e.g. a server's startup before the load).
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'

interface Node { id: number, callFrame: { functionName: string, url: string, lineNumber: number }, hitCount?: number }
const { positionals, values } = parseArgs({ allowPositionals: true, options: { 'skip-ms': { type: 'string' } } })
const [file, n = '15'] = positionals
const skipUs = Number(values['skip-ms'] ?? 0) * 1000
if (file === undefined) { process.stderr.write('usage: profile-top FILE.cpuprofile [N] [--skip-ms MS]\n'); process.exit(2) }
const prof = JSON.parse(await readFile(file, 'utf8')) as { nodes: Node[], samples: number[], timeDeltas: number[] }
const byId = new Map(prof.nodes.map(nd => [nd.id, nd]))
const self = new Map<string, number>()
let total = 0
let at = 0
for (let i = 0; i < prof.samples.length; i++) {
  const nd = byId.get(prof.samples[i]!)!
  const dt = prof.timeDeltas[i] ?? 0
  at += dt
  if (at < skipUs) continue
  total += dt
  const f = nd.callFrame
  const where = f.url ? `${f.url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*\/(bench|node|api|actors|protocol)\//, '$1/')}:${f.lineNumber + 1}` : ''
  const key = `${f.functionName || '(anonymous)'} ${where}`.trim()
  self.set(key, (self.get(key) ?? 0) + dt)
}
const idle = self.get('(idle)') ?? 0
console.log(`total ${(total / 1000).toFixed(0)} ms, busy ${((total - idle) / 1000).toFixed(0)} ms`)
console.log('| self ms | % of busy | frame |')
console.log('|---:|---:|---|')
for (const [k, v] of [...self].filter(([k]) => k !== '(idle)').sort((a, b) => b[1] - a[1]).slice(0, Number(n))) {
  console.log(`| ${(v / 1000).toFixed(0)} | ${(100 * v / (total - idle)).toFixed(1)} | \`${k}\` |`)
}
