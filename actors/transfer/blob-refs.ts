// References to staged chunk bytes. The blob store deduplicates by content (sha256), so one blob can
// back chunks of several transfers, in one organization or across them. Each chunk that needs the
// bytes holds one `index` row `blob/<sha256>/<transferId>/<chunkIndex>`; the blob is deleted only
// when the last such row goes.
//
// Making a blob exist and pinning it, and dropping a reference together with the check for others
// and the delete, run one at a time per digest. An upload pins the blob in the same step as the
// rename that makes it exist and unpins it only once the coordinator has recorded the chunk and its
// reference in one LevelDB batch (or refused it). A release finds either the pin or the reference, so
// a cancel of transfer X can never delete the bytes that transfer Y's upload of the same content just
// made durable and is about to acknowledge (docs/transfers.md#staging). A release that finds only a
// pin is not lost: the last unpin runs it again, so bytes whose references all went while an upload
// held them (a cancel of that very transfer, cleaned up before the upload heard its answer) are
// deleted then. Pins live in memory: they only bridge an upload in flight, which a crash ends before
// its acknowledgement anyway. A blob such a crash, or an upload that stopped waiting for its answer,
// leaves without any reference is deleted by the orchestrator's disk sweep once old (reclaimOrphanBlob,
// node/sweep.ts).
import type { BlobStore, Store } from '../ports.ts'
import { collect, prefixRange } from '../store.ts'

export const blobRefKey = (sha256: string, transferId: string, chunkIndex: number): string => `blob/${sha256}/${transferId}/${chunkIndex}`
const blobRefPrefix = (sha256: string): string => `blob/${sha256}/`

// Per blob store instance (the service and the coordinator share one), per digest: the tail of the
// queue of critical sections on that digest.
const queues = new WeakMap<object, Map<string, Promise<void>>>()

/** Runs `fn` once every earlier critical section on the same digest of the same blob store has ended. */
export async function withBlobLock<T> (blobs: BlobStore, sha256: string, fn: () => Promise<T>): Promise<T> {
  let byDigest = queues.get(blobs)
  if (byDigest === undefined) { byDigest = new Map(); queues.set(blobs, byDigest) }
  const previous = byDigest.get(sha256) ?? Promise.resolve()
  const run = previous.then(() => fn())
  const tail = run.then(() => {}, () => {})
  byDigest.set(sha256, tail)
  try {
    return await run
  } finally {
    if (byDigest.get(sha256) === tail) byDigest.delete(sha256)
  }
}

const pins = new WeakMap<object, Map<string, number>>()
// Per blob store, per digest: a release that found the blob pinned, with the store to check again
// when the last pin goes.
const deferred = new WeakMap<object, Map<string, Store>>()

/**
 * Pins a blob against deletion; call inside `withBlobLock`, in the step that made it exist. Returns the
 * unpin, which (when it drops the last pin and a release was put off meanwhile) checks the blob's
 * references again and deletes it if none is left; that check runs behind the digest's lock, and a
 * failure of it leaves the blob (at worst unreferenced), never throws. An upload that cannot tell
 * whether its own reference is still coming unpins with `recheck: false`.
 */
export function pinBlob (blobs: BlobStore, sha256: string): (opts?: { recheck?: boolean }) => void {
  let byDigest = pins.get(blobs)
  if (byDigest === undefined) { byDigest = new Map(); pins.set(blobs, byDigest) }
  byDigest.set(sha256, (byDigest.get(sha256) ?? 0) + 1)
  let pinned = true
  return (opts = {}) => {
    if (!pinned) return
    pinned = false
    const n = (byDigest.get(sha256) ?? 1) - 1
    if (n > 0) { byDigest.set(sha256, n); return }
    byDigest.delete(sha256)
    const store = deferred.get(blobs)?.get(sha256)
    if (store === undefined) return
    deferred.get(blobs)!.delete(sha256)
    // `recheck: false`: the upload does not know whether its reference is still on its way (the
    // coordinator did not answer in time), so the check is not run now: the blob stays, at worst
    // unreferenced, rather than go from under a chunk about to be recorded.
    if (opts.recheck === false) return
    releaseBlobRef(store, blobs, sha256, null, 0).catch(() => {})
  }
}

const pinned = (blobs: BlobStore, sha256: string): boolean => (pins.get(blobs)?.get(sha256) ?? 0) > 0

/**
 * Drops one reference (when named) and deletes the blob when neither another reference nor a pin
 * remains. True when the blob was deleted. Kept for a pin, the check runs again at the last unpin.
 */
export async function releaseBlobRef (store: Store, blobs: BlobStore, sha256: string, transferId: string | null, chunkIndex: number): Promise<boolean> {
  return withBlobLock(blobs, sha256, async () => {
    if (transferId !== null) await store.table('index').del(blobRefKey(sha256, transferId, chunkIndex))
    if (pinned(blobs, sha256)) {
      let byDigest = deferred.get(blobs)
      if (byDigest === undefined) { byDigest = new Map(); deferred.set(blobs, byDigest) }
      byDigest.set(sha256, store)
      return false
    }
    const others = await collect(store.table('index'), { ...prefixRange(blobRefPrefix(sha256)), limit: 1 })
    if (others.length > 0) return false
    await blobs.delete(sha256)
    return true
  })
}

/**
 * Deletes a blob nothing references: no `index` row, no pin, and `stillOrphan` (run last, inside the
 * digest's lock: the sweep's re-check of the file's age) answers its size. Null when it is kept.
 * Behind the lock no upload of the same bytes can rename a fresh copy over the name between these checks
 * and the delete: one that already did holds a pin (or its reference is stored), one still to come makes
 * its copy after the delete (docs/node.md#disk-sweep).
 */
export async function reclaimOrphanBlob (store: Store, blobs: BlobStore, sha256: string, stillOrphan: () => Promise<number | null>): Promise<number | null> {
  return withBlobLock(blobs, sha256, async () => {
    if (pinned(blobs, sha256)) return null
    const refs = await collect(store.table('index'), { ...prefixRange(blobRefPrefix(sha256)), limit: 1 })
    if (refs.length > 0) return null
    const bytes = await stillOrphan()
    if (bytes === null) return null
    await blobs.delete(sha256)
    return bytes
  })
}

/** How many references a blob has (tests and diagnostics). */
export async function blobRefCount (store: Store, sha256: string): Promise<number> {
  return (await collect(store.table('index'), prefixRange(blobRefPrefix(sha256)))).length
}
