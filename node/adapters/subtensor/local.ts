// A local Subtensor chain: chopsticks runs the chain's own WebAssembly runtime from a raw chain spec
// (test/fixtures/subtensor/raonet.json, spec 218) on a loopback port, building blocks only when asked
// (`dev_newBlock`). Used by `bwnet devnet --chain subtensor` and by the tests. chopsticks is a
// development dependency: this module is loaded, and chopsticks started, only when asked for.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ApiPromise, WsProvider, Keyring } from './polkadot.ts'
import type { SubmittableExtrinsic } from '@polkadot/api/types'
import type { KeyringPair } from '@polkadot/keyring/types'

/** The Subtensor chain spec the repository carries (test data, public domain: its README). */
export const SUBTENSOR_SPEC = fileURLToPath(new URL('../../../test/fixtures/subtensor/raonet.json', import.meta.url))
const START_TIMEOUT_MS = 60_000
/** After SIGTERM, chopsticks is killed outright past this. */
const KILL_AFTER_MS = 2_000
/** 1 TAO = 10⁹ rao. */
export const TAO = 1_000_000_000n
/** Free balance the funded dev accounts get. */
const DEV_BALANCE = 1_000_000n * TAO

/**
 * How the chopsticks process runs its CLI (argv[1], so its arguments read as they would from the CLI
 * itself): it first exits when its stdin ends, i.e. when the process that started it is gone (the kernel
 * closes a dead process's end of the pipe), so a devnet killed with SIGKILL leaves no chain behind.
 */
const EXIT_WITH_PARENT = "process.stdin.on('end',()=>process.exit(0));process.stdin.on('error',()=>process.exit(0));process.stdin.resume();require(process.argv[1])"

export interface LocalSubtensor {
  url: string
  /** The chopsticks process's id. */
  pid: number
  api: ApiPromise
  /** The dev coldkey that owns subnets and pays for registrations (//Alice, also made sudo). */
  owner: KeyringPair
  /** Builds `n` blocks (with the pending extrinsics), resolving with the new head number. */
  newBlocks (n?: number): Promise<number>
  /** Signs `tx` with `signer`, builds a block, and returns the module error name or null on success. */
  submit (tx: SubmittableExtrinsic<'promise'>, signer: KeyringPair): Promise<string | null>
  /** Same, wrapped in `sudo` (signed by the owner). */
  sudo (tx: SubmittableExtrinsic<'promise'>): Promise<string | null>
  /** Disconnects and stops chopsticks (SIGTERM, then SIGKILL after 2 s). Safe to call more than once. */
  stop (): Promise<void>
}

export interface LocalSubtensorOptions {
  spec?: string
  /** Loopback port; 0 or unset picks a free one. */
  port?: number
  /** Called with chopsticks' own output lines. */
  onOutput?: (line: string) => void
}

/** Path of the chopsticks CLI, or an error saying it is a development dependency. */
function chopsticksBin (): string {
  try {
    // The package's main module sits at <root>/dist/cjs/index.js; its CLI at <root>/chopsticks.cjs.
    const main = createRequire(import.meta.url).resolve('@acala-network/chopsticks')
    return join(dirname(main), '..', '..', 'chopsticks.cjs')
  } catch {
    throw new Error('a local Subtensor chain needs @acala-network/chopsticks (a development dependency): npm install --include=dev')
  }
}

export async function freeLoopbackPort (): Promise<number> {
  const srv = createServer()
  srv.listen(0, '127.0.0.1')
  await once(srv, 'listening')
  const port = (srv.address() as { port: number }).port
  srv.close()
  await once(srv, 'close')
  return port
}

