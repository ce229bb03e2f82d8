// Partitions: during a window, a set of sites (an orchestrator with its workers) cannot reach the rest
// of the network and the rest cannot reach it. Sends across the cut fail as with a broken connection.
import { DELIVER_NOW, UNREACHABLE, type Channel } from '../transport.ts'

export interface PartitionWindow { startMs: number, endMs: number, sites: ReadonlySet<number> }

export function partitionChannel (windows: readonly PartitionWindow[], siteOf: (node: string) => number, now: () => number): Channel {
  return (msg) => (cut(windows, siteOf(msg.from), siteOf(msg.to), now()) ? UNREACHABLE : DELIVER_NOW)
}

/** True when sites a and b are on different sides of a partition active at `t`. */
export function cut (windows: readonly PartitionWindow[], a: number, b: number, t: number): boolean {
  for (const w of windows) {
    if (t < w.startMs || t >= w.endMs) continue
    if (w.sites.has(a) !== w.sites.has(b)) return true
  }
  return false
}
