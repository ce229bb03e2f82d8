// A real Subtensor runtime for tests: chopsticks runs the chain's own WebAssembly runtime from the raw
// chain spec in test/fixtures/subtensor (see its README) on a free loopback port, building blocks only
// when asked (`dev_newBlock`), so a test decides when time passes on chain.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { ApiPromise, WsProvider, Keyring } from '@polkadot/api'
import type { SubmittableExtrinsic } from '@polkadot/api/types'
import type { KeyringPair } from '@polkadot/keyring/types'
import { REPO } from './proc.ts'
import { freePort } from './s3.ts'

export const SUBTENSOR_SPEC = join(REPO, 'test', 'fixtures', 'subtensor', 'raonet.json')
const CHOPSTICKS_BIN = join(REPO, 'node_modules', '@acala-network', 'chopsticks', 'chopsticks.cjs')
const START_TIMEOUT_MS = 60_000
/** 1 TAO = 10⁹ rao; dev accounts get this much. */
const DEV_BALANCE = 1_000_000n * 1_000_000_000n

interface Teardownable { teardown (fn: () => unknown): void }

export interface Subtensor {
  url: string
  api: ApiPromise
  /** The dev coldkey that owns the subnet and pays for registrations (//Alice, also made sudo). */
  owner: KeyringPair
  /** Builds `n` empty blocks (or with the pending extrinsics), resolving with the new head number. */
  newBlocks (n?: number): Promise<number>
  /** Signs `tx` with `signer`, builds a block, and returns the module error name or null on success. */
  submit (tx: SubmittableExtrinsic<'promise'>, signer: KeyringPair): Promise<string | null>
  /** Same, wrapped in `sudo` (signed by the owner). */
  sudo (tx: SubmittableExtrinsic<'promise'>): Promise<string | null>
  stop (): Promise<void>
}

/** Starts chopsticks on the fixture spec and returns a connected API; stopped at the end of `t`. */
export async function startSubtensor (t: Teardownable): Promise<Subtensor> {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, [CHOPSTICKS_BIN, `--genesis=${SUBTENSOR_SPEC}`, '--host=127.0.0.1', `--port=${port}`, '--build-block-mode=Manual'], {
    cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'info' }
  })
  let output = ''
  child.stdout!.setEncoding('utf8').on('data', (d: string) => { output = (output + d).slice(-4000) })
  child.stderr!.setEncoding('utf8').on('data', (d: string) => { output = (output + d).slice(-4000) })
  const exited = once(child, 'exit')
  const stopChild = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    await exited
    clearTimeout(timer)
  }
  t.teardown(stopChild)
  const url = `ws://127.0.0.1:${port}`
  const api = await connectWhenUp(url, child, () => output)
  t.teardown(async () => { await api.disconnect().catch(() => {}) })

  const keyring = new Keyring({ type: 'sr25519', ss58Format: 42 })
  const owner = keyring.addFromUri('//Alice')
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
    url, api, owner, newBlocks, submit,
    sudo: async (tx) => await submit(api.tx.sudo.sudo(tx), owner),
    stop: async () => { await api.disconnect().catch(() => {}); await stopChild() }
  }
}

async function connectWhenUp (url: string, child: ChildProcess, output: () => string): Promise<ApiPromise> {
  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    if (child.exitCode !== null) throw new Error(`chopsticks exited (${child.exitCode}): ${output()}`)
    if (/Listening on|listening on|RPC listening/i.test(output())) break
    if (Date.now() > deadline) throw new Error(`chopsticks did not start within ${START_TIMEOUT_MS} ms: ${output()}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  const provider = new WsProvider(url, false)
  await provider.connect()
  return await ApiPromise.create({ provider, noInitWarn: true, throwOnConnect: true })
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
