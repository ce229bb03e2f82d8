// Validators in the loop: the validator's own actors (actors/validator/verifier.ts and epochs.ts) on a
// simulated node, wired as node/roles/index.ts wires a validator. Coordinators send it a
// `verify_request` for every reported delivery; the verifier samples by attempt id (`sampleRate`),
// reads the chunk's range back through a modelled reader (`SimRangeReader`: the destination's latency
// and bandwidth on the virtual clock; a corrupting worker's write reads back as other bytes), answers
// with its verdict, records evidence and worker penalties in the epoch machinery, computes PRISM at
// every close and publishes each epoch one epoch late, setting weights on an embedded DevChain that the
// engine drives block by block on the virtual clock. `ValidatorEpochs` is the `EpochEngine` the engine
// reads PRISM and weights from. docs/sim.md#validators-in-the-loop.
import { startSystem, stopActor, tell, ask, type Env, type SystemRef } from '../actors/runtime.ts'
import { startVerifier, PRISM_KEYS, type RangeReader, type Verifier, type VerifierMsg, type EvidenceSink } from '../actors/validator/verifier.ts'
import { startValidatorEpochs, type ValidatorEpochs as EpochActors, type TaskEvidence, type OrchestratorPenalty } from '../actors/validator/epochs.ts'
import { KEYS, type EpochSummaryRecord, type PublishedPointer, type WeightsProofRecord } from '../actors/validator/snapshots.ts'
import { DevChain, RAO_PER_ALPHA } from '../actors/chain/dev-chain.ts'
import { collect } from '../actors/store.ts'
import { servedWeights, DAY_MS, type PrismComponents, type WeightVector } from '../actors/domain/index.ts'
import type { ReadTarget, VerifyRequest } from '../protocol/index.ts'
import type { Network, StoreOp } from '../actors/ports.ts'
import type { VirtualClock } from './clock.ts'
import type { SimHub, SimEnvelope } from './transport.ts'
import { SimStore } from './store.ts'
import { chunkSha256, type SimDestination } from './world.ts'
import type { EpochClose, EpochEngine, EpochStep, SimPenalty } from './epochs.ts'

export const DEFAULT_SAMPLE_RATE = 1
export const DEFAULT_VALIDATOR_LATENCY_MS = 10
/** A close waits for the validator's actors; on the virtual clock, a reply never comes only if one is stuck. */
const ASK_TIMEOUT_MS = 30_000
export const validatorId = (i: number): string => `val-${String(i).padStart(3, '0')}`

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'

/**
 * Hotkey-shaped names for the simulator's node ids: the validator's records are validated as SS58
 * hotkeys, the simulator names nodes `orch-000` and `w-000-00000`. 48 base58 characters from the id's
 * marker digest; the map goes both ways.
 */
export class SimHotkeys {
  readonly #hotkey = new Map<string, string>()
  readonly #id = new Map<string, string>()
  of (id: string): string {
    let h = this.#hotkey.get(id)
    if (h === undefined) {
      const d = chunkSha256(`hotkey/${id}`, 0) + chunkSha256(`hotkey/${id}`, 1)
      h = '5'
      for (let i = 0; h.length < 48; i += 2) h += BASE58[parseInt(d.slice(i, i + 2), 16) % 58]
      this.#hotkey.set(id, h)
      this.#id.set(h, id)
    }
    return h
  }

  idOf (hotkey: string): string | undefined { return this.#id.get(hotkey) }
}

/** Reads a chunk's range back in virtual time: destination latency + bytes / its stream bandwidth. */
export class SimRangeReader implements RangeReader {
  readonly #clock: VirtualClock
  readonly #destinationOf: (url: string) => SimDestination | undefined
  reads = 0
  constructor (clock: VirtualClock, destinationOf: (url: string) => SimDestination | undefined) {
    this.#clock = clock
    this.#destinationOf = destinationOf
  }

  sha256Of (target: ReadTarget, length: number): Promise<{ sha256: string, bytes: number }> {
    return new Promise((resolve, reject) => {
      const dest = this.#destinationOf(target.url)
      const refused = (what: string): Error => Object.assign(new Error(what), { code: 'read_refused' })
      if (dest === undefined) { reject(refused('unknown destination')); return }
      this.reads++
      const ms = Math.ceil(dest.model.latencyMs + (length * 8) / (Math.max(1e-6, dest.model.bandwidthMbps) * 1000))
      this.#clock.setTimer(ms, () => {
        const r = dest.readBack(target.url)
        if (r === null) reject(refused('nothing written at that range'))
        else resolve(r)
      })
    })
  }
}

export interface ValidatorLoopOptions {
  env: Env
  clock: VirtualClock
  hub: SimHub
  /** Orchestrator ids in UID order (UID = position + 1). */
  orchestrators: readonly string[]
  startMs: number
  epochBlocks: number
  blockTimeMs: number
  sampleRate: number
  reader: RangeReader
  /** A verdict the verifier recorded (after its evidence is stored): sim ids. */
  onEvidence? (worker: string, orchestrator: string, verdict: 'verified' | 'mismatch'): void
  /** A penalty the verifier recorded against a worker: sim ids. */
  onPenalty? (worker: string, orchestrator: string, atMs: number): void
}

