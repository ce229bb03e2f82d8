// The validator's read-back: one ranged GET through the read URL a coordinator handed over, hashed as
// it streams (undici's request: Node streams, no web-stream copies, about half node:http's CPU per byte;
// never the whole range in memory),
// through the destination address policy (url-policy.ts): read URLs come from client destinations.
import { request } from 'undici'
import type { ReadTarget } from '../../protocol/index.ts'
import type { RangeReader } from '../../actors/validator/verifier.ts'
import { guardedDispatcher, type AddressPolicy } from './destinations/url-policy.ts'
import { streamHash } from './hash-pool.ts'

export const READ_TIMEOUT_MS = 60_000

export const httpRangeReader = (policy: AddressPolicy): RangeReader => {
  // Every connection passes the policy (names at lookup, IP literals at connect); no redirect is followed.
  const dispatcher = guardedDispatcher(policy)
  return {
    async sha256Of (target: ReadTarget, length: number) {
      let url: URL
      try { url = new URL(target.url) } catch (err) { throw Object.assign(new Error(`bad read URL: ${(err as Error).message}`), { code: 'read_refused' }) }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw Object.assign(new Error(`not an http(s) URL: ${url.protocol}`), { code: 'read_refused' })
      const res = await request(url, { method: 'GET', headers: target.headers, signal: AbortSignal.timeout(READ_TIMEOUT_MS), dispatcher })
      if (res.statusCode !== 206 && res.statusCode !== 200) {
        await res.body.dump().catch(() => {}) // a refusal's body: read (to a limit) and dropped
        throw Object.assign(new Error(`destination answered ${res.statusCode}`), { code: 'read_refused' })
      }
      const hash = streamHash(['sha256'])
      let bytes = 0
      try {
        for await (const piece of res.body as AsyncIterable<Buffer>) {
          bytes += piece.byteLength
          if (bytes > length) break // more than asked for: the count says so, the hash is moot
          await hash.update(piece)
        }
        const [sha256] = await hash.digest()
        return { sha256: sha256!, bytes }
      } finally {
        hash.abort()
        res.body.on('error', () => {}) // closing an unfinished answer reports an abort: expected here
        res.body.destroy()
      }
    }
  }
}