/** Starts chopsticks on `spec` (manual block mode), funds //Alice and makes it sudo; returns a connected API. */
export async function startLocalSubtensor (opts: LocalSubtensorOptions = {}): Promise<LocalSubtensor> {
  const port = opts.port !== undefined && opts.port !== 0 ? opts.port : await freeLoopbackPort()
  const spec = opts.spec ?? SUBTENSOR_SPEC
  // The binary itself (not through npx), so the PID is chopsticks' and killing it stops it. Its stdin is
  // a pipe from this process that nothing writes to: it ends when this process does, however it ends
  // (SIGKILL too), and then so does chopsticks (EXIT_WITH_PARENT).
  const child: ChildProcess = spawn(process.execPath, ['-e', EXIT_WITH_PARENT, chopsticksBin(), `--genesis=${spec}`, '--host=127.0.0.1', `--port=${port}`, '--build-block-mode=Manual'], {
    cwd: dirname(spec), stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'info' }
  })
  let output = ''
  let listening: () => void = () => {}
  const up = new Promise<void>(resolve => { listening = resolve })
  const onData = (d: string): void => {
    output = (output + d).slice(-4000)
    if (/listening on/i.test(output)) listening()
    if (opts.onOutput !== undefined) for (const line of d.split('\n')) if (line.trim() !== '') opts.onOutput(line)
  }
  child.stdout!.setEncoding('utf8').on('data', onData)
  child.stderr!.setEncoding('utf8').on('data', onData)
  const exited = once(child, 'exit')
  let stopping: Promise<void> | null = null
  const stopChild = (): Promise<void> => (stopping ??= (async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS)
    await exited
    clearTimeout(timer)
  })())

  let api: ApiPromise
  try {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error(`chopsticks did not start within ${START_TIMEOUT_MS} ms: ${output}`)), START_TIMEOUT_MS) })
    const died = exited.then(([code]) => { throw new Error(`chopsticks exited (${String(code)}): ${output}`) })
    died.catch(() => {})
    try { await Promise.race([up, late, died]) } finally { clearTimeout(timer) }
    // It moves to another port when this one is taken: connect only to the one it says it listens on.
    if (!output.includes(`:${port}`)) throw new Error(`chopsticks did not listen on port ${port}: ${output}`)
    const provider = new WsProvider(`ws://127.0.0.1:${port}`, false)
    await provider.connect()
    api = await ApiPromise.create({ provider, noInitWarn: true, throwOnConnect: true })
  } catch (err) {
    await stopChild()
    throw err
  }

  const owner = new Keyring({ type: 'sr25519', ss58Format: 42 }).addFromUri('//Alice')
  // Genesis gives dev accounts nothing and a foreign sudo key: fund //Alice and make it sudo.
  await api.rpc('dev_setStorage' as never, {
    System: { Account: [[[owner.address], { providers: 1, data: { free: DEV_BALANCE.toString() } }]] },
    Sudo: { Key: owner.address }
  } as never)
  const newBlocks = async (n = 1): Promise<number> => {
    for (let i = 0; i < n; i++) {
      // About one start in seven the first block fails an Aura slot check at genesis; the next works.
      try { await api.rpc('dev_newBlock' as never) } catch { await api.rpc('dev_newBlock' as never) }
    }
    return (await api.rpc.chain.getHeader()).number.toNumber()
  }
  const submit = async (tx: SubmittableExtrinsic<'promise'>, signer: KeyringPair): Promise<string | null> => {
    const before = (await api.rpc.chain.getHeader()).number.toNumber()
    const hash = await tx.signAndSend(signer, { nonce: -1 })
    await newBlocks(1)
    return await dispatchErrorOf(api, before + 1, hash.toHex())
  }
  return {
    url: `ws://127.0.0.1:${port}`, pid: child.pid!, api, owner, newBlocks, submit,
    sudo: async (tx) => await submit(api.tx.sudo.sudo(tx), owner),
    stop: async () => { await api.disconnect().catch(() => {}); await stopChild() }
  }
}

/** The outcome of extrinsic `txHash` in block `block`: null when it succeeded, else the error's name. */
export async function dispatchErrorOf (api: ApiPromise, block: number, txHash: string): Promise<string | null> {
  const blockHash = await api.rpc.chain.getBlockHash(block)
  const signed = await api.rpc.chain.getBlock(blockHash)
  const index = signed.block.extrinsics.findIndex(x => x.hash.toHex() === txHash)
  if (index < 0) return 'NotIncluded'
  const events = await (await api.at(blockHash)).query.system.events()
  for (const { phase, event } of events as unknown as Array<{ phase: any, event: any }>) {
    if (!phase.isApplyExtrinsic || phase.asApplyExtrinsic.toNumber() !== index) continue
    if (api.events.system.ExtrinsicFailed.is(event)) {
      const [err] = event.data as any
      if (err.isModule) { const meta = api.registry.findMetaError(err.asModule); return meta.name }
      return err.type as string
    }
    if (api.events.sudo?.Sudid?.is(event)) {
      const [res] = event.data as any
      if (res.isErr) {
        const err = res.asErr
        if (err.isModule) return api.registry.findMetaError(err.asModule).name
        return err.type as string
      }
    }
  }
  return null
}

