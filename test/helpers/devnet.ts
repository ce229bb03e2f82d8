// An in-process devnet for end-to-end tests: real nodes on a loopback hyperdht testnet, real API,
// real actors. Extra nodes (a corrupting worker, a worker in another process) join its testnet.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import { Devnet, type DevnetFile } from '../../node/devnet.ts'
import { BwnetNode } from '../../node/node.ts'
import { NODE_DEFAULTS, type NodeConfig } from '../../node/config.ts'
import { bootstrapDevnetKeys } from '../../api/accounts/devnet.ts'
import type { Plan } from '../../api/accounts/model.ts'
import { sinkFilePath } from '../../node/adapters/destinations/node-sink.ts'
import { silentLogger } from './logger.ts'
import { eventually, runCli, type CliProcess } from './proc.ts'

export interface TestDevnet {
  devnet: Devnet
  file: DevnetFile
  data: string
  /** A client key of the given plan in the devnet's organization. */
  clientKey (plan?: Plan): Promise<string>
  /** The devnet's organization (the one `clientKey` issues keys in): its files' namespace in the sink. */
  orgId (): Promise<string>
  /**
   * Starts one more node on the devnet's testnet (a validator staking `stakeRao`, 1000 α by default),
   * registered on the devnet's chain unless `enroll: false` (a worker that relies on its attachment).
   */
  addNode (name: string, cfg: Partial<NodeConfig>, opts?: { stakeRao?: bigint, enroll?: boolean }): Promise<BwnetNode>
  stop (): Promise<void>
}

export async function startTestDevnet (t: { teardown (fn: () => unknown): void }, opts: { workers?: number, validators?: number, logger?: any, data?: string } = {}): Promise<TestDevnet> {
  const data = opts.data ?? await mkdtemp(join(tmpdir(), 'bwnet-e2e-'))
  const logger = opts.logger ?? silentLogger()
  let orgId = ''
  // A network id of its own: another test's devnet on the same loopback never meets this one's nodes.
  const network = `devnet-test-${randomBytes(6).toString('hex')}`
  const devnet = new Devnet({ port: 0, data, workers: opts.workers ?? 3, ...(opts.validators !== undefined ? { validators: opts.validators } : {}), logLevel: 'silent', network }, logger, {
    bootstrapKeys: async (o, previous) => ({ ...await bootstrapDevnetKeys(o.accounts!, previous) })
  })
  const file = await devnet.start()
  const extra: BwnetNode[] = []
  const stop = async (): Promise<void> => {
    await Promise.allSettled(extra.map(n => n.stop()))
    await devnet.stop()
    await rm(data, { recursive: true, force: true })
  }
  t.teardown(stop)
  const devnetOrg = async (): Promise<string> => {
    if (!orgId) orgId = (await devnet.orchestrator.accounts!.listOrganizations())[0]!.id
    return orgId
  }
  // Every worker attached before the test starts sending work.
  await eventually(async () => (await (await fetch(`${file.baseUrl}/health`)).json() as any).nodes.worker === (opts.workers ?? 3), 15_000, 'workers to join')
  return {
    devnet, file, data, stop,
    async clientKey (plan: Plan = 'enterprise') {
      return (await devnet.orchestrator.accounts!.createKey(await devnetOrg(), { role: 'client', plan, name: `test ${plan}` })).key
    },
    orgId: devnetOrg,
    async addNode (name, cfg, addOpts = {}) {
      const base = devnet.nodes[1]!.node.config
      // Registered by the devnet, as its validators are, unless told not to.
      if (addOpts.enroll !== false) await devnet.enroll(join(data, name), cfg.role ?? base.role, addOpts.stakeRao)
      const node = new BwnetNode({
        config: { ...NODE_DEFAULTS, ...base, data: join(data, name), port: 0, ...cfg } as NodeConfig,
        logger, dht: devnet.testnet.createNode()
      })
      extra.push(node)
      await node.start()
      return node
    }
  }
}

/** `bwnet devnet` in a child process of its own (as `make run` starts it), up and (unless told not to wait) with its workers attached. */
export interface DevnetProcess { proc: CliProcess, file: DevnetFile & Record<string, any>, baseUrl: string }

export async function startDevnetProcess (t: { teardown (fn: () => unknown): void }, data: string, opts: { workers?: number, args?: string[], startTimeoutMs?: number, waitForWorkers?: boolean, joinTimeoutMs?: number } = {}): Promise<DevnetProcess> {
  const workers = opts.workers ?? 2
  const proc = runCli(['devnet', '--port', '0', '--data', data, '--workers', String(workers), ...(opts.args ?? [])])
  t.teardown(() => proc.stop('SIGKILL'))
  await proc.waitFor(l => l.event === 'devnet_ready', opts.startTimeoutMs ?? 120_000, 'devnet_ready')
  const file = JSON.parse(await readFile(join(data, 'devnet.json'), 'utf8'))
  if (opts.waitForWorkers !== false) await eventually(async () => (await (await fetch(`${file.baseUrl}/health`)).json() as any).nodes.worker === workers, opts.joinTimeoutMs ?? 30_000, 'workers to join')
  return { proc, file, baseUrl: file.baseUrl }
}

