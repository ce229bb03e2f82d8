// The `node` destination: a receiving bwnet node writes delivered files into a directory.
//
// Two halves:
//  - `sinkRoutes`, a Fastify plugin the receiving node mounts on its data HTTP server. Every route needs
//    a URL signed (protocol/signed-url.ts) for this sink (audience `bwnet-sink`, its own authority) by
//    one of its trusted signers (the coordinators it accepts files from): sink-auth.ts. A worker only
//    ever holds the signed URL of one chunk attempt, valid for minutes.
//  - `NodeSinkDriver`, the coordinator's driver. It signs with the coordinator's hotkey and talks to
//    the sink over HTTP for every step (begin, chunk check, complete, abort, read-back), so the same code serves a
//    sink in this process (devnet) and one on another machine.
//
// Files: `<dir>/.partial/<uploadId>` (preallocated to the full size), `<dir>/.partial/<uploadId>.json`
// (metadata). A chunk PUT streams its body straight into the partial file at the chunk's offset
// (positional writes, at most WRITE_BATCH_BYTES buffered), hashing it on the way, and fsyncs before it
// answers with the sha256 as ETag: no staging copy, no whole chunk in memory. A chunk URL names one
// attempt (`attempt`, counted per chunk, and its `slot`): once a later attempt of the chunk has been
// seen, an earlier one's URL writes nothing, and once the coordinator has checked a chunk (its hash
// route, or complete) the checked attempt's URL writes nothing either: only a later attempt, which the
// coordinator signs when it delivers the chunk again, may. complete() checks every chunk's sha256
// against the ETag it is given (the coordinator gives the sha256 it staged) — from the hash taken while
// writing when exactly one write of that chunk ran alone since this process started, otherwise by
// reading the region back — and answers the chunks that differ (409, `chunks`), or fsyncs and links the
// file into its organization's namespace, `<dir>/orgs/<organization>/<filename>` (a clash gets `-1`,
// `-2`, ... before the extension; nothing is overwritten), answering the name it got.
// Each organization's names are its own: no clash, name check or answer ever involves another
// organization's files (docs/destinations.md#tenant-namespaces). An upload begun without an
// organization (one begun before namespaces existed) lands in `<dir>` itself, as every file did then.
// complete() may be called again at any point, also after a crash halfway: a link that already points at
// the partial file is recognised, so the file never lands twice.
// Free space (docs/destinations.md#sink-storage): a new upload's begin needs its size free above the
// node's watermark, a chunk PUT reserves its length with the storage guard (once it has its budget window,
// before its body is read), and
// a write that fails for space answers 507 BWN_ERR_STORAGE_FULL like a refusal, acknowledging nothing.
import { once } from 'node:events'
import { mkdir, open, readFile, rename, rm, link, unlink, stat, type FileHandle } from 'node:fs/promises'
import { join, extname } from 'node:path'
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, FastifyReply, FastifyError } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { signUrl, SIGNATURE_PARAM, type KeyPair } from '../../../protocol/index.ts'
import { verifySinkRequest, SINK_AUDIENCE, type SinkAuthOptions } from './sink-auth.ts'
import { ATTEMPT_SLOTS_PER_CHUNK } from '../../../actors/destination.ts'
import type {
  DestinationDriver, UploadState, UploadSpec, ChunkCoordinates, DeliveryTarget, DeliveredPart, ReadBackTarget, CompletedUpload } from '../../../actors/destination.ts'
import { toProblem, problemHeaders, outOfFiles, PROBLEM_CONTENT_TYPE } from '../../../api/problem.ts'
import {
  BadRequest, RangeNotSatisfiable, SinkUploadNotFound,
  SinkBadFilename, SinkConflict, SinkChunkSize, SinkEtagMismatch, StorageFull, Unavailable, withExtensions
} from '../../../api/errors.ts'
import { isNoSpace, type StorageGuard } from '../../storage.ts'
import { fsyncDir } from '../blob-store.ts'
import { sendFileRange, logSendCut } from '../file-response.ts'
import type { InflightBudget } from '../inflight-budget.ts'
import { DestinationError, expectKind, stateString, stateInteger, partsInOrder, checkRange, httpFailure, networkFailure, boundedBody, errorText, discard } from './errors.ts'
import { streamHash, HASH_BYTES_PER_STREAM } from '../hash-pool.ts'
import { PieceWriter } from '../piece-writer.ts'
import { PARTIAL_DIR, UPLOAD_ID_PATTERN, uploadIdOf, removePartial, type SinkPartials } from './sink-partials.ts'
import { filenameProblem, pathProblem, splitPath, normalizeFilename, MAX_FILENAME_BYTES } from './filename.ts'
export { filenameProblem, normalizeFilename }

/** Largest chunk body the sink accepts. */
export const DEFAULT_MAX_CHUNK_BYTES = 256 * 1024 * 1024 // 256 MiB
/** Largest range one read-back request may ask for. */
export const MAX_READ_BYTES = 256 * 1024 * 1024 // 256 MiB
/** Lifetime of the URLs the driver signs for its own calls (begin, complete, abort, read). */
export const CONTROL_URL_TTL_MS = 60_000 // 1 min
/** The most the driver reads of a sink's JSON answer. */
const CONTROL_ANSWER_BYTES = 4096
/** Attempts to find a free final name before giving up. */
const MAX_NAME_SUFFIX = 1000
const HASH_READ_BYTES = 1024 * 1024 // 1 MiB reads while verifying chunks at complete
/**
 * A chunk write whose body sends less than WRITE_PROGRESS_BYTES (or the rest of the chunk) in this long
 * is cut off and gives its budget window and its room back: a sender that stopped, or trickles a byte
 * now and then to hold them (as STALL_MS cuts a reader that takes more than this over a 1 MiB piece,
 * ../file-response.ts). About 17 KiB/s: far below any link a worker moves chunks over.
 */
export const WRITE_STALL_MS = 60_000
export const WRITE_PROGRESS_BYTES = 1024 * 1024
/** The most chunk indices a refused complete() lists (its answer stays well under the driver's 4 KiB). */
export const MAX_LISTED_CHUNKS = 256
/** A chunk write queues at most this much of the body behind the positional write in flight (PieceWriter). */
export const WRITE_BATCH_BYTES = 1024 * 1024
/** Memory one streaming chunk write or read-back holds at most (a write in flight, what queues behind it and a hash's buffers), reserved from the in-flight budget. */
export const STREAM_WINDOW_BYTES = 2 * WRITE_BATCH_BYTES + HASH_BYTES_PER_STREAM
/** Under the sink directory: one directory per organization, named by its id. */
export const NAMESPACES_DIR = 'orgs'
/** An organization id as a namespace: one safe directory entry (organization ids are UUIDs). */
export const NAMESPACE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$'
const NAMESPACE = new RegExp(NAMESPACE_PATTERN)

/**
 * The directory an organization's files land in under a sink directory; `undefined` (an upload begun
 * before namespaces) is the sink directory itself, the flat layout of earlier versions.
 */
export function namespaceDir (sinkDir: string, namespace: string | undefined): string {
  if (namespace === undefined) return sinkDir
  if (!NAMESPACE.test(namespace)) throw new RangeError(`namespace ${JSON.stringify(namespace)} is not ${NAMESPACE_PATTERN}`)
  return join(sinkDir, NAMESPACES_DIR, namespace)
}

