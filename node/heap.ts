// V8 heap settings for a node process that moves chunk bytes (docs/benchmarks.md#e2e, "Garbage
// collection"; docs/benchmarks.md#devnet-memory). Every chunk byte passes through short-lived Buffers
// (socket reads, file reads) whose memory lives outside the JavaScript heap; the heap itself holds
// ~50 MB of long-lived objects (the chain client, schemas, actors). With V8's default growth the old
// generation's limit after a full collection sat only ~24 MB above that live size, so the stream
// objects that outlive two scavenges while bytes flow set off a full mark-compact every ~0.3 s: 64 of
// them while a devnet moved 512 MiB, and the collector's threads used as much CPU as the main thread.
// Giving the old generation room to grow to three times its live size before the next full collection
// removes most of them; the collections still run, and what the process holds in chunk buffers stays
// bounded by the in-flight budget, not by this setting.
//
// The young generation is the other way round: V8 doubles it (up to 64 MiB on a 64-bit host) whenever
// objects survive, and loading a node's modules grows it to its maximum at once. A big young generation
// is collected seldom, and the socket reads' Buffers die only when it is: a devnet held 60-86 MiB of
// dead Buffers per thread while moving a file, and 64 MiB of young generation idle. Kept at its start
// size (1 MiB semi-spaces) it is scavenged often, each scavenge frees the Buffers that died, and it
// costs no CPU we could measure (docs/benchmarks.md#devnet-memory).
import { setFlagsFromString } from 'node:v8'

/** The old generation may grow to (1 + this / 100) × its live size before the next full collection. */
export const HEAP_GROWING_PERCENT = 200
/** The young generation grows by this factor when it fills with survivors: 1 keeps it at its start size (V8's own: 2). */
export const YOUNG_GENERATION_GROWTH = 1

let tuned = false

/**
 * Applies the data-plane heap settings to this process (once; later calls do nothing). They hold for
 * every thread: a worker thread started afterwards has its young generation kept small too.
 * `BWN_HEAP_GROWING_PERCENT` overrides the percentage, `BWN_YOUNG_GENERATION_GROWTH` the young
 * generation's growth factor; 0 keeps V8's own for either.
 */
export function tuneHeapForDataPlane (env: NodeJS.ProcessEnv = process.env): void {
  if (tuned) return
  const percent = heapGrowingPercent(env)
  const growth = youngGenerationGrowth(env)
  tuned = true
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`)
  if (growth > 0) setFlagsFromString(`--semi-space-growth-factor=${growth}`)
}

/** An integer setting from `env[name]` within 0..max, else `fallback` when unset or empty. */
function intSetting (env: NodeJS.ProcessEnv, name: string, max: number, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0 || value > max) throw Object.assign(new Error(`${name} must be an integer 0..${max}, not ${JSON.stringify(raw)}`), { code: 'BWN_ERR_CONFIG' })
  return value
}

/** The growth percentage `env` asks for (BWN_HEAP_GROWING_PERCENT), else HEAP_GROWING_PERCENT; 0: V8's own. */
export function heapGrowingPercent (env: NodeJS.ProcessEnv): number {
  return intSetting(env, 'BWN_HEAP_GROWING_PERCENT', 1000, HEAP_GROWING_PERCENT)
}

/** The young generation's growth factor `env` asks for (BWN_YOUNG_GENERATION_GROWTH), else YOUNG_GENERATION_GROWTH; 0: V8's own. */
export function youngGenerationGrowth (env: NodeJS.ProcessEnv): number {
  return intSetting(env, 'BWN_YOUNG_GENERATION_GROWTH', 4, YOUNG_GENERATION_GROWTH)
}

/**
 * One full collection of this thread's heap that also gives memory back: dead objects go, the young
 * generation shrinks to its least size and the pages V8 keeps for reuse are returned. Run once a node
 * (or a devnet's thread) has started: loading and starting leave the young generation at its largest and
 * pages pooled, which V8 itself gives back only after about a minute without allocation (its memory
 * reducer). It is what the inspector's HeapProfiler.collectGarbage does (an in-process session; no port
 * is opened); a runtime built without the inspector skips it. Takes tens of milliseconds.
 */
export async function releaseStartupHeap (): Promise<void> {
  let session: import('node:inspector/promises').Session | null = null
  try {
    const { Session } = await import('node:inspector/promises')
    session = new Session()
    session.connect()
    await session.post('HeapProfiler.collectGarbage')
  } catch {
    // No inspector in this runtime (or it refused): the memory reducer still runs later.
  } finally {
    session?.disconnect()
  }
}
