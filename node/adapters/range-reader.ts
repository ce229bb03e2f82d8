// The validator's read-back: one ranged GET through the read URL a coordinator handed over, hashed as
// it streams (undici's request: Node streams, no web-stream copies, about half node:http's CPU per byte;
// never the whole range in memory),
// through the destination address policy (url-policy.ts): read URLs come from client destinations.
import { request } from 'undici'
import type { ReadTarget } from '../../protocol/index.ts'
import type { RangeReader } from '../../actors/validator/verifier.ts'
import { guardedDispatcher, type AddressPolicy } from './destinations/url-policy.ts'
import { sha256OfPieces } from './hash-pool.ts'

export const READ_TIMEOUT_MS = 60_000

export interface RangeReaderOptions {
  /** Time for the whole read-back, answer and body; default READ_TIMEOUT_MS. */
  timeoutMs?: number
}

const readError = (code: 'read_refused' | 'read_timeout', message: string): Error => Object.assign(new Error(message), { code })

export const httpRangeReader = (policy: AddressPolicy, options: RangeReaderOptions = {}): RangeReader => {
  // Every connection passes the policy (names at lookup, IP literals at connect); no redirect is followed.
  const dispatcher = guardedDispatcher(policy)
  const timeoutMs = options.timeoutMs ?? READ_TIMEOUT_MS
  return {
    async sha256Of (target: ReadTarget, length: number) {
      let url: URL
      try { url = new URL(target.url) } catch (err) { throw readError('read_refused', `bad read URL: ${(err as Error).message}`) }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw readError('read_refused', `not an http(s) URL: ${url.protocol}`)
      const signal = AbortSignal.timeout(timeoutMs)
      // undici rejects with the signal's reason (a DOMException, numeric code): named here, in this module's terms.
      const timedOut = (err: unknown): Error => signal.aborted ? readError('read_timeout', `no whole answer within ${timeoutMs} ms`) : err as Error
      let res: Awaited<ReturnType<typeof request>>
      try { res = await request(url, { method: 'GET', headers: target.headers, signal, dispatcher }) } catch (err) { throw timedOut(err) }
      const body = res.body
      body.on('error', () => {}) // closing an unfinished answer reports an abort: expected here
      try {
        if (res.statusCode !== 206 && res.statusCode !== 200) throw readError('read_refused', `destination answered ${res.statusCode}`)
        // More than asked for, declared up front: the count says so without reading a byte.
        const declared = Number(res.headers['content-length'] ?? NaN)
        if (Number.isSafeInteger(declared) && declared > length) return { sha256: '', bytes: declared }
        // More than asked for shows in the count; the hash is then moot.
        try { return await sha256OfPieces(body, length) } catch (err) { throw timedOut(err) }
      } finally { body.destroy() }
    }
  }
}