/**
 * Why a file of the flat layout (no namespace: an upload begun before namespaces) cannot have this name:
 * under the namespaces directory it would land in an organization's namespace. Null when it can.
 */
function flatProblem (namespace: string | undefined, filename: string): string | null {
  return namespace === undefined && filename.split('/')[0] === NAMESPACES_DIR ? `a file without an organization cannot be named under ${NAMESPACES_DIR}/` : null
}

/** Where a file an organization was delivered under `storedName` is, in a sink directory. */
export function sinkFilePath (sinkDir: string, namespace: string | undefined, storedName: string): string {
  return join(namespaceDir(sinkDir, namespace), storedName)
}

export { UPLOAD_ID_PATTERN }
const UPLOAD_ID = new RegExp(UPLOAD_ID_PATTERN)

interface UploadMeta {
  filename: string
  totalSize: number
  chunkSize: number
  status: 'open' | 'completed'
  /** The organization whose namespace the file lands in; absent for an upload begun before namespaces (flat). */
  namespace?: string
  /** Name in the namespace's directory once completed. */
  finalName?: string
}

export interface SinkRoutesOptions {
  /** Directory the finished files land in. */
  dir: string
  /** Coordinators allowed to write here (SS58 addresses), or a predicate. */
  trustedSigners: ReadonlySet<string> | ((address: string) => boolean)
  /** The authority (host:port) this sink serves under; URLs signed for any other are refused. */
  authority: SinkAuthOptions['authority']
  /** Milliseconds since the epoch; default Date.now. */
  now?: () => number
  /** Failed signature checks per remote address (node/adapters/bad-signatures.ts); none counted without it. */
  badSignatures?: SinkAuthOptions['badSignatures']
  maxChunkBytes?: number
  /** The node's in-flight budget: every chunk write and read-back reserves its window while it streams. */
  budget?: InflightBudget
  /** Default WRITE_STALL_MS. */
  writeStallMs?: number
  /**
   * The node's storage guard (node/storage.ts): a begin needs room for the file's size, a chunk
   * reserves its length once it streams (before its body is read); a write that fails for space is reported to it.
   */
  storage?: Pick<StorageGuard, 'room' | 'reserve' | 'failed' | 'refusal'>
  /** The disk sweep's view of this sink's partial files: it discards abandoned uploads through these routes (sink-partials.ts). */
  partials?: SinkPartials
  /**
   * Told of every chunk PUT refused for room (507), with the attempt its URL was signed for, before the
   * answer goes out: the coordinator's evidence that a worker's `destination_full` is true.
   */
  onRefusedForRoom?: (uploadId: string, index: number, attempt: number) => void
}

/** One chunk write in progress (also while it waits for the in-flight budget). */
interface ChunkWrite {
  index: number
  /** The attempt whose URL it came with. */
  attempt: number
  /** Another write of the same chunk overlapped this one: its hash may not describe the region. */
  overlapped: boolean
  controller: AbortController
  done: Promise<unknown>
}

/**
 * The latest attempt of a chunk the sink has seen (a coordinator-signed URL of it), and whether the
 * coordinator has checked the chunk since: then that attempt's URL writes nothing more.
 */
interface ChunkClaim { attempt: number, slot: number, checked: boolean }

const UploadParams = Type.Object({ uploadId: Type.String({ pattern: UPLOAD_ID_PATTERN }) })
/** A handed-out read URL's range (`start-end`, as in its Range header), signed with it; the URL's own signing fields pass. */
const ReadQuery = Type.Object({ range: Type.Optional(Type.String({ pattern: '^[0-9]{1,16}-[0-9]{1,16}$' })), [SIGNATURE_PARAM]: Type.Optional(Type.String()) }, { additionalProperties: true })
/** Read-backs one signed URL may have in flight at once: a reader's, and its retry while the first winds down. */
export const READS_PER_URL = 2
const ChunkParams = Type.Object({ uploadId: Type.String({ pattern: UPLOAD_ID_PATTERN }), index: Type.Integer({ minimum: 0 }) })
/** The attempt a chunk URL names (signed with it); absent, the attempt is taken to be the slot. */
const ChunkQuery = Type.Object({
  slot: Type.Optional(Type.Integer({ minimum: 0, maximum: ATTEMPT_SLOTS_PER_CHUNK - 1 })),
  attempt: Type.Optional(Type.Integer({ minimum: 0 }))
}, { additionalProperties: true })
const BeginQuery = Type.Object({
  filename: Type.String({ minLength: 1, maxLength: 1024 }),
  /** The organization the file belongs to: it lands in that organization's namespace. */
  org: Type.Optional(Type.String({ pattern: NAMESPACE_PATTERN })),
  size: Type.Integer({ minimum: 1 }),
  chunkSize: Type.Integer({ minimum: 1 })
}, { additionalProperties: true })
const CompleteBody = Type.Object({
  parts: Type.Array(Type.Object({ index: Type.Integer({ minimum: 0 }), etag: Type.String({ minLength: 1, maxLength: 200 }) }), { maxItems: 1_000_000 })
})
type CompleteBodyT = Static<typeof CompleteBody>
const ChunkHash = Type.Object({
  index: Type.Integer({ minimum: 0 }),
  bytes: Type.Integer({ minimum: 1 }),
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$' })
}, { description: 'The sink\'s sha256 of one chunk as it holds it' })

/**
 * Node-to-node signed URLs, not a client API: every route has `hide: true` and stays out of
 * /openapi.json, as /sink/names and /data/... do (docs/api.md#internal-signed-routes).
 * Mount on the receiving node's data server: `app.register(sinkRoutes, { dir, trustedSigners })`. */
