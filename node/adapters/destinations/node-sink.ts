// The `node` destination: a receiving bwnet node writes delivered files into a directory.
//
// Two halves:
//  - `sinkRoutes`, a Fastify plugin the receiving node mounts on its data HTTP server. Every route needs
//    a URL signed (protocol/signed-url.ts) for this sink (audience `bwnet-sink`, its own authority) by
//    one of its trusted signers (the coordinators it accepts files from): sink-auth.ts. A worker only
//    ever holds the signed URL of one chunk attempt, valid for minutes.
//  - `NodeSinkDriver`, the coordinator's driver. It signs with the coordinator's hotkey and talks to
//    the sink over HTTP for every step (begin, complete, abort, read-back), so the same code serves a
//    sink in this process (devnet) and one on another machine.
//
// Files: `<dir>/.partial/<uploadId>` (preallocated to the full size; chunks are written at their
// offset and fsynced before the answer), `<dir>/.partial/<uploadId>.json` (metadata). complete()
// checks every chunk's sha256 against the ETag the worker reported, fsyncs, and links the file to
// `<dir>/<filename>` (a clash gets `-1`, `-2`, ... before the extension; nothing is overwritten).
import { createHash } from 'node:crypto'
import { mkdir, open, readFile, rename, rm, link, unlink, writeFile } from 'node:fs/promises'
import { join, extname } from 'node:path'
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, FastifyError } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { signUrl, type KeyPair } from '../../../protocol/index.ts'
import { verifySinkRequest, SINK_AUDIENCE, type SinkAuthOptions } from './sink-auth.ts'
import type {
  DestinationDriver, UploadState, UploadSpec, ChunkCoordinates, DeliveryTarget, DeliveredPart, ReadBackTarget } from '../../../actors/destination.ts'
import { toProblem, PROBLEM_CONTENT_TYPE } from '../../../api/problem.ts'
import {
  RangeNotSatisfiable, SinkUploadNotFound,
  SinkBadFilename, SinkConflict, SinkChunkSize, SinkEtagMismatch
} from '../../../api/errors.ts'
import { fsyncDir } from '../blob-store.ts'
import { DestinationError, expectKind, stateString, stateInteger, partsInOrder, checkRange, httpFailure, networkFailure } from './errors.ts'

/** Largest chunk body the sink accepts. */
export const DEFAULT_MAX_CHUNK_BYTES = 256 * 1024 * 1024 // 256 MiB
/** Largest range one read-back request may ask for. */
export const MAX_READ_BYTES = 256 * 1024 * 1024 // 256 MiB
/** Lifetime of the URLs the driver signs for its own calls (begin, complete, abort, read). */
export const CONTROL_URL_TTL_MS = 60_000 // 1 min
/** Attempts to find a free final name before giving up. */
const MAX_NAME_SUFFIX = 1000
const HASH_READ_BYTES = 4 * 1024 * 1024 // 4 MiB reads while verifying chunks at complete
const PARTIAL_DIR = '.partial'
const MAX_FILENAME_BYTES = 255

export const UPLOAD_ID_PATTERN = '^[A-Za-z0-9_-]{1,128}$'
const UPLOAD_ID = new RegExp(UPLOAD_ID_PATTERN)

/**
 * Why a filename is refused, or null when it is safe as one directory entry: no separators, no
 * leading dot (hidden files, `.`, `..`, `.partial`), no control characters, at most 255 bytes.
 */
export function filenameProblem (name: string): string | null {
  if (name.length === 0) return 'empty'
  if (Buffer.byteLength(name) > MAX_FILENAME_BYTES) return `longer than ${MAX_FILENAME_BYTES} bytes`
  if (/[/\\]/.test(name)) return 'contains a path separator'
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains a control character'
  if (name.startsWith('.')) return 'starts with a dot'
  return null
}

interface UploadMeta {
  filename: string
  totalSize: number
  chunkSize: number
  status: 'open' | 'completed'
  /** Name under `dir` once completed. */
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
  maxChunkBytes?: number
}

const UploadParams = Type.Object({ uploadId: Type.String({ pattern: UPLOAD_ID_PATTERN }) })
const ChunkParams = Type.Object({ uploadId: Type.String({ pattern: UPLOAD_ID_PATTERN }), index: Type.Integer({ minimum: 0 }) })
const BeginQuery = Type.Object({
  filename: Type.String({ minLength: 1, maxLength: 1024 }),
  size: Type.Integer({ minimum: 1 }),
  chunkSize: Type.Integer({ minimum: 1 })
}, { additionalProperties: true })
const CompleteBody = Type.Object({
  parts: Type.Array(Type.Object({ index: Type.Integer({ minimum: 0 }), etag: Type.String({ minLength: 1, maxLength: 200 }) }), { maxItems: 1_000_000 })
})
type CompleteBodyT = Static<typeof CompleteBody>

