// Where the time of a lab run goes: once a period, every lab process's CPU (/proc/PID/stat, and its main
// thread's alone: JavaScript runs there, V8's collector and libuv's file pool on other threads), the whole
// machine's CPU (/proc/stat, so other load shows) and every host link's bytes each way (the bridge's veth
// ends: rx = what the host sent, tx = what it received). `bench/net/run.ts --trace` prints and keeps it.
import { readFile } from 'node:fs/promises'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import type { NetLab } from '../../test/net/harness/netns.ts'

const run = promisify(execFile)
const TICK_S = 0.01 // USER_HZ: /proc counts CPU in 1/100 s on Linux

export interface Sample {
  /** Seconds since the trace started. */
  t: number
  /** Per host: CPU seconds of its processes so far (all threads), of that in the kernel, and of their main threads. */
  cpu: Record<string, { total: number, sys: number, main: number, mainWait: number }>
  /** Per host: bytes the host sent (up) and received (down) so far. */
  link: Record<string, { up: number, down: number }>
  /** The machine: busy and total CPU seconds so far, all cores. */
  machine: { busy: number, total: number }
}

/** CPU seconds of a process or thread: user and kernel (system calls: sockets, files) together, and kernel alone. */
async function ticks (path: string): Promise<{ total: number, sys: number } | null> {
  try {
    const line = await readFile(path, 'utf8')
    const f = line.slice(line.lastIndexOf(')') + 2).split(' ')
    return { total: (Number(f[11]) + Number(f[12])) * TICK_S, sys: Number(f[12]) * TICK_S } // utime, stime
  } catch { return null } // exited
}

/** Seconds a thread has waited in the run queue (runnable, not running): /proc/.../schedstat, in ns. */
async function runQueueWait (path: string): Promise<number | null> {
  try { return Number((await readFile(path, 'utf8')).split(' ')[1]) / 1e9 } catch { return null }
}

async function machine (): Promise<{ busy: number, total: number }> {
  const first = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const total = first.reduce((a, b) => a + b, 0)
  const idle = (first[3] ?? 0) + (first[4] ?? 0)
  return { busy: (total - idle) * TICK_S, total: total * TICK_S }
}

export interface HostSummary {
  /** CPU seconds of the host's processes, of which in the kernel (sysS); % of one core, all threads and main thread. */
  cpuS: number, sysS: number, cpuPct: number, mainPct: number
  /** % of the time the main thread (summed over the host's processes) was runnable but waiting for a core. */
  mainWaitPct: number
  /** Mean link rate the host sent (up) and received (down), Mbit/s. */
  upMbit: number, downMbit: number
}

export class LabTrace {
  readonly #lab: NetLab
  readonly #periodMs: number
  readonly samples: Sample[] = []
  readonly #t0 = performance.now()
  #timer: NodeJS.Timeout | null = null
  #busy = false
  /** CPU of processes that have exited, per host, so totals never go backwards. */
  readonly #last = new Map<number, { host: string, total: number, sys: number, main: number, mainWait: number }>()

  constructor (lab: NetLab, periodMs = 1000) {
    this.#lab = lab
    this.#periodMs = periodMs
  }

  start (): this {
    void this.sample()
    this.#timer = setInterval(() => { void this.sample() }, this.#periodMs)
    return this
  }