export const sinkRoutes: FastifyPluginAsync<SinkRoutesOptions> = async function sinkRoutes (app: FastifyInstance, opts: SinkRoutesOptions) {
  const dir = opts.dir
  const partialDir = join(dir, PARTIAL_DIR)
  const now = opts.now ?? Date.now
  const maxChunkBytes = opts.maxChunkBytes ?? DEFAULT_MAX_CHUNK_BYTES
  const writeStallMs = opts.writeStallMs ?? WRITE_STALL_MS
  await mkdir(partialDir, { recursive: true })
  await mkdir(join(dir, NAMESPACES_DIR), { recursive: true }).catch((err: NodeJS.ErrnoException) => {
    // A file called `orgs` delivered before namespaces existed (flat layout) stands where they go.
    if (err.code === 'EEXIST' || err.code === 'ENOTDIR') throw new Error(`the sink directory ${dir} holds a file named ${NAMESPACES_DIR} from before tenant namespaces; move it aside so the namespaces can be created (docs/destinations.md#tenant-namespaces)`)
    throw err
  })
  await fsyncDir(dir)
  const metas = new Map<string, UploadMeta>()
  const locks = new Map<string, Promise<unknown>>()
  // Per upload: the sha256 of each chunk as written by a write that ran alone (memory only: after a
  // restart complete() reads the regions back), the writes in progress, and uploads being completed.
  const writtenSha = new Map<string, Map<number, string>>()
  const writing = new Map<string, Set<ChunkWrite>>()
  const closing = new Set<string>()
  // Per upload: each chunk's latest attempt and whether it was checked (memory only, as the hashes).
  const claims = new Map<string, Map<number, ChunkClaim>>()

  // Encapsulated: these answers are problem+json whatever the host app does.
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const problem = toProblem(err, req.id)
    // A 503 is an answer by design (busy: retry later), logged as a warning, not a failure of the sink.
    if (problem.status === 503) req.log.warn({ code: problem.code, ...(outOfFiles(err) ? { err } : {}) }, 'sink request refused: unavailable')
    else if (problem.status >= 500) req.log.error({ err }, 'sink request failed')
    const headers = problemHeaders(err) // a 503's or 429's Retry-After (withExtensions), or when out of files
    if (headers !== undefined) void reply.headers(headers)
    void reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem)
  })
  if (app.hasContentTypeParser('application/octet-stream')) app.removeContentTypeParser('application/octet-stream')
  // Chunk bodies are not parsed: the chunk route streams req.raw into the file itself.
  app.addContentTypeParser('application/octet-stream', (_req, _payload, done) => { done(null) })

  // Node-to-node routes: their successful answers' access lines are at debug (api/app.ts).
  app.addHook('onRoute', (route) => { route.config = { ...route.config, internal: true } })
  app.addHook('onRequest', async (req: FastifyRequest) => {
    verifySinkRequest(req.method, req.url, { authority: opts.authority, trustedSigners: opts.trustedSigners, now, badSignatures: opts.badSignatures }, req.ip ?? 'unknown')
  })

  const metaPath = (id: string): string => join(partialDir, `${id}.json`)
  const dataPath = (id: string): string => join(partialDir, id)

  // Reads of record files under way, per upload. A record forgotten (abort, the sweep's discard) while
  // one runs marks it: what it read may be the record as it was before its files went, and must not be
  // put back in memory (a later begin would answer "exists" for files that are gone).
  const reads = new Map<string, Set<{ forgotten: boolean }>>()
  const forget = (id: string): void => {
    metas.delete(id)
    for (const read of reads.get(id) ?? []) read.forgotten = true
  }

  async function loadMeta (id: string): Promise<UploadMeta | undefined> {
    const cached = metas.get(id)
    if (cached) return cached
    const read = { forgotten: false }
    const pending = reads.get(id) ?? new Set()
    reads.set(id, pending.add(read))
    try {
      const meta = JSON.parse(await readFile(metaPath(id), 'utf8')) as UploadMeta
      // A complete() or abort() that saved a newer record while this read ran: that one holds.
      const raced = metas.get(id)
      if (raced !== undefined) return raced
      // Forgotten meanwhile: the upload is gone (its chunk writes find no upload).
      if (read.forgotten) return undefined
      metas.set(id, meta)
      return meta
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
    } finally {
      pending.delete(read)
      if (pending.size === 0 && reads.get(id) === pending) reads.delete(id)
    }
  }

  async function saveMeta (id: string, meta: UploadMeta): Promise<void> {
    const tmp = `${metaPath(id)}.tmp`
    const fh = await open(tmp, 'w')
    try { await fh.writeFile(JSON.stringify(meta)); await fh.sync() } finally { await fh.close() }
    await rename(tmp, metaPath(id))
    await fsyncDir(partialDir)
    metas.set(id, meta)
  }

  // begin, complete and abort of one upload run one at a time.
  function serialised<T> (id: string, fn: () => Promise<T>): Promise<T> {
    const run = (locks.get(id) ?? Promise.resolve()).then(fn, fn)
    const tail = run.catch(() => {})
    locks.set(id, tail)
    void tail.then(() => { if (locks.get(id) === tail) locks.delete(id) })
    return run
  }

  /** The partial file; gone (aborted meanwhile) is a 404, not a server error. */
  async function openData (id: string, flags: 'r' | 'r+'): Promise<FileHandle> {
    try {
      return await open(dataPath(id), flags)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new SinkUploadNotFound(id)
      throw err
    }
  }

  async function openMeta (id: string): Promise<UploadMeta> {
    const meta = await loadMeta(id)
    if (!meta) throw new SinkUploadNotFound(id)
    return meta
  }

  /**
   * A write that failed for space (ENOSPC, EDQUOT) as the storage-full problem, reported to the guard
   * (which marks the storage failing and releases its ballast); null for any other error.
   */
  function spaceProblem (err: unknown, what: string, bytes: number): Error | null {
    if ((err as { code?: unknown } | null)?.code === 'BWN_ERR_STORAGE_FULL') return err as Error
    if (opts.storage !== undefined ? !opts.storage.failed(err) : !isNoSpace(err)) return null
    const full = opts.storage?.refusal(what, bytes, null) ?? new StorageFull(`The sink cannot store ${what}: its directory is out of space.`)
    ;(full as { cause?: unknown }).cause = err
    return full
  }

  function chunkLength (meta: UploadMeta, index: number): number {
    const offset = index * meta.chunkSize
    if (offset >= meta.totalSize) return 0
    return Math.min(meta.chunkSize, meta.totalSize - offset)
  }

  // The disk sweep discards an abandoned upload in its turn, as abort() would, but only while no chunk
  // write or complete() of it runs: its files go (the record stays when it says completed) and this
  // process forgets it, so a late write finds no upload (docs/node.md#disk-sweep).
  opts.partials?.attach({
    discard: async (id, stale) => await serialised(id, async () => {
      if (!(await stale())) return null
      // A record missing or cut short is as abandoned as the rest; one that cannot be read now (EMFILE,
      // EIO) keeps everything (the error reaches the sweep): a completed upload's record must not go
      // for a passing error.
      let meta: UploadMeta | undefined
      try { meta = await loadMeta(id) } catch (err) {
        if (!(err instanceof SyntaxError)) throw err
        meta = undefined
      }
      if ((writing.get(id)?.size ?? 0) > 0 || closing.has(id)) return null
      const keepRecord = meta?.status === 'completed'
      if (!keepRecord) forget(id)
      writtenSha.delete(id)
      claims.delete(id)
      const removed = await removePartial(partialDir, id, keepRecord)
      if (!keepRecord) forget(id) // again: a read of the record that began while its files were going
      return removed
    }),
    remove: async (id) => await serialised(id, async () => {
      if ((writing.get(id)?.size ?? 0) > 0 || closing.has(id)) return null
      forget(id)
      writtenSha.delete(id)
      claims.delete(id)
      const removed = await removePartial(partialDir, id, false)
      forget(id) // again: a read of the record that began while its files were going
      return removed
    })
  })

  app.put<{ Params: Static<typeof UploadParams>, Querystring: Static<typeof BeginQuery> }>('/sink/uploads/:uploadId', {
    schema: { hide: true, params: UploadParams, querystring: BeginQuery }
  }, async (req, reply) => {
    const { uploadId } = req.params
    const { size, chunkSize, org } = req.query
    const filename = normalizeFilename(req.query.filename)
    const problem = pathProblem(filename) ?? flatProblem(org, filename)
    if (problem) throw new SinkBadFilename(problem)
    return serialised(uploadId, async () => {
      const existing = await loadMeta(uploadId)
      if (existing) {
        // An upload begun before namespaces has none: a repeated begin of it stays in the flat layout.
        const sameNamespace = existing.namespace === undefined || existing.namespace === org
        if (existing.filename !== filename || existing.totalSize !== size || existing.chunkSize !== chunkSize || !sameNamespace) {
          throw new SinkConflict(`upload ${uploadId} exists with other parameters`)
        }
        return reply.code(200).send({ uploadId, status: existing.status })
      }
      // The preallocation below is sparse: it takes no space, the chunks will. A file that would not
      // fit above the watermark now is refused before anything is created (a check: each chunk
      // reserves its own room when it arrives).
      const what = `a ${size}-byte file (upload ${uploadId})`
      await opts.storage?.room(size, what)
      try {
        const fh = await open(dataPath(uploadId), 'w')
        try {
          // Sparse preallocation: the full size is reserved in the file's length so every chunk
          // writes at its own offset, in any order, concurrently.
          await fh.truncate(size)
          await fh.sync()
        } finally { await fh.close() }
        await saveMeta(uploadId, { filename, totalSize: size, chunkSize, status: 'open', ...(org !== undefined ? { namespace: org } : {}) })
      } catch (err) {
        const full = spaceProblem(err, what, size)
        if (full === null) throw err
        // Nothing of the upload stays behind: there was no record before this begin, and one renamed
        // into place just before a failed directory sync would answer a later begin for a file gone.
        await rm(dataPath(uploadId), { force: true }).catch(() => {})
        await rm(`${metaPath(uploadId)}.tmp`, { force: true }).catch(() => {})
        await rm(metaPath(uploadId), { force: true }).catch(() => {})
        throw full
      }
      return reply.code(201).send({ uploadId, status: 'open' })
    })
  })

  /** Why no chunk write may start on the upload now, or null. */
  function writeRefusal (uploadId: string): Error | null {
    const meta = metas.get(uploadId)
    if (meta === undefined) return new SinkUploadNotFound(uploadId)
    if (meta.status !== 'open' || closing.has(uploadId)) return new SinkConflict(`upload ${uploadId} is already completed`)
    return null
  }

  /**
   * Admits a write of chunk `index` by `attempt` (in `slot`) or throws the 409 that refuses it: an
   * earlier attempt than the latest seen is superseded, and the checked attempt writes nothing more. A
   * later attempt becomes the chunk's latest (the coordinator delivers the chunk again). One write per
   * chunk at a time: the admitted one cuts off those still streaming (an earlier attempt's, or an
   * earlier request of its own attempt, which a retry replaces), so a URL never holds more than one
   * window of the in-flight budget however many requests its holder opens.
   */
  function admit (uploadId: string, index: number, attempt: number, slot: number): void {
    const chunks = claims.get(uploadId) ?? new Map<number, ChunkClaim>()
    claims.set(uploadId, chunks)
    const claim = chunks.get(index)
    if (claim !== undefined && attempt < claim.attempt) throw new SinkConflict(`chunk ${index} was delivered again by a later attempt`)
    if (claim !== undefined && attempt === claim.attempt) {
      if (slot !== claim.slot) throw new SinkConflict(`attempt ${attempt} of chunk ${index} writes slot ${claim.slot}, not ${slot}`)
      if (claim.checked) throw new SinkConflict(`chunk ${index} was checked; only a later attempt may write it`)
    } else chunks.set(index, { attempt, slot, checked: false })
    for (const w of writing.get(uploadId) ?? []) {
      if (w.index !== index) continue
      w.controller.abort(new SinkConflict(w.attempt < attempt ? `chunk ${index} is being delivered by a later attempt` : `chunk ${index} is being written again by the same attempt`))
    }
  }

  /**
   * The coordinator checks these chunks now: their latest attempt (or `attempt`, when the check names a
   * later one) writes nothing more, and writes of them still streaming are stopped and settled first,
   * so what the check reads stays what the file holds.
   */
  async function checkpoint (uploadId: string, indices: Iterable<number>, attempt?: number): Promise<void> {
    const chunks = claims.get(uploadId) ?? new Map<number, ChunkClaim>()
    claims.set(uploadId, chunks)
    const sealed = new Set<number>()
    for (const index of indices) {
      const claim = chunks.get(index)
      if (attempt !== undefined && (claim === undefined || claim.attempt < attempt)) chunks.set(index, { attempt, slot: attempt % ATTEMPT_SLOTS_PER_CHUNK, checked: true })
      else if (claim !== undefined && (attempt === undefined || claim.attempt === attempt)) claim.checked = true
      else continue // a later attempt than the one checked holds the chunk: not this check's to close
      sealed.add(index)
    }
    const active = [...writing.get(uploadId) ?? []].filter(w => sealed.has(w.index))
    for (const w of active) w.controller.abort(new SinkConflict(`chunk ${w.index} is being checked`))
    await Promise.all(active.map(async w => await w.done))
  }

  app.put<{ Params: Static<typeof ChunkParams>, Querystring: Static<typeof ChunkQuery> }>('/sink/uploads/:uploadId/chunks/:index', {
    schema: { hide: true, params: ChunkParams, querystring: ChunkQuery }
  }, async (req, reply) => {
    const { uploadId, index } = req.params
    const slot = req.query.slot ?? 0
    const attempt = req.query.attempt ?? slot
    const meta = await openMeta(uploadId)
    const expected = chunkLength(meta, index)
    if (expected === 0) throw new SinkChunkSize(`chunk ${index} is past the end of a ${meta.totalSize}-byte file`)
    if (expected > maxChunkBytes) throw new SinkChunkSize(`chunk ${index} is ${expected} bytes, over this sink's ${maxChunkBytes}`)
    const declared = req.headers['content-length'] === undefined ? null : Number(req.headers['content-length'])
    if (declared !== null && declared !== expected) throw new SinkChunkSize(`chunk ${index} must be ${expected} bytes, got ${declared}`)
    const what = `chunk ${index} of upload ${uploadId} (${expected} bytes)`
    const closed = writeRefusal(uploadId) // a completed upload is a 409 whatever the disk holds
    if (closed !== null) throw closed
    try {
      // Refused early when it cannot fit now; its room is held once it streams (below).
      await opts.storage?.room(expected, what)
      return await writeChunk(req, reply, meta, uploadId, index, attempt, slot, expected, what)
    } catch (err) {
      // Not while another write of this chunk streams: its reservation counted against this one, which
      // would cut it off once admitted, so the refusal says nothing of the disk (a worker sending its own
      // URL twice could make one up). Nor for an attempt that may no longer write the chunk (a later one
      // has, or it was checked): its 507 stands in for the 409 it would have met.
      const sameChunk = [...writing.get(uploadId) ?? []].some(w => w.index === index)
      const claim = claims.get(uploadId)?.get(index)
      const spent = claim !== undefined && (attempt < claim.attempt || (attempt === claim.attempt && claim.checked))
      if (err instanceof StorageFull && !sameChunk && !spent) {
        try { opts.onRefusedForRoom?.(uploadId, index, attempt) } catch (e) { req.log.warn({ err: e }, 'the report of a refusal for room failed') }
      }
      throw err
    }
  })

  async function writeChunk (req: FastifyRequest, reply: FastifyReply, meta: UploadMeta, uploadId: string, index: number, attempt: number, slot: number, expected: number, what: string): Promise<FastifyReply> {
    // From the state check to the registration nothing awaits: a complete() or abort() that starts
    // later sees this write and stops it, wherever it is (also while it waits for the budget).
    const stopped = writeRefusal(uploadId)
    if (stopped !== null) throw stopped
    admit(uploadId, index, attempt, slot)
    // Registered before the first byte lands: overlapping writes of one chunk distrust each other's hash.
    let settle!: () => void
    const write: ChunkWrite = { index, attempt, overlapped: false, controller: new AbortController(), done: new Promise<void>(resolve => { settle = resolve }) }
    const active = writing.get(uploadId) ?? new Set<ChunkWrite>()
    writing.set(uploadId, active)
    const earlier = [...active].filter(other => other.index === index) // cut off by admit() above
    for (const other of earlier) { other.overlapped = true; write.overlapped = true }
    active.add(write)
    writtenSha.get(uploadId)?.delete(index)
    const signal = write.controller.signal
    // Stopped (complete, abort, a later attempt, a check, a stalled body): cut the body off, so a
    // stalled sender cannot hold the upload. A sender that goes away stops the write too.
    signal.addEventListener('abort', () => { req.raw.destroy(signal.reason as Error) }, { once: true })
    const gone = (): void => { write.controller.abort(new SinkConflict('the sender closed the connection')) }
    reply.raw.once('close', gone)
    let release: (() => void) | undefined
    let unreserve: (() => void) | undefined
    try {
      release = await opts.budget?.acquire(STREAM_WINDOW_BYTES, signal)
      signal.throwIfAborted()
      const late = writeRefusal(uploadId)
      if (late !== null) throw late
      // Room for the chunk before a byte of its body is read, held until it is durable or has failed:
      // writes admitted together cannot pass the watermark together (node/storage.ts). Held only by a
      // write that has its window of the in-flight budget, so what slow senders can hold is bounded by
      // that budget's windows (32 of 64 MiB by default), not by the requests they open. The create's
      // check was made when the transfer began; other transfers have used the disk since.
      unreserve = await opts.storage?.reserve(expected, what)
      signal.throwIfAborted()
      // An earlier write of this chunk, cut off above, may still have pieces queued for the disk: they
      // land before this write's first byte, never after its answer (where they would turn a good
      // delivery into a failed check of the worker that made it).
      if (earlier.length > 0) await Promise.race([Promise.all(earlier.map(async other => await other.done)), once(signal, 'abort')])
      signal.throwIfAborted()
      const fh = await openData(uploadId, 'r+')
      let sha256: string
      try {
        signal.throwIfAborted()
        sha256 = await writeAt(fh, req.raw, index * meta.chunkSize, expected, signal, index, {
          ms: writeStallMs,
          cut: () => { write.controller.abort(new BadRequest(`chunk ${index}: less than ${WRITE_PROGRESS_BYTES} bytes of body (or the rest of the chunk) in ${writeStallMs} ms`)) }
        })
        await fh.datasync() // durable before the worker is told it landed
      } catch (err) {
        // Out of space midway: the same refusal as at the door, never a 500; nothing is acknowledged
        // and no hash is kept, so the region counts as unwritten until a later attempt writes it whole.
        throw spaceProblem(err, what, expected) ?? err
      } finally { await fh.close() }
      if (!write.overlapped) {
        const shas = writtenSha.get(uploadId) ?? new Map<number, string>()
        writtenSha.set(uploadId, shas)
        shas.set(index, sha256)
      }
      return reply.header('etag', `"${sha256}"`).send({ index, bytes: expected, sha256 })
    } finally {
      reply.raw.off('close', gone)
      active.delete(write)
      if (active.size === 0 && writing.get(uploadId) === active) writing.delete(uploadId)
      unreserve?.()
      release?.()
      settle()
    }
  }

  app.post<{ Params: Static<typeof UploadParams>, Body: CompleteBodyT }>('/sink/uploads/:uploadId/complete', {
    schema: { hide: true, params: UploadParams, body: CompleteBody }
  }, async (req) => {
    const { uploadId } = req.params
    return serialised(uploadId, async () => {
      const meta = await openMeta(uploadId)
      if (meta.status === 'completed') {
        // Completed before (maybe by a run that crashed before removing the partial file): finish that.
        await rm(dataPath(uploadId), { force: true })
        return { uploadId, filename: meta.finalName }
      }
      const totalChunks = Math.ceil(meta.totalSize / meta.chunkSize)
      let ordered: DeliveredPart[]
      try {
        ordered = partsInOrder(req.body.parts.map(p => ({ index: p.index, attemptSlot: 0, etag: p.etag })), totalChunks)
      } catch (err) {
        throw new SinkConflict((err as Error).message)
      }
      // No write may land once the bytes are checked: refuse new ones, stop those still running
      // (a superseded attempt, one waiting for the budget), then check. Every chunk counts as checked:
      // after a failed check only a later attempt (a redelivery) writes the upload again.
      closing.add(uploadId)
      try {
        const active = [...writing.get(uploadId) ?? []]
        for (const w of active) w.controller.abort(new SinkConflict(`upload ${uploadId} is being completed`))
        await Promise.all(active.map(async w => await w.done))
        await checkpoint(uploadId, ordered.map(p => p.index))
        const shas = writtenSha.get(uploadId)
        const fh = await open(dataPath(uploadId), 'r+')
        try {
          const differ: number[] = []
          for (const part of ordered) {
            const actual = shas?.get(part.index) ?? await hashRegion(fh, part.index * meta.chunkSize, chunkLength(meta, part.index))
            if (actual !== normaliseEtag(part.etag ?? '')) differ.push(part.index)
          }
          if (differ.length > 0) {
            // The chunks to deliver again, so the coordinator redelivers them instead of giving up.
            const listed = differ.slice(0, MAX_LISTED_CHUNKS)
            throw Object.assign(new SinkEtagMismatch(`${differ.length} chunk(s) hold other bytes than their ETags: ${listed.slice(0, 10).join(', ')}${differ.length > 10 ? ', ...' : ''}`), {
              extensions: { chunks: listed, chunk_count: differ.length }
            })
          }
          await fh.sync()
        } finally { await fh.close() }
        // An upload begun before namespaces, with a name inside them, stays out of every organization's.
        const flat = flatProblem(meta.namespace, meta.filename)
        if (flat !== null) throw new SinkBadFilename(flat)
        const target = namespaceDir(dir, meta.namespace)
        // The organization's first file creates its directory: that entry is made durable too (also
        // when an earlier complete() made it and crashed before its fsync).
        if (meta.namespace !== undefined) {
          await mkdir(target, { recursive: true })
          await fsyncDir(join(dir, NAMESPACES_DIR))
        }
        const finalName = await linkUnderFreeName(dataPath(uploadId), target, meta.filename)
        await fsyncDir(target)
        await saveMeta(uploadId, { ...meta, status: 'completed', finalName })
        await unlink(dataPath(uploadId))
        await fsyncDir(partialDir)
        writtenSha.delete(uploadId)
        claims.delete(uploadId)
        req.log.info({ uploadId, namespace: meta.namespace, finalName }, 'sink upload completed')
        return { uploadId, filename: finalName }
      } finally { closing.delete(uploadId) }
    })
  })

  app.delete<{ Params: Static<typeof UploadParams> }>('/sink/uploads/:uploadId', {
    schema: { hide: true, params: UploadParams }
  }, async (req, reply) => {
    const { uploadId } = req.params
    return serialised(uploadId, async () => {
      const meta = await loadMeta(uploadId)
      // A completed file belongs to its owner now: abort only discards unfinished uploads.
      if (meta?.status === 'completed') throw new SinkConflict(`upload ${uploadId} is already completed`)
      // Stopped and settled first: a write that finishes meanwhile would otherwise leave its hash behind.
      const active = [...writing.get(uploadId) ?? []]
      for (const w of active) w.controller.abort(new SinkConflict(`upload ${uploadId} is being aborted`))
      await Promise.all(active.map(async w => await w.done))
      await rm(dataPath(uploadId), { force: true })
      await rm(metaPath(uploadId), { force: true })
      forget(uploadId)
      writtenSha.delete(uploadId)
      claims.delete(uploadId)
      return reply.code(204).send()
    })
  })

  // The sink's own sha256 of one chunk: the coordinator's per-chunk check asks for it instead of
  // pulling the bytes back over the network. The hash a lone write took while writing (fsynced before it
  // answered) when there is one, otherwise the region as it is on disk now. It is the check of the
  // delivery by `attempt` (the chunk's latest when absent): from here on that attempt writes nothing more.
  app.get<{ Params: Static<typeof ChunkParams>, Querystring: Static<typeof ChunkQuery> }>('/sink/uploads/:uploadId/chunks/:index', {
    schema: { hide: true, params: ChunkParams, querystring: ChunkQuery, response: { 200: ChunkHash } }
  }, async (req) => {
    const { uploadId, index } = req.params
    const meta = await openMeta(uploadId)
    const length = chunkLength(meta, index)
    if (length === 0) throw new SinkChunkSize(`chunk ${index} is past the end of a ${meta.totalSize}-byte file`)
    if (meta.status === 'open') await checkpoint(uploadId, [index], req.query.attempt)
    const written = writtenSha.get(uploadId)?.get(index)
    if (written !== undefined) return { index, bytes: length, sha256: written }
    const release = await opts.budget?.acquire(STREAM_WINDOW_BYTES)
    try {
      const fh = meta.status === 'completed' ? await open(sinkFilePath(dir, meta.namespace, meta.finalName!), 'r') : await openData(uploadId, 'r')
      try {
        return { index, bytes: length, sha256: await hashRegion(fh, index * meta.chunkSize, length) }
      } finally { await fh.close() }
    } finally { release?.() }
  })

  // Read-backs in flight per signed URL: a validator's read and its retry (READS_PER_URL).
  const reading = new Map<string, number>()
  app.get<{ Params: Static<typeof UploadParams>, Querystring: Static<typeof ReadQuery> }>('/sink/uploads/:uploadId', {
    schema: { hide: true, params: UploadParams, querystring: ReadQuery }
  }, async (req, reply) => {
    const meta = await openMeta(req.params.uploadId)
    const range = parseRange(req.headers.range, meta.totalSize)
    // A read URL handed out (readTarget) names its range, under the signature: it reads that range only.
    if (req.query.range !== undefined && req.headers.range !== `bytes=${req.query.range}`) throw new RangeNotSatisfiable(`this read URL is for bytes ${req.query.range} only`)
    // Counted per signature (decoded, as it was verified), not per spelling of the URL.
    const key = `${req.params.uploadId}/${req.query[SIGNATURE_PARAM] ?? ''}`
    const held = reading.get(key) ?? 0
    if (held >= READS_PER_URL) throw withExtensions(new Unavailable(`This read URL is being read ${held} times at once already; retry once a read ends.`), { reads_in_flight: held }, { 'retry-after': '1' })
    reading.set(key, held + 1)
    try { return await readBack(req, reply, req.params.uploadId, meta, range) } finally {
      const left = (reading.get(key) ?? 1) - 1
      if (left > 0) reading.set(key, left)
      else reading.delete(key)
    }
  })

  async function readBack (req: FastifyRequest, reply: FastifyReply, uploadId: string, meta: UploadMeta, range: { offset: number, length: number }): Promise<FastifyReply> {
    // The budget's window first, then the file: a read waiting for its window holds no descriptor, and
    // stops waiting when its reader leaves.
    const left = new AbortController()
    const leave = (): void => { left.abort(new SinkConflict('the reader closed the connection')) }
    reply.raw.once('close', leave)
    if (reply.raw.destroyed || req.raw.destroyed) leave() // it left before the listener was there
    let release: (() => void) | undefined
    try { release = await opts.budget?.acquire(STREAM_WINDOW_BYTES, left.signal) } finally { reply.raw.off('close', leave) }
    let fh: FileHandle
    try {
      fh = meta.status === 'completed' ? await open(sinkFilePath(dir, meta.namespace, meta.finalName!), 'r') : await openData(uploadId, 'r')
    } catch (err) { release?.(); throw err }
    let sending = false
    try {
      const { size } = await fh.stat()
      if (size < range.offset + range.length) throw new RangeNotSatisfiable(`only ${Math.max(0, size - range.offset)} bytes readable at ${range.offset}`)
      // From the open handle through reused buffers (no whole range in memory, no fresh buffer per
      // read: ../file-response.ts). From here the route writes the body itself (onResponse hooks run for
      // a response that ends); a failure midway can only cut the connection: the reader sees a short body.
      sending = true
      try {
        reply.hijack()
        reply.raw.writeHead(206, {
          'content-type': 'application/octet-stream',
          'content-range': `bytes ${range.offset}-${range.offset + range.length - 1}/${meta.totalSize}`,
          'content-length': String(range.length)
        })
        await sendFileRange(reply.raw, fh, range.offset, range.length)
      } catch (err) {
        if (!reply.raw.destroyed) reply.raw.destroy()
        logSendCut(req.log, err, 'read-back')
      } finally {
        release?.()
        await fh.close()
      }
      return reply
    } finally { if (!sending) { release?.(); await fh.close() } }
  }
}

