// The coordinator's chunk data endpoint: workers pull staged chunk bytes with task-scoped signed
// URLs (signed by this node's hotkey for audience `bwnet-data` and this node's own authority, naming
// transfer, chunk and attempt, expiring with the offer). The same signed path is the key of a swarm
// bulk read, the fallback when HTTP is not reachable; it verifies against the same authority.
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { signUrl, verifySignedUrl, authorityOf, requestTarget, type KeyPair } from '../../protocol/index.ts'
import type { Store, BlobStore, Clock } from '../../actors/ports.ts'
import { keys, type ChunkRow } from '../../actors/transfer/model.ts'
import { SignedUrlRequired, SignedUrlExpired, SignedUrlInvalid, TransferNotFound } from '../../api/errors.ts'

export const DATA_PREFIX = '/data/transfers'

export const DATA_AUDIENCE = 'bwnet-data'

export interface ChunkSource {
  key: KeyPair
  store: Store
  blobs: BlobStore
  clock: Clock
  /** The base URL workers reach this endpoint at (the public URL, else the listen address). */
  baseUrl: () => string
}

export function chunkPath (transferId: string, index: number, attemptId: string): string {
  return `${DATA_PREFIX}/${transferId}/chunks/${index}?attempt=${attemptId}`
}

export function signChunkSource (src: ChunkSource, transferId: string, index: number, attemptId: string, expiresAt: number): { url: string, path: string } {
  const url = signUrl({ method: 'GET', url: new URL(chunkPath(transferId, index, attemptId), src.baseUrl()), audience: DATA_AUDIENCE, expiresAt, key: src.key })
  return { url, path: requestTarget(url) }
}

const PATH_RE = new RegExp(`^${DATA_PREFIX}/([0-9a-f-]{36})/chunks/([0-9]{1,9})$`)

/** The staged bytes a signed path names, or an error saying why not. */
export async function readSignedChunk (src: ChunkSource, signedPath: string): Promise<Uint8Array> {
  const check = verifySignedUrl({
    method: 'GET', url: signedPath, authority: authorityOf(src.baseUrl()), audience: DATA_AUDIENCE, now: src.clock.now(), trustedSigners: new Set([src.key.address])
  })
  if (!check.ok) {
    if (check.reason === 'unsigned') throw new SignedUrlRequired()
    if (check.reason === 'expired') throw new SignedUrlExpired()
    throw new SignedUrlInvalid(check.reason)
  }
  const m = PATH_RE.exec(new URL(signedPath, 'http://x').pathname)
  if (m === null || !check.params.get('attempt')) throw new SignedUrlInvalid('malformed')
  const chunk = await src.store.table<ChunkRow>('chunks').get(keys.chunk(m[1]!, Number(m[2])))
  const bytes = chunk === undefined ? undefined : await src.blobs.get(chunk.sha256)
  if (bytes === undefined) throw new TransferNotFound('The chunk is no longer staged here.')
  return bytes
}

export function dataRoutes (src: ChunkSource) {
  return async function (app: FastifyInstance): Promise<void> {
    app.get(`${DATA_PREFIX}/:transferId/chunks/:index`, {
      schema: {
        hide: true,
        params: Type.Object({ transferId: Type.String({ format: 'uuid' }), index: Type.Integer({ minimum: 0 }) }),
        querystring: Type.Object({ attempt: Type.String() }, { additionalProperties: true })
      }
    }, async (req, reply) => {
      const bytes = await readSignedChunk(src, req.url)
      return reply.type('application/octet-stream').header('cache-control', 'no-store').send(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    })
  }
}
