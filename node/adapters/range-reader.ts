// The validator's read-back: one ranged GET through the read URL a coordinator handed over, hashed.
import { createHash } from 'node:crypto'
import type { ReadTarget } from '../../protocol/index.ts'
import type { RangeReader } from '../../actors/validator/verifier.ts'
import { guardedFetch, type AddressPolicy } from './destinations/url-policy.ts'

export const READ_TIMEOUT_MS = 60_000

/** Reads through the destination address policy (url-policy.ts): read URLs come from client destinations. */
export const httpRangeReader = (policy: AddressPolicy): RangeReader => {
  const get = guardedFetch(policy)
  return {
    async sha256Of (target: ReadTarget, length: number) {
      const res = await get(target.url, { method: 'GET', headers: target.headers, signal: AbortSignal.timeout(READ_TIMEOUT_MS) })
      if (res.status !== 206 && res.status !== 200) {
        await res.body?.cancel().catch(() => {})
        throw Object.assign(new Error(`destination answered ${res.status}`), { code: 'read_refused' })
      }
      const hash = createHash('sha256')
      let bytes = 0
      for await (const piece of res.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += piece.byteLength
        if (bytes > length) break
        hash.update(piece)
      }
      return { sha256: hash.digest('hex'), bytes }
    }
  }
}
