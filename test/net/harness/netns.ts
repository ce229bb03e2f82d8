// A multi-host lab on one Linux machine: one network namespace per host, each joined by a veth pair to
// a bridge that lives in a namespace of its own (so nothing is added to the machine's own network),
// optional tbf caps on both directions of a host's link, and every node its own process started with
// `ip netns exec`. Names carry a random run id, so parallel runs never collide; the addresses
// (10.77.0.0/24) exist only inside this run's namespaces. Needs root: `skipReason()` says why not.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { runCli, type CliProcess } from '../../helpers/proc.ts'

export const SUBNET = '10.77.0' // a /24 that exists only inside the lab's namespaces

export interface HostSpec {
  name: string
  /** Link cap in Mbit/s, applied to both directions (tbf); none: the veth's own speed. */
  rateMbit?: number
  /** How long a capped link's queue may hold a packet before it is dropped (tbf `latency`), ms; default LINK_QUEUE_MS. */
  queueMs?: number
}

/** The default queue of a capped link: 100 ms, the deep buffer of a shaped home or office uplink. */
export const LINK_QUEUE_MS = 100

export interface LabHost { name: string, ns: string, ip: string, dev: string, peer: string, rateMbit: number | null }

/** Why this machine cannot run the lab (null: it can). */
export function skipReason (): string | null {
  if (process.platform !== 'linux') return 'network namespaces need Linux'
  if (process.getuid?.() !== 0) return 'the multi-host lab needs root (ip netns, veth, tc); run as root to include it'
  try {
    execFileSync('ip', ['-V'], { stdio: 'ignore' })
    execFileSync('tc', ['-V'], { stdio: 'ignore' })
  } catch { return 'iproute2 (ip, tc) is not installed' }
  return null
}

function sh (args: string[]): void {
  execFileSync(args[0]!, args.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] })
}

/** tbf parameters for a rate: a burst of ~2 ms of traffic (at least 64 KiB), `queueMs` of queue. */
function tbf (rateMbit: number, queueMs: number): string[] {
  const burst = Math.max(64 * 1024, Math.round(rateMbit * 1e6 / 8 * 0.002))
  return ['tbf', 'rate', `${rateMbit}mbit`, 'burst', String(burst), 'latency', `${queueMs}ms`]
}

export class NetLab {
  readonly id = randomBytes(3).toString('hex')
  readonly hosts = new Map<string, LabHost>()
  readonly procs: CliProcess[] = []
  readonly #children: Array<ReturnType<typeof spawn>> = []
  /** Every process started on a host (bwnet nodes, spawned servers, execs), with that host's name. */
  readonly started: Array<{ host: string, child: ChildProcess }> = []
  #switchNs = `bw${this.id}-sw`
  #destroyed = false
  readonly #onExit = (): void => { this.#teardownSync() }
  // Killed (a test timeout, Ctrl-C): tear down before dying, so no namespace or process outlives the run.
  readonly #onSignal = (): void => { this.#teardownSync(); process.exit(1) }

