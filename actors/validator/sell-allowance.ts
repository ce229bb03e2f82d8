// Sell-allowance proofs per miner hotkey and epoch, from the chain's emissions and sales, published
// with the epoch (one epoch late) and kept 7 days (paid variant) or 30 days (free audit variant).
import type { Store, StoreOp } from '../ports.ts'
import { collect } from '../store.ts'
import type { Chain, EpochClose } from '../chain/ports.ts'
import { computeSellAllowance, redistributeSellPressure, sellAllowanceFreeData, sellAllowancePaidData, type SellAllowanceResult, type UidPressure } from '../domain/sell-allowance.ts'
import { DAY_MS } from '../domain/prism.ts'
import { isoFromMs } from '../domain/chain-time.ts'
import { sealEnvelope, formulaReference } from './envelope.ts'
import { KEYS, type SellAllowanceFreeSnapshot, type SellAllowancePaidSnapshot } from './snapshots.ts'

export const SELL_PAID_RETENTION_MS = 7 * DAY_MS // seed: paid sell-allowance retention 7 days
export const SELL_FREE_RETENTION_MS = 30 * DAY_MS // seed: free audit route kept 30 days

/** Both published variants of one result; times are chain times, so every validator agrees. */
export function sellAllowanceSnapshots (r: SellAllowanceResult, close: Pick<EpochClose, 'endAtMs'>, publishedAtMs: number, eventCount: number, formulaDocsUri?: string): { paid: SellAllowancePaidSnapshot, free: SellAllowanceFreeSnapshot } {
  const common = {
    version: `sell-allowance-${r.epoch}`,
    observedAt: isoFromMs(close.endAtMs),
    sourceEpoch: r.epoch,
    formulaReference: formulaReference('sell-allowance', formulaDocsUri),
    publishedAt: isoFromMs(publishedAtMs),
    evidenceSequence: String(eventCount)
  }
  return { paid: sealEnvelope({ ...common, data: sellAllowancePaidData(r) }), free: sealEnvelope({ ...common, data: sellAllowanceFreeData(r) }) }
}

export interface PublishSellAllowancesArgs {
  store: Store
  chain: Chain
  close: EpochClose
  /** Weight served for the epoch per UID (the summary's, or the no-transfer fallback's). */
  servedWeightOf: (uid: number) => number
  publishedAtMs: number
  formulaDocsUri?: string
}

export interface PublishedSellAllowances {
  /** Miners whose proofs were published. */
  count: number
  /** Each miner's pressure on the weights, by UID (applySellPressure). */
  pressure: Map<number, UidPressure>
}

/**
 * Computes and stores the proofs of every orchestrator registered by the epoch's last block, and
 * returns each one's sell pressure. `receivedWeight` in a proof is the fleet step's received weight
 * (redistributeSellPressure over every miner): the weight the validator sets for it before the final
 * normalization. A hotkey is its own coldkey here (the chain records no coldkeys).
 */
export async function publishSellAllowances (args: PublishSellAllowancesArgs): Promise<PublishedSellAllowances> {
  const { store, chain, close, publishedAtMs } = args
  const head = await chain.head()
  const miners = (await chain.registrations()).filter(r => r.role === 'orchestrator' && r.registeredAtBlock <= close.lastBlock)
  const computed: Array<{ result: SellAllowanceResult, events: number }> = []
  for (const m of miners) {
    // Full history: carried debt depends on every earlier emission and sale.
    const emissions = await chain.emissionsFor(m.hotkey, 0, close.lastBlock)
    const sales = await chain.salesFor(m.hotkey, 0, close.lastBlock)
    const result = computeSellAllowance({
      hotkey: m.hotkey,
      uid: m.uid,
      epoch: close.epoch,
      atBlock: close.lastBlock,
      epochStartBlock: close.firstBlock,
      emissions: emissions.map(e => ({ block: e.block, baseAlphaRao: e.alphaRao })),
      sales: sales.map(s => ({ block: s.block, alphaRao: s.alphaRao })),
      baseWeight: args.servedWeightOf(m.uid),
      blockReference: { block: close.lastBlock, atMs: close.endAtMs, blockTimeMs: head.blockTimeMs },
      computedAtMs: publishedAtMs
    })
    computed.push({ result, events: emissions.length + sales.length })
  }
  const fleet = redistributeSellPressure(computed.map(({ result: r }) => ({ hotkey: r.hotkey, coldkey: r.hotkey, baseWeight: r.baseWeight, multiplier: r.sellAllowanceMultiplier, holding: r.holding })))
  const ops: StoreOp[] = []
  const pressure = new Map<number, UidPressure>()
  for (const [i, { result: r, events }] of computed.entries()) {
    const result: SellAllowanceResult = { ...r, receivedWeight: fleet[i]!.receivedWeight }
    pressure.set(r.uid, { hotkey: r.hotkey, coldkey: r.hotkey, multiplier: r.sellAllowanceMultiplier, holding: r.holding })
    const { paid, free } = sellAllowanceSnapshots(result, close, publishedAtMs, events, args.formulaDocsUri)
    const paidKey = KEYS.sellPaid(r.hotkey, close.epoch)
    const freeKey = KEYS.sellFree(r.hotkey, close.epoch)
    ops.push(
      { type: 'put', table: 'snapshots', key: paidKey, value: paid },
      { type: 'put', table: 'snapshots', key: freeKey, value: free },
      { type: 'put', table: 'snapshots', key: KEYS.snapshotId(paid.snapshotId), value: paidKey },
      { type: 'put', table: 'snapshots', key: KEYS.snapshotId(free.snapshotId), value: freeKey },
      { type: 'put', table: 'snapshots', key: KEYS.sellIndex(close.epoch, r.hotkey), value: { paid: paid.snapshotId, free: free.snapshotId, endAtMs: close.endAtMs } }
    )
  }
  await store.batch(ops)
  return { count: miners.length, pressure }
}

interface SellIndexRow { paid: string | null, free: string | null, endAtMs: number }

/** Deletes paid proofs older than 7 days and free ones older than 30 days (chain time). */
export async function sellAllowancePruneOps (store: Store, nowMs: number): Promise<StoreOp[]> {
  const ops: StoreOp[] = []
  for (const [key, v] of await collect(store.table<SellIndexRow>('snapshots'), { gte: 'sellidx/', lt: 'sellidx/\xff' })) {
    const [, epochText, hotkey] = key.split('/') as [string, string, string]
    const epoch = Number(epochText)
    const row = { ...v }
    if (row.paid !== null && v.endAtMs < nowMs - SELL_PAID_RETENTION_MS) {
      ops.push({ type: 'del', table: 'snapshots', key: KEYS.sellPaid(hotkey, epoch) }, { type: 'del', table: 'snapshots', key: KEYS.snapshotId(row.paid) })
      row.paid = null
    }
    if (row.free !== null && v.endAtMs < nowMs - SELL_FREE_RETENTION_MS) {
      ops.push({ type: 'del', table: 'snapshots', key: KEYS.sellFree(hotkey, epoch) }, { type: 'del', table: 'snapshots', key: KEYS.snapshotId(row.free) })
      row.free = null
    }
    if (row.paid === null && row.free === null) ops.push({ type: 'del', table: 'snapshots', key })
    else if (row.paid !== v.paid) ops.push({ type: 'put', table: 'snapshots', key, value: row })
  }
  return ops
}
