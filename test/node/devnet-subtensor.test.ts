// `bwnet devnet --chain subtensor`: the whole network on the real Subtensor runtime (spec 218, run by
// chopsticks from test/fixtures/subtensor): a subnet with 2 orchestrators and 2 validators of unequal
// stake, 4 workers without UIDs, files moved byte for byte by `bwnet transfer put`, both validators'
// weights in the chain's Weights storage, the runtime's Emission for the next block, and workers
// without a valid attachment refused by orchestrators that look their issuers up on this chain.
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiPromise, WsProvider, Keyring } from '../../node/adapters/subtensor/polkadot.ts'
import DHT from 'hyperdht'
import { eventually, runCliOnce, type CliProcess } from '../helpers/proc.ts'
import { startDevnetProcess, sinkFile, devnetOrgId, sha256 } from '../helpers/devnet.ts'
import { capturingLogger } from '../helpers/logger.ts'
import { collect, prefixRange } from '../../actors/store.ts'
import { newHotkey, signAttachment, type Attachment, type KeyPair } from '../../protocol/index.ts'
import { loadOrCreateKeystore } from '../../node/keystore.ts'
import { BwnetNode } from '../../node/node.ts'
import { NODE_DEFAULTS, type NodeConfig } from '../../node/config.ts'

// Chain setup, three transfers and two to three 33 s epochs on a shared 2-core machine.
t.setTimeout(900_000)