/** The validator actors as the simulator's epoch engine (one validator). */
export class ValidatorEpochs implements EpochEngine {
  readonly verifies = true
  readonly id = validatorId(0)
  readonly hotkeys = new SimHotkeys()
  readonly store = new SimStore()
  #system!: SystemRef
  #chain!: DevChain
  #epochs!: EpochActors
  #verifier!: Verifier
  readonly #o: ValidatorLoopOptions
  readonly #connected = new Map<string, boolean>()
  readonly #prism = new Map<number, PrismComponents[]>()
  readonly #closedAt = new Map<number, number>()
  readonly #index = new Map<string, number>()
  #stopChain: () => void = () => {}
  /** Penalties the verifier recorded (worker hotkeys). */
  readonly penalized = new Set<string>()

  private constructor (o: ValidatorLoopOptions) { this.#o = o }

  static async start (o: ValidatorLoopOptions): Promise<ValidatorEpochs> {
    const v = new ValidatorEpochs(o)
    await v.#start()
    return v
  }

  async #start (): Promise<void> {
    const { env, hub, orchestrators, startMs } = this.#o
    const hk = (id: string): string => this.hotkeys.of(id)
    orchestrators.forEach((id, i) => { this.#index.set(hk(id), i); this.#connected.set(hk(id), true) })
    // The chain: UIDs 1…n for the orchestrators in order (as FormulaEpochs numbers them), then this validator.
    this.#chain = await DevChain.open({ clock: env.clock, store: new SimStore(), blockTimeMs: this.#o.blockTimeMs, blocksPerEpoch: this.#o.epochBlocks })
    for (const id of orchestrators) await this.#chain.enroll(hk(id), 'orchestrator')
    const self = hk(this.id)
    await this.#chain.enroll(self, 'validator', { stakeRao: RAO_PER_ALPHA })
    // An established network (as FormulaEpochs assumes): every orchestrator qualified, a day old, and
    // seen connected and ready at the start. The verifier rebuilds its PRISM inputs from these rows.
    const ops: StoreOp[] = []
    for (const id of orchestrators) {
      ops.push({ type: 'put', table: 'meta', key: PRISM_KEYS.track(hk(id)), value: { firstSeenAt: startMs - DAY_MS, verified: 0, pool: 'qualified', transitionPending: false } })
      ops.push({ type: 'put', table: 'meta', key: PRISM_KEYS.readiness(hk(id)), value: { firstSeenAt: startMs - DAY_MS, seq: 1 } })
      ops.push({ type: 'put', table: 'meta', key: PRISM_KEYS.transition(hk(id), startMs, 1), value: { atMs: startMs, ready: true, connected: true } })
    }
    await this.store.batch(ops)

    this.#system = startSystem()
    const inbound = (m: SimEnvelope): void => {
      if (m.type !== 'verify_request' || !this.#index.has(hk(m.from))) return
      // The node checks the sender's evidence and the worker's registration first; every sim node is ours.
      const body = m.body as VerifyRequest
      tell(this.#verifier.ref, { type: 'request', from: m.from, body: { ...body, orchestrator: hk(body.orchestrator), worker: hk(body.worker) }, workerUid: null })
    }
    const raw = hub.register(this.id, inbound)
    // PRISM scores go to the orchestrators (workers ignore them): no broadcast to every simulated worker.
    const net: Network = {
      self: this.id,
      send: (to, type, body) => raw.send(to, type, body),
      broadcast: (type, body) => { let n = 0; for (const o of orchestrators) if (raw.send(o, type, body)) n++; return n }
    }
    this.#epochs = await startValidatorEpochs(this.#system, env, { store: this.store, chain: this.#chain, hotkey: self, logger: env.logger, scoreOf: (h) => this.#verifier.scoreOf(h) })
    const idOf = (h: string): string => this.hotkeys.idOf(h) ?? h
    const sink: EvidenceSink = {
      submitEvidence: async (records: TaskEvidence[]) => {
        const out = await this.#epochs.submitEvidence(records)
        for (const r of records) this.#o.onEvidence?.(idOf(r.workerHotkey), idOf(r.orchestratorHotkey), r.verdict)
        return out
      },
      submitPenalties: async (rows: OrchestratorPenalty[]) => {
        await this.#epochs.submitPenalties(rows)
        for (const p of rows) {
          if (p.workerHotkey === undefined) continue
          this.penalized.add(p.workerHotkey)
          this.#o.onPenalty?.(idOf(p.workerHotkey), idOf(p.orchestratorHotkey), p.createdAtMs)
        }
      }
    }
    this.#verifier = startVerifier(this.#system, {
      env, self: this.id, net, store: this.store, reader: this.#o.reader, evidence: sink, sampleRate: this.#o.sampleRate,
      readiness: (h) => { const c = this.#connected.get(h) ?? false; return { ready: c, connected: c } },
      onPrism: (epoch, prism) => {
        // In UID (index) order, as the engine's rows are.
        const ordered = new Array<PrismComponents>(orchestrators.length)
        for (const p of prism) { const i = this.#index.get(p.id); if (i !== undefined) ordered[i] = { ...p, id: orchestrators[i]! } }
        this.#prism.set(epoch, ordered)
      }
    })
    // As the node: the chain's epoch close makes the verifier compute and publish PRISM.
    this.#stopChain = this.#chain.subscribe({ epochClosed: (c) => tell(this.#verifier.ref, { type: 'epoch', epoch: c.epoch }) })
  }

  /** Coordinators ask the validator when it is reachable from them. */
  validators (): string[] { return [this.id] }

  // The verifier makes its own evidence: the coordinators' outcomes are not the validator's.
  evidence (): void {}
  outcome (): void {}

  /** An orchestrator penalty the world decides (sybil detection): to the epoch machinery, as an operator would file it. */
  penalty (p: SimPenalty): void {
    this.#epochs.submitPenalties([{ id: p.id.replaceAll('/', '-'), orchestratorHotkey: this.hotkeys.of(p.orchestratorHotkey), kind: p.kind, createdAtMs: p.createdAtMs }])
      .catch((err: Error) => this.#o.env.logger.warn({ err: err.message, event: 'sim_penalty_refused' }, 'penalty not filed'))
  }

  readiness (orchestrator: string, atMs: number, connected: boolean): void {
    const h = this.hotkeys.of(orchestrator)
    if (this.#connected.get(h) === connected) return
    this.#connected.set(h, connected)
    tell(this.#verifier.ref, { type: 'readiness', hotkey: h, atMs, ready: connected, connected })
  }

  /** Drives the chain to the close of `epoch` at `atMs` (its blocks spread over the span, the last at `atMs`). */
  async #closeChain (epoch: number, atMs: number): Promise<void> {
    const { startMs, blockTimeMs, epochBlocks } = this.#o
    const last = epoch * epochBlocks + epochBlocks - 1
    for (let head = (await this.#chain.head()).block; head < last; head++) {
      await this.#chain.produceBlock(head + 1 === last ? atMs : Math.min(atMs, startMs + (head + 1) * blockTimeMs))
    }
    this.#closedAt.set(epoch, atMs)
    // Every message sent so far handled: the machine's publication, the verifier's PRISM.
    await this.#epochs.flush()
    await ask<VerifierMsg, Map<string, number>>(this.#verifier.ref, this.#o.clock, ASK_TIMEOUT_MS, reply => ({ type: 'scores', reply: (s) => reply.resolve(s) }), 'verifier')
  }

  /** What the epoch machine published for `epoch` (its latest revision), with the vector served for it. */
  async #published (epoch: number): Promise<EpochClose | null> {
    const table = this.store.table<unknown>('epochs')
    const pointer = await table.get(KEYS.published(epoch)) as PublishedPointer | undefined
    if (pointer === undefined) return null
    const record = await table.get(KEYS.summary(epoch, pointer.revision)) as EpochSummaryRecord
    // The machine's own rule (EpochMachine #served): its vector, else the last valid non-zero one, else burn.
    const history = (await collect(this.store.table<WeightVector>('epochs'), { gte: 'vec/', lt: KEYS.vector(epoch), reverse: true, limit: 50 })).map(([, v]) => v)
    const served = servedWeights(record.vector, history)
    const proof = await table.get(KEYS.proof(epoch)) as WeightsProofRecord | undefined
    if (proof !== undefined && proof.source !== served.source) throw new Error(`epoch ${epoch}: weights set from ${proof.source}, served ${served.source}`)
    const rows = record.summary.orchestrators.map(r => ({ ...r, hotkey: this.hotkeys.idOf(r.hotkey) ?? r.hotkey }))
    return { epoch, atMs: this.#closedAt.get(epoch)!, prism: this.#prism.get(epoch) ?? [], summary: { ...record.summary, orchestrators: rows }, served }
  }

  async close (epoch: number, atMs: number): Promise<EpochStep> {
    await this.#closeChain(epoch, atMs)
    const prism = this.#prism.get(epoch)
    if (prism === undefined) throw new Error(`epoch ${epoch}: the verifier published no PRISM`)
    // The network publishes an epoch at the next close: this close published the one before.
    const previous = epoch > 0 ? await this.#published(epoch - 1) : null
    return { prism, closes: previous === null ? [] : [previous] }
  }

  /** The last epoch is published by one more (empty) close at the same instant. */
  async finish (lastEpoch: number, atMs: number): Promise<EpochClose[]> {
    if (lastEpoch < 0) return []
    await this.#closeChain(lastEpoch + 1, atMs)
    const last = await this.#published(lastEpoch)
    return last === null ? [] : [last]
  }

  async stop (): Promise<void> {
    this.#stopChain()
    await this.#epochs.stop()
    await this.#chain.stop()
    stopActor(this.#system)
  }
}
