// V8 heap settings for a node process that moves chunk bytes (docs/benchmarks.md#e2e, "Garbage
// collection"). Every chunk byte passes through short-lived Buffers (socket reads, file reads) whose
// memory lives outside the JavaScript heap; the heap itself holds ~50 MB of long-lived objects (the
// chain client, schemas, actors). With V8's default growth the old generation's limit after a full
// collection sat only ~24 MB above that live size, so the stream objects that outlive two scavenges
// while bytes flow set off a full mark-compact every ~0.3 s: 64 of them while a devnet moved 512 MiB,
// and the collector's threads used as much CPU as the main thread. Giving the old generation room to
// grow to three times its live size before the next full collection removes most of them; the
// collections still run, and what the process holds in chunk buffers stays bounded by the in-flight
// budget, not by this setting.
import { setFlagsFromString } from 'node:v8'

/** The old generation may grow to (1 + this / 100) × its live size before the next full collection. */
export const HEAP_GROWING_PERCENT = 200

let tuned = false

/**
 * Applies the data-plane heap settings to this process (once; later calls do nothing).
 * `BWN_HEAP_GROWING_PERCENT` overrides the percentage; 0 keeps V8's own growth.
 */
export function tuneHeapForDataPlane (env: NodeJS.ProcessEnv = process.env): void {
  if (tuned) return
  const percent = heapGrowingPercent(env)
  tuned = true
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`)
}

/** The growth percentage `env` asks for (BWN_HEAP_GROWING_PERCENT), else HEAP_GROWING_PERCENT; 0: V8's own. */
export function heapGrowingPercent (env: NodeJS.ProcessEnv): number {
  const raw = env.BWN_HEAP_GROWING_PERCENT
  if (raw === undefined || raw.trim() === '') return HEAP_GROWING_PERCENT
  const percent = Number(raw)
  if (!Number.isInteger(percent) || percent < 0 || percent > 1000) throw Object.assign(new Error(`BWN_HEAP_GROWING_PERCENT must be an integer 0..1000, not ${JSON.stringify(raw)}`), { code: 'BWN_ERR_CONFIG' })
  return percent
}