t.test('devnet --chain subtensor: a subnet on the real runtime moves files, and both validators set weights on the orchestrators', async t => {
  const dir = await mkdtemp(join(tmpdir(), 'bwnet-devnet-subtensor-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const data = join(dir, 'devnet')
  const started = Date.now()
  const { proc, file } = await startDevnetProcess(t, data, { workers: 4, args: ['--chain', 'subtensor'], startTimeoutMs: 240_000, joinTimeoutMs: 60_000 })
  t.comment(`devnet up with 4 workers attached in ${Date.now() - started} ms`)

  // devnet.json: the chain, and the nodes with their UIDs (none for workers).
  t.match(file, { chain: 'subtensor', chainUrl: /^ws:\/\/127\.0\.0\.1:\d+$/, netuid: Number })
  const byRole = (role: string): any[] => file.nodes.filter((n: any) => n.role === role)
  t.equal(byRole('orchestrator').length, 2, 'two orchestrators')
  t.equal(byRole('validator').length, 2, 'two validators')
  t.equal(byRole('worker').length, 4, 'four workers')
  for (const n of [...byRole('orchestrator'), ...byRole('validator')]) t.type(n.uid, 'number', `${n.name} holds UID ${n.uid}`)
  for (const n of byRole('worker')) t.equal(n.uid, null, `${n.name} holds no UID`)
  t.equal(new Set(file.nodes.filter((n: any) => n.uid !== null).map((n: any) => n.uid)).size, 4, 'four distinct UIDs')
  for (const n of byRole('orchestrator')) t.match(n.url, /^http:\/\/127\.0\.0\.1:\d+$/, `${n.name} serves its API`)

  const chainUrl = String(file.chainUrl)
  const provider = new WsProvider(chainUrl, false)
  await provider.connect()
  const api = await ApiPromise.create({ provider, noInitWarn: true, throwOnConnect: true })
  t.teardown(() => api.disconnect().catch(() => {}))
  const netuid = Number(file.netuid)
  const q = api.query.subtensorModule
  const uidOf = async (hotkey: string): Promise<number | null> => (await q.uids(netuid, hotkey)).toJSON() as number | null
  for (const n of file.nodes) t.equal(await uidOf(n.hotkey), n.uid, `${n.name}: devnet.json's UID is the chain's`)

  // Unequal stake, both with a validator permit.
  const [v1, v2] = byRole('validator')
  const stake = async (h: string): Promise<bigint> => BigInt((await q.totalHotkeyAlpha(h, netuid)).toString())
  const [s1, s2] = [await stake(v1.hotkey), await stake(v2.hotkey)]
  t.ok(s1 > s2 && s2 > 0n, `unequal stakes: ${s1} and ${s2} α rao`)
  const permits = (await q.validatorPermit(netuid)).toJSON() as boolean[]
  t.ok(permits[v1.uid] === true && permits[v2.uid] === true, 'both validators hold a permit')
  const orchestratorUids: number[] = byRole('orchestrator').map((n: any) => n.uid)
  const emission = async (): Promise<number[]> => ((await q.emission(netuid)).toJSON() as number[]).map(Number)
  const before = await emission()
  t.same(orchestratorUids.map(u => before[u] ?? 0), orchestratorUids.map(() => 0), 'no emission for the orchestrators before any weights')

  // Three files through the network into the first orchestrator's sink, byte for byte. They start just
  // after the chain's epoch step, so all three land inside one epoch: a coordinator stamps a delivery
  // with the epoch it has seen, and one completed a second after a close counts as late evidence for
  // the epoch already weighed (docs/formulas.md#epoch-publication-and-corrections), which would leave
  // this test's epochs without work.
  const tempo = Number((await q.tempo(netuid)).toString())
  await eventually(async () => {
    const block = (await api.rpc.chain.getHeader()).number.toNumber()
    const into = (block + netuid + 1) % (tempo + 1) // blocks since the epoch began (subtensorEpochOf)
    return into >= 1 && into <= 3 ? block : undefined
  }, 300_000, 'the first blocks of an epoch', 200)
  for (const [i, size] of [5 * 1024 * 1024 + 17, 12 * 1024 * 1024, 3 * 1024 * 1024 + 1].entries()) {
    const bytes = randomBytes(size)
    const name = `subnet-${i}.bin`
    const path = join(dir, name)
    await writeFile(path, bytes)
    const run = await runCliOnce(['transfer', 'put', path, '--api', file.baseUrl, '--key', file.keys.client!], { BWN_STATE_DIR: join(dir, 'state'), CI: 'true' })
    t.equal(run.code, 0, `put ${name} exits 0; stderr: ${run.stderr.slice(-2000)}`)
    t.match(JSON.parse(run.stdout.trim().split('\n').at(-1)!), { event: 'transfer_put', status: 'completed', error: null })
    t.equal(sha256(await readFile(sinkFile(data, await devnetOrgId(file.baseUrl, file.keys.admin!), name))), sha256(bytes), `${name}: the destination holds the same sha256`)
  }
  const moved = Date.now()
  t.comment(`three transfers done at ${moved - started} ms`)

  // Both validators' weights for the epoch with the transfers land in the chain's Weights storage, naming
  // orchestrators only (an epoch without work burns its weight to UID 0, the subnet owner's hotkey).
  t.notOk(file.nodes.some((n: any) => n.uid === 0), 'UID 0 is the owner\'s hotkey, no node\'s')
  const weightsOf = async (uid: number): Promise<Array<[number, number]>> => (await q.weights(netuid, uid)).toJSON() as Array<[number, number]>
  const set = await eventually(async () => {
    const w = [await weightsOf(v1.uid), await weightsOf(v2.uid)]
    return w.every(v => v.some(([uid, x]) => x > 0 && uid !== 0)) ? w : undefined
  }, 300_000, 'both validators\' weights for the orchestrators in Weights storage', 1_000)
  for (const [i, w] of set.entries()) {
    t.ok(w.every(([uid, x]) => x === 0 || orchestratorUids.includes(uid)), `validator ${i + 1} gives weight to orchestrator UIDs only: ${JSON.stringify(w)}`)
    t.equal(Math.max(...w.map(([, x]) => x)), 65535, `validator ${i + 1}'s vector is max-upscaled`)
  }
  // Yuma consensus clips a UID's weight to what most of the stake gives it: the UIDs both validators
  // weigh are the ones that earn.
  const positive = set.map(w => new Set(w.filter(([, x]) => x > 0).map(([uid]) => uid)))
  const weighted = [...positive[0]!].filter(uid => positive[1]!.has(uid))
  const lastUpdate = (await q.lastUpdate(netuid)).toJSON() as number[]
  t.ok(lastUpdate[v1.uid]! > 0 && lastUpdate[v2.uid]! > 0, `set in blocks ${lastUpdate[v1.uid]} and ${lastUpdate[v2.uid]}`)
  t.comment(`weights from both validators at ${Date.now() - started} ms`)

  // The next block's Emission, read at that block. Spec 218 (the runtime in test/fixtures/subtensor) runs
  // its coinbase on every block for every subnet and splits the subnet's emission by stake alone
  // (`epoch_mock`; docs/chain.md#emission-on-spec-218): Yuma consensus never runs, so the
  // weights, though stored, earn the orchestrators nothing there. These assertions pin that down; on a
  // runtime that runs Yuma consensus they fail, and the orchestrators' Emission is the one to check.
  const emitted = await emissionAtNextBlock(api, netuid)
  t.comment(`Emission at block ${emitted.block}: ${JSON.stringify(emitted.emission)}; StakeWeight ${JSON.stringify(emitted.stakeWeight)}`)
  t.equal(emitted.emission.length, emitted.n, `Emission holds one entry per UID (${emitted.n})`)
  t.equal(emitted.lastStep, emitted.block, 'the subnet\'s emission was drained at this very block (spec 218: every block, not every tempo)')
  t.ok(emitted.weights.length === 2 && emitted.weights.every(w => w.some(([uid, x]) => x > 0 && orchestratorUids.includes(uid))), 'both validators\' weights on orchestrators are in storage at that block')
  t.ok(emitted.consensus.every(x => x === 0) && emitted.incentive.every(x => x === 0), 'yet Consensus and Incentive are all zero: no Yuma consensus ran')
  for (const u of orchestratorUids) t.ok(emitted.emission[u] === 0 && emitted.stakeWeight[u] === 0, `orchestrator UID ${u}: no stake, no Emission`)
  t.ok(emitted.emission[v1.uid]! > emitted.emission[v2.uid]! && emitted.emission[v2.uid]! > 0, `validators: ${emitted.emission[v1.uid]} and ${emitted.emission[v2.uid]} rao`)
  const share = (v: number[], u: number): number => v[u]! / v.reduce((a, b) => a + b, 0)
  for (let u = 0; u < emitted.n; u++) t.ok(Math.abs(share(emitted.emission, u) - share(emitted.stakeWeight, u)) < 1e-3, `UID ${u}: Emission share ${share(emitted.emission, u).toFixed(4)} is its stake share ${share(emitted.stakeWeight, u).toFixed(4)}`)

  // Acceptance 1 on the real runtime: workers holding no valid attachment are refused and change nothing.
  await refusedOnSubtensor(t, { api, file, data, proc })
  t.comment(`refusals checked at ${Date.now() - started} ms`)

  const stopped = await proc.stop('SIGTERM')
  t.equal(stopped.code, 0, `exits 0 on SIGTERM (${stopped.ms} ms seen from here)`)
  // Its own stop keeps to the node's 5 s deadline (past it the process exits 1 and logs shutdown_timeout);
  // seen from here the exit also waits for a loaded machine to run the process down.
  t.ok(stopped.ms < 10_000, 'within 10 s seen from here')
  t.notOk(proc.lines.some(l => l.event === 'shutdown_timeout'), 'no shutdown timeout')
  // chopsticks went with it: its port no longer answers.
  await t.rejects(fetch(chainUrl.replace('ws:', 'http:'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":1,"jsonrpc":"2.0","method":"system_chain","params":[]}' }), 'the local chain is stopped')
})

interface Emitted {
  block: number
  /** SubnetworkN: the subnet's UIDs. */
  n: number
  /** LastMechansimStepBlock (so spelled in the runtime): the block the subnet's emission was last drained. */
  lastStep: number
  emission: number[]
  stakeWeight: number[]
  consensus: number[]
  incentive: number[]
  /** Every non-empty Weights row. */
  weights: Array<Array<[number, number]>>
}

/** The subnet's per-UID storage as the block after the current head left it (waits for that block). */
async function emissionAtNextBlock (api: ApiPromise, netuid: number): Promise<Emitted> {
  const head = (await api.rpc.chain.getHeader()).number.toNumber()
  await eventually(async () => (await api.rpc.chain.getHeader()).number.toNumber() > head, 60_000, `block ${head + 1}`, 200)
  const at = await api.at(await api.rpc.chain.getBlockHash(head + 1))
  const q = at.query.subtensorModule
  const nums = async (p: Promise<{ toJSON (): unknown }>): Promise<number[]> => ((await p).toJSON() as number[]).map(Number)
  const n = Number((await q.subnetworkN(netuid)).toString())
  const uids = Array.from({ length: n }, (_, uid) => uid)
  return {
    block: head + 1,
    n,
    lastStep: Number((await q.lastMechansimStepBlock(netuid)).toString()),
    emission: await nums(q.emission(netuid)),
    stakeWeight: await nums(q.stakeWeight(netuid)),
    consensus: await nums(q.consensus(netuid)),
    incentive: await nums(q.incentive(netuid)),
    weights: (await Promise.all(uids.map(async uid => (await q.weights(netuid, uid)).toJSON() as Array<[number, number]>))).filter(w => w.length > 0)
  }
}

/**
 * Acceptance 1 of an open network on the real runtime, next to the running devnet: an orchestrator `b`
 * (a UID of its own, attaching only an allowlisted worker, so what a rogue worker presents is all it
 * has) and rogue workers without UIDs that present no attachment, an expired one, a revoked one, one
 * signed by a hotkey with no UID and one signed by a validator. Each is refused, by `b` and by the
 * devnet's orchestrators (which look the issuer up on the chain through the Subtensor adapter), and
 * leaves no trace: no standing, session, attachment or task at `b`, no peer at the devnet's
 * orchestrators, nothing on chain. A revoked attachment is known as such at its issuer only; elsewhere
 * its lifetime bounds it (docs/security.md#peers), so that case is checked at `b`.
 */
async function refusedOnSubtensor (t: Test, ctx: { api: ApiPromise, file: any, data: string, proc: CliProcess }): Promise<void> {
  const { api, file, data, proc } = ctx
  const netuid = Number(file.netuid)
  const q = api.query.subtensorModule
  const { logger, lines } = capturingLogger('info')
  const [host, port] = String(file.bootstrap[0]).split(':')
  const dhts: DHT[] = []
  const nodes: BwnetNode[] = []
  t.teardown(async () => {
    await Promise.allSettled(nodes.reverse().map(n => n.stop()))
    await Promise.allSettled(dhts.map(d => d.destroy()))
  })
  // Block time and epoch length come from the chain itself on Subtensor.
  const base = {
    ...NODE_DEFAULTS, network: file.network, bootstrap: file.bootstrap, dhtHost: '127.0.0.1', port: 0, logLevel: 'info', allowPrivateDestinations: true,
    chain: 'subtensor', chainUrl: file.chainUrl, netuid
  } as NodeConfig
  const start = async (name: string, cfg: Partial<NodeConfig>): Promise<BwnetNode> => {
    const dht = new DHT({ bootstrap: [{ host: host!, port: Number(port) }], host: '127.0.0.1', ephemeral: true, firewalled: false })
    dhts.push(dht)
    const node = new BwnetNode({ config: { ...base, data: join(data, '..', name), ...cfg } as NodeConfig, logger: logger.child({ node: name }), dht })
    nodes.push(node)
    return await node.start()
  }
  const keyOf = async (name: string): Promise<KeyPair> => (await loadOrCreateKeystore(join(data, '..', name, 'hotkey.json'))).key

  // b gets its UID as an operator's would: burned_register with a funded coldkey (the subnet owner's).
  const bKey = await keyOf('orchestrator-b')
  const alice = new Keyring({ type: 'sr25519', ss58Format: 42 }).addFromUri('//Alice')
  const nBefore = Number((await q.subnetworkN(netuid)).toString())
  // The devnet builds the blocks: wait for the UID in chain state (a watched extrinsic's inBlock status
  // can be missed when the block is built as it is submitted).
  await api.tx.subtensorModule.burnedRegister(netuid, bKey.address).signAndSend(alice, { nonce: -1 })
  const { uid: bUid } = await eventually(async () => {
    const uid = (await q.uids(netuid, bKey.address)).toJSON() as number | null
    return uid === null ? undefined : { uid }
  }, 120_000, 'b\'s UID', 500)
  t.equal(bUid, nBefore, `b registered on the subnet: UID ${bUid}`)
  const b = await start('orchestrator-b', { role: 'orchestrator', workerAllowlist: [newHotkey().address] })
  const validatorKey = await keyOf('devnet/validator')
  const devnetOrchestrators = (file.nodes as any[]).filter(n => n.role === 'orchestrator').map(n => n.hotkey as string)

  const now = Date.now()
  const cases: Array<[string, ((w: KeyPair) => Attachment) | null, string]> = [
    ['none', null, 'not_allowed'],
    ['expired', (w) => signAttachment(b.key, { worker: w.address, issuedAt: now - 20 * 60_000 }), 'expired'],
    ['revoked', (w) => { const att = signAttachment(b.key, { worker: w.address, issuedAt: now }); b.attachments!.revoke(w.address); return att }, 'revoked'],
    ['signed by a hotkey with no UID', (w) => signAttachment(newHotkey(), { worker: w.address, issuedAt: now }), 'issuer_unregistered'],
    ['signed by a validator', (w) => signAttachment(validatorKey, { worker: w.address, issuedAt: now }), 'issuer_not_orchestrator']
  ]
  const refusedAt = (source: Array<Record<string, any>>, at: string, w: string, reason: string): boolean =>
    source.some(l => l.event === 'attachment_refused' && l.peer === w && l.reason === reason && l.hotkey === at)
  // Every rogue starts at once (each presents its attachment in every announce); then each refusal is awaited.
  const rogues = await Promise.all(cases.map(async ([name, make, reason], i) => {
    const key = await keyOf(`rogue-${i}`)
    const att = make?.(key)
    const node = await start(`rogue-${i}`, { role: 'worker', attachTo: b.key.address })
    t.equal(node.key.address, key.address)
    if (att !== undefined) node.auth.onOwnAttachment(att)
    return { name, reason, hotkey: key.address }
  }))
  for (const r of rogues) {
    if (r.reason === 'not_allowed') {
      await eventually(async () => lines.some(l => l.event === 'worker_attach_refused' && l.worker === r.hotkey && l.reason === 'not_allowed' && l.hotkey === b.key.address), 60_000, 'b to refuse attaching the worker with none')
      t.pass('no attachment: b refuses to attach it (not on its allowlist)')
      continue
    }
    await eventually(async () => refusedAt(lines, b.key.address, r.hotkey, r.reason), 60_000, `b to refuse the ${r.name} attachment`)
    if (r.reason === 'revoked') { t.pass(`${r.name}: refused by b (${r.reason})`); continue }
    for (const o of devnetOrchestrators) await eventually(async () => refusedAt(proc.lines, o, r.hotkey, r.reason), 60_000, `${o} to refuse the ${r.name} attachment`)
    t.pass(`${r.name}: refused by b and by the devnet's ${devnetOrchestrators.length} orchestrators (${r.reason})`)
  }

  // The revoked attachment is valid where its revocation is not known: the devnet's orchestrators take
  // its worker as a peer (until the attachment expires), which is what the check below would see.
  const revoked = rogues.find(r => r.reason === 'revoked')!
  await eventually(async () => proc.lines.some(l => l.event === 'peer_joined' && l.peer === revoked.hotkey), 60_000, 'the revoked worker to be a peer elsewhere')
  t.pass('revoked: still a peer at the devnet\'s orchestrators, which do not know of the revocation')

  const sessions = async (): Promise<any[]> => (await collect(b.store.table<any>('workers'), prefixRange('session/'))).map(([, w]) => w)
  for (const r of rogues) {
    t.equal(await b.auth.standing(r.hotkey), null, `${r.name}: no standing at b`)
    t.notOk((await sessions()).some(s => s.hotkey === r.hotkey), `${r.name}: no session at b`)
    t.equal((await q.uids(netuid, r.hotkey)).toJSON(), null, `${r.name}: no UID on chain`)
    if (r.reason === 'revoked') continue
    t.notOk(proc.lines.some(l => (l.event === 'peer_joined' && l.peer === r.hotkey) || (l.event === 'worker_attached' && l.worker === r.hotkey)), `${r.name}: no peer or worker at the devnet's orchestrators`)
  }
  t.equal(b.attachments!.count(), 0, 'b issued no attachment')
  t.equal(b.workersAttached(), 0, 'b attached no worker')
  const attempts = (await collect(b.store.table<any>('task_attempts'))).filter(([, x]) => rogues.some(r => r.hotkey === x.worker_id))
  t.equal(attempts.length, 0, 'no task attempts')
  t.equal(Number((await q.subnetworkN(netuid)).toString()), nBefore + 1, 'the subnet holds b\'s UID and no other new one')
}