/** Mount on the receiving node's data server: `app.register(sinkRoutes, { dir, trustedSigners })`. */
export const sinkRoutes: FastifyPluginAsync<SinkRoutesOptions> = async function sinkRoutes (app: FastifyInstance, opts: SinkRoutesOptions) {
  const dir = opts.dir
  const partialDir = join(dir, PARTIAL_DIR)
  const now = opts.now ?? Date.now
  const maxChunkBytes = opts.maxChunkBytes ?? DEFAULT_MAX_CHUNK_BYTES
  await mkdir(partialDir, { recursive: true })
  const metas = new Map<string, UploadMeta>()
  const locks = new Map<string, Promise<unknown>>()

  // Encapsulated: these answers are problem+json whatever the host app does.
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const problem = toProblem(err, req.id)
    if (problem.status >= 500) req.log.error({ err }, 'sink request failed')
    void reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem)
  })
  if (app.hasContentTypeParser('application/octet-stream')) app.removeContentTypeParser('application/octet-stream')
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: maxChunkBytes }, (_req, body, done) => { done(null, body) })

  app.addHook('onRequest', async (req: FastifyRequest) => {
    verifySinkRequest(req.method, req.url, { authority: opts.authority, trustedSigners: opts.trustedSigners, now })
  })

  const metaPath = (id: string): string => join(partialDir, `${id}.json`)
  const dataPath = (id: string): string => join(partialDir, id)

  async function loadMeta (id: string): Promise<UploadMeta | undefined> {
    const cached = metas.get(id)
    if (cached) return cached
    try {
      const meta = JSON.parse(await readFile(metaPath(id), 'utf8')) as UploadMeta
      metas.set(id, meta)
      return meta
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
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

  async function openMeta (id: string): Promise<UploadMeta> {
    const meta = await loadMeta(id)
    if (!meta) throw new SinkUploadNotFound(id)
    return meta
  }

  function chunkLength (meta: UploadMeta, index: number): number {
    const offset = index * meta.chunkSize
    if (offset >= meta.totalSize) return 0
    return Math.min(meta.chunkSize, meta.totalSize - offset)
  }

  app.put<{ Params: Static<typeof UploadParams>, Querystring: Static<typeof BeginQuery> }>('/sink/uploads/:uploadId', {
    schema: { params: UploadParams, querystring: BeginQuery }
  }, async (req, reply) => {
    const { uploadId } = req.params
    const { filename, size, chunkSize } = req.query
    const problem = filenameProblem(filename)
    if (problem) throw new SinkBadFilename(problem)
    return serialised(uploadId, async () => {
      const existing = await loadMeta(uploadId)
      if (existing) {
        if (existing.filename !== filename || existing.totalSize !== size || existing.chunkSize !== chunkSize) {
          throw new SinkConflict(`upload ${uploadId} exists with other parameters`)
        }
        return reply.code(200).send({ uploadId, status: existing.status })
      }
      const fh = await open(dataPath(uploadId), 'w')
      try {
        // Sparse preallocation: the full size is reserved in the file's length so every chunk
        // writes at its own offset, in any order, concurrently.
        await fh.truncate(size)
        await fh.sync()
      } finally { await fh.close() }
      await saveMeta(uploadId, { filename, totalSize: size, chunkSize, status: 'open' })
      return reply.code(201).send({ uploadId, status: 'open' })
    })
  })

  app.put<{ Params: Static<typeof ChunkParams>, Body: Buffer }>('/sink/uploads/:uploadId/chunks/:index', {
    schema: { params: ChunkParams },
    bodyLimit: maxChunkBytes
  }, async (req, reply) => {
    const { uploadId, index } = req.params
    const meta = await openMeta(uploadId)
    if (meta.status !== 'open') throw new SinkConflict(`upload ${uploadId} is already completed`)
    const expected = chunkLength(meta, index)
    if (expected === 0) throw new SinkChunkSize(`chunk ${index} is past the end of a ${meta.totalSize}-byte file`)
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0)
    if (body.length !== expected) throw new SinkChunkSize(`chunk ${index} must be ${expected} bytes, got ${body.length}`)
    const fh = await open(dataPath(uploadId), 'r+')
    try {
      await fh.write(body, 0, body.length, index * meta.chunkSize)
      await fh.sync() // durable before the worker is told it landed
    } finally { await fh.close() }
    const sha256 = createHash('sha256').update(body).digest('hex')
    return reply.header('etag', `"${sha256}"`).send({ index, bytes: body.length, sha256 })
  })

  app.post<{ Params: Static<typeof UploadParams>, Body: CompleteBodyT }>('/sink/uploads/:uploadId/complete', {
    schema: { params: UploadParams, body: CompleteBody }
  }, async (req) => {
    const { uploadId } = req.params
    return serialised(uploadId, async () => {
      const meta = await openMeta(uploadId)
      if (meta.status === 'completed') return { uploadId, filename: meta.finalName }
      const totalChunks = Math.ceil(meta.totalSize / meta.chunkSize)
      let ordered: DeliveredPart[]
      try {
        ordered = partsInOrder(req.body.parts.map(p => ({ index: p.index, attemptSlot: 0, etag: p.etag })), totalChunks)
      } catch (err) {
        throw new SinkConflict((err as Error).message)
      }
      const fh = await open(dataPath(uploadId), 'r+')
      try {
        for (const part of ordered) {
          const actual = await hashRegion(fh, part.index * meta.chunkSize, chunkLength(meta, part.index))
          if (actual !== normaliseEtag(part.etag ?? '')) throw new SinkEtagMismatch(`chunk ${part.index} holds sha256 ${actual}, not the reported ETag`)
        }
        await fh.sync()
      } finally { await fh.close() }
      const finalName = await linkUnderFreeName(dataPath(uploadId), dir, meta.filename)
      await fsyncDir(dir)
      await saveMeta(uploadId, { ...meta, status: 'completed', finalName })
      await unlink(dataPath(uploadId))
      await fsyncDir(partialDir)
      req.log.info({ uploadId, finalName }, 'sink upload completed')
      return { uploadId, filename: finalName }
    })
  })

  app.delete<{ Params: Static<typeof UploadParams> }>('/sink/uploads/:uploadId', {
    schema: { params: UploadParams }
  }, async (req, reply) => {
    const { uploadId } = req.params
    return serialised(uploadId, async () => {
      const meta = await loadMeta(uploadId)
      // A completed file belongs to its owner now: abort only discards unfinished uploads.
      if (meta?.status === 'completed') throw new SinkConflict(`upload ${uploadId} is already completed`)
      await rm(dataPath(uploadId), { force: true })
      await rm(metaPath(uploadId), { force: true })
      metas.delete(uploadId)
      return reply.code(204).send()
    })
  })

  app.get<{ Params: Static<typeof UploadParams> }>('/sink/uploads/:uploadId', {
    schema: { params: UploadParams }
  }, async (req, reply) => {
    const meta = await openMeta(req.params.uploadId)
    const range = parseRange(req.headers.range, meta.totalSize)
    const path = meta.status === 'completed' ? join(dir, meta.finalName!) : dataPath(req.params.uploadId)
    const fh = await open(path, 'r')
    try {
      const bytes = Buffer.alloc(range.length)
      const { bytesRead } = await fh.read(bytes, 0, range.length, range.offset)
      if (bytesRead !== range.length) throw new RangeNotSatisfiable(`only ${bytesRead} bytes readable at ${range.offset}`)
      return reply.code(206)
        .header('content-range', `bytes ${range.offset}-${range.offset + range.length - 1}/${meta.totalSize}`)
        .type('application/octet-stream').send(bytes)
    } finally { await fh.close() }
  })
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

async function hashRegion (fh: import('node:fs/promises').FileHandle, offset: number, length: number): Promise<string> {
  const hash = createHash('sha256')
  const buf = Buffer.alloc(Math.min(HASH_READ_BYTES, length))
  let done = 0
  while (done < length) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, length - done), offset + done)
    if (bytesRead === 0) break
    hash.update(buf.subarray(0, bytesRead))
    done += bytesRead
  }
  return hash.digest('hex')
}

