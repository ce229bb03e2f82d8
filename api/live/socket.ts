// One server → client WebSocket of the live interface, with the protections every live route shares
// (docs/api.md#live-interface):
// - a bounded queue: the bytes ws holds in this process for the socket (not yet taken by the kernel)
//   never pass `maxQueueBytes`; a message that would pass it closes the socket with 1013 instead,
//   so a consumer that falls behind costs at most that much memory;
// - ping/pong keepalive: a peer that has not answered the previous ping by the next one is dropped;
// - idle limit: a socket that carried no message for `idleMs` is closed with 4408.
import type { WebSocket } from 'ws'
import type { FastifyBaseLogger } from 'fastify'
import { CLOSE_CODES } from '../../protocol/index.ts'

export interface LiveLimits {
  /** Bytes a socket may hold queued in this process before it is closed with 1013. */
  maxQueueBytes: number
  /** Keepalive ping period (ms); a peer silent for two periods is dropped. */
  pingMs: number
  /** A socket with no message for this long (ms) is closed with 4408. */
  idleMs: number
  /** Open live sockets per organization (all its keys together); one more is refused with 429 before the upgrade. */
  maxSocketsPerOrganization: number
}

export const DEFAULT_LIVE_LIMITS: LiveLimits = {
  maxQueueBytes: 1024 * 1024, // 1 MiB
  pingMs: 30_000, // 30 s
  idleMs: 15 * 60_000, // 15 min
  maxSocketsPerOrganization: 256
}

/** Polling period (ms) while a replay waits for the socket's queue to drain. */
const DRAIN_POLL_MS = 10

export class LiveSocket {
  readonly #ws: WebSocket
  readonly #limits: LiveLimits
  readonly #log: FastifyBaseLogger
  #alive = true
  #lastSend = Date.now()
  readonly #timer: NodeJS.Timeout
  readonly #closeFns: Array<() => void> = []
  #closed = false

  constructor (ws: WebSocket, limits: LiveLimits, log: FastifyBaseLogger) {
    this.#ws = ws
    this.#limits = limits
    this.#log = log
    ws.on('pong', () => { this.#alive = true })
    // The live routes only send: a frame from the client is a protocol error of that client.
    ws.on('message', () => this.close(CLOSE_CODES.unsupported, 'this route only sends'))
    ws.on('close', () => this.#finish())
    ws.on('error', (err) => { log.debug({ err: err.message }, 'live socket error') })
    const period = Math.min(limits.pingMs, limits.idleMs)
    this.#timer = setInterval(() => this.#tick(), period)
    this.#timer.unref()
  }

  get closed (): boolean { return this.#closed || this.#ws.readyState !== this.#ws.OPEN }
  /** Bytes queued in this process for the socket now. */
  get queuedBytes (): number { return this.#ws.bufferedAmount }

  /** Runs `fn` once the socket is closed (by either side). */
  onClose (fn: () => void): void {
    if (this.#closed) fn(); else this.#closeFns.push(fn)
  }

  /** Sends one JSON message; false (and the socket closed with 1013) when the queue would pass its bound. */
  send (message: unknown): boolean {
    return this.sendText(JSON.stringify(message))
  }

  /** Sends one JSON text already serialized (a message fanned out to many sockets is serialized once). */
  sendText (text: string): boolean {
    if (this.closed) return false
    if (this.#ws.bufferedAmount + Buffer.byteLength(text) > this.#limits.maxQueueBytes) {
      this.close(CLOSE_CODES.slowConsumer, 'consumer too slow: queue full; reconnect with ?after=<last seq>')
      return false
    }
    this.#lastSend = Date.now()
    this.#ws.send(text)
    return true
  }

  /** Resolves once the queue is below half its bound (or the socket closed): replays pace themselves with it. */
  async drained (): Promise<void> {
    while (!this.closed && this.#ws.bufferedAmount > this.#limits.maxQueueBytes / 2) {
      await new Promise(resolve => setTimeout(resolve, DRAIN_POLL_MS))
    }
  }

  close (code: number, reason: string): void {
    if (this.#closed) return
    this.#log.debug({ code, reason }, 'live socket closed by the server')
    this.#finish()
    // Close frames carry at most 123 bytes of reason (RFC 6455 §5.5).
    try { this.#ws.close(code, reason.slice(0, 123)) } catch { this.#ws.terminate() }
  }

  #tick (): void {
    if (this.closed) return
    if (!this.#alive) { this.#log.debug('live socket: no pong; dropped'); this.#finish(); this.#ws.terminate(); return }
    if (Date.now() - this.#lastSend >= this.#limits.idleMs) { this.close(CLOSE_CODES.idle, 'idle: no message for too long'); return }
    this.#alive = false
    this.#ws.ping()
  }

  #finish (): void {
    if (this.#closed) return
    this.#closed = true
    clearInterval(this.#timer)
    for (const fn of this.#closeFns.splice(0)) {
      try { fn() } catch (err) { this.#log.warn({ err }, 'live socket close handler failed') }
    }
  }
}