function parseRange (header: string | undefined, totalSize: number): { offset: number, length: number } {
  const match = /^bytes=(\d{1,16})-(\d{1,16})$/.exec(header ?? '')
  if (!match) throw new RangeNotSatisfiable('a single Range: bytes=start-end header is required')
  const start = Number(match[1])
  const end = Number(match[2])
  if (end < start || end >= totalSize) throw new RangeNotSatisfiable(`range ${start}-${end} outside a ${totalSize}-byte file`)
  if (end - start + 1 > MAX_READ_BYTES) throw new RangeNotSatisfiable(`at most ${MAX_READ_BYTES} bytes per read`)
  return { offset: start, length: end - start + 1 }
}

/**
 * Streams `body` into `fh` at `offset`: at most `length` bytes (one more is refused at once), hashed as
 * they arrive and written as they arrive (PieceWriter: one positional writev in flight, at most
 * WRITE_BATCH_BYTES queued behind it). Resolves with the sha256 once every byte is written; rejects on
 * a short body or `signal`. `idle.cut()` is called when the body sends less than WRITE_PROGRESS_BYTES
 * (or the rest of the chunk) in `idle.ms`: a trickle is no progress. The sink's own hashing and writing
 * between two marks count too, except that a window ending while a piece is being hashed or written
 * waits one more (a disk that takes a minute over 1 MiB has worse problems than this write).
 */
