// The validator's read-back: one ranged GET through the read URL a coordinator handed over, hashed as
// it streams (node:http: large socket pieces, no web-stream copies; never the whole range in memory),
// through the destination address policy (url-policy.ts): read URLs come from client destinations.
import type { IncomingMessage } from 'node:http'
import type { ReadTarget } from '../../protocol/index.ts'
import type { RangeReader } from '../../actors/validator/verifier.ts'
import { guardedRequest, type AddressPolicy } from './destinations/url-policy.ts'
import { streamHash } from './hash-pool.ts'

export const READ_TIMEOUT_MS = 60_000

export const httpRangeReader = (policy: AddressPolicy): RangeReader => {
  const request = guardedRequest(policy)
  const get = (target: ReadTarget, signal: AbortSignal): Promise<IncomingMessage> => new Promise((resolve, reject) => {
    let url: URL
    try { url = new URL(target.url) } catch (err) { reject(err); return }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') { reject(Object.assign(new Error(`not an http(s) URL: ${url.protocol}`), { code: 'read_refused' })); return }
    try {
      const req = request(url, { method: 'GET', headers: target.headers, signal })
      req.once('response', resolve)
      req.once('error', reject)
      req.end()
    } catch (err) { reject(err) }
  })
  return {
    async sha256Of (target: ReadTarget, length: number) {
      const res = await get(target, AbortSignal.timeout(READ_TIMEOUT_MS))
      if (res.statusCode !== 206 && res.statusCode !== 200) {
        res.destroy()
        throw Object.assign(new Error(`destination answered ${res.statusCode}`), { code: 'read_refused' })
      }
      const hash = streamHash(['sha256'])
      let bytes = 0
      try {
        for await (const piece of res as AsyncIterable<Buffer>) {
          bytes += piece.byteLength
          if (bytes > length) break // more than asked for: the count says so, the hash is moot
          await hash.update(piece)
        }
        const [sha256] = await hash.digest()
        return { sha256: sha256!, bytes }
      } finally { hash.abort(); res.destroy() }
    }
  }
}
