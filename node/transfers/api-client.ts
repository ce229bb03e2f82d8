// The transfer API as a sender uses it, through the typed client (api/client): every request retried on 429 (after
// Retry-After), on 5xx and on network errors with capped exponential backoff, a bounded number of times.
// Other 4xx answers become an ApiProblem carrying the problem's stable `code`.
import { setTimeout as sleep } from 'node:timers/promises'
import type { TransferRecord, ChunkAck } from '../../api/transfers.ts'
import { createApiClient, type ApiClient } from '../../api/client/index.ts'
import { ApiProblem, ApiUnavailable } from '../errors.ts'
export { ApiProblem, ApiUnavailable }

export const CONTROL_TIMEOUT_MS = 30_000 // 30 s for create, finalize, status
export const CHUNK_TIMEOUT_MS = 300_000 // 5 min for one chunk body (up to 1 GiB on a slow link)
export const MAX_TRANSIENT_RETRIES = 8 // 5xx / network errors per request
export const MAX_RATE_LIMIT_WAITS = 60 // 429 answers per request
export const BACKOFF_BASE_MS = 250 // first retry delay
export const BACKOFF_MAX_MS = 8_000 // retry delay cap
export const RETRY_AFTER_MAX_MS = 60_000 // longest Retry-After honoured; longer answers wait this long
const RETRY_AFTER_DEFAULT_MS = 1_000 // a 429 without Retry-After

export interface RetryStats { retries: number, rateLimited: number }

/** Delay before retry number `attempt` (1-based): base·2^(attempt-1), capped, with ±50% jitter. */
export function backoffMs (attempt: number, random: () => number = Math.random): number {
  const raw = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1))
  return Math.round(raw * (0.5 + random()))
}

/** Retry-After in ms: delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs (header: string | null, now = Date.now()): number | null {
  if (header === null || header.trim() === '') return null
  const seconds = Number(header)
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - now
  if (!Number.isFinite(ms)) return null
  return Math.min(RETRY_AFTER_MAX_MS, Math.max(0, ms))
}

/** What one attempt of a call returns (openapi-fetch's answer). */
interface Sent { response: Response, data?: unknown, error?: unknown }
interface Call { method: string, path: string, timeoutMs?: number, send: (init: { signal: AbortSignal }) => Promise<Sent> }

export class TransferApiClient {
  readonly stats: RetryStats = { retries: 0, rateLimited: 0 }
  /** The typed client (api/client) every call goes through. */
  readonly client: ApiClient

  constructor (readonly api: string, key: string) {
    this.client = createApiClient(this.api.endsWith('/') ? this.api.slice(0, -1) : this.api, { key })
  }

  async #request (call: Call): Promise<{ status: number, body: any }> {
    const url = new URL(call.path.replace(/^\//, ''), this.api.endsWith('/') ? this.api : `${this.api}/`)
    let transient = 0
    let limited = 0
    for (;;) {
      let sent: Sent
      try {
        sent = await call.send({ signal: AbortSignal.timeout(call.timeoutMs ?? CONTROL_TIMEOUT_MS) })
      } catch (err) {
        // Connection refused/reset, DNS, timeout: the request may or may not have landed; every call
        // here is safe to repeat (chunk uploads are idempotent by content).
        if (++transient > MAX_TRANSIENT_RETRIES) throw new ApiUnavailable(`${call.method} ${url.pathname}: ${(err as Error).message} (gave up after ${MAX_TRANSIENT_RETRIES} retries)`)
        this.stats.retries++
        await sleep(backoffMs(transient))
        continue
      }
      const res = sent.response
      let body: any = res.ok ? (sent.data ?? null) : (sent.error ?? null)
      if (typeof body === 'string') body = body === '' ? null : { detail: body }
      if (res.status === 429) {
        if (++limited > MAX_RATE_LIMIT_WAITS) throw new ApiProblem(429, body?.code ?? 'BWN_ERR_RATE_LIMITED', body?.detail ?? 'rate limited', body ?? {})
        this.stats.rateLimited++
        await sleep(retryAfterMs(res.headers.get('retry-after')) ?? RETRY_AFTER_DEFAULT_MS)
        continue
      }
      if (res.status >= 500) {
        if (++transient > MAX_TRANSIENT_RETRIES) throw new ApiUnavailable(`${call.method} ${url.pathname}: ${res.status} ${body?.code ?? ''} (gave up after ${MAX_TRANSIENT_RETRIES} retries)`)
        this.stats.retries++
        await sleep(retryAfterMs(res.headers.get('retry-after')) ?? backoffMs(transient))
        continue
      }
      if (res.status >= 400) throw new ApiProblem(res.status, body?.code ?? `HTTP_${res.status}`, body?.detail ?? res.statusText, body ?? {})
      return { status: res.status, body }
    }
  }

  async create (body: { sender_hotkey: string, total_size: number, filename: string, tier: string, destination_id?: string }): Promise<TransferRecord> {
    return (await this.#request({ method: 'POST', path: '/transfers/create', send: (init) => this.client.POST('/transfers/create', { body, ...init }) })).body as TransferRecord
  }

  async get (id: string): Promise<TransferRecord> {
    return (await this.#request({ method: 'GET', path: `/transfers/${encodeURIComponent(id)}`, send: (init) => this.client.GET('/transfers/{id}', { params: { path: { id } }, ...init }) })).body as TransferRecord
  }

  async putChunk (id: string, index: number, bytes: Buffer, sha256: string): Promise<{ ack: ChunkAck, created: boolean }> {
    const { status, body } = await this.#request({
      method: 'POST',
      path: `/transfers/${encodeURIComponent(id)}/chunks`,
      timeoutMs: CHUNK_TIMEOUT_MS,
      send: (init) => this.client.POST('/transfers/{id}/chunks', {
        params: { path: { id }, header: { 'x-chunk-index': String(index), 'x-chunk-sha256': sha256 } },
        body: bytes as never,
        bodySerializer: (b: unknown) => b as Uint8Array<ArrayBuffer>,
        headers: { 'content-type': 'application/octet-stream' },
        ...init
      })
    })
    return { ack: body as ChunkAck, created: status === 201 }
  }

  async finalize (id: string): Promise<TransferRecord> {
    return (await this.#request({ method: 'POST', path: `/transfers/${encodeURIComponent(id)}/finalize`, send: (init) => this.client.POST('/transfers/{id}/finalize', { params: { path: { id } }, ...init }) })).body as TransferRecord
  }
}
