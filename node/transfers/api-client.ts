// The transfer API as a sender uses it, through the typed client (api/client): every request retried on 429 (after
// Retry-After), on 5xx and on network errors with capped exponential backoff, a bounded number of times.
// Only faults that can pass are retried: a connection refused, a name that does not resolve or no route
// to the host before the API has answered once in this run means nothing is there, and the call fails
// at once with BWN_ERR_CLI_API_UNREACHABLE naming host:port (once the API has answered, the same errors
// are a restart in progress and are retried).
// Other 4xx answers become an ApiProblem carrying the problem's stable `code`. Every wait is announced
// (onWait) so the CLI can say "rate limited, resuming in N s" instead of stalling silently, and every
// request and wait stops at once when the client's signal aborts (Ctrl-C).
import { setTimeout as sleep } from 'node:timers/promises'
import { STATUS_CODES } from 'node:http'
import type { Readable } from 'node:stream'
import { request as undiciRequest } from 'undici'
import type { TransferRecord, ChunkAck, TransferChunks } from '../../api/transfers.ts'
import { createApiClient, type ApiClient } from '../../api/client/index.ts'
import { ApiProblem, ApiUnavailable, ApiUnreachable } from '../errors.ts'
export { ApiProblem, ApiUnavailable, ApiUnreachable }
import { hostPort, networkCode, nothingThere } from './reach.ts'

export const CONTROL_TIMEOUT_MS = 30_000 // 30 s for create, finalize, status
export const CHUNK_TIMEOUT_MS = 300_000 // 5 min for one chunk body (up to 1 GiB on a slow link)
export const MAX_TRANSIENT_RETRIES = 8 // 5xx / network errors per request
export const MAX_RATE_LIMIT_WAITS = 60 // 429 answers per request
/**
 * How long a chunk waits in all for a place when the node answers 429 with `chunk_bodies` (the
 * organization streams as many chunk bodies as the node takes): a place frees as soon as one of them
 * ends, the organization's other uploads included, so longer than for a plan's minute. The waits grow
 * (the backoff, with jitter), so many waiting chunks do not ask every second.
 */
export const MAX_BODY_SLOT_WAIT_MS = 30 * 60_000
export const BACKOFF_BASE_MS = 250 // first retry delay
export const BACKOFF_MAX_MS = 8_000 // retry delay cap
export const RETRY_AFTER_MAX_MS = 60_000 // longest Retry-After honoured; longer answers wait this long
const RETRY_AFTER_DEFAULT_MS = 1_000 // a 429 without Retry-After

export interface RetryStats { retries: number, rateLimited: number }

/** A wait before a retry: a 429 (with the problem's code) or a transient failure. */
export interface RetryWait { reason: 'rate_limited' | 'unavailable', ms: number, status: number | null, code: string | null }

export interface TransferApiClientOptions {
  /** Aborts every request and wait (the CLI's Ctrl-C); the call then throws the signal's reason. */
  signal?: AbortSignal
  /** Called before every wait between attempts. */
  onWait?: (wait: RetryWait) => void
  /** How a wait is waited (default: a timer); a test passes one that returns at once. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
}

/** One chunk body: sent as a stream of slices so progress and --bwlimit work below chunk size. */
export interface ChunkBody {
  bytes: Buffer
  /** Called with the size of each slice as it is handed to the socket. */
  onBytes?: (n: number) => void
  /** Waits before each slice (a bandwidth limit). */
  pace?: (n: number, signal: AbortSignal) => Promise<void>
}

export const BODY_SLICE_BYTES = 256 * 1024

const isAborted = (signal: AbortSignal | undefined): boolean => signal?.aborted === true

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

/** What one attempt of a call returns: the answer's status and headers, its parsed body (data when 2xx, error otherwise). */
interface Sent { status: number, statusText: string, header: (name: string) => string | null, data?: unknown, error?: unknown }

/** openapi-fetch's answer as a Sent. */
async function fromFetch (pending: Promise<{ response: Response, data?: unknown, error?: unknown }>): Promise<Sent> {
  const { response, data, error } = await pending
  return { status: response.status, statusText: response.statusText, header: (name) => response.headers.get(name), data, error }
}

/** A chunk body as slices, each handed over when the socket wants more (paced first, counted once taken). */
async function * slices (body: ChunkBody, signal: AbortSignal): AsyncGenerator<Buffer> {
  for (let offset = 0; offset < body.bytes.length;) {
    const n = Math.min(BODY_SLICE_BYTES, body.bytes.length - offset)
    if (body.pace !== undefined) await body.pace(n, signal)
    yield body.bytes.subarray(offset, offset + n)
    offset += n
    body.onBytes?.(n)
  }
}
interface Call { method: string, path: string, timeoutMs?: number, send: (init: { signal: AbortSignal }) => Promise<Sent> }

export class TransferApiClient {
  readonly api: string
  readonly stats: RetryStats = { retries: 0, rateLimited: 0 }
  /** The typed client (api/client) every call goes through. */
  readonly client: ApiClient

