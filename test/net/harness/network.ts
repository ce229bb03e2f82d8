// A bwnet network on a NetLab: bootstrap, orchestrator, N workers, validator, an http destination and a
// client, each on its own host, started with the operator flags of docs/node.md. Shared by the
// multi-host test (test/net/) and the bench (bench/net/).
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { NetLab, type HostSpec } from './netns.ts'
import { runCliOnce, REPO, type CliProcess } from '../../helpers/proc.ts'
import { loadOrCreateKeystore } from '../../../node/keystore.ts'
import { cryptoReady } from '../../../protocol/keys.ts'

export const DHT_PORT = 49737
export const API_PORT = 8000
export const METRICS_PORT = 9464
export const DEST_PORT = 8080
export interface NetworkOptions {
  workers: number
  /** Cap of each worker's link (Mbit/s). */
  workerMbit?: number
  /** Cap of the client's and the destination's links (Mbit/s). */
  edgeMbit?: number
  /** Queue of every capped link, ms (netns.ts LINK_QUEUE_MS by default). */
  queueMs?: number
  /** Extra flags per role, e.g. a destination policy setting. */
  flags?: Partial<Record<'orchestrator' | 'worker' | 'validator', string[]>>
  slots?: number
  logLevel?: string
  /** Flags for node itself per host (`orch`, `w1`, …), e.g. `--cpu-prof --cpu-prof-dir DIR`. */
  nodeArgs?: Record<string, string[]>
}

export interface Network {
  lab: NetLab
  dir: string
  orchestrator: CliProcess
  orchestratorHotkey: string
  orchestratorData: string
  workers: CliProcess[]
  workerHotkeys: string[]
  validator: CliProcess
  api: string
  adminKey: string
  organizationId: string
  clientKey: string
  destinationId: string
  /** Directory the destination host writes objects into. */
  destDir: string
  stop (): Promise<void>
}

export function hostPlan (o: NetworkOptions): HostSpec[] {
  return [
    { name: 'boot' }, { name: 'orch' }, { name: 'val' },
    { name: 'dest', rateMbit: o.edgeMbit ?? 1000, queueMs: o.queueMs }, { name: 'client', rateMbit: o.edgeMbit ?? 1000, queueMs: o.queueMs },
    ...Array.from({ length: o.workers }, (_, i) => ({ name: `w${i + 1}`, rateMbit: o.workerMbit ?? 100, queueMs: o.queueMs }))
  ]
}

/** The flags docs/node.md gives a node on its own host. */
function nodeFlags (ip: string, boot: string, data: string): string[] {
  return [
    // The lab's destination host has a private address: the operator allows it explicitly.
    '--allow-private-destinations',
    '--data', data, '--bootstrap', boot, '--dht-host', ip, '--dht-port', String(DHT_PORT + 1),
    '--host', ip, '--port', String(API_PORT), '--public-url', `http://${ip}:${API_PORT}`,
    '--metrics-host', ip, '--metrics-port', String(METRICS_PORT)
  ]
}

/** A validator's stake on the lab's dev chain (a permit needs at least 1 α), in rao. */
const VALIDATOR_STAKE_RAO = '1000000000000'

