// The Chain port on Subtensor: a subnet of a real Bittensor chain over WebSocket RPC. Reads head, tempo
// epochs, UIDs, permits and stake from chain state; sets (or commits and later reveals) the validator's
// weights with its own hotkey; follows every block to index the subnet's emissions and alpha sales
// (which chain state does not keep as history) and to announce epoch closes. See docs/chain.md.
import { randomInt } from 'node:crypto'
import { ApiPromise, WsProvider, Keyring } from './polkadot.ts'
import type { SubmittableExtrinsic } from '@polkadot/api/types'
import type { KeyringPair } from '@polkadot/keyring/types'
import type { Role } from '../../../protocol/index.ts'
import type { KeyPair } from '../../../protocol/keys.ts'
import type { Clock, Logger, Store, StoreOp, Timer } from '../../../actors/ports.ts'
import { collect } from '../../../actors/store.ts'
import {
  ChainError, type Chain, type ChainHead, type ChainListener, type EmissionRecord, type EpochClose, type Registration,
  type SaleRecord, type Unsubscribe, type WeightsProof, type WeightsRecord
} from '../../../actors/chain/ports.ts'
import { subtensorEpochBlocks, subtensorEpochOf } from '../../../actors/domain/subtensor.ts'
import { weightCalls, type WeightCalls } from './calls.ts'

const CONNECT_TIMEOUT_MS = 30_000
/** How long an extrinsic may wait for a block before the submission is given up. */
const INCLUSION_TIMEOUT_MS = 5 * 60_000 // 5 min
/** An unreachable RPC endpoint is retried with backoff for this long before a call fails. */
const UNAVAILABLE_RETRY_MS = 10 * 60_000 // 10 min
const BACKOFF_MIN_MS = 1_000
const BACKOFF_MAX_MS = 30_000
/** Rate-limited weight submissions wait for the allowed block at most this many times. */
const RATE_LIMIT_RETRIES = 3
/** A transaction missing from blocks and pool for this many new heads in a row was dropped. */
const DROPPED_AFTER_BLOCKS = 3
/** Sends of one transaction before a drop is an error. */
const RESUBMIT_ATTEMPTS = 3
/** Salt length of a weight commit (u16 values), as Bittensor's own clients use. */
const SALT_LENGTH = 8
/** A commit whose inclusion was never seen is dropped after this many epochs. */
const LOST_COMMIT_EPOCHS = 3
/** Blocks indexed behind the head when the adapter first follows a chain. */
const DEFAULT_BACKFILL_BLOCKS = 1_000
/** Stake (alpha rao) that, with a validator permit, makes a UID a validator rather than an orchestrator. */
export const DEFAULT_VALIDATOR_MIN_STAKE_RAO = 1_000n * 1_000_000_000n // 1,000 α

export interface SubtensorOptions {
  url: string
  netuid: number
  /** This node's hotkey: signs weights (validators); null for read-only use (commands, miners). */
  key: KeyPair | null
  store: Store
  clock: Clock
  logger: Logger
  validatorMinStakeRao?: bigint
  backfillBlocks?: number
  /** Follow blocks (index emissions and sales, announce epoch closes, reveal commits); default true. */
  follow?: boolean
}

/** A registration with the hotkey's alpha stake on the subnet and its validator permit. */
export interface SubtensorStanding extends Registration { stakeRao: bigint, validatorPermit: boolean }

interface PendingCommit {
  hash: string
  label: number
  netuid: number
  uids: number[]
  weights: number[]
  salt: number[]
  versionKey: string
  /** Head when the commit was sent; the block that included it once known. */
  sentAtBlock: number
  commitBlock: number | null
  txId: string | null
}

interface StoredWeights { validatorHotkey: string, epoch: number, txId: string, block: number, uids: number[], weights: number[], mode: 'set' | 'reveal' }
interface StoredClose { epoch: number, firstBlock: number, lastBlock: number, startAtMs: number, endAtMs: number, emittedRao: string, burnedRao: string }

const pad = (n: number): string => String(n).padStart(12, '0')

export class SubtensorChain implements Chain {
  readonly netuid: number
  readonly #api: ApiPromise
  readonly #calls: WeightCalls
  readonly #opts: SubtensorOptions
  readonly #log: Logger
  readonly #pair: KeyringPair | null
  readonly #listeners = new Set<ChainListener>()
  readonly #prefix: string
  #versionKey: bigint | null = null
  #latest = 0
  #following: Promise<void> | null = null
  #followAgain = false
  #unsubscribeHeads: (() => void) | null = null
  #revealing = false
  #closed = false
  readonly #blockWaiters: Array<{ block: number, resolve: () => void }> = []
  #blockTimeMs = 12_000

