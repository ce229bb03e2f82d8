// The chain over the swarm. `serveChain` answers `chain_request` messages from a node that hosts a
// chain (the devnet's DevChain); `RemoteChain` implements the Chain port on any other node by asking
// the host, matching answers by request id, with timeouts on the injected clock.
import { systemRandom } from '../random.ts'
import type { Envelope, MessageType, ChainOp, ChainResult, ChainResponse } from '../../protocol/index.ts'
import { CHAIN_PAGE_ITEMS } from '../../protocol/index.ts'
import type { Clock, Logger, Network, Random, Timer } from '../ports.ts'
import {
  ChainError, isChainErrorCode, type Chain, type ChainHead, type ChainListener, type EmissionRecord, type EpochClose,
  type Registration, type SaleRecord, type Standing, type Unsubscribe, type WeightsProof, type WeightsRecord
} from './ports.ts'
import type { Role } from '../../protocol/index.ts'

export const CHAIN_REQUEST_TIMEOUT_MS = 10_000 // 10 s
/** Closed epochs a polling client reports at most after falling behind (older ones are skipped). */
export const MAX_CATCH_UP_EPOCHS = 50
/** While the host's head cannot be read (a node subscribes while it is still connecting), `subscribe` asks again this often. */
export const HEAD_RETRY_MS = 1_000
/** A head still unreadable after this long is worth a warning: a node that has just started needs a moment to reach its host. */
export const HEAD_WARN_AFTER_MS = 30_000

/** Where inbound messages are delivered (node/messenger.ts `Messenger.on`). */
export interface Inbox {
  on (type: MessageType, handler: (msg: Envelope, peer: string) => void): void
}

export interface ServeChainOptions {
  logger?: Logger
  /** Lets any peer record a sale (dev chains driven from another node's CLI). Off by default. */
  allowRemoteSales?: boolean
}

type OpOf<N extends ChainOp['op']> = Extract<ChainOp, { op: N }>
type ResultOf<N extends ChainOp['op']> = Extract<ChainResult, { op: N }>

const wireClose = (c: EpochClose | null) => (c === null ? null : { ...c, emittedRao: c.emittedRao.toString(), burnedRao: c.burnedRao.toString() })
const page = <T> (items: T[], skip: number): { items: T[], more: boolean } => ({ items: items.slice(skip, skip + CHAIN_PAGE_ITEMS), more: items.length > skip + CHAIN_PAGE_ITEMS })

/** Runs one request against `chain` on behalf of peer `from` (its hotkey, already authenticated). */
export async function handleChainOp (chain: Chain, from: string, req: ChainOp, opts: ServeChainOptions = {}): Promise<ChainResult> {
  switch (req.op) {
    case 'head': return { op: 'head', head: await chain.head() }
    case 'register':
      if (req.hotkey !== from) throw new ChainError('BWN_ERR_CHAIN_FORBIDDEN', 'a node registers only its own hotkey')
      return { op: 'register', registration: await chain.register(req.hotkey, req.role) }
    case 'uid_of': return { op: 'uid_of', uid: await chain.uidOf(req.hotkey) }
    case 'standing': {
      const st = await chain.standing(req.hotkey)
      return { op: 'standing', standing: st === null ? null : { hotkey: st.hotkey, uid: st.uid, role: st.role, registeredAtBlock: st.registeredAtBlock, stakeRao: st.stakeRao.toString(), validatorPermit: st.validatorPermit } }
    }
    case 'registrations': return { op: 'registrations', ...page(await chain.registrations(), req.skip) }
    case 'set_weights':
      if (req.validatorHotkey !== from) throw new ChainError('BWN_ERR_CHAIN_FORBIDDEN', 'a validator sets only its own weights')
      return { op: 'set_weights', proof: await chain.setWeights(req.validatorHotkey, req.epoch, req.uids, req.weights) }
    case 'weights_of': return { op: 'weights_of', items: (await chain.weightsOf(req.epoch)).slice(0, CHAIN_PAGE_ITEMS) }
    case 'emissions_for': {
      const rows = (await chain.emissionsFor(req.hotkey, req.fromBlock, req.toBlock)).map(e => ({ ...e, alphaRao: e.alphaRao.toString() }))
      return { op: 'emissions_for', ...page(rows, req.skip) }
    }
    case 'sales_for': {
      const rows = (await chain.salesFor(req.hotkey, req.fromBlock, req.toBlock)).map(s => ({ ...s, alphaRao: s.alphaRao.toString() }))
      return { op: 'sales_for', ...page(rows, req.skip) }
    }
    case 'record_sale': {
      if (opts.allowRemoteSales !== true) throw new ChainError('BWN_ERR_CHAIN_FORBIDDEN', 'this chain host does not record sales for other nodes')
      const sale = await chain.recordSale(req.hotkey, BigInt(req.alphaRao), req.block ?? undefined)
      return { op: 'record_sale', sale: { ...sale, alphaRao: sale.alphaRao.toString() } }
    }
    case 'epoch_close': return { op: 'epoch_close', close: wireClose(await chain.epochClose(req.epoch)) }
  }
}

