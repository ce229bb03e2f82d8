// The coordinator's chunk data endpoint: workers pull staged chunk bytes with task-scoped signed
// URLs (signed by this node's hotkey for audience `bwnet-data` and this node's own authority, naming
// transfer, chunk and attempt, expiring with the offer). The same signed path is the key of a swarm
// bulk read, the fallback when HTTP is not reachable; it verifies against the same authority.
// Over HTTP a chunk streams from its blob file through reused buffers (no whole chunk in memory, no
// fresh buffer per read: node/adapters/file-response.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { open, type FileHandle } from 'node:fs/promises'
import { Type } from '@sinclair/typebox'
import { signUrl, verifySignedUrl, authorityOf, requestTarget, type KeyPair } from '../../protocol/index.ts'
import type { Store, BlobStore, Clock } from '../../actors/ports.ts'
import type { ReadPhase } from '../../actors/transfer/state.ts'
import { keys, type ChunkRow } from '../../actors/transfer/model.ts'
import { sendFileRange, logSendCut } from '../adapters/file-response.ts'
import type { BadSignatures } from '../adapters/bad-signatures.ts'
import { SignedUrlRequired, SignedUrlExpired, SignedUrlInvalid, TransferNotFound, Unavailable, withExtensions } from '../../api/errors.ts'

export const DATA_PREFIX = '/data/transfers'

export const DATA_AUDIENCE = 'bwnet-data'

export interface ChunkSource {
  key: KeyPair
  store: Store
  blobs: BlobStore
  clock: Clock
  /** The base URL workers reach this endpoint at (the public URL, else the listen address). */
  baseUrl: () => string
  /**
   * Told of every response of a staged chunk under a valid signed path (HTTP or bulk) as it begins
   * (`start`), and as it sends its last byte (`done`) or ends short (`cut`): the coordinator's own
   * evidence that the attempt's worker acts on its offer, whatever its orchestrator relays.
   */
  onRead?: (transferId: string, attemptId: string, phase: ReadPhase) => void
  /** Failed checks per remote address (HTTP): past its limit an address is refused unchecked (429). */
  badSignatures?: BadSignatures
}

export function chunkPath (transferId: string, index: number, attemptId: string): string {
  return `${DATA_PREFIX}/${transferId}/chunks/${index}?attempt=${attemptId}`
}

export function signChunkSource (src: ChunkSource, transferId: string, index: number, attemptId: string, expiresAt: number): { url: string, path: string } {
  const url = signUrl({ method: 'GET', url: new URL(chunkPath(transferId, index, attemptId), src.baseUrl()), audience: DATA_AUDIENCE, expiresAt, key: src.key })
  return { url, path: requestTarget(url) }
}

const PATH_RE = new RegExp(`^${DATA_PREFIX}/([0-9a-f-]{36})/chunks/([0-9]{1,9})$`)

/** A staged chunk a signed path names: its sha256, and the transfer, chunk and attempt the path was signed for. */
export interface SignedChunk { sha256: string, transferId: string, index: number, attemptId: string }

/**
 * Tells the coordinator of a response of the attempt's chunk: begun, whole, or cut. It counts the chunk
 * as read while a response is served and once one sent its last byte (a longer overdue bound, no strike
 * for a stall); a request that read nothing (a GET cut after its head, a bulk read dropped) leaves it
 * as it was. A failing report never fails the response.
 */
export function reportRead (src: ChunkSource, chunk: SignedChunk, phase: ReadPhase, log?: { warn (obj: object, msg: string): void }): void {
  try { src.onRead?.(chunk.transferId, chunk.attemptId, phase) } catch (err) { log?.warn({ err, phase }, 'the report of a chunk read failed') }
}

/** One key per chunk attempt a verified path names, however its query is spelled. */
const readKey = (chunk: SignedChunk): string => `${chunk.transferId}/${chunk.index}/${chunk.attemptId}`

/** The sha256 of the staged chunk a signed path names, or an error saying why not. */
export async function signedChunkSha (src: ChunkSource, signedPath: string): Promise<string> {
  return (await signedChunk(src, signedPath)).sha256
}

/**
 * The staged chunk a signed path names, or an error saying why not. `from`: the remote address of an
 * HTTP request (a bulk read's peer pays in its score instead, node/roles).
 */
export async function signedChunk (src: ChunkSource, signedPath: string, from?: string): Promise<SignedChunk> {
  const bad = from !== undefined ? src.badSignatures : undefined
  const check = verifySignedUrl({
    method: 'GET', url: signedPath, authority: authorityOf(src.baseUrl()), audience: DATA_AUDIENCE, now: src.clock.now(), trustedSigners: new Set([src.key.address]),
    ...(bad !== undefined ? { beforeFullCheck: () => { bad.admit(from!) }, fullCheckFailed: () => { bad.failed(from!) } } : {})
  })
  if (!check.ok) {
    if (check.reason === 'unsigned') throw new SignedUrlRequired()
    if (check.reason === 'expired') throw new SignedUrlExpired()
    throw new SignedUrlInvalid(check.reason)
  }
  const m = PATH_RE.exec(new URL(signedPath, 'http://x').pathname)
  const attempt = check.params.get('attempt')
  if (m === null || !attempt) throw new SignedUrlInvalid('malformed')
  const chunk = await src.store.table<ChunkRow>('chunks').get(keys.chunk(m[1]!, Number(m[2])))
  if (chunk === undefined) throw new TransferNotFound('The chunk is no longer staged here.')
  return { sha256: chunk.sha256, transferId: m[1]!, index: Number(m[2]), attemptId: attempt }
}

