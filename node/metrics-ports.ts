// Metering of the ports the role actors use: each function wraps one port (or listens to one hook)
// and records into the node's NodeMetrics. The actors stay unaware of metrics; the operator logs that
// go with them live here too (a worker's delivery at info, a validator's verdict and epoch at info).
import { performance } from 'node:perf_hooks'
import type { Logger } from '../actors/ports.ts'
import type { ChunkMover } from '../actors/transfer/worker.ts'
import type { CoordinatorEvent } from '../actors/transfer/coordinator.ts'
import type { EvidenceSink } from '../actors/validator/verifier.ts'
import type { Chain, ChainListener } from '../actors/chain/ports.ts'
import type { NodeMetrics } from './metrics.ts'
import type { SweepResult } from './sweep.ts'

/** A worker's chunk mover that counts bytes and tasks by outcome, times each move, and logs each delivery. */
export function meteredMover (mover: ChunkMover, metrics: NodeMetrics, log: Logger): ChunkMover {
  return {
    async move (offer, opts) {
      const t0 = performance.now()
      const seconds = (): number => (performance.now() - t0) / 1000
      try {
        const r = await mover.move(offer, opts)
        const s = seconds()
        metrics.bytes.inc({ direction: 'delivered' }, r.bytes)
        metrics.tasks.inc({ outcome: 'delivered' })
        metrics.attemptSeconds.observe({ outcome: 'delivered' }, s)
        log.info({ event: 'delivery', transferId: offer.transferId, chunk: offer.chunkIndex, attemptId: offer.attemptId, bytes: r.bytes, ms: Math.round(s * 1000), via: r.via }, 'chunk delivered')
        return r
      } catch (err) {
        const outcome = opts.signal.aborted ? 'cancelled' : 'failed'
        metrics.tasks.inc({ outcome })
        metrics.attemptSeconds.observe({ outcome }, seconds())
        throw err
      }
    }
  }
}

/** The coordinator's event hook: settled attempts (tasks by outcome, bytes, latency), interventions, final transfers. */
export function coordinatorMetrics (metrics: NodeMetrics): (e: CoordinatorEvent) => void {
  return (e) => {
    switch (e.type) {
      case 'result': {
        metrics.tasks.inc({ outcome: e.row.outcome })
        metrics.attemptSeconds.observe({ outcome: e.row.outcome }, e.row.duration_ms / 1000)
        if (e.row.outcome === 'accepted') metrics.bytes.inc({ direction: 'settled' }, e.row.bytes)
        return
      }
      case 'intervention': metrics.interventions.inc({ reason: e.row.reason }); return
      case 'transfer': {
        if (e.row.status === 'completed' || e.row.status === 'failed' || e.row.status === 'cancelled') metrics.transfers.inc({ status: e.row.status })
        return
      }
      case 'checking': return
    }
  }
}

/** A validator's evidence sink that counts and logs each verdict. */
export function meteredEvidence (sink: EvidenceSink, metrics: NodeMetrics, log: Logger): EvidenceSink {
  return {
    async submitEvidence (records) {
      for (const r of records) {
        metrics.verdicts.inc({ verdict: r.verdict })
        metrics.bytes.inc({ direction: 'verified' }, r.bytes)
        log.info({ event: 'verdict', verdict: r.verdict, transferId: r.transferId, attemptId: r.attemptId, worker: r.workerHotkey, orchestrator: r.orchestratorHotkey, bytes: r.bytes }, `delivery ${r.verdict}`)
      }
      return sink.submitEvidence(records)
    },
    submitPenalties: (rows) => sink.submitPenalties(rows)
  }
}

/** A chain whose weight submissions are counted. */
export function meteredChain (chain: Chain, metrics: NodeMetrics, log: Logger): Chain {
  const setWeights: Chain['setWeights'] = async (hotkey, epoch, uids, weights) => {
    try {
      const proof = await chain.setWeights(hotkey, epoch, uids, weights)
      metrics.weightsSet.inc({ result: 'ok' })
      log.info({ event: 'weights_set', epoch, uids: uids.length }, 'weights set')
      return proof
    } catch (err) {
      metrics.weightsSet.inc({ result: 'error' })
      throw err
    }
  }
  return new Proxy(chain, {
    get (target, prop) {
      if (prop === 'setWeights') return setWeights
      const v = Reflect.get(target, prop, target) as unknown
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    }
  })
}

/** A chain listener keeping the head and epoch gauges current; logs each epoch close at `epochLevel`. */
export function chainMetrics (metrics: NodeMetrics, log: Logger, epochLevel: 'info' | 'debug'): ChainListener {
  return {
    block: (head) => { metrics.chainHead.set(head.block); metrics.epoch.set(head.epoch) },
    epochClosed: (close) => {
      metrics.epochsClosed.inc()
      metrics.epoch.set(close.epoch + 1)
      log[epochLevel]({ event: 'epoch_closed', epoch: close.epoch, lastBlock: close.lastBlock }, 'epoch closed')
    }
  }
}

/** The disk sweep's hook: files and bytes it reclaimed, by kind. */
export function sweepMetrics (metrics: NodeMetrics): (r: SweepResult) => void {
  return (r) => {
    for (const [kind, got] of [['blob', r.blobs], ['blob_temp', r.blobTemps], ['sink_partial', r.partials]] as const) {
      metrics.reclaimedFiles.inc({ kind }, got.files)
      metrics.reclaimedBytes.inc({ kind }, got.bytes)
    }
  }
}
