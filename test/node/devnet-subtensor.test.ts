// `bwnet devnet --chain subtensor`: the whole network on the real Subtensor runtime (spec 218, run by
// chopsticks from test/fixtures/subtensor): a subnet with 2 orchestrators and 2 validators of unequal
// stake, 4 workers without UIDs, files moved byte for byte, both validators' weights in the chain's
// Weights storage.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiPromise, WsProvider } from '@polkadot/api'
import { eventually, runCliOnce } from '../helpers/proc.ts'
import { startDevnetProcess, sinkFile, devnetOrgId, sha256 } from '../helpers/devnet.ts'

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

  // Three files through the network into the first orchestrator's sink, byte for byte.
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

  const stopped = await proc.stop('SIGTERM')
  t.equal(stopped.code, 0, `exits 0 on SIGTERM (${stopped.ms} ms seen from here)`)
  t.ok(stopped.ms < 5_000, 'within 5 s')
  t.notOk(proc.lines.some(l => l.event === 'shutdown_timeout'), 'no shutdown timeout')
  // chopsticks went with it: its port no longer answers.
  await t.rejects(fetch(chainUrl.replace('ws:', 'http:'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id":1,"jsonrpc":"2.0","method":"system_chain","params":[]}' }), 'the local chain is stopped')
})