/** A blob store that keeps each blob in a file of its own (FileBlobStore): its chunks can be streamed. */
const filesOf = (blobs: BlobStore): ((sha256: string) => string) | null =>
  typeof (blobs as { pathOf?: unknown }).pathOf === 'function' ? (sha) => (blobs as unknown as { pathOf (sha: string): string }).pathOf(sha) : null

/** Opens the staged chunk's file for streaming: no whole chunk in memory. Null when the store has no files. */
async function openChunkFile (src: ChunkSource, chunk: SignedChunk): Promise<{ fh: FileHandle, size: number } | null> {
  const pathOf = filesOf(src.blobs)
  if (pathOf === null) return null
  let fh: FileHandle
  try { fh = await open(pathOf(chunk.sha256), 'r') } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new TransferNotFound('The chunk is no longer staged here.')
    throw err
  }
  try {
    const { size } = await fh.stat()
    return { fh, size }
  } catch (err) { await fh.close(); throw err }
}

/**
 * HTTP responses one chunk attempt's URL may have in flight at once: a worker's read, and its retry while
 * the server still winds the first one down. More would let the URL's holder open a response (a file and
 * its buffers) per request for as long as each keeps the minimum rate. (The bulk channel bounds its own:
 * 8 reads at once per connection.)
 */
export const MAX_READS_PER_URL = 2

export function dataRoutes (src: ChunkSource) {
  return async function (app: FastifyInstance): Promise<void> {
    const reading = new Map<string, number>() // chunk attempt (readKey) → responses in flight
    app.get(`${DATA_PREFIX}/:transferId/chunks/:index`, {
      // A GET only: a HEAD moves nothing (the URL is signed for GET, and no read is reported without the bytes).
      exposeHeadRoute: false,
      config: { internal: true },
      schema: {
        hide: true,
        params: Type.Object({ transferId: Type.String({ format: 'uuid' }), index: Type.Integer({ minimum: 0 }) }),
        querystring: Type.Object({ attempt: Type.String() }, { additionalProperties: true })
      }
    }, async (req, reply) => {
      const chunk = await signedChunk(src, req.url, req.ip ?? 'unknown') // no address: the socket closed already
      // Counted per chunk attempt, not per spelling of its URL (the signature covers the decoded query).
      const key = readKey(chunk)
      const held = reading.get(key) ?? 0
      if (held >= MAX_READS_PER_URL) {
        throw withExtensions(new Unavailable(`This chunk URL is being read ${held} times at once already; retry once a read ends.`), { reads_in_flight: held }, { 'retry-after': '1' })
      }
      reading.set(key, held + 1)
      try { return await answer(req, reply, chunk) } finally {
        const left = (reading.get(key) ?? 1) - 1
        if (left > 0) reading.set(key, left)
        else reading.delete(key)
      }
    })

    async function answer (req: FastifyRequest, reply: FastifyReply, chunk: SignedChunk): Promise<FastifyReply> {
      const file = await openChunkFile(src, chunk)
      if (file !== null) {
        // From here the route writes the body itself (onResponse hooks run for a response that ends);
        // a failure midway can only cut the connection, which the worker sees as a short body.
        reply.hijack()
        reportRead(src, chunk, 'start', req.log)
        try {
          reply.raw.writeHead(200, { 'content-type': 'application/octet-stream', 'cache-control': 'no-store', 'content-length': String(file.size) })
          await sendFileRange(reply.raw, file.fh, 0, file.size)
          reportRead(src, chunk, 'done', req.log)
        } catch (err) {
          reportRead(src, chunk, 'cut', req.log)
          if (!reply.raw.destroyed) reply.raw.destroy()
          logSendCut(req.log, err, 'chunk data response')
        } finally { await file.fh.close() }
        return reply
      }
      const bytes = await src.blobs.get(chunk.sha256)
      if (bytes === undefined) throw new TransferNotFound('The chunk is no longer staged here.')
      // Whole once the answer has been handed to the socket ('finish'); cut when it closes before that.
      if (reply.raw.destroyed || req.raw.destroyed) return reply // its reader left meanwhile: nothing to send, nothing read
      reportRead(src, chunk, 'start', req.log)
      let finished = false
      reply.raw.once('finish', () => { finished = true; reportRead(src, chunk, 'done', req.log) })
      reply.raw.once('close', () => { if (!finished) reportRead(src, chunk, 'cut', req.log) })
      return reply.type('application/octet-stream').header('cache-control', 'no-store').send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    }
  }
}
