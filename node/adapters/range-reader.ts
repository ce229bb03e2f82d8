// The validator's read-back: one ranged GET through the read URL a coordinator handed over, hashed as
// it streams (node:http: large socket pieces, no web-stream copies; never the whole range in memory).
import { createHash } from 'node:crypto'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { ReadTarget } from '../../protocol/index.ts'
import type { RangeReader } from '../../actors/validator/verifier.ts'

export const READ_TIMEOUT_MS = 60_000

function get (target: ReadTarget, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    let url: URL
    try { url = new URL(target.url) } catch (err) { reject(err); return }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') { reject(Object.assign(new Error(`not an http(s) URL: ${url.protocol}`), { code: 'read_refused' })); return }
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: 'GET', headers: target.headers, signal })
    req.once('response', resolve)
    req.once('error', reject)
    req.end()
  })
}

export const httpRangeReader: RangeReader = {
  async sha256Of (target: ReadTarget, length: number) {
    const res = await get(target, AbortSignal.timeout(READ_TIMEOUT_MS))
    if (res.statusCode !== 206 && res.statusCode !== 200) {
      res.destroy()
      throw Object.assign(new Error(`destination answered ${res.statusCode}`), { code: 'read_refused' })
    }
    const hash = createHash('sha256')
    let bytes = 0
    try {
      for await (const piece of res as AsyncIterable<Buffer>) {
        bytes += piece.byteLength
        if (bytes > length) break // more than asked for: the count says so, the hash is moot
        hash.update(piece)
      }
    } finally { res.destroy() }
    return { sha256: hash.digest('hex'), bytes }
  }
}