/** An enterprise client key (no rate limit in a test's way) in the devnet's organization, minted with its admin key. */
export async function mintClientKey (baseUrl: string, adminKey: string, name: string): Promise<string> {
  const admin = apiClient(baseUrl, adminKey)
  const created = await admin(`/admin/organizations/${await devnetOrgId(baseUrl, adminKey)}/keys`, { method: 'POST', json: { role: 'client', plan: 'enterprise', name } })
  if (created.status !== 201) throw new Error(`client key: ${created.status} ${JSON.stringify(created.body)}`)
  return created.body.key
}

/** The devnet's organization, asked with its admin key (a devnet in a child process). */
export async function devnetOrgId (baseUrl: string, adminKey: string): Promise<string> {
  const orgs = await apiClient(baseUrl, adminKey)('/admin/organizations')
  return (orgs.body.items ?? orgs.body)[0].id
}

/**
 * Where a devnet's orchestrator (data directory `data`, its node under `orchestrator/`) stored a file its
 * built-in sink delivered for organization `orgId` under `storedName` (the transfer record's
 * `stored_filename`): the organization's namespace in the sink (node-sink.ts).
 */
export function sinkFile (data: string, orgId: string, storedName: string): string {
  return sinkFilePath(join(data, 'orchestrator', 'sink'), orgId, storedName)
}

export const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')

export interface Api { (path: string, init?: RequestInit & { json?: unknown }): Promise<{ status: number, headers: Headers, body: any }> }

export function apiClient (baseUrl: string, key: string): Api {
  return async (path, init = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string> ?? {}) }
    let body = init.body
    if (init.json !== undefined) { headers['content-type'] = 'application/json'; body = JSON.stringify(init.json) }
    const res = await fetch(baseUrl + path, { ...init, headers, body })
    const text = await res.text()
    let parsed: any = text
    try { parsed = text ? JSON.parse(text) : null } catch {}
    return { status: res.status, headers: res.headers, body: parsed }
  }
}

/** Creates a transfer and uploads `data` chunk by chunk (`only` limits which chunks). */
export async function upload (api: Api, data: Uint8Array, opts: { filename: string, hotkey: string, destinationId?: string, only?: (i: number) => boolean }): Promise<any> {
  const created = await api('/transfers/create', { method: 'POST', json: { sender_hotkey: opts.hotkey, total_size: data.byteLength, filename: opts.filename, tier: 'STANDARD', ...(opts.destinationId ? { destination_id: opts.destinationId } : {}) } })
  if (created.status !== 201) throw new Error(`create answered ${created.status}: ${JSON.stringify(created.body)}`)
  await sendChunks(api, created.body, data, opts.only)
  return created.body
}

export async function sendChunks (api: Api, transfer: { id: string, chunk_size: number, total_chunks: number }, data: Uint8Array, only: (i: number) => boolean = () => true): Promise<void> {
  for (let i = 0; i < transfer.total_chunks; i++) {
    if (!only(i)) continue
    const chunk = data.subarray(i * transfer.chunk_size, Math.min(data.byteLength, (i + 1) * transfer.chunk_size))
    const res = await api(`/transfers/${transfer.id}/chunks`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-chunk-index': String(i), 'x-chunk-sha256': sha256(chunk) }, body: chunk as unknown as BodyInit })
    if (res.status !== 201 && res.status !== 200) throw new Error(`chunk ${i} answered ${res.status}: ${JSON.stringify(res.body)}`)
  }
}

export async function waitForStatus (api: Api, id: string, statuses: string[], timeoutMs = 60_000): Promise<any> {
  return eventually(async () => {
    const r = await api(`/transfers/${id}`)
    return statuses.includes(r.body.status) ? r.body : undefined
  }, timeoutMs, `transfer ${id} to reach ${statuses.join('|')}`, 200)
}

/** Deterministic pseudo-random bytes (fast; no need for crypto quality). */
export function testBytes (size: number, seed = 1): Buffer {
  const out = Buffer.allocUnsafe(size)
  let x = seed >>> 0 || 1
  for (let i = 0; i + 4 <= size; i += 4) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; out.writeUInt32LE(x >>> 0, i) }
  for (let i = size - (size % 4); i < size; i++) out[i] = i & 0xff
  return out
}