async function writeAt (fh: FileHandle, body: AsyncIterable<Buffer>, offset: number, length: number, signal: AbortSignal, index: number, idle: { ms: number, cut: () => void }): Promise<string> {
  const hash = streamHash(['sha256'])
  const out = new PieceWriter(fh, offset, WRITE_BATCH_BYTES)
  let received = 0
  let mark = 0 // bytes received when progress was last counted
  // One timer per write, re-armed only when it fires: no timer work per piece.
  let lastPiece = Date.now()
  let busy = false
  let timer: NodeJS.Timeout | undefined
  const arm = (ms: number): void => {
    timer = setTimeout(() => {
      const quiet = Date.now() - lastPiece
      if (busy) arm(idle.ms)
      else if (quiet < idle.ms) arm(idle.ms - quiet)
      else idle.cut()
    }, ms)
    timer.unref()
  }
  arm(idle.ms)
  try {
    for await (const piece of body) {
      busy = true
      received += piece.length
      if (received > length) throw new SinkChunkSize(`chunk ${index} must be ${length} bytes, got more`)
      await hash.update(piece)
      signal.throwIfAborted()
      await out.write(piece)
      if (received - mark >= Math.min(WRITE_PROGRESS_BYTES, length - mark)) { mark = received; lastPiece = Date.now() }
      busy = false
    }
    clearTimeout(timer) // the body is in: the rest is the sink's own work
    if (received !== length) throw new SinkChunkSize(`chunk ${index} must be ${length} bytes, got ${received}`)
    await out.flush()
    signal.throwIfAborted()
    const [sha256] = await hash.digest()
    return sha256!
  } finally {
    clearTimeout(timer)
    hash.abort() // nothing once digested
    await out.settle()
  }
}

