// An oversized chunk body, as a hostile or broken client sends it: one POST /transfers/{id}/chunks
// whose body (chunked transfer encoding, so no Content-Length gives it away; or with a Content-Length
// that says so) is far longer than the chunk's planned length. It is bounded: it stops sending at `maxBytes`, after `timeoutMs`, or as
// soon as the server answers or closes, whichever comes first. Used by the ingest bench's flood
// phase and by the memory-DoS regression test.
import { request } from 'node:http'

export interface FloodOptions {
  /** API base URL (http://127.0.0.1:port). */
  baseUrl: string
  key: string
  transferId: string
  index: number
  /** The chunk's planned length: the first byte past it is "the excess byte". */
  expectedBytes: number
  /** Most bytes to send (default 1 GiB). */
  maxBytes?: number
  /** Gives up after this long (default 60 s). */
  timeoutMs?: number
  /** Bytes per write (default 1 MiB; one buffer reused, so the sender's memory stays flat). */
  pieceBytes?: number
  /** Declare the body's length (`maxBytes`) in Content-Length instead of sending it chunked. */
  contentLength?: boolean
}

export interface FloodResult {
  status: number | null
  code: string | null
  /** Bytes handed to the socket before the answer (or the end). */
  bytesSent: number
  /** Whether the excess byte was sent at all. */
  excessSent: boolean
  /** From the write that carried the first excess byte to the answer's status line; null without both. */
  msFromExcessToAnswer: number | null
  /** The connection ended (closed or reset) after the answer. */
  closed: boolean
  error: string | null
}

export async function floodChunk (o: FloodOptions): Promise<FloodResult> {
  const maxBytes = o.maxBytes ?? 1024 ** 3
  const timeoutMs = o.timeoutMs ?? 60_000
  const piece = Buffer.alloc(o.pieceBytes ?? 1024 * 1024, 0x5a)
  const url = new URL(`/transfers/${o.transferId}/chunks`, o.baseUrl)
  return new Promise<FloodResult>((resolve) => {
    const out: FloodResult = { status: null, code: null, bytesSent: 0, excessSent: false, msFromExcessToAnswer: null, closed: false, error: null }
    let excessAt: number | null = null
    let answered = false
    let done = false
    const finish = (): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      req.destroy()
      resolve(out)
    }
    const timer = setTimeout(() => { out.error ??= `no answer within ${timeoutMs} ms`; finish() }, timeoutMs)
    const req = request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${o.key}`, 'content-type': 'application/octet-stream', 'x-chunk-index': String(o.index),
        ...(o.contentLength === true ? { 'content-length': String(maxBytes) } : { 'transfer-encoding': 'chunked' })
      }
    })
    req.on('response', (res) => {
      answered = true
      out.status = res.statusCode ?? null
      if (excessAt !== null) out.msFromExcessToAnswer = performance.now() - excessAt
      const parts: Buffer[] = []
      res.on('data', (c: Buffer) => { if (parts.length < 64) parts.push(c) })
      res.on('end', () => {
        try { out.code = JSON.parse(Buffer.concat(parts).toString('utf8')).code ?? null } catch {}
        out.closed = true
        finish()
      })
      res.on('error', () => { out.closed = true; finish() })
    })
    req.on('error', (err) => { if (!answered) out.error = err.message; out.closed = true; finish() })
    req.on('close', () => { if (answered) out.closed = true })
    const send = (): void => {
      while (!answered && !done && out.bytesSent < maxBytes) {
        const n = Math.min(piece.length, maxBytes - out.bytesSent)
        const before = out.bytesSent
        out.bytesSent += n
        if (before <= o.expectedBytes && out.bytesSent > o.expectedBytes) { excessAt = performance.now(); out.excessSent = true }
        if (!req.write(n === piece.length ? piece : piece.subarray(0, n))) { req.once('drain', send); return }
      }
      if (!answered && !done && out.bytesSent >= maxBytes) req.end()
    }
    send()
  })
}