  private constructor (api: ApiPromise, opts: SubtensorOptions) {
    this.#api = api
    this.#opts = opts
    this.netuid = opts.netuid
    this.#log = opts.logger.child({ component: 'subtensor', netuid: opts.netuid })
    this.#calls = weightCalls(api)
    this.#prefix = `subtensor/${opts.netuid}/`
    this.#pair = opts.key === null ? null : new Keyring({ type: 'sr25519', ss58Format: 42 }).addFromSeed(opts.key.seed)
  }

  /** Connects, checks the runtime and the subnet, and (by default) starts following blocks. */
  static async connect (opts: SubtensorOptions): Promise<SubtensorChain> {
    const provider = new WsProvider(opts.url, BACKOFF_MIN_MS)
    let api: ApiPromise
    try {
      api = await withTimeout(ApiPromise.create({ provider, noInitWarn: true, throwOnConnect: true }), CONNECT_TIMEOUT_MS, `no Subtensor RPC at ${opts.url}`)
    } catch (err) {
      await provider.disconnect().catch(() => {})
      throw err instanceof ChainError ? err : new ChainError('BWN_ERR_CHAIN_UNAVAILABLE', `cannot connect to Subtensor at ${opts.url}: ${(err as Error).message}`)
    }
    try {
      const chain = new SubtensorChain(api, opts)
      await chain.#init()
      return chain
    } catch (err) {
      await api.disconnect().catch(() => {})
      throw err
    }
  }

  async #init (): Promise<void> {
    const q = this.#api.query.subtensorModule
    if (!(await q.networksAdded(this.netuid) as unknown as { isTrue: boolean }).isTrue) throw new ChainError('BWN_ERR_CHAIN_UNAVAILABLE', `subnet ${this.netuid} does not exist on ${this.#opts.url}`)
    if (!this.#calls.tested) this.#log.warn({ event: 'subtensor_untested_runtime', specVersion: this.#calls.specVersion }, `runtime spec version ${this.#calls.specVersion} is not among the tested ones`)
    try { this.#blockTimeMs = Number((await this.#api.call.auraApi.slotDuration()).toString()) } catch { /* chains without Aura keep 12 s */ }
    this.#latest = (await this.#api.rpc.chain.getHeader()).number.toNumber()
    this.#log.info({ event: 'subtensor_connected', url: this.#opts.url, specVersion: this.#calls.specVersion, head: this.#latest }, 'connected to Subtensor')
    if (this.#opts.follow === false) return
    this.#unsubscribeHeads = await this.#api.rpc.chain.subscribeNewHeads((header) => {
      this.#latest = Math.max(this.#latest, header.number.toNumber())
      this.#kick()
    })
    this.#kick()
  }

  get blockTimeMs (): number { return this.#blockTimeMs }

  // ---- reads -------------------------------------------------------------------------------------

  async #tempo (at?: string): Promise<number> {
    const api = at === undefined ? this.#api : await this.#api.at(at)
    return Number((await api.query.subtensorModule.tempo(this.netuid)).toString())
  }