export interface SubnetPlan {
  /** The subnet owner's hotkey (UID 0). */
  ownerHotkey: string
  /** Further hotkeys registered (burned_register) in this order: UIDs 1, 2, … */
  hotkeys: string[]
  /** Stake (TAO, added by the owner coldkey) per hotkey, owner's included. */
  stakeTao?: Record<string, bigint>
  /** The subnet's tempo: an epoch is tempo + 1 blocks. */
  tempo: number
  /** Weights set rate limit in blocks (0: none). */
  weightsRateLimit?: number
  /**
   * Reserves the subnet's pool is seeded with, in TAO and α alike (price 1), before any stake is added.
   * A new subnet's pool holds almost no α on this runtime, so stake bought there gets next to none;
   * seeded, 1000 TAO staked buys about 1000 α.
   */
  poolReserve?: bigint
}

/**
 * Creates a subnet owned by //Alice, registers and stakes `plan`'s hotkeys and sets what a bwnet network
 * needs (tempo, weights rate limit). Builds the blocks it needs itself; returns the netuid.
 */
export async function createLocalSubnet (s: LocalSubtensor, plan: SubnetPlan): Promise<number> {
  const { api } = s
  const must = (what: string) => (err: string | null): void => { if (err !== null) throw new Error(`${what}: ${err}`) }
  const head = (await api.rpc.chain.getHeader()).number.toNumber()
  if (head < 12) await s.newBlocks(12 - head) // the runtime's network rate limit
  must('register network')(await s.submit(api.tx.subtensorModule.registerNetwork(plan.ownerHotkey, 1), s.owner))
  const netuid = Number((await api.query.subtensorModule.totalNetworks()).toString()) - 1
  // The runtime admits three times its target registrations per interval (target 1 at genesis).
  must('registrations per interval')(await s.sudo(api.tx.adminUtils.sudoSetTargetRegistrationsPerInterval(netuid, Math.max(1, plan.hotkeys.length))))
  for (const h of plan.hotkeys) must(`burned register ${h}`)(await s.submit(api.tx.subtensorModule.burnedRegister(netuid, h), s.owner))
  must('tempo')(await s.sudo(api.tx.adminUtils.sudoSetTempo(netuid, plan.tempo)))
  must('weights rate limit')(await s.sudo(api.tx.adminUtils.sudoSetWeightsSetRateLimit(netuid, plan.weightsRateLimit ?? 0)))
  if (plan.poolReserve !== undefined) {
    const rao = (plan.poolReserve * TAO).toString()
    await api.rpc('dev_setStorage' as never, { SubtensorModule: { SubnetTAO: [[[netuid], rao]], SubnetAlphaIn: [[[netuid], rao]] } } as never)
  }
  for (const [h, tao] of Object.entries(plan.stakeTao ?? {})) must(`stake ${h}`)(await s.submit(api.tx.subtensorModule.addStake(h, netuid, tao * TAO), s.owner))
  return netuid
}

/** Sets the chain's clock so that the next block is stamped `atMs` (its Aura slot follows). */
export async function setChainTime (s: LocalSubtensor, atMs: number): Promise<void> {
  const slot = Number((await s.api.call.auraApi.slotDuration()).toString())
  await s.api.rpc('dev_timeTravel' as never, (atMs - slot) as never)
}

/** Gives `address` (a hotkey's own account, which pays its weight extrinsics' fees) `tao` TAO. */
export async function fundAccount (s: LocalSubtensor, address: string, tao: bigint): Promise<void> {
  const err = await s.sudo(s.api.tx.balances.forceSetBalance(address, tao * TAO))
  if (err !== null) throw new Error(`fund ${address}: ${err}`)
}