  /** Creates the namespaces, links and caps; on any failure removes what it made and rethrows. */
  static async create (specs: HostSpec[]): Promise<NetLab> {
    const lab = new NetLab()
    process.once('exit', lab.#onExit)
    process.once('SIGTERM', lab.#onSignal)
    process.once('SIGINT', lab.#onSignal)
    try {
      sh(['ip', 'netns', 'add', lab.#switchNs])
      sh(['ip', '-n', lab.#switchNs, 'link', 'add', 'br0', 'type', 'bridge'])
      sh(['ip', '-n', lab.#switchNs, 'link', 'set', 'br0', 'up'])
      specs.forEach((spec, i) => lab.#addHost(spec, i))
    } catch (err) {
      await lab.destroy()
      throw err
    }
    return lab
  }

  #addHost (spec: HostSpec, i: number): void {
    if (i >= 250) throw new Error('at most 250 hosts')
    const ns = `bw${this.id}-${spec.name}`
    const peer = `h${i}`
    const host: LabHost = { name: spec.name, ns, ip: `${SUBNET}.${i + 1}`, dev: 'eth0', peer, rateMbit: spec.rateMbit ?? null }
    this.hosts.set(spec.name, host)
    sh(['ip', 'netns', 'add', ns])
    sh(['ip', '-n', this.#switchNs, 'link', 'add', peer, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns])
    sh(['ip', '-n', this.#switchNs, 'link', 'set', peer, 'master', 'br0', 'up'])
    sh(['ip', '-n', ns, 'addr', 'add', `${host.ip}/24`, 'dev', 'eth0'])
    sh(['ip', '-n', ns, 'link', 'set', 'eth0', 'up'])
    sh(['ip', '-n', ns, 'link', 'set', 'lo', 'up'])
    if (host.rateMbit !== null) {
      const queueMs = spec.queueMs ?? LINK_QUEUE_MS
      sh(['tc', '-n', ns, 'qdisc', 'add', 'dev', 'eth0', 'root', ...tbf(host.rateMbit, queueMs)]) // host → bridge
      sh(['tc', '-n', this.#switchNs, 'qdisc', 'add', 'dev', peer, 'root', ...tbf(host.rateMbit, queueMs)]) // bridge → host
    }
  }

  /** The namespace holding the bridge: its veth ends (`LabHost.peer`) count each host's traffic. */
  get switchNs (): string { return this.#switchNs }

  host (name: string): LabHost {
    const h = this.hosts.get(name)
    if (h === undefined) throw new Error(`no host ${name}`)
    return h
  }

  /** Runs `bwnet ARGS` on a host (its own process); JSON log lines are collected. `nodeArgs`: flags for node. */
  bwnet (name: string, args: string[], env: Record<string, string> = {}, nodeArgs: string[] = []): CliProcess {
    const p = runCli(args, env, { prefix: ['ip', 'netns', 'exec', this.host(name).ns], nodeArgs })
    this.procs.push(p)
    this.started.push({ host: name, child: p.child })
    return p
  }

  /** Runs any command on a host to completion. */
  async exec (name: string, cmd: string[], opts: { input?: string } = {}): Promise<{ code: number | null, stdout: string, stderr: string }> {
    const child = spawn('ip', ['netns', 'exec', this.host(name).ns, ...cmd], { stdio: ['pipe', 'pipe', 'pipe'] })
    this.#children.push(child)
    let stdout = ''; let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d })
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
    child.stdin.end(opts.input ?? '')
    const [code] = await once(child, 'exit') as [number | null]
    return { code, stdout, stderr }
  }

  /** Starts a long-running command on a host (killed at teardown). */
  spawn (name: string, cmd: string[]): ReturnType<typeof spawn> {
    const child = spawn('ip', ['netns', 'exec', this.host(name).ns, ...cmd], { stdio: ['ignore', 'pipe', 'pipe'] })
    this.#children.push(child)
    this.started.push({ host: name, child })
    return child
  }

  /** An HTTP call made from a host (curl): status and parsed JSON body. */
  async http (name: string, method: string, url: string, opts: { headers?: Record<string, string>, json?: unknown } = {}): Promise<{ status: number, body: any, text: string }> {
    const args = ['curl', '-sS', '-m', '30', '-X', method, '-w', '\n%{http_code}', url]
    for (const [k, v] of Object.entries(opts.headers ?? {})) args.push('-H', `${k}: ${v}`)
    if (opts.json !== undefined) args.push('-H', 'content-type: application/json', '--data-binary', '@-')
    const r = await this.exec(name, args, { input: opts.json !== undefined ? JSON.stringify(opts.json) : '' })
    const cut = r.stdout.lastIndexOf('\n')
    const text = r.stdout.slice(0, cut)
    const status = Number(r.stdout.slice(cut + 1)) || 0
    let body: any = null
    try { body = JSON.parse(text) } catch { body = null }
    return { status, body, text }
  }

  /** Takes a host's link down (`ip link set eth0 down` inside it). */
  linkDown (name: string): void { sh(['ip', '-n', this.host(name).ns, 'link', 'set', 'eth0', 'down']) }
  linkUp (name: string): void { sh(['ip', '-n', this.host(name).ns, 'link', 'set', 'eth0', 'up']) }

  /** Stops every process (SIGTERM, then SIGKILL after 6 s) and deletes every namespace. Idempotent. */
  async destroy (): Promise<void> {
    if (this.#destroyed) return
    await Promise.allSettled(this.procs.map(async (p) => {
      const kill = setTimeout(() => p.child.kill('SIGKILL'), 6_000)
      try { await p.stop('SIGTERM') } finally { clearTimeout(kill) }
    }))
    this.#teardownSync()
  }

  #teardownSync (): void {
    if (this.#destroyed) return
    this.#destroyed = true
    process.off('exit', this.#onExit)
    process.off('SIGTERM', this.#onSignal)
    process.off('SIGINT', this.#onSignal)
    for (const p of this.procs) if (p.child.exitCode === null) p.child.kill('SIGKILL')
    for (const c of this.#children) if (c.exitCode === null) c.kill('SIGKILL')
    for (const h of this.hosts.values()) { try { sh(['ip', 'netns', 'del', h.ns]) } catch {} }
    try { sh(['ip', 'netns', 'del', this.#switchNs]) } catch {}
  }

  /** Namespaces of this run still present (for the teardown check). */
  leftovers (): string[] {
    const list = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    return list.split('\n').map(l => l.split(' ')[0]!).filter(n => n.startsWith(`bw${this.id}-`))
  }
}
