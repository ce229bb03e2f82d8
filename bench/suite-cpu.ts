// Where the test suite's CPU goes: runs a command (default `make test`) and samples every process on the
// machine from /proc every 200 ms, charging each process's own CPU to the test file it runs under (its
// nearest ancestor whose arguments name a `*.test.ts`): the file itself, the nodes, devnets, CLI runs and
// chains it starts. On two cores the files' own times (tap's `# time=`) say mostly what ran beside them;
// their CPU is what a faster suite has to cut (docs/testing.md#where-the-suites-cpu-goes).
//
//   node bench/suite-cpu.ts [--top 25] [--out bench/out/suite-cpu.json] [-- make test]
//
// A process's last 200 ms before it exits are missed, and so is CPU outside any test file (tap itself,
// the type check beside it): the total is a floor. Linux only.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { procStatSync } from './children.ts'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string' }, out: { type: 'string' } } })
const command = positionals.length > 0 ? positionals : ['make', 'test']
const top = Number(values.top ?? 25)
const SAMPLE_MS = 200

interface Seen { ppid: number, cpu: number, file: string | null, named: string | null }
/** Every process seen, by pid and start time (a pid can be reused during a long run). */
const seen = new Map<string, Seen>()
const current = new Map<number, string>() // pid → its key in `seen`, as of the last sample

function testFileOf (pid: number): string | null {
  let cmdline: string[]
  try { cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0') } catch { return null }
  // A test file's process names exactly one, last (`node [flags] FILE`); tap itself, given several, is not one.
  const named = cmdline.filter(a => /^[^\s]+\.test\.(ts|mts|js|mjs)$/.test(a))
  return named.length === 1 && cmdline.filter(a => a !== '').at(-1) === named[0] ? named[0]! : null
}

/** The test file a process runs under: its own, else its nearest ancestor's (cached once found). */
function fileOf (key: string, depth = 0): string | null {
  const s = seen.get(key)
  if (s === undefined || depth > 64) return null
  if (s.file !== null) return s.file
  const parent = current.get(s.ppid)
  const found = s.named ?? (parent === undefined ? null : fileOf(parent, depth + 1))
  if (found !== null) s.file = found
  return found
}

function sample (): void {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    const st = procStatSync(pid)
    if (st === null) continue
    const key = `${pid}@${st.startTicks}`
    let s = seen.get(key)
    if (s === undefined) {
      s = { ppid: st.ppid, cpu: st.cpuSeconds, file: null, named: testFileOf(pid) }
      seen.set(key, s)
    }
    s.cpu = st.cpuSeconds
    current.set(pid, key)
  }
  for (const key of current.values()) fileOf(key)
}

/** Busy and total CPU ticks of the whole machine (/proc/stat's first line). */
function machineTicks (): { busy: number, total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const idle = f[3]! + (f[4] ?? 0)
  const total = f.reduce((a, b) => a + b, 0)
  return { busy: total - idle, total }
}

const started = performance.now()
const before = machineTicks()
sample()
const timer = setInterval(sample, SAMPLE_MS)
const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit' })
const code: number = await new Promise(resolve => child.once('exit', (c, sig) => resolve(c ?? (sig !== null ? 1 : 0))))
clearInterval(timer)
sample()
const after = machineTicks()

const cwd = process.cwd() + '/'
const perFile = new Map<string, { cpu: number, processes: number }>()
for (const [key, s] of seen) {
  const named = fileOf(key)
  if (named === null) continue
  const file = named.startsWith(cwd) ? named.slice(cwd.length) : named
  const row = perFile.get(file) ?? { cpu: 0, processes: 0 }
  row.cpu += s.cpu; row.processes++
  perFile.set(file, row)
}
const rows = [...perFile].map(([file, r]) => ({ file, cpuSeconds: Math.round(r.cpu * 10) / 10, processes: r.processes })).sort((a, b) => b.cpuSeconds - a.cpuSeconds)
const wallSeconds = (performance.now() - started) / 1000
const totalCpu = rows.reduce((a, r) => a + r.cpuSeconds, 0)
const machineBusy = (after.busy - before.busy) / Math.max(1, after.total - before.total)
console.log(`\nsuite CPU by test file (\`${command.join(' ')}\`, exit ${code}): ${totalCpu.toFixed(0)} CPU s in the test files' processes over ${wallSeconds.toFixed(0)} s, the machine ${(machineBusy * 100).toFixed(0)} % busy`)
console.log('| CPU s | processes | file |\n|---:|---:|---|')
for (const r of rows.slice(0, top)) console.log(`| ${r.cpuSeconds.toFixed(1)} | ${r.processes} | \`${r.file}\` |`)
if (values.out !== undefined) await writeFile(values.out, JSON.stringify({ command, exit: code, wallSeconds, machineBusy, cpuSeconds: totalCpu, files: rows }, null, 1) + '\n')
process.exitCode = code