async function hashRegion (fh: FileHandle, offset: number, length: number): Promise<string> {
  const hash = streamHash(['sha256'])
  const buf = Buffer.alloc(Math.min(HASH_READ_BYTES, length))
  let done = 0
  try {
    while (done < length) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, length - done), offset + done)
      if (bytesRead === 0) break
      await hash.update(buf.subarray(0, bytesRead)) // copied before the next read reuses buf
      done += bytesRead
    }
    const [sha256] = await hash.digest()
    return sha256!
  } finally { hash.abort() }
}

/** The `org` query parameter that puts an upload in its organization's namespace (none for an upload without one). */
const namespaceQuery = (upload: UploadSpec): Record<string, string> => upload.namespace !== undefined ? { org: upload.namespace } : {}

const normaliseEtag = (etag: string): string => etag.replace(/^W\//, '').replace(/"/g, '').toLowerCase()

/** Hard-links `source` as `name` in `dir`, or `stem-1.ext`, `stem-2.ext`, ...: link() never overwrites. */
/**
 * Links the finished file under `name` in `dir` (a relative path's directories are made first), or the
 * first free `-N` variant of its last segment; answers the relative path it got.
 */
async function linkUnderFreeName (source: string, dir: string, name: string): Promise<string> {
  const { dir: sub, base } = splitPath(name)
  const parent = sub === '' ? dir : join(dir, sub)
  if (sub !== '') {
    // The path was checked (pathProblem): no segment is '..', '.', hidden or empty, so it stays below dir.
    await mkdir(parent, { recursive: true }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST' || err.code === 'ENOTDIR') throw new SinkConflict(`${sub} is a file in the sink directory, not a directory`)
      throw err
    })
    for (let d = sub; d !== ''; d = splitPath(d).dir) await fsyncDir(join(dir, d))
  }
  const ext = extname(base)
  const stem = ext ? base.slice(0, -ext.length) : base
  for (let n = 0; n <= MAX_NAME_SUFFIX; n++) {
    const candidate = n === 0 ? base : `${stem}-${n}${ext}`
    if (Buffer.byteLength(candidate) > MAX_FILENAME_BYTES) break
    const rel = sub === '' ? candidate : `${sub}/${candidate}`
    try {
      await link(source, join(parent, candidate))
      if (sub !== '') await fsyncDir(parent)
      return rel
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      // Linked already, by a complete() that crashed before it could record the name: that is the file.
      if (await sameFile(source, join(parent, candidate))) return rel
    }
  }
  throw new SinkConflict(`no free name for ${name} in the sink`)
}