/** Answers chain requests arriving on `inbox`; returns the function that stops answering. */
export function serveChain (chain: Chain, net: Network, inbox: Inbox, opts: ServeChainOptions = {}): () => void {
  const log = opts.logger?.child({ component: 'chain-host' })
  let serving = true
  inbox.on('chain_request', (msg) => {
    if (!serving) return
    const { requestId, request } = msg.body as Envelope<'chain_request'>['body']
    handleChainOp(chain, msg.from, request, opts).then(
      (result) => { net.send(msg.from, 'chain_response', { requestId, ok: true, result }) },
      (err: Error & { code?: unknown }) => {
        const code = isChainErrorCode(err.code) ? err.code : 'BWN_ERR_CHAIN_UNAVAILABLE'
        if (code === 'BWN_ERR_CHAIN_UNAVAILABLE') log?.error({ err, op: request.op }, 'chain request failed')
        net.send(msg.from, 'chain_response', { requestId, ok: false, error: { code, message: err.message.slice(0, 512) } })
      }
    )
  })
  return () => { serving = false }
}

export interface RemoteChainOptions {
  net: Network
  inbox: Inbox
  /** Hotkey of the node that hosts the chain. */
  host: string
  clock: Clock
  /** Request ids; the system's source by default. */
  random?: Random
  logger?: Logger
  timeoutMs?: number
  /** How often `subscribe` polls the head; the chain's block time by default. */
  pollMs?: number
}

interface Pending { resolve (r: ChainResult): void, reject (e: Error): void, timer: Timer }

export class RemoteChain implements Chain {
  readonly #opts: RemoteChainOptions
  readonly #timeoutMs: number
  readonly #pending = new Map<string, Pending>()
  readonly #listeners = new Set<ChainListener>()
  readonly #log: Logger | undefined
  #poller: Timer | null = null
  /** Reading the head to learn the block time (`subscribe`), and the timer of the next try. */
  #starting = false
  #retry: Timer | null = null
  #polling = false
  #lastHead: ChainHead | null = null
  #closed = false

  constructor (opts: RemoteChainOptions) {
    this.#opts = opts
    this.#timeoutMs = opts.timeoutMs ?? CHAIN_REQUEST_TIMEOUT_MS
    this.#log = opts.logger?.child({ component: 'remote-chain', host: opts.host })
    opts.inbox.on('chain_response', (msg) => {
      if (msg.from !== opts.host) return
      const body = msg.body as ChainResponse
      const p = this.#pending.get(body.requestId)
      if (p === undefined) return
      this.#pending.delete(body.requestId)
      p.timer.cancel()
      if (body.ok) p.resolve(body.result)
      else p.reject(new ChainError(isChainErrorCode(body.error.code) ? body.error.code : 'BWN_ERR_CHAIN_UNAVAILABLE', body.error.message))
    })
  }

