// Top self-time frames of a V8 CPU profile (`node --cpu-prof`, e.g. `npm run bench:e2e -- --profile DIR`):
//   node --import tsx bench/e2e/top-frames.ts DIR/CPU.….cpuprofile [--top 20] [--callers update]
// Self time per function (name, file, line), summed over the profile's samples, as a markdown table;
// with --callers NAME, the self time of functions named NAME split by the nearest caller in this repo.
import { readFile } from 'node:fs/promises'
import { relative } from 'node:path'
import { parseArgs } from 'node:util'

interface ProfileNode { id: number, callFrame: { functionName: string, url: string, lineNumber: number }, hitCount?: number, children?: number[] }
interface Profile { nodes: ProfileNode[], startTime: number, endTime: number, samples: number[], timeDeltas: number[] }

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '20' }, callers: { type: 'string' } } })
const top = Number(values.top)
if (positionals.length !== 1 || !Number.isInteger(top) || top < 1) throw new Error('usage: top-frames.ts FILE.cpuprofile [--top N]')

const profile = JSON.parse(await readFile(positionals[0]!, 'utf8')) as Profile
const byId = new Map(profile.nodes.map(n => [n.id, n]))
const selfUs = new Map<number, number>()
// samples[i] ran for timeDeltas[i + 1] (the delta before the next sample); the last one for 0.
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i + 1] ?? 0
  selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + dt)
}
const parentOf = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id)
const frameName = (f: ProfileNode['callFrame']): string => {
  const where = f.url === '' ? '' : `${relative(process.cwd(), f.url.replace(/^file:\/\//, ''))}:${f.lineNumber + 1}`
  return `${f.functionName || '(anonymous)'}|${where}`
}
if (values.callers !== undefined) {
  // The nearest ancestor in the repo's own code (not node_modules, not node:internal).
  const byCaller = new Map<string, number>()
  let sum = 0
  for (const [id, us] of selfUs) {
    if (byId.get(id)!.callFrame.functionName !== values.callers) continue
    let p = parentOf.get(id)
    while (p !== undefined && !/^file:.*\/(?!node_modules\/)[^/]+\.ts$/.test(byId.get(p)!.callFrame.url)) p = parentOf.get(p)
    const key = p === undefined ? '(outside the repo)|' : frameName(byId.get(p)!.callFrame)
    byCaller.set(key, (byCaller.get(key) ?? 0) + us)
    sum += us
  }
  console.log(`\`${values.callers}\`: ${Math.round(sum / 1000)} ms self, by nearest caller in the repo`)
  console.log('| ms | % | caller | where |')
  console.log('|---:|---:|---|---|')
  for (const [key, us] of [...byCaller].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const [fn, where] = key.split('|')
    console.log(`| ${Math.round(us / 1000)} | ${(us / sum * 100).toFixed(1)} | \`${fn}\` | ${where} |`)
  }
  process.exit(0)
}
const frames = new Map<string, number>()
let total = 0
for (const [id, us] of selfUs) {
  const key = frameName(byId.get(id)!.callFrame)
  frames.set(key, (frames.get(key) ?? 0) + us)
  total += us
}
console.log(`profile: ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s wall, ${(total / 1e6).toFixed(1)} s sampled`)
console.log('| self ms | self % | function | where |')
console.log('|---:|---:|---|---|')
for (const [key, us] of [...frames].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  const [fn, where] = key.split('|')
  console.log(`| ${Math.round(us / 1000)} | ${(us / total * 100).toFixed(1)} | \`${fn}\` | ${where} |`)
}