  async head (): Promise<ChainHead> {
    return await this.#retrying('head', async () => {
      const header = await this.#api.rpc.chain.getHeader()
      const block = header.number.toNumber()
      const tempo = await this.#tempo()
      const atMs = Number((await this.#api.query.timestamp.now()).toString())
      return { block, epoch: subtensorEpochOf(block, this.netuid, tempo), atMs, blockTimeMs: this.#blockTimeMs, blocksPerEpoch: tempo + 1 }
    })
  }

  async uidOf (hotkey: string): Promise<number | null> {
    return await this.#retrying('uidOf', async () => {
      const uid = await this.#api.query.subtensorModule.uids(this.netuid, hotkey)
      const json = uid.toJSON() as number | null
      return json === null ? null : Number(json)
    })
  }

  async registrations (): Promise<Registration[]> {
    return (await this.#standings()).map(({ stakeRao: _s, validatorPermit: _p, ...r }) => r)
  }

  /** A hotkey's registration with its alpha stake and validator permit, or null without a UID. */
  async standing (hotkey: string): Promise<SubtensorStanding | null> {
    const uid = await this.uidOf(hotkey)
    if (uid === null) return null
    return (await this.#standings([uid]))[0] ?? null
  }

  /** Standings of `uids` (default: every UID of the subnet), ascending by UID. */
  async #standings (uids?: number[]): Promise<SubtensorStanding[]> {
    return await this.#retrying('registrations', async () => {
      const q = this.#api.query.subtensorModule
      const [keys, permits, minStake] = await Promise.all([q.keys.entries(this.netuid), q.validatorPermit(this.netuid), q.weightsMinStake()])
      const permit = permits.toJSON() as boolean[]
      const threshold = maxBig(this.#opts.validatorMinStakeRao ?? DEFAULT_VALIDATOR_MIN_STAKE_RAO, BigInt(minStake.toString()))
      const out: SubtensorStanding[] = []
      for (const [k, v] of keys) {
        const uid = Number(k.args[1]!.toString())
        if (uids !== undefined && !uids.includes(uid)) continue
        const hotkey = v.toString()
        const [stake, at] = await Promise.all([q.totalHotkeyAlpha(hotkey, this.netuid), q.blockAtRegistration(this.netuid, uid)])
        const stakeRao = BigInt(stake.toString())
        const validatorPermit = permit[uid] === true
        const role: Role = validatorPermit && stakeRao >= threshold ? 'validator' : 'orchestrator'
        out.push({ hotkey, uid, role, registeredAtBlock: Number(at.toString()), stakeRao, validatorPermit })
      }
      return out.sort((a, b) => a.uid - b.uid)
    })
  }

  /** Registration happens on chain with the owner's coldkey (burned_register); this only looks it up. */
  async register (hotkey: string, role: Role): Promise<Registration> {
    const reg = (await this.registrations()).find(r => r.hotkey === hotkey)
    if (reg === undefined) {
      throw new ChainError('BWN_ERR_CHAIN_NOT_REGISTERED', `hotkey ${hotkey} has no UID on subnet ${this.netuid}: register it first (burned_register with its coldkey, e.g. btcli subnet register --netuid ${this.netuid})`)
    }
    if (role === 'validator' && reg.role !== 'validator') this.#log.warn({ event: 'subtensor_no_permit', hotkey, uid: reg.uid }, `UID ${reg.uid} has no validator permit with enough stake yet; its weights may be refused`)
    return reg
  }

  async weightsOf (epoch: number): Promise<WeightsRecord[]> {
    const own = await collect(this.#opts.store.table<StoredWeights>('chain'), { gte: `${this.#prefix}weights/${pad(epoch)}/`, lt: `${this.#prefix}weights/${pad(epoch)}/\xff` })
    const out = new Map<string, WeightsRecord>(own.map(([, w]) => [w.validatorHotkey, { txId: w.txId, block: w.block, epoch: w.epoch, validatorHotkey: w.validatorHotkey, uids: w.uids, weights: w.weights }]))
    // Other validators: bwnet sets the vector of epoch E during E + 1, so a vector last set in epoch
    // E + 1 is read as E's (chain state keeps only the latest vector of each UID).
    await this.#retrying('weightsOf', async () => {
      const q = this.#api.query.subtensorModule
      const [keys, lastUpdate, tempo] = await Promise.all([q.keys.entries(this.netuid), q.lastUpdate(this.netuid), this.#tempo()])
      const last = lastUpdate.toJSON() as number[]
      for (const [k, v] of keys) {
        const uid = Number(k.args[1]!.toString())
        const hotkey = v.toString()
        const at = last[uid] ?? 0
        if (out.has(hotkey) || at === 0 || subtensorEpochOf(at, this.netuid, tempo) - 1 !== epoch) continue
        const pairs = (await q.weights(this.netuid, uid)).toJSON() as Array<[number, number]>
        out.set(hotkey, { txId: '', block: at, epoch, validatorHotkey: hotkey, uids: pairs.map(p => p[0]), weights: pairs.map(p => p[1]) })
      }
    })
    return [...out.values()].sort((a, b) => a.validatorHotkey < b.validatorHotkey ? -1 : a.validatorHotkey > b.validatorHotkey ? 1 : 0)
  }

  /** The vector chain state holds for `uid` now (u16, max-upscaled by the chain). */
  async weightsOfUid (uid: number): Promise<{ uids: number[], weights: number[], lastUpdate: number }> {
    return await this.#retrying('weightsOfUid', async () => {
      const q = this.#api.query.subtensorModule
      const pairs = (await q.weights(this.netuid, uid)).toJSON() as Array<[number, number]>
      const last = ((await q.lastUpdate(this.netuid)).toJSON() as number[])[uid] ?? 0
      return { uids: pairs.map(p => p[0]), weights: pairs.map(p => p[1]), lastUpdate: last }
    })
  }

  async emissionsFor (hotkey: string, fromBlock: number, toBlock: number): Promise<EmissionRecord[]> {
    const rows = await collect(this.#opts.store.table<{ uid: number, epoch: number, block: number, alphaRao: string }>('chain'), { gte: `${this.#prefix}em/${hotkey}/${pad(fromBlock)}`, lte: `${this.#prefix}em/${hotkey}/${pad(toBlock)}` })
    return rows.map(([, r]) => ({ hotkey, uid: r.uid, epoch: r.epoch, block: r.block, alphaRao: BigInt(r.alphaRao) }))
  }

  async salesFor (hotkey: string, fromBlock: number, toBlock: number): Promise<SaleRecord[]> {
    const rows = await collect(this.#opts.store.table<{ txId: string, block: number, alphaRao: string }>('chain'), { gte: `${this.#prefix}sale/${hotkey}/${pad(fromBlock)}/`, lt: `${this.#prefix}sale/${hotkey}/${pad(toBlock)}/\xff` })
    return rows.map(([, r]) => ({ txId: r.txId, hotkey, block: r.block, alphaRao: BigInt(r.alphaRao) }))
  }

  async recordSale (): Promise<SaleRecord> {
    throw new ChainError('BWN_ERR_CHAIN_FORBIDDEN', 'alpha sales happen on Subtensor itself (remove_stake); bwnet only reads them')
  }

  async epochClose (epoch: number): Promise<EpochClose | null> {
    const stored = await this.#opts.store.table<StoredClose>('chain').get(`${this.#prefix}close/${pad(epoch)}`)
    if (stored !== undefined) return toClose(stored)
    return await this.#retrying('epochClose', async () => {
      const tempo = await this.#tempo()
      const { lastBlock } = subtensorEpochBlocks(epoch, this.netuid, tempo)
      if (lastBlock + 1 > this.#latest) return null
      const close = await this.#closeAt(lastBlock + 1, epoch, tempo)
      await this.#opts.store.table<StoredClose>('chain').put(`${this.#prefix}close/${pad(epoch)}`, fromClose(close))
      return close
    })
  }

  subscribe (listener: ChainListener): Unsubscribe {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  async close (): Promise<void> {
    this.#closed = true
    this.#unsubscribeHeads?.()
    await this.#following?.catch(() => {})
    await this.#api.disconnect().catch(() => {})
  }

  // ---- weights -----------------------------------------------------------------------------------

  async setWeights (validatorHotkey: string, epoch: number, uids: readonly number[], uint16Weights: readonly number[]): Promise<WeightsProof> {
    if (this.#pair === null || validatorHotkey !== this.#opts.key!.address) throw new ChainError('BWN_ERR_CHAIN_FORBIDDEN', `this node holds no key for ${validatorHotkey}`)
    if (uids.length !== uint16Weights.length || uids.length === 0) throw new ChainError('BWN_ERR_CHAIN_BAD_WEIGHTS', 'uids and weights must be non-empty and of equal length')
    const uid = await this.uidOf(validatorHotkey)
    if (uid === null) throw new ChainError('BWN_ERR_CHAIN_NOT_REGISTERED', `hotkey ${validatorHotkey} has no UID on subnet ${this.netuid}`)
    const commitReveal = (await this.#retrying('commitReveal', async () => await this.#api.query.subtensorModule.commitRevealWeightsEnabled(this.netuid)) as unknown as { isTrue: boolean }).isTrue
    let versionRetried = false
    let rateRetries = 0
    for (;;) {
      const versionKey = this.#versionKey ?? await this.#readVersionKey()
      const outcome = commitReveal
        ? await this.#commit(epoch, uids, uint16Weights, versionKey)
        : await this.#submit(this.#calls.setWeights(this.netuid, uids, uint16Weights, versionKey), 'set_weights')
      if (outcome.error === null) {
        if (!commitReveal) {
          await this.#recordWeights({ validatorHotkey, epoch, txId: outcome.txId, block: outcome.block, uids: [...uids], weights: [...uint16Weights], mode: 'set' })
          this.#log.info({ event: 'weights_set', epoch, uid, txId: outcome.txId, block: outcome.block, uids: uids.length, versionKey: versionKey.toString() }, `weights set on subnet ${this.netuid}`)
        }
        return { txId: outcome.txId, block: outcome.block, epoch, validatorHotkey }
      }
      if (outcome.error === 'IncorrectWeightVersionKey' && !versionRetried) {
        versionRetried = true
        const was = versionKey
        this.#versionKey = null
        this.#log.warn({ event: 'weights_version_key_changed', epoch, was: was.toString() }, 'weights refused for their version key; re-reading it and retrying once')
        continue
      }
      if ((outcome.error === 'SettingWeightsTooFast' || outcome.error === 'CommittingWeightsTooFast') && rateRetries < RATE_LIMIT_RETRIES) {
        rateRetries++
        const allowed = await this.#allowedBlock(uid, outcome.block)
        this.#log.warn({ event: 'weights_rate_limited', epoch, allowedBlock: allowed, refusedInBlock: outcome.block }, `weights rate limited; retrying at block ${allowed}`)
        await this.#waitForBlock(allowed - 1)
        continue
      }
      this.#log.warn({ event: 'weights_refused', epoch, error: outcome.error }, `subnet ${this.netuid} refused the weights: ${outcome.error}`)
      throw new ChainError(outcome.error === 'NeuronNoValidatorPermit' || outcome.error === 'NotEnoughStakeToSetWeights' ? 'BWN_ERR_CHAIN_NOT_VALIDATOR' : 'BWN_ERR_CHAIN_REJECTED', `subnet ${this.netuid} refused the weights: ${outcome.error}`)
    }
  }

  async #readVersionKey (): Promise<bigint> {
    const key = await this.#retrying('versionKey', async () => BigInt((await this.#api.query.subtensorModule.weightsVersionKey(this.netuid)).toString()))
    this.#versionKey = key
    return key
  }

  /** First block at which `uid` may set weights again: its last update plus the subnet's rate limit. */
  async #allowedBlock (uid: number, refusedInBlock: number): Promise<number> {
    const q = this.#api.query.subtensorModule
    const [last, limit] = await Promise.all([q.lastUpdate(this.netuid), q.weightsSetRateLimit(this.netuid)])
    const lastUpdate = (last.toJSON() as number[])[uid] ?? 0
    return Math.max(refusedInBlock + 1, lastUpdate + Number(limit.toString()))
  }

  async #commit (label: number, uids: readonly number[], weights: readonly number[], versionKey: bigint): Promise<{ txId: string, block: number, error: string | null }> {
    const account = this.#pair!.address
    const salt = Array.from({ length: SALT_LENGTH }, () => randomInt(0, 65536))
    const hash = this.#calls.commitHash(account, this.netuid, uids, weights, salt, versionKey)
    const key = `${this.#prefix}commit/${hash}`
    const pending: PendingCommit = { hash, label, netuid: this.netuid, uids: [...uids], weights: [...weights], salt, versionKey: versionKey.toString(), sentAtBlock: this.#latest, commitBlock: null, txId: null }
    // The salt is durable before the commit leaves: a restart can still reveal.
    await this.#opts.store.table<PendingCommit>('chain').put(key, pending)
    let outcome
    try {
      outcome = await this.#submit(this.#calls.commitWeights(this.netuid, hash), 'commit_weights')
    } catch (err) {
      await this.#opts.store.table('chain').del(key)
      throw err
    }
    if (outcome.error !== null) { await this.#opts.store.table('chain').del(key); return outcome }
    await this.#opts.store.table<PendingCommit>('chain').put(key, { ...pending, commitBlock: outcome.block, txId: outcome.txId })
    this.#log.info({ event: 'weights_committed', epoch: label, txId: outcome.txId, block: outcome.block, hash }, `weights committed on subnet ${this.netuid}; reveal follows in the next epoch`)
    return outcome
  }

  /** Reveals every pending commit whose reveal epoch has come; called on each followed block. */
  async #revealDue (head: number): Promise<void> {
    if (this.#pair === null || this.#revealing) return
    this.#revealing = true
    try {
      const table = this.#opts.store.table<PendingCommit>('chain')
      const pending = await collect(table, { gte: `${this.#prefix}commit/`, lt: `${this.#prefix}commit/\xff` })
      if (pending.length === 0) return
      const tempo = await this.#tempo()
      const nowEpoch = subtensorEpochOf(head, this.netuid, tempo)
      for (const [key, c] of pending) {
        let commitBlock = c.commitBlock
        if (commitBlock === null) commitBlock = await this.#findCommitBlock(c.hash)
        if (commitBlock === null) {
          if (nowEpoch - subtensorEpochOf(c.sentAtBlock, this.netuid, tempo) >= LOST_COMMIT_EPOCHS) {
            await table.del(key)
            this.#log.warn({ event: 'weights_commit_lost', epoch: c.label, hash: c.hash }, 'a weight commit never reached the chain; dropped')
          }
          continue
        }
        if (nowEpoch <= subtensorEpochOf(commitBlock, this.netuid, tempo)) continue
        const outcome = await this.#submit(this.#calls.revealWeights(c.netuid, c.uids, c.weights, c.salt, BigInt(c.versionKey)), 'reveal_weights')
        if (outcome.error === 'RevealTooEarly') continue
        await table.del(key)
        if (outcome.error !== null) {
          this.#log.warn({ event: 'weights_reveal_failed', epoch: c.label, error: outcome.error, hash: c.hash }, `revealing weights failed: ${outcome.error}`)
          continue
        }
        await this.#recordWeights({ validatorHotkey: this.#pair.address, epoch: c.label, txId: outcome.txId, block: outcome.block, uids: c.uids, weights: c.weights, mode: 'reveal' })
        this.#log.info({ event: 'weights_revealed', epoch: c.label, txId: outcome.txId, block: outcome.block, hash: c.hash }, `weights revealed on subnet ${this.netuid}`)
      }
    } catch (err) {
      this.#log.warn({ event: 'weights_reveal_error', err: (err as Error).message }, 'reveal check failed; retried on the next block')
    } finally {
      this.#revealing = false
    }
  }

  /** The block of our on-chain commit with `hash` (after a restart that lost the inclusion), or null. */
  async #findCommitBlock (hash: string): Promise<number | null> {
    const commits = (await this.#api.query.subtensorModule.weightCommits(this.netuid, this.#pair!.address)).toJSON() as Array<[string, number, ...unknown[]]> | null
    const found = (commits ?? []).find(c => c[0] === hash)
    return found === undefined ? null : Number(found[1])
  }

  async #recordWeights (w: StoredWeights): Promise<void> {
    await this.#opts.store.table<StoredWeights>('chain').put(`${this.#prefix}weights/${pad(w.epoch)}/${w.validatorHotkey}`, w)
  }

  /**
   * Signs and sends `tx`, resolving once it is in a block with its dispatch error (module error name) or
   * null. A transaction the pool dropped without a word is sent again.
   */
  async #submit (tx: SubmittableExtrinsic<'promise'>, what: string): Promise<{ txId: string, block: number, error: string | null }> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.#submitOnce(tx, what)
      if (outcome !== null) return outcome
      if (attempt >= RESUBMIT_ATTEMPTS) throw new ChainError('BWN_ERR_CHAIN_REJECTED', `${what} was dropped by the transaction pool ${attempt} times`)
      this.#log.warn({ event: 'subtensor_tx_dropped', what, attempt }, `${what} left the pool without being included; sending it again`)
    }
  }

  /** One submission; null when the transaction left the pool unseen in any block. */
  async #submitOnce (tx: SubmittableExtrinsic<'promise'>, what: string): Promise<{ txId: string, block: number, error: string | null } | null> {
    return await this.#retrying(what, async () => {
      const sentAt = (await this.#api.rpc.chain.getHeader()).number.toNumber()
      return await new Promise((resolve, reject) => {
        let unsubscribe: (() => void) | null = null
        let unsubscribeHeads: (() => void) | null = null
        let done = false
        let txHash: string | null = null
        let searched = sentAt
        let missing = 0
        const timer: Timer = this.#opts.clock.setTimer(INCLUSION_TIMEOUT_MS, () => finish(new ChainError('BWN_ERR_CHAIN_TIMEOUT', `${what} was not included within ${INCLUSION_TIMEOUT_MS} ms`)))
        const finish = (err: Error | null, value?: { txId: string, block: number, error: string | null } | null): void => {
          if (done) return
          done = true
          timer.cancel()
          unsubscribe?.()
          unsubscribeHeads?.()
          if (err !== null) reject(err); else resolve(value ?? null)
        }
        // The watch subscription can miss an inclusion (seen with manually built blocks): each new head
        // is also searched for the transaction, and one that is in no block and not in the pool for a
        // few blocks running was dropped.
        const check = async (head: number): Promise<void> => {
          if (done || txHash === null) return
          for (let b = searched + 1; b <= head && !done; b++) {
            const found = await this.#findExtrinsic(b, txHash)
            if (found !== null) { finish(null, { txId: txHash, block: b, error: found.error }); return }
            searched = b
          }
          if (done) return
          const pending = (await this.#api.rpc.author.pendingExtrinsics()).some(x => x.hash.toHex() === txHash)
          missing = pending ? 0 : missing + 1
          if (missing >= DROPPED_AFTER_BLOCKS) finish(null, null)
        }
        let checking = Promise.resolve()
        this.#api.rpc.chain.subscribeNewHeads((h) => { checking = checking.then(() => check(h.number.toNumber())).catch(() => {}) })
          .then((u) => { if (done) u(); else unsubscribeHeads = u }, () => {})
        tx.signAndSend(this.#pair!, { nonce: -1 }, (result) => {
          txHash ??= tx.hash.toHex()
          if (result.status.isInBlock) {
            const blockHash = result.status.asInBlock
            let error: string | null = null
            if (result.dispatchError !== undefined) {
              error = result.dispatchError.isModule ? this.#api.registry.findMetaError(result.dispatchError.asModule).name : result.dispatchError.type
            }
            this.#api.rpc.chain.getHeader(blockHash).then(h => finish(null, { txId: tx.hash.toHex(), block: h.number.toNumber(), error }), (e: Error) => finish(e))
          } else if (result.status.isInvalid || result.status.isDropped || result.status.isUsurped) {
            finish(new ChainError('BWN_ERR_CHAIN_REJECTED', `${what} was ${result.status.type.toLowerCase()} by the transaction pool`))
          }
        }).then((u) => { txHash ??= tx.hash.toHex(); if (done) u(); else unsubscribe = u }, (err: Error) => finish(err))
      })
    })
  }

  /** The outcome of extrinsic `txHash` if block `block` holds it: its dispatch error name, or null on success. */
  async #findExtrinsic (block: number, txHash: string): Promise<{ error: string | null } | null> {
    const blockHash = await this.#api.rpc.chain.getBlockHash(block)
    const index = (await this.#api.rpc.chain.getBlock(blockHash)).block.extrinsics.findIndex(x => x.hash.toHex() === txHash)
    if (index < 0) return null
    const events = await (await this.#api.at(blockHash)).query.system.events() as unknown as Array<{ phase: { isApplyExtrinsic: boolean, asApplyExtrinsic: { toNumber (): number } }, event: { section: string, method: string, data: unknown[] } }>
    for (const { phase, event } of events) {
      if (!phase.isApplyExtrinsic || phase.asApplyExtrinsic.toNumber() !== index) continue
      if (event.section === 'system' && event.method === 'ExtrinsicFailed') {
        const err = event.data[0] as { isModule: boolean, asModule: never, type: string }
        return { error: err.isModule ? this.#api.registry.findMetaError(err.asModule).name : err.type }
      }
    }
    return { error: null }
  }

  /**
   * Runs `fn`, retrying with backoff while the RPC endpoint is unreachable (the provider reconnects on
   * its own); coded chain errors pass straight through.
   */
  async #retrying<T> (what: string, fn: () => Promise<T>): Promise<T> {
    const deadline = this.#opts.clock.now() + UNAVAILABLE_RETRY_MS
    let wait = BACKOFF_MIN_MS
    for (;;) {
      try {
        return await fn()
      } catch (err) {
        if (err instanceof ChainError || this.#closed) throw err
        if (this.#api.isConnected && !isConnectionError(err)) throw new ChainError('BWN_ERR_CHAIN_REJECTED', `${what}: ${(err as Error).message}`)
        if (this.#opts.clock.now() + wait > deadline) throw new ChainError('BWN_ERR_CHAIN_UNAVAILABLE', `${what}: Subtensor at ${this.#opts.url} unreachable: ${(err as Error).message}`)
        this.#log.warn({ event: 'subtensor_unreachable', what, retryInMs: wait, err: (err as Error).message }, 'Subtensor RPC unreachable; retrying')
        await new Promise<void>(resolve => this.#opts.clock.setTimer(wait, resolve))
        wait = Math.min(BACKOFF_MAX_MS, wait * 2)
      }
    }
  }

  // ---- following blocks --------------------------------------------------------------------------

  #kick (): void {
    if (this.#closed) return
    if (this.#following !== null) { this.#followAgain = true; return }
    this.#following = this.#followLoop().catch((err: Error) => {
      this.#log.warn({ event: 'subtensor_follow_error', err: err.message }, 'following blocks failed; resumed on the next block')
    }).finally(() => {
      this.#following = null
      if (this.#followAgain) { this.#followAgain = false; this.#kick() }
    })
  }

  async #followLoop (): Promise<void> {
    const table = this.#opts.store.table<number>('chain')
    const cursorKey = `${this.#prefix}cursor`
    let cursor = await table.get(cursorKey) ?? Math.max(0, this.#latest - (this.#opts.backfillBlocks ?? DEFAULT_BACKFILL_BLOCKS) - 1)
    while (!this.#closed && cursor < this.#latest) {
      const block = cursor + 1
      const { closes, head } = await this.#indexBlock(block)
      await table.put(cursorKey, block)
      cursor = block
      for (const w of this.#blockWaiters.splice(0)) { if (w.block <= block) w.resolve(); else this.#blockWaiters.push(w) }
      for (const l of this.#listeners) {
        l.block?.(head)
        for (const c of closes) l.epochClosed?.(c)
      }
      void this.#revealDue(block)
    }
  }

  /** Indexes block `block`: the subnet's alpha sales, and at an epoch run its emissions and the close. */
  async #indexBlock (block: number): Promise<{ closes: EpochClose[], head: ChainHead }> {
    const hash = (await this.#api.rpc.chain.getBlockHash(block)).toHex()
    const at = await this.#api.at(hash)
    const tempo = Number((await at.query.subtensorModule.tempo(this.netuid)).toString())
    const ops: StoreOp[] = []
    const events = await at.query.system.events() as unknown as Array<{ phase: { isApplyExtrinsic: boolean, asApplyExtrinsic: { toNumber (): number } }, event: { section: string, method: string, data: Array<{ toString (): string }> } }>
    let signed: string[] | null = null
    for (let i = 0; i < events.length; i++) {
      const { phase, event } = events[i]!
      if (event.section !== 'subtensorModule' || event.method !== 'StakeRemoved') continue
      // StakeRemoved(coldkey, hotkey, tao, alpha, netuid)
      const [, hotkey, , alpha, netuid] = event.data.map(d => d.toString())
      if (Number(netuid) !== this.netuid) continue
      if (signed === null) signed = (await this.#api.rpc.chain.getBlock(hash)).block.extrinsics.map(x => x.hash.toHex())
      const txId = phase.isApplyExtrinsic ? signed[phase.asApplyExtrinsic.toNumber()] ?? `${block}-${i}` : `${block}-${i}`
      ops.push({ type: 'put', table: 'chain', key: `${this.#prefix}sale/${hotkey}/${pad(block)}/${String(i).padStart(4, '0')}`, value: { txId, block, alphaRao: alpha } })
    }
    const closes: EpochClose[] = []
    const epoch = subtensorEpochOf(block, this.netuid, tempo)
    if (block > 0 && subtensorEpochOf(block - 1, this.netuid, tempo) < epoch) {
      const close = await this.#closeAt(block, epoch - 1, tempo)
      ops.push({ type: 'put', table: 'chain', key: `${this.#prefix}close/${pad(close.epoch)}`, value: fromClose(close) })
      const emission = (await at.query.subtensorModule.emission(this.netuid)).toJSON() as Array<number | string>
      const keys = await at.query.subtensorModule.keys.entries(this.netuid)
      for (const [k, v] of keys) {
        const uid = Number(k.args[1]!.toString())
        const rao = BigInt(emission[uid] ?? 0)
        if (rao === 0n) continue
        ops.push({ type: 'put', table: 'chain', key: `${this.#prefix}em/${v.toString()}/${pad(block)}`, value: { uid, epoch: close.epoch, block, alphaRao: rao.toString() } })
      }
      closes.push(close)
    }
    await this.#opts.store.batch(ops)
    const atMs = Number((await at.query.timestamp.now()).toString())
    return { closes, head: { block, epoch, atMs, blockTimeMs: this.#blockTimeMs, blocksPerEpoch: tempo + 1 } }
  }

  /** Epoch `epoch`, closed by the subnet's epoch run at block `runBlock` (the first block of the next). */
  async #closeAt (runBlock: number, epoch: number, tempo: number): Promise<EpochClose> {
    const { firstBlock } = subtensorEpochBlocks(epoch, this.netuid, tempo)
    const lastBlock = runBlock - 1
    const timeAt = async (b: number): Promise<number> => {
      const h = (await this.#api.rpc.chain.getBlockHash(Math.max(0, b))).toHex()
      return Number((await (await this.#api.at(h)).query.timestamp.now()).toString())
    }
    const runHash = (await this.#api.rpc.chain.getBlockHash(runBlock)).toHex()
    const emission = ((await (await this.#api.at(runHash)).query.subtensorModule.emission(this.netuid)).toJSON() as Array<number | string>)
    const emittedRao = emission.reduce<bigint>((s, e) => s + BigInt(e), 0n)
    return { epoch, firstBlock, lastBlock, startAtMs: await timeAt(firstBlock - 1), endAtMs: await timeAt(lastBlock), emittedRao, burnedRao: 0n }
  }

  /** Resolves once the adapter has followed block `block`. */
  async #waitForBlock (block: number): Promise<void> {
    if (this.#opts.follow === false) {
      while (this.#latest < block) {
        await new Promise<void>(resolve => this.#opts.clock.setTimer(this.#blockTimeMs, resolve))
        this.#latest = (await this.#api.rpc.chain.getHeader()).number.toNumber()
      }
      return
    }
    const cursor = await this.#opts.store.table<number>('chain').get(`${this.#prefix}cursor`) ?? 0
    if (cursor >= block) return
    await new Promise<void>(resolve => this.#blockWaiters.push({ block, resolve }))
  }
}

/** A miner (orchestrator or worker) refuses to start without a UID on the subnet. */
export async function checkRegistration (chain: Pick<Chain, 'uidOf'>, hotkey: string, netuid: number): Promise<number> {
  const uid = await chain.uidOf(hotkey)
  if (uid === null) throw new ChainError('BWN_ERR_CHAIN_NOT_REGISTERED', `hotkey ${hotkey} has no UID on subnet ${netuid}; register it (btcli subnet register --netuid ${netuid}) or start with --skip-registration-check on a test network`)
  return uid
}

const toClose = (c: StoredClose): EpochClose => ({ ...c, emittedRao: BigInt(c.emittedRao), burnedRao: BigInt(c.burnedRao) })
const fromClose = (c: EpochClose): StoredClose => ({ ...c, emittedRao: c.emittedRao.toString(), burnedRao: c.burnedRao.toString() })
const maxBig = (a: bigint, b: bigint): bigint => a > b ? a : b

function isConnectionError (err: unknown): boolean {
  const m = (err as Error)?.message ?? ''
  return /disconnected|not connected|WebSocket is not connected|ECONNREFUSED|socket hang up|Abnormal Closure|closed/i.test(m)
}

async function withTimeout<T> (p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([p, new Promise<T>((_resolve, reject) => { timer = setTimeout(() => reject(new ChainError('BWN_ERR_CHAIN_UNAVAILABLE', message)), ms) })])
  } finally {
    clearTimeout(timer)
  }
}
