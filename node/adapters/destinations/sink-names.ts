// The name a finished file will get in a node sink, in its organization's namespace, asked before any
// byte moves: a transfer whose
// filename has no free name in the sink (it is taken and no `name-N.ext` variant fits in 255 bytes) is
// refused when it is created, not after its delivery. Same signed-URL rule as every sink route
// (sink-auth.ts); the naming rule is node-sink.ts's (`name`, then `name-1.ext`, `name-2.ext`, …).
//   GET /sink/names?filename=…&org=…  → 200 { filename: <the name it would get now> } | 409 | 400
// Only the organization's own directory is looked at: the answer is the same whatever other
// organizations hold (docs/destinations.md#tenant-namespaces).
// This is a check, not a reservation: a name taken between create and complete still gets the next
// free variant at complete.
import { stat } from 'node:fs/promises'
import { join, extname } from 'node:path'
import type { FastifyError, FastifyPluginAsync } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { toProblem, problemHeaders, outOfFiles, PROBLEM_CONTENT_TYPE } from '../../../api/problem.ts'
import { SinkBadFilename, SinkConflict } from '../../../api/errors.ts'
import { verifySinkRequest, type SinkAuthOptions } from './sink-auth.ts'
import { pathProblem, splitPath, normalizeFilename, MAX_FILENAME_BYTES } from './filename.ts'
import { namespaceDir, NAMESPACE_PATTERN } from './node-sink.ts'

const MAX_NAME_SUFFIX = 1000

/**
 * The name `filename` (a name or a relative path) would get in `dir` now, or null when it and every
 * variant of its last segment that fits are taken, or a directory on its path is a file.
 */
export async function freeNameFor (dir: string, filename: string): Promise<string | null> {
  const { dir: sub, base } = splitPath(filename)
  const ext = extname(base)
  const stem = ext ? base.slice(0, -ext.length) : base
  for (let n = 0; n <= MAX_NAME_SUFFIX; n++) {
    const candidate = n === 0 ? base : `${stem}-${n}${ext}`
    if (Buffer.byteLength(candidate) > MAX_FILENAME_BYTES) return null
    const rel = sub === '' ? candidate : `${sub}/${candidate}`
    try { await stat(join(dir, rel)) } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'ENOENT') return rel
      if (code === 'ENOTDIR') return null
      throw err
    }
  }
  return null
}

export interface SinkNameRoutesOptions extends SinkAuthOptions { dir: string }

const NameQuery = Type.Object({
  filename: Type.String({ minLength: 1, maxLength: 1024 }),
  org: Type.Optional(Type.String({ pattern: NAMESPACE_PATTERN }))
}, { additionalProperties: true })

export const sinkNameRoutes: FastifyPluginAsync<SinkNameRoutesOptions> = async function sinkNameRoutes (app, opts) {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const problem = toProblem(err, req.id)
    if (problem.status === 503) req.log.warn({ code: problem.code, ...(outOfFiles(err) ? { err } : {}) }, 'sink name check refused: unavailable')
    else if (problem.status >= 500) req.log.error({ err }, 'sink name check failed')
    const headers = problemHeaders(err) // a 503's or 429's Retry-After (withExtensions), or when out of files
    if (headers !== undefined) void reply.headers(headers)
    void reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem)
  })
  app.addHook('onRequest', async (req) => { verifySinkRequest(req.method, req.url, opts, req.ip ?? 'unknown') })
  app.get<{ Querystring: Static<typeof NameQuery> }>('/sink/names', { config: { internal: true }, schema: { hide: true, querystring: NameQuery } }, async (req) => {
    const filename = normalizeFilename(req.query.filename)
    const problem = pathProblem(filename)
    if (problem !== null) throw new SinkBadFilename(problem)
    const name = await freeNameFor(namespaceDir(opts.dir, req.query.org), filename)
    if (name === null) throw new SinkConflict(`${filename} is taken in the sink and no variant of it fits in ${MAX_FILENAME_BYTES} bytes`)
    return { filename: name }
  })
}