  readonly #opts: TransferApiClientOptions
  readonly #key: string
  /** Whether the API has answered (any status) in this client's life. */
  #reached = false

  constructor (api: string, key: string, opts: TransferApiClientOptions = {}) {
    this.api = api
    this.client = createApiClient(this.api.endsWith('/') ? this.api.slice(0, -1) : this.api, { key })
    this.#opts = opts
    this.#key = key
  }

  async #wait (wait: RetryWait): Promise<void> {
    this.#opts.onWait?.(wait)
    const signal = this.#opts.signal
    const waiting = this.#opts.sleep !== undefined ? this.#opts.sleep(wait.ms, signal) : sleep(wait.ms, undefined, signal !== undefined ? { signal } : {})
    await waiting.catch((err: unknown) => { throw signal?.aborted === true ? signal.reason : err })
  }

  async #request (call: Call): Promise<{ status: number, body: any }> {
    const url = new URL(call.path.replace(/^\//, ''), this.api.endsWith('/') ? this.api : `${this.api}/`)
    let transient = 0
    let limited = 0
    let slotWaits = 0
    let slotWaitedMs = 0
    for (;;) {
      let sent: Sent
      const stop = this.#opts.signal
      if (stop?.aborted === true) throw stop.reason
      try {
        const timeout = AbortSignal.timeout(call.timeoutMs ?? CONTROL_TIMEOUT_MS)
        sent = await call.send({ signal: stop !== undefined ? AbortSignal.any([stop, timeout]) : timeout })
      } catch (err) {
        if (isAborted(stop)) throw stop!.reason
        // Nothing listening and never has in this run: no wait makes it appear.
        if (!this.#reached && nothingThere(err)) throw new ApiUnreachable(hostPort(url), networkCode(err)!)
        // Connection reset, a timeout, a restart in progress: the request may or may not have landed;
        // every call here is safe to repeat (chunk uploads are idempotent by content).
        if (++transient > MAX_TRANSIENT_RETRIES) throw new ApiUnavailable(`${call.method} ${hostPort(url)}${url.pathname}: ${networkCode(err) ?? (err as Error).message} (gave up after ${MAX_TRANSIENT_RETRIES} retries)`)
        this.stats.retries++
        await this.#wait({ reason: 'unavailable', ms: backoffMs(transient), status: null, code: null })
        continue
      }
      const res = sent
      this.#reached = true
      let body: any = res.status >= 200 && res.status < 300 ? (sent.data ?? null) : (sent.error ?? null)
      if (typeof body === 'string') body = body === '' ? null : { detail: body }
      if (res.status === 429) {
        const slot = typeof body?.chunk_bodies === 'number'
        if (slot ? slotWaitedMs >= MAX_BODY_SLOT_WAIT_MS : ++limited > MAX_RATE_LIMIT_WAITS) throw new ApiProblem(429, body?.code ?? 'BWN_ERR_RATE_LIMITED', body?.detail ?? 'rate limited', body ?? {})
        this.stats.rateLimited++
        const after = retryAfterMs(res.header('retry-after')) ?? RETRY_AFTER_DEFAULT_MS
        const ms = slot ? Math.max(after, backoffMs(++slotWaits)) : after
        slotWaitedMs += ms
        await this.#wait({ reason: 'rate_limited', ms, status: 429, code: body?.code ?? null })
        continue
      }
      // 507: the node's disk is full; repeating the same request cannot pass until someone frees space.
      if (res.status >= 500 && res.status !== 507) {
        if (++transient > MAX_TRANSIENT_RETRIES) throw new ApiUnavailable(`${call.method} ${hostPort(url)}${url.pathname}: ${res.status} ${body?.code ?? ''} (gave up after ${MAX_TRANSIENT_RETRIES} retries)`)
        this.stats.retries++
        await this.#wait({ reason: 'unavailable', ms: retryAfterMs(res.header('retry-after')) ?? backoffMs(transient), status: res.status, code: body?.code ?? null })
        continue
      }
      if (res.status >= 400) throw new ApiProblem(res.status, body?.code ?? `HTTP_${res.status}`, body?.detail ?? res.statusText, body ?? {})
      // Redirects are not followed: a POST would come back as a GET without its body, and the key would
      // go wherever the answer points. The API never redirects; a proxy in front of it may.
      if (res.status >= 300) throw new ApiProblem(res.status, 'BWN_ERR_CLI_API_REDIRECTED', `${call.method} ${hostPort(url)}${url.pathname} answered ${res.status}${res.header('location') !== null ? ` pointing to ${res.header('location')}` : ''}: bwnet does not follow redirects; give the API's own URL (--api)`, body ?? {})
      return { status: res.status, body }
    }
  }

  async create (body: { sender_hotkey: string, total_size: number, filename: string, tier: string, destination_id?: string }): Promise<TransferRecord> {
    return (await this.#request({ method: 'POST', path: '/transfers/create', send: (init) => fromFetch(this.client.POST('/transfers/create', { body, ...init, redirect: 'manual' })) })).body as TransferRecord
  }

  async get (id: string): Promise<TransferRecord> {
    return (await this.#request({ method: 'GET', path: `/transfers/${encodeURIComponent(id)}`, send: (init) => fromFetch(this.client.GET('/transfers/{id}', { params: { path: { id } }, ...init, redirect: 'manual' })) })).body as TransferRecord
  }

  /** Your transfers, newest first (one page). */
  async list (query: { limit: number, offset: number, status?: TransferRecord['status'] }): Promise<{ items: TransferRecord[], total: number }> {
    return (await this.#request({ method: 'GET', path: '/transfers', send: (init) => fromFetch(this.client.GET('/transfers', { params: { query: query as never }, ...init, redirect: 'manual' })) })).body as { items: TransferRecord[], total: number }
  }

  /** GET /transfers/{id}/chunks: the received chunks' sha256, in index order. */
  async chunks (id: string): Promise<TransferChunks> {
    return (await this.#request({ method: 'GET', path: `/transfers/${encodeURIComponent(id)}/chunks`, send: (init) => fromFetch(this.client.GET('/transfers/{id}/chunks', { params: { path: { id } }, ...init, redirect: 'manual' })) })).body as TransferChunks
  }

  /** DELETE /transfers/{id}: cancels (idempotent); 409 when it already ended otherwise. */
  async cancel (id: string): Promise<TransferRecord> {
    return (await this.#request({ method: 'DELETE', path: `/transfers/${encodeURIComponent(id)}`, send: (init) => fromFetch(this.client.DELETE('/transfers/{id}', { params: { path: { id } }, ...init, redirect: 'manual' })) })).body as TransferRecord
  }

  /**
   * Sends one chunk. A Buffer goes as one body; a ChunkBody is streamed in slices (with its
   * Content-Length), reporting bytes as they go and pacing them for a bandwidth limit. A retry
   * sends the whole chunk again; `onRestart` is called first, so a progress count can drop the
   * bytes of the failed attempt.
   *
   * Through undici's request() rather than the typed client: fetch wraps a body in a Request, pipes it
   * through a stream of its own and, when redirects may be followed, keeps a copy of every slice for a
   * second send; on loopback that tripled the client's CPU per MiB (docs/benchmarks.md#small-transfers).
   */
  async putChunk (id: string, index: number, data: Buffer | ChunkBody, sha256: string, onRestart?: () => void): Promise<{ ack: ChunkAck, created: boolean }> {
    const body: ChunkBody = Buffer.isBuffer(data) ? { bytes: data } : data
    const streamed = !Buffer.isBuffer(data)
    const path = `/transfers/${encodeURIComponent(id)}/chunks`
    const target = new URL(path.slice(1), this.api.endsWith('/') ? this.api : `${this.api}/`)
    const headers = {
      authorization: `Bearer ${this.#key}`,
      'content-type': 'application/octet-stream',
      'content-length': String(body.bytes.length),
      'x-chunk-index': String(index),
      'x-chunk-sha256': sha256
    }
    let attempt = 0
    const { status, body: ack } = await this.#request({
      method: 'POST',
      path,
      timeoutMs: CHUNK_TIMEOUT_MS,
      send: async (init) => {
        if (attempt++ > 0) onRestart?.()
        // An async iterable body (undici's documented `AsyncIterable`; its types list only Readable).
        const res = await undiciRequest(target, { method: 'POST', headers, body: streamed ? slices(body, init.signal) as unknown as Readable : body.bytes, signal: init.signal })
        const text = await res.body.text()
        const type = res.headers['content-type']
        let parsed: unknown = text
        if (typeof type === 'string' && /\bjson\b/.test(type) && text !== '') {
          try { parsed = JSON.parse(text) } catch { parsed = text }
        }
        const header = (name: string): string | null => { const v = res.headers[name.toLowerCase()]; return typeof v === 'string' ? v : Array.isArray(v) ? v.join(', ') : null }
        const ok = res.statusCode >= 200 && res.statusCode < 300
        return { status: res.statusCode, statusText: STATUS_CODES[res.statusCode] ?? '', header, ...(ok ? { data: parsed } : { error: parsed }) }
      }
    })
    return { ack: ack as ChunkAck, created: status === 201 }
  }

  async finalize (id: string): Promise<TransferRecord> {
    return (await this.#request({ method: 'POST', path: `/transfers/${encodeURIComponent(id)}/finalize`, send: (init) => fromFetch(this.client.POST('/transfers/{id}/finalize', { params: { path: { id } }, ...init, redirect: 'manual' })) })).body as TransferRecord
  }
}