  async stop (): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer)
    this.#timer = null
    await this.sample()
  }

  /** Seconds since the trace started (to mark a window). */
  now (): number { return (performance.now() - this.#t0) / 1000 }

  async sample (): Promise<void> {
    if (this.#busy) return
    this.#busy = true
    try {
      const t = this.now()
      await Promise.all(this.#lab.started.map(async ({ host, child }) => {
        const pid = child.pid
        if (pid === undefined) return
        const [total, main, wait] = await Promise.all([ticks(`/proc/${pid}/stat`), ticks(`/proc/${pid}/task/${pid}/stat`), runQueueWait(`/proc/${pid}/task/${pid}/schedstat`)])
        if (total !== null && main !== null) this.#last.set(pid, { host, total: total.total, sys: total.sys, main: main.total, mainWait: wait ?? 0 })
      }))
      const cpu: Sample['cpu'] = {}
      for (const { host, total, sys, main, mainWait } of this.#last.values()) {
        const c = cpu[host] ??= { total: 0, sys: 0, main: 0, mainWait: 0 }
        c.total += total; c.sys += sys; c.main += main; c.mainWait += mainWait
      }
      const link: Sample['link'] = {}
      try {
        const { stdout } = await run('ip', ['-n', this.#lab.switchNs, '-s', '-j', 'link', 'show'])
        const byPeer = new Map([...this.#lab.hosts.values()].map(h => [h.peer, h.name]))
        for (const dev of JSON.parse(stdout) as Array<{ ifname: string, stats64?: { rx: { bytes: number }, tx: { bytes: number } } }>) {
          const host = byPeer.get(dev.ifname.split('@')[0]!)
          if (host !== undefined && dev.stats64 !== undefined) link[host] = { up: dev.stats64.rx.bytes, down: dev.stats64.tx.bytes }
        }
      } catch { /* the lab is being torn down */ }
      this.samples.push({ t, cpu, link, machine: await machine() })
    } finally { this.#busy = false }
  }

  /** The sample nearest to (at or after) `t`. */
  #at (t: number): Sample {
    return this.samples.find(s => s.t >= t) ?? this.samples[this.samples.length - 1]!
  }

  /**
   * Over [from, to] (trace seconds): each host's CPU (seconds, and % of one core) with its main thread's
   * share, each host's mean link rate each way (Mbit/s), and the machine's busy share of all its cores.
   */
  summary (from: number, to: number): { seconds: number, machineBusyPct: number, hosts: Record<string, HostSummary> } {
    const a = this.#at(from); const b = this.#at(to)
    const s = Math.max(1e-3, b.t - a.t)
    const hosts: Record<string, HostSummary> = {}
    for (const name of this.#lab.hosts.keys()) {
      const c0 = a.cpu[name] ?? { total: 0, sys: 0, main: 0, mainWait: 0 }; const c1 = b.cpu[name] ?? c0
      const l0 = a.link[name] ?? { up: 0, down: 0 }; const l1 = b.link[name] ?? l0
      hosts[name] = {
        cpuS: c1.total - c0.total, sysS: c1.sys - c0.sys, mainWaitPct: 100 * (c1.mainWait - c0.mainWait) / s, cpuPct: 100 * (c1.total - c0.total) / s, mainPct: 100 * (c1.main - c0.main) / s,
        upMbit: (l1.up - l0.up) * 8 / 1e6 / s, downMbit: (l1.down - l0.down) * 8 / 1e6 / s
      }
    }
    const busy = b.machine.busy - a.machine.busy; const total = b.machine.total - a.machine.total
    return { seconds: s, machineBusyPct: total > 0 ? 100 * busy / total : 0, hosts }
  }

  /**
   * One line per sample over [from, to]: the client's upload, the orchestrator's sending (chunk pulls),
   * the workers' sending together, the destination's receiving (deliveries) and sending (read-backs), in
   * Mbit/s; the orchestrator's, the workers' and the machine's CPU in % of one core.
   */
  timeline (from: number, to: number): string[] {
    const rows = this.samples.filter(s => s.t >= from && s.t <= to + this.#periodMs / 1000)
    const workers = [...this.#lab.hosts.keys()].filter(h => /^w\d+$/.test(h))
    const out = ['t(s)  client↑  orch↓  orch↑  workers↑  dest↓  dest↑ | cpu% orch(main) workers val dest client machine(of 2 cores=200)']
    for (let i = 1; i < rows.length; i++) {
      const p = rows[i - 1]!; const c = rows[i]!
      const dt = c.t - p.t
      const rate = (h: string, dir: 'up' | 'down'): number => ((c.link[h]?.[dir] ?? 0) - (p.link[h]?.[dir] ?? 0)) * 8 / 1e6 / dt
      const cpu = (h: string, k: 'total' | 'main' = 'total'): number => 100 * ((c.cpu[h]?.[k] ?? 0) - (p.cpu[h]?.[k] ?? 0)) / dt
      const w = workers.reduce((sum, h) => sum + rate(h, 'up'), 0)
      const wc = workers.reduce((sum, h) => sum + cpu(h), 0)
      const m = 100 * (c.machine.busy - p.machine.busy) / dt
      const f = (x: number, n = 6): string => x.toFixed(0).padStart(n)
      out.push(`${(c.t - from).toFixed(1).padStart(5)} ${f(rate('client', 'up'), 8)} ${f(rate('orch', 'down'))} ${f(rate('orch', 'up'))} ${f(w, 9)} ${f(rate('dest', 'down'))} ${f(rate('dest', 'up'))} | ${f(cpu('orch'), 4)}(${f(cpu('orch', 'main'), 3)}) ${f(wc, 7)} ${f(cpu('val'), 3)} ${f(cpu('dest'), 4)} ${f(cpu('client'), 6)} ${f(m, 7)}`)
    }
    return out
  }
}