  async #ask<N extends ChainOp['op']> (request: OpOf<N>): Promise<ResultOf<N>> {
    if (this.#closed) throw new ChainError('BWN_ERR_CHAIN_UNAVAILABLE', 'chain client closed')
    const requestId = (this.#opts.random ?? systemRandom).uuid()
    const result = await new Promise<ChainResult>((resolve, reject) => {
      const timer = this.#opts.clock.setTimer(this.#timeoutMs, () => {
        this.#pending.delete(requestId)
        reject(new ChainError('BWN_ERR_CHAIN_TIMEOUT', `chain host ${this.#opts.host} did not answer ${request.op} within ${this.#timeoutMs} ms`))
      })
      this.#pending.set(requestId, { resolve, reject, timer })
      if (!this.#opts.net.send(this.#opts.host, 'chain_request', { requestId, request })) {
        this.#pending.delete(requestId)
        timer.cancel()
        reject(new ChainError('BWN_ERR_CHAIN_UNAVAILABLE', `no connection to chain host ${this.#opts.host}`))
      }
    })
    if (result.op !== request.op) throw new ChainError('BWN_ERR_CHAIN_UNAVAILABLE', `answer to ${request.op} was ${result.op}`)
    return result as ResultOf<N>
  }

  async #paged<T> (fetch: (skip: number) => Promise<{ items: T[], more: boolean }>): Promise<T[]> {
    const out: T[] = []
    for (;;) {
      const { items, more } = await fetch(out.length)
      out.push(...items)
      if (!more || items.length === 0) return out
    }
  }

  async head (): Promise<ChainHead> { return (await this.#ask({ op: 'head' })).head }
  async register (hotkey: string, role: Role): Promise<Registration> { return (await this.#ask({ op: 'register', hotkey, role })).registration }
  async uidOf (hotkey: string): Promise<number | null> { return (await this.#ask({ op: 'uid_of', hotkey })).uid }
  async standing (hotkey: string): Promise<Standing | null> {
    const { standing } = await this.#ask({ op: 'standing', hotkey })
    return standing === null ? null : { ...standing, stakeRao: BigInt(standing.stakeRao) }
  }
  registrations (): Promise<Registration[]> { return this.#paged(async skip => await this.#ask({ op: 'registrations', skip })) }

  async setWeights (validatorHotkey: string, epoch: number, uids: readonly number[], uint16Weights: readonly number[]): Promise<WeightsProof> {
    return (await this.#ask({ op: 'set_weights', validatorHotkey, epoch, uids: [...uids], weights: [...uint16Weights] })).proof
  }

  async weightsOf (epoch: number): Promise<WeightsRecord[]> { return (await this.#ask({ op: 'weights_of', epoch })).items }

  async emissionsFor (hotkey: string, fromBlock: number, toBlock: number): Promise<EmissionRecord[]> {
    const rows = await this.#paged(async skip => await this.#ask({ op: 'emissions_for', hotkey, fromBlock, toBlock, skip }))
    return rows.map(e => ({ ...e, alphaRao: BigInt(e.alphaRao) }))
  }

  async salesFor (hotkey: string, fromBlock: number, toBlock: number): Promise<SaleRecord[]> {
    const rows = await this.#paged(async skip => await this.#ask({ op: 'sales_for', hotkey, fromBlock, toBlock, skip }))
    return rows.map(s => ({ ...s, alphaRao: BigInt(s.alphaRao) }))
  }

  async recordSale (hotkey: string, alphaRao: bigint, block?: number): Promise<SaleRecord> {
    if (alphaRao <= 0n) throw new ChainError('BWN_ERR_CHAIN_BAD_AMOUNT', 'a sale moves a positive amount of rao')
    const { sale } = await this.#ask({ op: 'record_sale', hotkey, alphaRao: alphaRao.toString(), block: block ?? null })
    return { ...sale, alphaRao: BigInt(sale.alphaRao) }
  }

  async epochClose (epoch: number): Promise<EpochClose | null> {
    const { close } = await this.#ask({ op: 'epoch_close', epoch })
    return close === null ? null : { ...close, emittedRao: BigInt(close.emittedRao), burnedRao: BigInt(close.burnedRao) }
  }

  /**
   * Polls the host's head. `block` fires with the newest head seen (blocks between polls are not
   * replayed); `epochClosed` fires once for every epoch that closed since the first poll.
   */
  subscribe (listener: ChainListener): Unsubscribe {
    this.#listeners.add(listener)
    if (this.#poller === null && !this.#starting && !this.#closed) {
      if (this.#opts.pollMs !== undefined) this.#startPolling(this.#opts.pollMs)
      else this.#pollAtBlockTime(this.#opts.clock.now())
    }
    return () => {
      this.#listeners.delete(listener)
      if (this.#listeners.size === 0) this.#stopPolling()
    }
  }

  #startPolling (ms: number): void { this.#poller = this.#opts.clock.every(ms, () => { void this.poll() }) }

  #stopPolling (): void {
    this.#poller?.cancel()
    this.#poller = null
    this.#retry?.cancel()
    this.#retry = null
    this.#starting = false
  }

  /**
   * Polls at the host's block time, read from its head. A node subscribes while it starts, usually
   * before its connection to the host is up: the head is asked for again every HEAD_RETRY_MS, quietly
   * at first, with one warning once it has been unreadable for HEAD_WARN_AFTER_MS.
   */
  #pollAtBlockTime (since: number, warned = false): void {
    this.#starting = true
    this.head().then((h) => {
      if (!this.#starting) return
      this.#starting = false
      if (this.#poller === null && !this.#closed && this.#listeners.size > 0) this.#startPolling(h.blockTimeMs)
    }, (err: Error) => {
      if (!this.#starting || this.#closed || this.#listeners.size === 0) { this.#starting = false; return }
      const late = this.#opts.clock.now() - since >= HEAD_WARN_AFTER_MS
      if (late && !warned) this.#log?.warn({ err: err.message, event: 'chain_head_unavailable', sinceMs: this.#opts.clock.now() - since }, 'chain head still unavailable; asking again every second')
      else this.#log?.debug({ err: err.message, event: 'chain_head_unavailable' }, 'chain head not readable yet; asking again')
      this.#retry = this.#opts.clock.setTimer(HEAD_RETRY_MS, () => { this.#retry = null; if (this.#starting) this.#pollAtBlockTime(since, warned || late) })
    })
  }

  /** One poll of the head (the subscription's timer calls it; exposed for tests and the simulator). */
  async poll (): Promise<void> {
    if (this.#polling) return
    this.#polling = true
    try {
      const head = await this.head()
      const last = this.#lastHead
      this.#lastHead = head
      if (last !== null && head.block === last.block) return
      for (const l of this.#listeners) { try { l.block?.(head) } catch (err) { this.#log?.error({ err }, 'chain listener failed') } }
      if (last === null) return
      // An epoch E is closed once its last block exists: E ≤ ⌊(block + 1) / blocksPerEpoch⌋ − 1.
      const closedNow = Math.floor((head.block + 1) / head.blocksPerEpoch) - 1
      const closedBefore = Math.floor((last.block + 1) / last.blocksPerEpoch) - 1
      for (let e = Math.max(closedBefore + 1, closedNow - MAX_CATCH_UP_EPOCHS + 1); e <= closedNow; e++) {
        const close = await this.epochClose(e)
        if (close === null) continue
        for (const l of this.#listeners) { try { l.epochClosed?.(close) } catch (err) { this.#log?.error({ err }, 'chain listener failed') } }
      }
    } catch (err) {
      this.#log?.warn({ err }, 'chain poll failed')
    } finally {
      this.#polling = false
    }
  }

  /** Stops polling and fails every request in flight. */
  close (): void {
    this.#closed = true
    this.#stopPolling()
    for (const [id, p] of this.#pending) {
      p.timer.cancel()
      p.reject(new ChainError('BWN_ERR_CHAIN_UNAVAILABLE', 'chain client closed'))
      this.#pending.delete(id)
    }
  }
}
