// What the telemetry routes read, and the sources other machinery plugs in: published epoch
// versions and sell-allowance proofs come from the validator's epoch machinery (its snapshots table
// readers); without a source the lists are empty and single reads answer 404.
import type { SnapshotEnvelope } from '../validator/envelope.ts'
import type { SellAllowanceData, SellAllowanceFree, SellAllowancePaid } from '../domain/sell-allowance.ts'
import type { Clock } from '../ports.ts'
import type { TelemetryProjection } from './projection.ts'

/** Seed §2.4 epoch data; `previousSnapshotId` and `correctionReason` are null on revision 1. */
export interface EpochData {
  epoch: number
  formulaVersion: string
  epochSummaryVersion: string
  expectedOrchestratorCount: number
  contributingOrchestratorCount: number
  sumFinalShare: number
  computedAt: string
  previousSnapshotId: string | null
  correctionReason: string | null
  revision: number
}
export type EpochSnapshot = SnapshotEnvelope<EpochData>
export type SellAllowancePaidSnapshot = SnapshotEnvelope<SellAllowanceData<SellAllowancePaid>>
export type SellAllowanceFreeSnapshot = SnapshotEnvelope<SellAllowanceData<SellAllowanceFree>>

export interface EpochSource {
  /**
   * Every retained published epoch version (every revision of every closed epoch), in any order.
   * Versions are immutable; a correction is a new version. Retention bounds the set (30 days).
   */
  list (): Promise<EpochSnapshot[]>
}

export interface SellAllowanceSource {
  /** A hotkey's published proof for `epoch` when retained, else (no epoch) the latest; null when none. */
  get (hotkey: string, variant: 'paid', epoch?: number): Promise<SellAllowancePaidSnapshot | null>
  get (hotkey: string, variant: 'free', epoch?: number): Promise<SellAllowanceFreeSnapshot | null>
}

/** Participants on the network, for the network summary (the membership view). */
export interface ParticipantsSource {
  (): Promise<{ counts: { orchestrator: number, worker: number, validator: number }, workers: Array<{ bandwidthMbps: number, provider?: string | null }> }>
}

/** Everything the telemetry routes read. */
export interface TelemetryReader {
  readonly projection: TelemetryProjection
  readonly clock: Pick<Clock, 'now'>
  /** HMAC key of list cursors (kept in the meta table, so cursors survive a restart). */
  readonly cursorKey: Uint8Array
  readonly epochs: EpochSource | null
  readonly sellAllowance: SellAllowanceSource | null
}
