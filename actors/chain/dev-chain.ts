// DevChain: an embedded, deterministic chain for the devnet, the simulator and tests. Blocks come from
// a timer of the injected Clock (virtual in the simulator), every block and epoch close is one atomic
// batch in the `chain` table, and at each epoch's last block the epoch's alpha emission is split over
// UIDs by the validators' latest weight vectors (UID 0 is the burn UID). See docs/chain.md.
import { createHash } from 'node:crypto'
import canonicalize from 'canonicalize'
import type { Role } from '../../protocol/index.ts'
import type { Clock, Logger, Store, StoreOp, Table, Timer } from '../ports.ts'
import { collect } from '../store.ts'
import { BURN_UID, UINT16_MAX } from '../domain/epoch-weights.ts'
import { DEFAULT_BLOCK_TIME_MS, BLOCKS_PER_EPOCH, epochOfBlock } from '../domain/chain-time.ts'
import { splitProRata } from '../domain/sell-allowance.ts'
import { yumaConsensus } from '../domain/yuma.ts'
import {
  ChainError, type Chain, type ChainHead, type ChainListener, type EmissionRecord, type EpochClose, type Registration,
  type SaleRecord, type Standing, type Unsubscribe, type WeightsProof, type WeightsRecord
} from './ports.ts'

export const RAO_PER_ALPHA = 1_000_000_000n
/** Alpha a dev chain emits to miners per epoch: 0.5 α per block × 360 blocks = 180 α. */
export const DEFAULT_EMISSION_PER_EPOCH_RAO = 180n * RAO_PER_ALPHA // 180 α
const MAX_WEIGHT_ENTRIES = 4096 // uids per vector
/** Validator permits per subnet: the top K validators by stake (Bittensor's max_allowed_validators is 64). */
export const DEFAULT_MAX_VALIDATORS = 64

export interface DevChainOptions {
  clock: Clock
  store: Store
  logger?: Logger
  /** Block time; 12 s by default, a second in the devnet. Ignored when the chain already exists. */
  blockTimeMs?: number
  /** Blocks per epoch (tempo); 360 by default. Ignored when the chain already exists. */
  blocksPerEpoch?: number
  /** Alpha emitted to miners per epoch, in rao. */
  emissionPerEpochRao?: bigint
  /** Alpha burned from a hotkey's balance to register it (0 by default; the node's chain host sets 1 α). */
  registrationCostRao?: bigint
  /** Validator permits: the top K validators by stake. */
  maxValidators?: number
  /** Stake a validator needs for a permit (0 by default; the node's chain host sets 1 α). */
  minValidatorStakeRao?: bigint
}

interface HeadRow {
  block: number
  atMs: number
  genesisMs: number
  blockTimeMs: number
  blocksPerEpoch: number
  nextUid: number
  saleSeq: number
  /** End time of the last closed epoch (genesis time before the first close). */
  lastCloseAtMs: number
}
interface WeightsRow { txId: string, block: number, epoch: number, validatorHotkey: string, uids: number[], weights: number[] }
interface EmissionRow { hotkey: string | null, uid: number, epoch: number, block: number, alphaRao: string }
interface SaleRow { txId: string, hotkey: string, block: number, alphaRao: string }
interface CloseRow { epoch: number, firstBlock: number, lastBlock: number, startAtMs: number, endAtMs: number, emittedRao: string, burnedRao: string }

const pad = (n: number, width: number): string => String(n).padStart(width, '0')
const blockKey = (b: number): string => pad(b, 12)
const epochKey = (e: number): string => pad(e, 10)
const txIdOf = (value: unknown): string => '0x' + createHash('sha256').update(canonicalize(value) as string).digest('hex')
const isBlock = (b: unknown): b is number => Number.isSafeInteger(b) && (b as number) >= 0

const toEmission = (r: EmissionRow): EmissionRecord => ({ hotkey: r.hotkey, uid: r.uid, epoch: r.epoch, block: r.block, alphaRao: BigInt(r.alphaRao) })
const toSale = (r: SaleRow): SaleRecord => ({ txId: r.txId, hotkey: r.hotkey, block: r.block, alphaRao: BigInt(r.alphaRao) })
const toClose = (r: CloseRow): EpochClose => ({ ...r, emittedRao: BigInt(r.emittedRao), burnedRao: BigInt(r.burnedRao) })