async function sameFile (a: string, b: string): Promise<boolean> {
  try {
    const [x, y] = await Promise.all([stat(a), stat(b)])
    return x.dev === y.dev && x.ino === y.ino
  } catch { return false }
}

export interface NodeSinkDriverOptions {
  /** The sink node's data server, e.g. http://127.0.0.1:8100 (routes live under /sink). */
  baseUrl: string
  /** The coordinator's hotkey: the sink must trust its address. */
  key: KeyPair
  /** Milliseconds since the epoch; default Date.now. */
  now?: () => number
  fetch?: typeof fetch
  /**
   * The sink is this node's own built-in one (DestinationDriver.attributable): it takes writes only
   * through URLs this node signed, so what it holds is the workers' alone. Not for a `node` destination
   * a tenant points elsewhere.
   */
  own?: boolean
}

/** `{ kind: 'node', uploadId, filename, totalSize, chunkSize, totalChunks }` */
export class NodeSinkDriver implements DestinationDriver {
  readonly kind = 'node' as const
  readonly readableBeforeComplete = true
  readonly attributable: boolean
  readonly #base: URL
  readonly #key: KeyPair
  readonly #now: () => number
  readonly #fetch: typeof fetch

  constructor (options: NodeSinkDriverOptions) {
    this.#base = new URL(options.baseUrl)
    this.#key = options.key
    this.#now = options.now ?? Date.now
    this.#fetch = options.fetch ?? fetch
    this.attributable = options.own === true
  }