export async function startNetwork (o: NetworkOptions): Promise<Network> {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-net-'))
  const lab = await NetLab.create(hostPlan(o))
  const stop = async (): Promise<void> => { await lab.destroy(); await rm(dir, { recursive: true, force: true }) }
  try {
    const env = { LOG_LEVEL: o.logLevel ?? 'info' }
    const boot = `${lab.host('boot').ip}:${DHT_PORT}`
    const b = lab.bwnet('boot', ['bootstrap', '--host', lab.host('boot').ip, '--port', String(DHT_PORT)], env)
    await b.waitFor(l => l.event === 'bootstrap_ready', 30_000, 'bootstrap node')

    // First keys, while the orchestrator is stopped (docs/node.md#first-keys).
    const orchestratorData = join(dir, 'orchestrator')
    const init = await runCliOnce(['admin', 'init', '--data', orchestratorData])
    if (init.code !== 0) throw new Error(`admin init failed: ${init.stderr}`)
    const admin = JSON.parse(init.stdout) as { organizationId: string, key: string }

    const orchIp = lab.host('orch').ip
    const orchestrator = lab.bwnet('orch', ['node', '--role', 'orchestrator', ...nodeFlags(orchIp, boot, orchestratorData),
      '--block-time-ms', '1000', '--blocks-per-epoch', '10', ...(o.flags?.orchestrator ?? [])], env, o.nodeArgs?.orch)
    const ready = await orchestrator.waitFor(l => l.event === 'node_ready', 60_000, 'orchestrator ready')
    const orchestratorHotkey = ready.hotkey as string
    const api = `http://${orchIp}:${API_PORT}`
    const adminHeaders = { 'x-api-key': admin.key }

    // The operator enrolls every node's hotkey on the dev chain before it starts (docs/node.md): peers
    // take roles from registrations, never from what a node says of itself.
    await cryptoReady()
    const enroll = async (name: string, role: 'worker' | 'validator'): Promise<void> => {
      const { key } = await loadOrCreateKeystore(join(dir, name, 'hotkey.json'))
      const res = await lab.http('client', 'POST', `${api}/chain/registrations`, { headers: adminHeaders, json: { hotkey: key.address, role, ...(role === 'validator' ? { stakeRao: VALIDATOR_STAKE_RAO } : {}) } })
      if (res.status !== 201) throw new Error(`enroll ${name}: ${res.status} ${res.text}`)
    }
    for (let i = 1; i <= o.workers; i++) await enroll(`w${i}`, 'worker')
    await enroll('validator', 'validator')

    const workers = Array.from({ length: o.workers }, (_, i) => {
      const name = `w${i + 1}`
      return lab.bwnet(name, ['node', '--role', 'worker', ...nodeFlags(lab.host(name).ip, boot, join(dir, name)),
        '--slots', String(o.slots ?? 4), '--bandwidth-mbps', String(o.workerMbit ?? 100), '--chain-host', orchestratorHotkey, ...(o.flags?.worker ?? [])], env, o.nodeArgs?.[name])
    })
    const validator = lab.bwnet('val', ['node', '--role', 'validator', ...nodeFlags(lab.host('val').ip, boot, join(dir, 'validator')),
      '--chain-host', orchestratorHotkey, ...(o.flags?.validator ?? [])], env, o.nodeArgs?.val)
    const destDir = join(dir, 'dest')
    await (await import('node:fs/promises')).mkdir(destDir)
    const destIp = lab.host('dest').ip
    const dest = lab.spawn('dest', [process.execPath, join(REPO, 'test/net/harness/http-destination.ts'), destIp, String(DEST_PORT), destDir])
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: dest.stdout! }).once('line', () => resolve())
      dest.once('exit', (code) => reject(new Error(`destination exited ${code}`)))
    })
    const workerHotkeys = await Promise.all(workers.map(async w => (await w.waitFor(l => l.event === 'node_ready', 60_000, 'worker ready')).hotkey as string))
    await validator.waitFor(l => l.event === 'node_ready', 60_000, 'validator ready')

    // Every worker attached before work is sent.
    await eventuallyLab(async () => {
      const h = await lab.http('client', 'GET', `${api}/health`)
      return h.body?.nodes?.worker === o.workers && h.body?.nodes?.validator === 1
    }, 60_000, 'workers and validator to join')
    const key = await lab.http('client', 'POST', `${api}/admin/organizations/${admin.organizationId}/keys`, { headers: adminHeaders, json: { role: 'client', plan: 'enterprise', name: 'lab client' } })
    if (key.status !== 201) throw new Error(`client key: ${key.status} ${key.text}`)
    const credits = await lab.http('client', 'POST', `${api}/admin/organizations/${admin.organizationId}/credits`, { headers: adminHeaders, json: { amount: 1_000_000_000, memo: 'lab' } })
    if (credits.status >= 300) throw new Error(`credits: ${credits.status} ${credits.text}`)
    const clientKey = key.body.key as string
    const d = await lab.http('client', 'POST', `${api}/destinations`, { headers: { 'x-api-key': clientKey }, json: { name: 'lab-http', kind: 'http', config: { url: `http://${destIp}:${DEST_PORT}/objects/{transferId}` } } })
    if (d.status !== 201) throw new Error(`destination: ${d.status} ${d.text}`)
    return {
      lab, dir, orchestrator, orchestratorHotkey, orchestratorData, workers, workerHotkeys, validator, api,
      adminKey: admin.key, organizationId: admin.organizationId, clientKey, destinationId: d.body.id as string, destDir, stop
    }
  } catch (err) {
    await stop()
    throw err
  }
}

export async function eventuallyLab (fn: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await fn().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 250))
  }
}

/** Parses `transfer put` stdout: the id on the first line, the JSON summary last. */
export function putSummary (stdout: string): { id: string, summary: any } {
  const lines = stdout.trim().split('\n')
  return { id: lines[0]!.trim(), summary: JSON.parse(lines[lines.length - 1]!) }
}
