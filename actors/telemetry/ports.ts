// What the telemetry routes read, and the sources other machinery plugs in: published epoch
// versions and sell-allowance proofs come from the validator's epoch machinery (its snapshots table
// readers); without a source the lists are empty and single reads answer 404.
import type { Clock } from '../ports.ts'
import type { TelemetryProjection } from './projection.ts'

// The published shapes are the validator's own (one definition).
import type { EpochData, EpochSnapshot, SellAllowancePaidSnapshot, SellAllowanceFreeSnapshot } from '../validator/snapshots.ts'
export type { EpochData, EpochSnapshot, SellAllowancePaidSnapshot, SellAllowanceFreeSnapshot }

export interface EpochSource {
  /**
   * Every retained published epoch version (every revision of every closed epoch), in any order.
   * Versions are immutable; a correction is a new version. Retention bounds the set (30 days).
   */
  list (): Promise<EpochSnapshot[]>
  /**
   * A number that changes whenever the set may have changed (a version stored or removed). With it,
   * readers keep one listing per generation (the paid epoch routes pin their version on every
   * request, before the limits); without it they list on every read.
   */
  generation? (): number
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