const normaliseEtag = (etag: string): string => etag.replace(/^W\//, '').replace(/"/g, '').toLowerCase()

/** Hard-links `source` as `name` in `dir`, or `stem-1.ext`, `stem-2.ext`, ...: link() never overwrites. */
async function linkUnderFreeName (source: string, dir: string, name: string): Promise<string> {
  const ext = extname(name)
  const stem = ext ? name.slice(0, -ext.length) : name
  for (let n = 0; n <= MAX_NAME_SUFFIX; n++) {
    const candidate = n === 0 ? name : `${stem}-${n}${ext}`
    if (Buffer.byteLength(candidate) > MAX_FILENAME_BYTES) break
    try {
      await link(source, join(dir, candidate))
      return candidate
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
  }
  throw new SinkConflict(`no free name for ${name} in the sink directory`)
}

export interface NodeSinkDriverOptions {
  /** The sink node's data server, e.g. http://127.0.0.1:8100 (routes live under /sink). */
  baseUrl: string
  /** The coordinator's hotkey: the sink must trust its address. */
  key: KeyPair
  /** Milliseconds since the epoch; default Date.now. */
  now?: () => number
  fetch?: typeof fetch
}

/** `{ kind: 'node', uploadId, filename, totalSize, chunkSize, totalChunks }` */
export class NodeSinkDriver implements DestinationDriver {
  readonly kind = 'node' as const
  readonly readableBeforeComplete = true
  readonly #base: URL
  readonly #key: KeyPair
  readonly #now: () => number
  readonly #fetch: typeof fetch

  constructor (options: NodeSinkDriverOptions) {
    this.#base = new URL(options.baseUrl)
    this.#key = options.key
    this.#now = options.now ?? Date.now
    this.#fetch = options.fetch ?? fetch
  }

  /** Asks the sink which name the file would get (sink-names.ts); a 409 there means none fits. */
  async checkName (upload: UploadSpec): Promise<void> {
    await this.#call('checkName', 'GET', `/sink/names?${new URLSearchParams({ filename: upload.filename })}`)
  }

  async begin (upload: UploadSpec): Promise<UploadState> {
    // One upload per transfer: a repeated begin (coordinator restarted before saving the state) is idempotent.
    const uploadId = UPLOAD_ID.test(upload.transferId) ? upload.transferId : createHash('sha256').update(upload.transferId).digest('hex')
    const query = new URLSearchParams({ filename: upload.filename, size: String(upload.totalSize), chunkSize: String(upload.chunkSize) })
    await this.#call('begin', 'PUT', `/sink/uploads/${uploadId}?${query}`)
    return { kind: 'node', uploadId, filename: upload.filename, totalSize: upload.totalSize, chunkSize: upload.chunkSize, totalChunks: upload.totalChunks }
  }

  async target (state: UploadState, chunk: ChunkCoordinates, expiresAt: number): Promise<DeliveryTarget> {
    const uploadId = this.#uploadId(state)
    const totalChunks = stateInteger(state, 'totalChunks')
    if (chunk.index < 0 || chunk.index >= totalChunks) throw new RangeError(`chunk ${chunk.index} outside 0..${totalChunks - 1}`)
    // The slot is signed too, so the URL names exactly one attempt.
    const url = signUrl({ method: 'PUT', url: new URL(`/sink/uploads/${uploadId}/chunks/${chunk.index}?slot=${chunk.attemptSlot}`, this.#base), audience: SINK_AUDIENCE, expiresAt, key: this.#key })
    return { method: 'PUT', url, headers: { 'content-type': 'application/octet-stream' }, expiresAt }
  }

  async complete (state: UploadState, parts: DeliveredPart[]): Promise<void> {
    const uploadId = this.#uploadId(state)
    const ordered = partsInOrder(parts, stateInteger(state, 'totalChunks'))
    const body = { parts: ordered.map(p => {
      if (!p.etag) throw new DestinationError('BWN_ERR_DESTINATION_INCOMPLETE', `chunk ${p.index} has no ETag`)
      return { index: p.index, etag: p.etag }
    }) }
    await this.#call('complete', 'POST', `/sink/uploads/${uploadId}/complete`, { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
  }

  async abort (state: UploadState): Promise<void> {
    await this.#call('abort', 'DELETE', `/sink/uploads/${this.#uploadId(state)}`)
  }

  async readTarget (state: UploadState, offset: number, length: number, expiresAt: number): Promise<ReadBackTarget> {
    checkRange(offset, length, stateInteger(state, 'totalSize'))
    const url = signUrl({ method: 'GET', url: new URL(`/sink/uploads/${this.#uploadId(state)}`, this.#base), audience: SINK_AUDIENCE, expiresAt, key: this.#key })
    return { method: 'GET', url, headers: { range: `bytes=${offset}-${offset + length - 1}` }, expiresAt }
  }

  async readRange (state: UploadState, offset: number, length: number): Promise<Uint8Array> {
    checkRange(offset, length, stateInteger(state, 'totalSize'))
    const res = await this.#call('readRange', 'GET', `/sink/uploads/${this.#uploadId(state)}`, { headers: { range: `bytes=${offset}-${offset + length - 1}` } })
    const bytes = new Uint8Array(await res.arrayBuffer())
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
    const url = signUrl({ method, url: new URL(pathAndQuery, this.#base), audience: SINK_AUDIENCE, expiresAt: this.#now() + CONTROL_URL_TTL_MS, key: this.#key })
    let res: Response
    try {
      res = await this.#fetch(url, { method, body: init.body, headers: init.headers, signal: AbortSignal.timeout(CONTROL_URL_TTL_MS) })
    } catch (err) {
      throw networkFailure(`sink ${what}`, err)
    }
    if (!res.ok) throw httpFailure(`sink ${what}`, res.status, await res.text().catch(() => ''))
    return res
  }
}