export class DevChain implements Chain {
  readonly #clock: Clock
  readonly #store: Store
  readonly #table: Table<unknown>
  readonly #log: Logger | undefined
  readonly #emissionPerEpochRao: bigint
  readonly #registrationCostRao: bigint
  readonly #maxValidators: number
  readonly #minValidatorStakeRao: bigint
  /** Free (unstaked) alpha per hotkey: dev faucet grants minus registration burns and stake. */
  readonly #balances = new Map<string, bigint>()
  readonly #stakes = new Map<string, bigint>()
  #head!: HeadRow
  readonly #byHotkey = new Map<string, Registration>()
  readonly #byUid = new Map<number, Registration>()
  /** Latest vector of each validator, whatever epoch it is labelled with. */
  readonly #latestWeights = new Map<string, WeightsRow>()
  readonly #listeners = new Set<ChainListener>()
  #timer: Timer | null = null
  #queue: Promise<unknown> = Promise.resolve()

  private constructor (opts: DevChainOptions) {
    this.#clock = opts.clock
    this.#store = opts.store
    this.#table = opts.store.table('chain')
    this.#log = opts.logger?.child({ component: 'dev-chain' })
    this.#emissionPerEpochRao = opts.emissionPerEpochRao ?? DEFAULT_EMISSION_PER_EPOCH_RAO
    if (this.#emissionPerEpochRao < 0n) throw new RangeError('emissionPerEpochRao must be ≥ 0')
    this.#registrationCostRao = opts.registrationCostRao ?? 0n
    this.#maxValidators = opts.maxValidators ?? DEFAULT_MAX_VALIDATORS
    this.#minValidatorStakeRao = opts.minValidatorStakeRao ?? 0n
    if (this.#registrationCostRao < 0n || this.#minValidatorStakeRao < 0n) throw new RangeError('costs and stakes must be ≥ 0')
    if (!Number.isSafeInteger(this.#maxValidators) || this.#maxValidators < 1) throw new RangeError('maxValidators must be a positive integer')
  }

  /** Opens the chain stored in `store` (or creates it, genesis block 0 at the clock's now). */
  static async open (opts: DevChainOptions): Promise<DevChain> {
    const chain = new DevChain(opts)
    await chain.#load(opts)
    return chain
  }

  async #load (opts: DevChainOptions): Promise<void> {
    const stored = await this.#table.get('head') as HeadRow | undefined
    if (stored === undefined) {
      const blockTimeMs = opts.blockTimeMs ?? DEFAULT_BLOCK_TIME_MS
      const blocksPerEpoch = opts.blocksPerEpoch ?? BLOCKS_PER_EPOCH
      if (!Number.isSafeInteger(blockTimeMs) || blockTimeMs < 1) throw new RangeError('blockTimeMs must be a positive integer')
      if (!Number.isSafeInteger(blocksPerEpoch) || blocksPerEpoch < 2) throw new RangeError('blocksPerEpoch must be an integer ≥ 2')
      const now = this.#clock.now()
      this.#head = { block: 0, atMs: now, genesisMs: now, blockTimeMs, blocksPerEpoch, nextUid: BURN_UID + 1, saleSeq: 0, lastCloseAtMs: now }
      await this.#table.put('head', this.#head)
      this.#log?.info({ event: 'chain_genesis', blockTimeMs, blocksPerEpoch }, 'dev chain created')
      return
    }
    this.#head = stored
    if ((opts.blockTimeMs !== undefined && opts.blockTimeMs !== stored.blockTimeMs) || (opts.blocksPerEpoch !== undefined && opts.blocksPerEpoch !== stored.blocksPerEpoch)) {
      this.#log?.warn({ stored: { blockTimeMs: stored.blockTimeMs, blocksPerEpoch: stored.blocksPerEpoch } }, 'existing chain keeps its own block time and epoch length')
    }
    for (const [, reg] of await collect(this.#table, { gte: 'reg/', lt: 'reg/\xff' })) {
      const r = reg as Registration
      this.#byHotkey.set(r.hotkey, r)
      this.#byUid.set(r.uid, r)
    }
    for (const [, row] of await collect(this.#table, { gte: 'wl/', lt: 'wl/\xff' })) {
      const w = row as WeightsRow
      this.#latestWeights.set(w.validatorHotkey, w)
    }
    for (const [k, v] of await collect(this.#table, { gte: 'bal/', lt: 'bal/\xff' })) this.#balances.set(k.slice(4), BigInt(v as string))
    for (const [k, v] of await collect(this.#table, { gte: 'stake/', lt: 'stake/\xff' })) this.#stakes.set(k.slice(6), BigInt(v as string))
    this.#log?.info({ event: 'chain_opened', block: stored.block, registrations: this.#byHotkey.size }, 'dev chain opened')
  }

  /** Starts producing a block every blockTimeMs on the clock. */
  start (): void {
    if (this.#timer !== null) return
    this.#timer = this.#clock.every(this.#head.blockTimeMs, () => {
      const atMs = this.#clock.now()
      this.#serial(() => this.#produce(atMs)).catch(err => this.#log?.error({ err }, 'block production failed'))
    })
  }

  /** Stops block production and waits for work in progress. */
  async stop (): Promise<void> {
    this.#timer?.cancel()
    this.#timer = null
    await this.settled()
  }

  /** Resolves once every queued block and transaction has been applied. */
  async settled (): Promise<void> {
    for (;;) {
      const q = this.#queue
      await q.catch(() => {})
      if (q === this.#queue) return
    }
  }

  /** Produces the next block now (tests and the simulator may drive the chain by hand). */
  produceBlock (atMs = this.#clock.now()): Promise<ChainHead> {
    return this.#serial(async () => { await this.#produce(atMs); return this.#headView() })
  }

  #serial<T> (fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn)
    this.#queue = run.catch(() => {})
    return run
  }

  #headView (): ChainHead {
    const h = this.#head
    return { block: h.block, epoch: epochOfBlock(h.block, h.blocksPerEpoch), atMs: h.atMs, blockTimeMs: h.blockTimeMs, blocksPerEpoch: h.blocksPerEpoch }
  }

  async #produce (atMs: number): Promise<void> {
    const h = this.#head
    const block = h.block + 1
    const next: HeadRow = { ...h, block, atMs }
    const ops: StoreOp[] = []
    let close: EpochClose | null = null
    if (block % h.blocksPerEpoch === h.blocksPerEpoch - 1) {
      const epoch = epochOfBlock(block, h.blocksPerEpoch)
      const { rows, burned } = this.#emission(epoch, block)
      for (const r of rows) ops.push({ type: 'put', table: 'chain', key: `em/${r.hotkey!}/${blockKey(block)}`, value: r })
      const row: CloseRow = {
        epoch, firstBlock: epoch * h.blocksPerEpoch, lastBlock: block, startAtMs: h.lastCloseAtMs, endAtMs: atMs,
        emittedRao: this.#emissionPerEpochRao.toString(), burnedRao: burned.toString()
      }
      ops.push({ type: 'put', table: 'chain', key: `close/${epochKey(epoch)}`, value: row })
      next.lastCloseAtMs = atMs
      close = toClose(row)
    }
    ops.push({ type: 'put', table: 'chain', key: 'head', value: next })
    await this.#store.batch(ops)
    this.#head = next
    const head = this.#headView()
    for (const l of this.#listeners) {
      try {
        l.block?.(head)
        if (close !== null) l.epochClosed?.(close)
      } catch (err) { this.#log?.error({ err }, 'chain listener failed') }
    }
    if (close !== null) this.#log?.debug({ event: 'epoch_closed', epoch: close.epoch, burnedRao: close.burnedRao.toString() }, 'epoch closed')
  }

  /** The epoch's emission split over UIDs by the latest vectors set at or before `block`. */
  #emission (epoch: number, block: number): { rows: EmissionRow[], burned: bigint } {
    // Only validators holding a permit now count, each by its stake (Yuma consensus with clipping).
    const permits = this.#permits()
    const vectors = [...this.#latestWeights.values()]
      .filter(w => w.block <= block && permits.has(w.validatorHotkey))
      .map(w => ({ stake: this.#stakes.get(w.validatorHotkey) ?? 0n, uids: w.uids, weights: w.weights }))
    const combined = yumaConsensus(vectors).filter(c => c.rank > 0n && (c.uid === BURN_UID || this.#byUid.has(c.uid)))
    if (combined.length === 0) return { rows: [], burned: this.#emissionPerEpochRao }
    const shares = splitProRata(this.#emissionPerEpochRao, combined.map(c => ({ id: String(c.uid), weightRao: c.rank })))
    let burned = 0n
    const rows: EmissionRow[] = []
    for (const s of shares) {
      const uid = Number(s.id)
      if (uid === BURN_UID) { burned += s.amountRao; continue }
      if (s.amountRao === 0n) continue
      rows.push({ hotkey: this.#byUid.get(uid)!.hotkey, uid, epoch, block, alphaRao: s.amountRao.toString() })
    }
    return { rows, burned }
  }

  async head (): Promise<ChainHead> {
    return this.#headView()
  }

  /** Validators holding a permit: the top `maxValidators` by stake (ties: lower UID), stake ≥ the minimum. */
  #permits (): Set<string> {
    const ranked = [...this.#byHotkey.values()]
      .filter(r => r.role === 'validator' && (this.#stakes.get(r.hotkey) ?? 0n) >= this.#minValidatorStakeRao)
      .sort((a, b) => {
        const sa = this.#stakes.get(a.hotkey) ?? 0n
        const sb = this.#stakes.get(b.hotkey) ?? 0n
        return sa === sb ? a.uid - b.uid : sa > sb ? -1 : 1
      })
    return new Set(ranked.slice(0, this.#maxValidators).map(r => r.hotkey))
  }

  async standing (hotkey: string): Promise<Standing | null> {
    const reg = this.#byHotkey.get(hotkey)
    if (reg === undefined) return null
    return { ...reg, stakeRao: this.#stakes.get(hotkey) ?? 0n, validatorPermit: this.#permits().has(hotkey) }
  }

  /** Free alpha of a hotkey (dev faucet grants minus registration burns and stake). */
  balanceOf (hotkey: string): bigint { return this.#balances.get(hotkey) ?? 0n }

  /** Dev faucet: credits free alpha to a hotkey. Only the chain's host calls it (never over the swarm). */
  fund (hotkey: string, alphaRao: bigint): Promise<bigint> {
    return this.#serial(async () => {
      if (typeof alphaRao !== 'bigint' || alphaRao <= 0n) throw new ChainError('BWN_ERR_CHAIN_BAD_AMOUNT', 'a grant is a positive amount of rao')
      const next = (this.#balances.get(hotkey) ?? 0n) + alphaRao
      await this.#table.put(`bal/${hotkey}`, next.toString())
      this.#balances.set(hotkey, next)
      return next
    })
  }

  /** Moves free alpha of a registered hotkey into its stake. */
  addStake (hotkey: string, alphaRao: bigint): Promise<bigint> {
    return this.#serial(async () => {
      if (!this.#byHotkey.has(hotkey)) throw new ChainError('BWN_ERR_CHAIN_NOT_REGISTERED', `${hotkey} is not registered`)
      if (typeof alphaRao !== 'bigint' || alphaRao <= 0n) throw new ChainError('BWN_ERR_CHAIN_BAD_AMOUNT', 'stake is a positive amount of rao')
      const balance = this.#balances.get(hotkey) ?? 0n
      if (alphaRao > balance) throw new ChainError('BWN_ERR_CHAIN_INSUFFICIENT_ALPHA', `${hotkey} holds ${balance} rao, cannot stake ${alphaRao}`)
      const stake = (this.#stakes.get(hotkey) ?? 0n) + alphaRao
      await this.#store.batch([
        { type: 'put', table: 'chain', key: `bal/${hotkey}`, value: (balance - alphaRao).toString() },
        { type: 'put', table: 'chain', key: `stake/${hotkey}`, value: stake.toString() }
      ])
      this.#balances.set(hotkey, balance - alphaRao)
      this.#stakes.set(hotkey, stake)
      this.#log?.info({ event: 'stake_added', hotkey, stakeRao: stake.toString() }, 'stake added')
      return stake
    })
  }

  /**
   * The network operator registers one of its own nodes: grants the registration cost (and `stakeRao`),
   * registers the hotkey and stakes. Idempotent for a registered hotkey (its stake is topped up to `stakeRao`).
   */
  async enroll (hotkey: string, role: Role, opts: { stakeRao?: bigint } = {}): Promise<Standing> {
    const want = opts.stakeRao ?? 0n
    if (!this.#byHotkey.has(hotkey)) {
      if (this.#registrationCostRao > this.balanceOf(hotkey)) await this.fund(hotkey, this.#registrationCostRao - this.balanceOf(hotkey))
      await this.register(hotkey, role)
    }
    const missing = want - (this.#stakes.get(hotkey) ?? 0n)
    if (missing > 0n) {
      await this.fund(hotkey, missing)
      await this.addStake(hotkey, missing)
    }
    return (await this.standing(hotkey))!
  }

  register (hotkey: string, role: Role): Promise<Registration> {
    return this.#serial(async () => {
      const known = this.#byHotkey.get(hotkey)
      if (known !== undefined) return { ...known }
      // Registration burns its cost from the hotkey's free balance: a fresh key holds nothing.
      const balance = this.#balances.get(hotkey) ?? 0n
      if (balance < this.#registrationCostRao) throw new ChainError('BWN_ERR_CHAIN_INSUFFICIENT_ALPHA', `registering costs ${this.#registrationCostRao} rao; ${hotkey} holds ${balance}`)
      const reg: Registration = { hotkey, uid: this.#head.nextUid, role, registeredAtBlock: this.#head.block }
      const next = { ...this.#head, nextUid: reg.uid + 1 }
      const ops: StoreOp[] = [
        { type: 'put', table: 'chain', key: `reg/${hotkey}`, value: reg },
        { type: 'put', table: 'chain', key: 'head', value: next }
      ]
      if (this.#registrationCostRao > 0n) ops.push({ type: 'put', table: 'chain', key: `bal/${hotkey}`, value: (balance - this.#registrationCostRao).toString() })
      await this.#store.batch(ops)
      if (this.#registrationCostRao > 0n) this.#balances.set(hotkey, balance - this.#registrationCostRao)
      this.#head = next
      this.#byHotkey.set(hotkey, reg)
      this.#byUid.set(reg.uid, reg)
      this.#log?.info({ event: 'hotkey_registered', hotkey, uid: reg.uid, role }, 'hotkey registered')
      return { ...reg }
    })
  }

  async uidOf (hotkey: string): Promise<number | null> {
    return this.#byHotkey.get(hotkey)?.uid ?? null
  }

  async registrations (): Promise<Registration[]> {
    return [...this.#byUid.values()].sort((a, b) => a.uid - b.uid).map(r => ({ ...r }))
  }

  setWeights (validatorHotkey: string, epoch: number, uids: readonly number[], uint16Weights: readonly number[]): Promise<WeightsProof> {
    return this.#serial(async () => {
      const reg = this.#byHotkey.get(validatorHotkey)
      if (reg === undefined) throw new ChainError('BWN_ERR_CHAIN_NOT_REGISTERED', `${validatorHotkey} is not registered`)
      if (reg.role !== 'validator') throw new ChainError('BWN_ERR_CHAIN_NOT_VALIDATOR', `${validatorHotkey} is registered as ${reg.role}`)
      if (!this.#permits().has(validatorHotkey)) throw new ChainError('BWN_ERR_CHAIN_NOT_VALIDATOR', `${validatorHotkey} holds no validator permit (stake ${this.#stakes.get(validatorHotkey) ?? 0n} rao)`)
      const headEpoch = epochOfBlock(this.#head.block, this.#head.blocksPerEpoch)
      if (!isBlock(epoch) || epoch > headEpoch) throw new ChainError('BWN_ERR_CHAIN_BAD_WEIGHTS', `epoch ${epoch} is not an epoch up to ${headEpoch}`)
      checkVector(uids, uint16Weights, uid => uid === BURN_UID || this.#byUid.has(uid))
      const block = this.#head.block
      const row: WeightsRow = { txId: '', block, epoch, validatorHotkey, uids: [...uids], weights: [...uint16Weights] }
      row.txId = txIdOf({ kind: 'set_weights', ...row })
      await this.#store.batch([
        { type: 'put', table: 'chain', key: `w/${epochKey(epoch)}/${validatorHotkey}`, value: row },
        { type: 'put', table: 'chain', key: `wl/${validatorHotkey}`, value: row }
      ])
      this.#latestWeights.set(validatorHotkey, row)
      this.#log?.info({ event: 'weights_set', validator: validatorHotkey, epoch, block, txId: row.txId, uids: uids.length }, 'weights set')
      return { txId: row.txId, block, epoch, validatorHotkey }
    })
  }

  async weightsOf (epoch: number): Promise<WeightsRecord[]> {
    const prefix = `w/${epochKey(epoch)}/`
    return (await collect(this.#table, { gte: prefix, lt: prefix + '\xff' })).map(([, v]) => {
      const w = v as WeightsRow
      return { txId: w.txId, block: w.block, epoch: w.epoch, validatorHotkey: w.validatorHotkey, uids: w.uids, weights: w.weights }
    })
  }

  async emissionsFor (hotkey: string, fromBlock: number, toBlock: number): Promise<EmissionRecord[]> {
    if (!isBlock(fromBlock) || !isBlock(toBlock) || toBlock < fromBlock) return []
    const rows = await collect(this.#table, { gte: `em/${hotkey}/${blockKey(fromBlock)}`, lte: `em/${hotkey}/${blockKey(toBlock)}` })
    return rows.map(([, v]) => toEmission(v as EmissionRow))
  }

  async salesFor (hotkey: string, fromBlock: number, toBlock: number): Promise<SaleRecord[]> {
    if (!isBlock(fromBlock) || !isBlock(toBlock) || toBlock < fromBlock) return []
    const rows = await collect(this.#table, { gte: `sale/${hotkey}/${blockKey(fromBlock)}/`, lt: `sale/${hotkey}/${blockKey(toBlock)}/\xff` })
    return rows.map(([, v]) => toSale(v as SaleRow))
  }

  recordSale (hotkey: string, alphaRao: bigint, block?: number): Promise<SaleRecord> {
    return this.#serial(async () => {
      if (!this.#byHotkey.has(hotkey)) throw new ChainError('BWN_ERR_CHAIN_NOT_REGISTERED', `${hotkey} is not registered`)
      if (typeof alphaRao !== 'bigint' || alphaRao <= 0n) throw new ChainError('BWN_ERR_CHAIN_BAD_AMOUNT', 'a sale moves a positive amount of rao')
      const at = block ?? this.#head.block
      if (!isBlock(at) || at > this.#head.block) throw new ChainError('BWN_ERR_CHAIN_BAD_BLOCK', `block ${String(block)} is not a block up to ${this.#head.block}`)
      const received = (await this.emissionsFor(hotkey, 0, this.#head.block)).reduce((a, e) => a + e.alphaRao, 0n)
      const sold = (await this.salesFor(hotkey, 0, this.#head.block)).reduce((a, s) => a + s.alphaRao, 0n)
      if (alphaRao > received - sold) throw new ChainError('BWN_ERR_CHAIN_INSUFFICIENT_ALPHA', `${hotkey} holds ${received - sold} rao, cannot sell ${alphaRao}`)
      const seq = this.#head.saleSeq + 1
      const row: SaleRow = { txId: '', hotkey, block: at, alphaRao: alphaRao.toString() }
      row.txId = txIdOf({ kind: 'sale', seq, ...row })
      const next = { ...this.#head, saleSeq: seq }
      await this.#store.batch([
        { type: 'put', table: 'chain', key: `sale/${hotkey}/${blockKey(at)}/${pad(seq, 10)}`, value: row },
        { type: 'put', table: 'chain', key: 'head', value: next }
      ])
      this.#head = next
      this.#log?.info({ event: 'alpha_sold', hotkey, block: at, alphaRao: row.alphaRao, txId: row.txId }, 'alpha sale recorded')
      return toSale(row)
    })
  }

  async epochClose (epoch: number): Promise<EpochClose | null> {
    if (!isBlock(epoch)) return null
    const row = await this.#table.get(`close/${epochKey(epoch)}`) as CloseRow | undefined
    return row === undefined ? null : toClose(row)
  }

  subscribe (listener: ChainListener): Unsubscribe {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }
}

/** Vector sanity as a chain checks it: same lengths, unique known UIDs, uint16 weights. */
export function checkVector (uids: readonly number[], weights: readonly number[], known: (uid: number) => boolean): void {
  const bad = (why: string): never => { throw new ChainError('BWN_ERR_CHAIN_BAD_WEIGHTS', why) }
  if (!Array.isArray(uids) || !Array.isArray(weights)) bad('uids and weights must be arrays')
  if (uids.length !== weights.length) bad(`${uids.length} uids but ${weights.length} weights`)
  if (uids.length === 0) bad('an empty vector')
  if (uids.length > MAX_WEIGHT_ENTRIES) bad(`more than ${MAX_WEIGHT_ENTRIES} entries`)
  const seen = new Set<number>()
  uids.forEach((uid, i) => {
    if (!isBlock(uid)) bad(`uid ${String(uid)} is not a non-negative integer`)
    if (seen.has(uid)) bad(`uid ${uid} appears twice`)
    seen.add(uid)
    if (!known(uid)) bad(`uid ${uid} is not registered`)
    const w = weights[i]
    if (!Number.isInteger(w) || (w as number) < 0 || (w as number) > UINT16_MAX) bad(`weight ${String(w)} is not a uint16`)
  })
}