  /** Asks the sink which name the file would get in its organization's namespace (sink-names.ts); a 409 there means none fits. */
  async checkName (upload: UploadSpec): Promise<void> {
    await discard(await this.#call('checkName', 'GET', `/sink/names?${new URLSearchParams({ filename: upload.filename, ...namespaceQuery(upload) })}`))
  }

  async begin (upload: UploadSpec): Promise<UploadState> {
    // One upload per transfer: a repeated begin (coordinator restarted before saving the state) is idempotent.
    const uploadId = uploadIdOf(upload.transferId)
    const query = new URLSearchParams({ filename: upload.filename, size: String(upload.totalSize), chunkSize: String(upload.chunkSize), ...namespaceQuery(upload) })
    await discard(await this.#call('begin', 'PUT', `/sink/uploads/${uploadId}?${query}`))
    return {
      kind: 'node', uploadId, filename: upload.filename, totalSize: upload.totalSize, chunkSize: upload.chunkSize, totalChunks: upload.totalChunks,
      ...(upload.namespace !== undefined ? { namespace: upload.namespace } : {})
    }
  }

  /**
   * `attemptNo`: the attempt's number for its chunk (0, 1, 2, ...; the coordinator counts them). Signed
   * with the slot, so the URL names exactly one attempt, and the sink lets no earlier attempt's URL write
   * once a later one's has, nor a checked attempt's. Without one the slot stands for it.
   */
  async target (state: UploadState, chunk: ChunkCoordinates & { attemptNo?: number }, expiresAt: number): Promise<DeliveryTarget> {
    const uploadId = this.#uploadId(state)
    const totalChunks = stateInteger(state, 'totalChunks')
    if (chunk.index < 0 || chunk.index >= totalChunks) throw new RangeError(`chunk ${chunk.index} outside 0..${totalChunks - 1}`)
    const attempt = chunk.attemptNo ?? chunk.attemptSlot
    const url = signUrl({ method: 'PUT', url: new URL(`/sink/uploads/${uploadId}/chunks/${chunk.index}?slot=${chunk.attemptSlot}&attempt=${attempt}`, this.#base), audience: SINK_AUDIENCE, expiresAt, key: this.#key })
    return { method: 'PUT', url, headers: { 'content-type': 'application/octet-stream' }, expiresAt }
  }

  /**
   * Completes the upload; the answer names the file as the sink stored it (a clash in the namespace adds
   * `-1`, ...). Chunks the sink holds other bytes for than their ETags are BWN_ERR_DESTINATION_INCOMPLETE
   * with `chunks`, to be delivered again.
   */
  async complete (state: UploadState, parts: DeliveredPart[]): Promise<CompletedUpload> {
    const uploadId = this.#uploadId(state)
    const totalChunks = stateInteger(state, 'totalChunks')
    const ordered = partsInOrder(parts, totalChunks)
    const body = { parts: ordered.map(p => {
      if (!p.etag) throw new DestinationError('BWN_ERR_DESTINATION_INCOMPLETE', `chunk ${p.index} has no ETag`, { chunks: [p.index] })
      return { index: p.index, etag: p.etag }
    }) }
    const res = await this.#send('complete', 'POST', `/sink/uploads/${uploadId}/complete`, { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
    if (!res.ok) {
      const problem = await errorText(res)
      const chunks = res.status === 409 ? differingChunks(problem, totalChunks) : null
      if (chunks !== null) throw new DestinationError('BWN_ERR_DESTINATION_INCOMPLETE', `sink complete: chunks ${chunks.join(', ')} hold other bytes than delivered`, { status: res.status, chunks })
      throw httpFailure('sink complete', res.status, problem)
    }
    const text = (await boundedBody(res, CONTROL_ANSWER_BYTES, 'sink complete')).toString('utf8')
    let answer: { filename?: unknown } | null = null
    try { answer = JSON.parse(text) } catch {}
    // Completed either way; a sink that names no file leaves the stored name unknown. A name may hold
    // folders (`sub/b-1.txt`): checked as a path, as the sink checks the names it is given.
    return typeof answer?.filename === 'string' && pathProblem(answer.filename) === null ? { storedName: answer.filename } : {}
  }

  async abort (state: UploadState): Promise<void> {
    await discard(await this.#call('abort', 'DELETE', `/sink/uploads/${this.#uploadId(state)}`))
  }

  async readTarget (state: UploadState, offset: number, length: number, expiresAt: number): Promise<ReadBackTarget> {
    checkRange(offset, length, stateInteger(state, 'totalSize'))
    // The range is signed into the URL: its holder (a validator) reads that range, not the whole file.
    const range = `${offset}-${offset + length - 1}`
    const url = signUrl({ method: 'GET', url: new URL(`/sink/uploads/${this.#uploadId(state)}?range=${range}`, this.#base), audience: SINK_AUDIENCE, expiresAt, key: this.#key })
    return { method: 'GET', url, headers: { range: `bytes=${range}` }, expiresAt }
  }

  /**
   * The sink's sha256 of a delivered chunk, computed where the bytes are: none cross the network. It is
   * the check of attempt `attemptNo` (the chunk's latest at the sink when absent): that attempt's URL
   * writes nothing more afterwards.
   */
  async chunkSha256 (state: UploadState, chunk: { index: number, length: number, attemptNo?: number }): Promise<string> {
    const uploadId = this.#uploadId(state)
    const query = chunk.attemptNo !== undefined ? `?attempt=${chunk.attemptNo}` : ''
    const res = await this.#call('chunkSha256', 'GET', `/sink/uploads/${uploadId}/chunks/${chunk.index}${query}`)
    const text = (await boundedBody(res, CONTROL_ANSWER_BYTES, 'sink chunkSha256')).toString('utf8')
    let body: { bytes?: unknown, sha256?: unknown } | null = null
    try { body = JSON.parse(text) } catch {}
    if (body === null || typeof body.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(body.sha256)) {
      throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `sink chunkSha256: no sha256 in the answer for chunk ${chunk.index}`)
    }
    if (body.bytes !== chunk.length) throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `sink chunkSha256: chunk ${chunk.index} is ${String(body.bytes)} bytes there, ${chunk.length} here`)
    return body.sha256
  }

  async readRange (state: UploadState, offset: number, length: number): Promise<Uint8Array> {
    checkRange(offset, length, stateInteger(state, 'totalSize'))
    const res = await this.#call('readRange', 'GET', `/sink/uploads/${this.#uploadId(state)}`, { headers: { range: `bytes=${offset}-${offset + length - 1}` } })
    const bytes = await boundedBody(res, length, 'sink readRange')
    if (bytes.length !== length) throw new DestinationError('BWN_ERR_DESTINATION_UNAVAILABLE', `sink returned ${bytes.length} bytes, asked for ${length}`)
    return bytes
  }

  #uploadId (state: UploadState): string {
    expectKind(state, 'node')
    const id = stateString(state, 'uploadId')
    if (!UPLOAD_ID.test(id)) throw new DestinationError('BWN_ERR_DESTINATION_STATE', 'upload state field uploadId malformed')
    return id
  }

  async #call (what: string, method: string, pathAndQuery: string, init: { body?: string, headers?: Record<string, string> } = {}): Promise<Response> {
    const res = await this.#send(what, method, pathAndQuery, init)
    if (!res.ok) throw httpFailure(`sink ${what}`, res.status, await errorText(res))
    return res
  }

  /** The sink's answer, whatever its status. */
  async #send (what: string, method: string, pathAndQuery: string, init: { body?: string, headers?: Record<string, string> }): Promise<Response> {
    const url = signUrl({ method, url: new URL(pathAndQuery, this.#base), audience: SINK_AUDIENCE, expiresAt: this.#now() + CONTROL_URL_TTL_MS, key: this.#key })
    try {
      return await this.#fetch(url, { method, body: init.body, headers: init.headers, signal: AbortSignal.timeout(CONTROL_URL_TTL_MS) })
    } catch (err) {
      throw networkFailure(`sink ${what}`, err)
    }
  }
}

/** The chunks a sink's BWN_ERR_SINK_ETAG_MISMATCH answer lists, or null when `problem` is no such answer. */
function differingChunks (problem: string, totalChunks: number): number[] | null {
  let body: { code?: unknown, chunks?: unknown } | null = null
  try { body = JSON.parse(problem) } catch { return null }
  if (body?.code !== 'BWN_ERR_SINK_ETAG_MISMATCH' || !Array.isArray(body.chunks) || body.chunks.length === 0) return null
  const chunks = body.chunks as unknown[]
  if (!chunks.every((i): i is number => Number.isSafeInteger(i) && (i as number) >= 0 && (i as number) < totalChunks)) return null
  return chunks
}
