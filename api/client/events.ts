// Following a transfer's events over the live interface (GET /transfers/{id}/events): the piece a
// CLI progress bar or any Node client plugs in. It reconnects with ?after=<last seq> when the socket
// drops (or the server closed it as a slow consumer), so the caller sees every event once, in order,
// and resolves once the transfer reached its terminal status. A refusal at the upgrade (401, 403,
// 404, 429) rejects with the problem's status and code: a caller falls back to polling then.
import WebSocket from 'ws'
// protocol/live.ts, not the protocol barrel: a client command never loads the sr25519 WebAssembly or the codec.
import { CLOSE_CODES, TERMINAL_TRANSFER_STATUSES, type TransferEvent } from '../../protocol/live.ts'

/** Reconnects after an unexpected close before giving up. */
export const FOLLOW_MAX_RETRIES = 5
const RETRY_BASE_MS = 250

export interface FollowOptions {
  /** The last seq the caller holds (0: everything). */
  after?: number
  onEvent: (event: TransferEvent) => void
  signal?: AbortSignal
  /** Reconnects after unexpected closes (default FOLLOW_MAX_RETRIES). */
  retries?: number
}

export interface FollowResult {
  /** The last seq seen. */
  last: number
  /** The terminal status, or null when the follow was aborted. */
  status: string | null
}

export class FollowError extends Error {
  readonly status: number | null
  readonly code: string | null
  constructor (message: string, status: number | null, code: string | null) {
    super(message)
    this.status = status
    this.code = code
  }
}

export function eventsUrl (baseUrl: string, id: string, after: number): string {
  const u = new URL(`${baseUrl.replace(/\/+$/, '')}/transfers/${encodeURIComponent(id)}/events`)
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:'
  u.searchParams.set('after', String(after))
  return u.toString()
}

/** Follows the transfer's events until its terminal status (or `signal` aborts). */
export async function followTransferEvents (baseUrl: string, key: string, id: string, opts: FollowOptions): Promise<FollowResult> {
  let last = opts.after ?? 0
  let status: string | null = null
  let failures = 0
  const retries = opts.retries ?? FOLLOW_MAX_RETRIES
  const aborted = (): boolean => opts.signal?.aborted === true
  while (!aborted()) {
    const outcome = await once(eventsUrl(baseUrl, id, last), key, opts.signal, (e) => {
      if (e.seq <= last) return // never twice
      last = e.seq
      failures = 0
      if (e.type === 'status' && TERMINAL_TRANSFER_STATUSES.includes(e.status)) status = e.status
      opts.onEvent(e)
    })
    if (status !== null) return { last, status }
    if (aborted()) break
    // 1000 without a terminal event here: it came before `after` (the reason names the status).
    if (outcome.code === CLOSE_CODES.normal) return { last, status: outcome.reason.replace(/^transfer /, '') || null }
    if (++failures > retries) throw new FollowError(`event stream closed ${failures} times (last: ${outcome.code} ${outcome.reason})`, null, null)
    await new Promise(resolve => setTimeout(resolve, RETRY_BASE_MS * 2 ** (failures - 1)))
  }
  return { last, status: null }
}

/** One connection: resolves with its close code and reason; rejects on a refusal at the upgrade. */
async function once (url: string, key: string, signal: AbortSignal | undefined, onEvent: (e: TransferEvent) => void): Promise<{ code: number, reason: string }> {
  return await new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } })
    const abort = (): void => ws.close(CLOSE_CODES.normal, 'client done')
    signal?.addEventListener('abort', abort, { once: true })
    ws.on('message', (data) => {
      try { onEvent(JSON.parse(String(data)) as TransferEvent) } catch (err) { ws.terminate(); reject(err) }
    })
    ws.on('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (c: Buffer) => { body += String(c) })
      res.on('end', () => {
        signal?.removeEventListener('abort', abort)
        let code: string | null = null
        let detail = body
        try { const p = JSON.parse(body) as { code?: string, detail?: string }; code = p.code ?? null; detail = p.detail ?? body } catch {}
        reject(new FollowError(`events refused: ${res.statusCode ?? 0} ${detail}`, res.statusCode ?? null, code))
      })
    })
    ws.on('error', () => { /* 'close' follows with 1006 */ })
    ws.on('close', (code, reason) => {
      signal?.removeEventListener('abort', abort)
      resolve({ code, reason: String(reason) })
    })
  })
}
