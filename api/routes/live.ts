// The live (WebSocket) routes beside their REST twins (docs/api.md#live-interface):
//   GET /transfers/{id}/events           client key of the transfer's owner; TransferEvent messages
//   GET /v1/telemetry/realtime/stream    console key, telemetry:realtime:read; one charged push per live version
// Authentication runs at the upgrade request exactly as on the REST twin (plus the
// Sec-WebSocket-Protocol `bwnet.key.<key>` form browsers need): a refusal is an HTTP problem+json
// answer and no socket is ever opened. Messages and close codes: protocol/live.ts.
import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import type { TypedApp } from '../typed-app.ts'
import type { WebSocket } from 'ws'
import type { ApiDeps } from '../deps.ts'
import type { TransferRecord, TransferService } from '../transfers.ts'
import { guardedResponses, paidReadResponses, problemResponse } from '../responses.ts'
import { RateLimited, UpgradeRequired } from '../errors.ts'
import { LiveSocket, DEFAULT_LIVE_LIMITS, type LiveLimits } from '../live/socket.ts'
import { CLOSE_CODES, TERMINAL_TRANSFER_STATUSES, TransferEvent, RealtimeStreamMessage, type RealtimeStreamMessage as StreamMessage } from '../../protocol/index.ts'

/** Events read from the store per replay page. */
export const REPLAY_PAGE = 500
/** Ledger memos of the realtime stream's debits and of the refund of a push that never left (socket closed, or its queue full). */
export const STREAM_MEMO = 'WS /v1/telemetry/realtime/stream'
export const REFUND_MEMO = 'WS /v1/telemetry/realtime/stream: refund of an undelivered push'
/** How often the realtime stream looks for a new live version (ms). */
export const STREAM_POLL_MS = 500

const paidReadErrors = (): Record<string, unknown> => {
  const { 200: _ok, 304: _notModified, ...errors } = paidReadResponses({})
  return errors
}
const SWITCHING = (message: TSchema): Record<string, unknown> => ({
  101: { description: `Switching Protocols: the server then sends ${String(message.title)} messages as JSON text frames (docs/api.md#live-interface)`, content: { 'application/json': { schema: message } } }
})

/** One event's JSON text, serialized once however many sockets it goes to (the hub hands them the same object). */
const texts = new WeakMap<TransferEvent, string>()
function textOf (e: TransferEvent): string {
  let text = texts.get(e)
  if (text === undefined) { text = JSON.stringify(e); texts.set(e, text) }
  return text
}

/** How often the keys of open live sockets are checked for revocation and expiry. */
export const KEY_CHECK_MS = 1_000

/** A plain GET (no upgrade) of a live route: 426 with the upgrade to ask for. */
async function upgradeRequired (): Promise<never> {
  throw Object.assign(new UpgradeRequired('This route is a WebSocket: send the request as an upgrade (Connection: Upgrade, Upgrade: websocket)'), { headers: { upgrade: 'websocket' } })
}

declare module 'fastify' {
  interface FastifyRequest { liveTransfer?: TransferRecord }
}

export default async function liveRoutes (app: TypedApp, opts: { deps: ApiDeps }): Promise<void> {
  const { deps } = opts
  const limits: LiveLimits = { ...DEFAULT_LIVE_LIMITS, ...deps.live }
  // Counted per organization: issuing keys does not multiply an organization's sockets.
  const perOrg = new Map<string, number>()
  // Open sockets by the key that opened them. A key is checked at the upgrade only; one revoked or
  // expired since closes its sockets (4401) within KEY_CHECK_MS: a revoked key must not keep reading
  // events or buying pushes on a socket it opened before.
  // `checked`: the accounts' key generation (it moves at every revocation) when the key was last known
  // good; a key whose sockets were opened, or last checked, under an older one is looked up again.
  const byKey = new Map<string, { expiresAt: number | null, checked: number, sockets: Set<LiveSocket> }>()
  let checking = false
  const checkKeys = async (): Promise<void> => {
    if (checking || byKey.size === 0) return
    checking = true
    try {
      const now = deps.accounts.now() // the accounts' own clock, as key expiry is judged everywhere
      for (const [keyId, held] of [...byKey]) {
        let why: string | null = held.expiresAt !== null && now >= held.expiresAt ? 'the key has expired' : null
        const generation = deps.accounts.keyGeneration
        if (why === null && held.checked !== generation) {
          try {
            if ((await deps.accounts.getKey(keyId)).revokedAt !== null) why = 'the key was revoked'
            else held.checked = generation
          } catch (err) {
            // Gone is revoked; a store that failed to answer says nothing: asked again at the next check.
            if ((err as { code?: string }).code === 'BWN_ERR_API_KEY_NOT_FOUND') why = 'the key was revoked'
          }
        }
        if (why !== null) for (const live of [...held.sockets]) live.close(CLOSE_CODES.unauthorized, why)
      }
    } finally { checking = false }
  }
  const keyWatch = setInterval(() => { checkKeys().catch((err: Error) => app.log.warn({ err: err.message }, 'live sockets\' key check failed')) }, KEY_CHECK_MS)
  keyWatch.unref()
  app.addHook('onClose', async () => { clearInterval(keyWatch) })

  /**
   * preHandler: refuses one socket too many for the key's organization (429, before the upgrade). It only checks: the
   * socket is counted once it is open (attach), so a refused or plain request never holds a slot.
   */
  async function checkSlot (req: FastifyRequest): Promise<void> {
    if ((perOrg.get(req.principal!.organizationId) ?? 0) >= limits.maxSocketsPerOrganization) {
      throw Object.assign(new RateLimited(`At most ${limits.maxSocketsPerOrganization} live sockets per organization are open at once`), { headers: { 'retry-after': '5' } })
    }
  }
  /** Counts the open socket against its organization (until it closes) and wraps it with the shared protections. */
  function attach (socket: WebSocket, req: FastifyRequest): LiveSocket {
    const live = new LiveSocket(socket, limits, req.log)
    const org = req.principal!.organizationId
    perOrg.set(org, (perOrg.get(org) ?? 0) + 1)
    const { keyId, expiresAt } = req.principal!
    let held = byKey.get(keyId)
    // Looked up again at the next check: a revocation between the key's authentication and this
    // attach is seen there, whatever the key generation did meanwhile.
    if (held === undefined) { held = { expiresAt: expiresAt != null ? Date.parse(expiresAt) : null, checked: -1, sockets: new Set() }; byKey.set(keyId, held) } else held.checked = -1
    held.sockets.add(live)
    live.onClose(() => {
      const h = byKey.get(keyId)
      h?.sockets.delete(live)
      if (h?.sockets.size === 0) byKey.delete(keyId)
    })
    // Its access lines (api/app.ts writes none for an upgrade): who opened it, and how long it stayed.
    const openedAt = performance.now()
    req.log.info({ req, event: 'websocket_opened' }, 'websocket opened')
    live.onClose(() => {
      const n = (perOrg.get(org) ?? 1) - 1
      if (n <= 0) perOrg.delete(org); else perOrg.set(org, n)
      req.log.info({ req, event: 'websocket_closed', openMs: Math.round(performance.now() - openedAt) }, 'websocket closed')
    })
    return live
  }

  const service = deps.transfers
  const feed = deps.transferEvents
  if (service !== undefined && feed !== undefined) {
    /** Replays the stored events after ?after=, then follows live ones, until the terminal status. */
    const transferEventsSocket = (socket: WebSocket, req: FastifyRequest<{ Querystring: { after?: number } }>): void => {
      const live = attach(socket, req)
      const record = req.liveTransfer!
      let last = req.query.after ?? 0 // validation fills the default in
      let replaying = true
      const held: TransferEvent[] = []
      const end = (status: string): void => live.close(CLOSE_CODES.normal, `transfer ${status}`)
      const deliver = (e: TransferEvent): void => {
        if (e.seq <= last) return
        last = e.seq
        if (live.sendText(textOf(e)) && e.type === 'status' && TERMINAL_TRANSFER_STATUSES.includes(e.status)) end(e.status)
      }
      const unsubscribe = feed!.subscribe(record.id, (e) => {
        if (!replaying) { deliver(e); return }
        held.push(e)
        if (held.length * 512 > limits.maxQueueBytes) live.close(CLOSE_CODES.slowConsumer, 'consumer too slow during replay; reconnect with ?after=<last seq>')
      })
      live.onClose(unsubscribe)
      void (async () => {
        // Replay what the store holds after `after` (paced by the socket's queue), then what arrived meanwhile.
        for (;;) {
          const page = await feed!.read(record.id, last, REPLAY_PAGE)
          for (const e of page) deliver(e)
          if (page.length < REPLAY_PAGE || live.closed) break
          await live.drained()
        }
        replaying = false
        for (const e of held.splice(0)) deliver(e)
        // Terminal before the socket opened and nothing left to send: the stream is over.
        if (!live.closed && TERMINAL_TRANSFER_STATUSES.includes(record.status)) end(record.status)
      })().catch((err: Error) => {
        req.log.warn({ err: err.message }, 'transfer event replay failed')
        live.close(CLOSE_CODES.internal, 'replay failed')
      })
    }
    app.route({
      method: 'GET',
      url: '/transfers/:id/events',
      handler: upgradeRequired,
      config: { auth: { roles: ['client'], websocket: true } },
      preHandler: [async (req) => {
        const { id } = req.params
        req.liveTransfer = await (service as TransferService).get(id, req.principal!) // 404 for anyone but the owner
        await checkSlot(req)
      }],
      schema: {
        tags: ['transfers', 'live'],
        summary: 'WebSocket: the transfer\'s events (status and chunk changes) in order, from ?after= on, until its terminal status',
        description: 'Upgrade to a WebSocket (key in Authorization / X-Api-Key, or the subprotocol `bwnet.key.<key>` next to `bwnet.v1`). Messages: TransferEvent (the 101 response schema here; docs/api.md#live-interface). Events after `after` are replayed from the store, then live ones follow without gap or duplicate; the server closes with 1000 after the terminal status, 1013 when the client falls behind. Close codes: docs/errors.md#websocket-close-codes.',
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        querystring: Type.Object({ after: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'The last seq the client holds; 0 for everything' })) }),
        response: { ...SWITCHING(TransferEvent), ...guardedResponses({}, [404, 426]) }
      },
      wsHandler: transferEventsSocket
    })
  }

  const telemetry = deps.telemetry
  if (telemetry !== undefined) {
    const price = (): number => deps.accounts.price('realtime')
    /** Pushes each new live network version, debited per push; 4402 when the balance cannot pay. */
    const realtimeStreamSocket = (socket: WebSocket, req: FastifyRequest, holds: string | null): void => {
      const live = attach(socket, req)
      const principal = req.principal!
      let held = holds
      let seq = 0
      let busy = false
      const push = async (): Promise<void> => {
        if (busy || live.closed) return
        busy = true
        try {
          const v = telemetry.projection.current(telemetry.clock.now())
          if (v.id === held) return
          const cost = price()
          let remaining: number
          try {
            remaining = await deps.accounts.charge(principal.organizationId, { amount: cost, keyId: principal.keyId, memo: STREAM_MEMO })
          } catch (err) {
            if ((err as { code?: string }).code === 'BWN_ERR_INSUFFICIENT_CREDITS') { live.close(CLOSE_CODES.paymentRequired, `insufficient credits: a push costs ${cost}`); return }
            throw err
          }
          const msg: StreamMessage = { seq: seq + 1, type: 'network', at: new Date(telemetry.clock.now()).toISOString(), snapshotId: v.id, charged: cost, remaining, envelope: v.env as unknown as Record<string, unknown> }
          if (live.send(msg)) {
            held = v.id
            seq++
            return
          }
          // Closed while the debit was being written, or its queue had no room for the push (the client
          // stopped reading: `send` closed it with 1013): the version never left, so neither does its price.
          if (cost > 0) await deps.accounts.grantCredits(principal.organizationId, cost, REFUND_MEMO)
        } catch (err) {
          req.log.warn({ err: (err as Error).message }, 'realtime push failed')
          live.close(CLOSE_CODES.internal, 'push failed')
        } finally { busy = false }
      }
      const timer = setInterval(() => { void push() }, STREAM_POLL_MS)
      live.onClose(() => clearInterval(timer))
      void push()
    }
    app.route({
      method: 'GET',
      url: '/v1/telemetry/realtime/stream',
      exposeHeadRoute: false,
      handler: upgradeRequired,
      config: { auth: { telemetry: { realtime: true }, websocket: true } },
      preHandler: [checkSlot],
      schema: {
        tags: ['telemetry', 'live'],
        summary: 'WebSocket: each new live network version, charged per push like a realtime read',
        description: 'Upgrade to a WebSocket (key in X-Api-Key, or the subprotocol `bwnet.key.<key>` next to `bwnet.v1`). Messages: RealtimeStreamMessage (the 101 response schema here), whose `envelope` is the realtime/network body of that version. Each push is debited at the realtime read price; an organization that cannot pay the next push is closed with 4402. `snapshotId` names the version the client already holds: it is not sent again.',
        querystring: Type.Object({ snapshotId: Type.Optional(Type.String({ maxLength: 128, description: 'The live version the client holds (not resent)' })) }),
        // A paid read's errors, but never its 200 or 304: without an upgrade the answer is 426.
        response: { ...SWITCHING(RealtimeStreamMessage), ...paidReadErrors(), 426: problemResponse(426) }
      },
      wsHandler: (socket, req) => { realtimeStreamSocket(socket, req, req.query.snapshotId ?? null) }
    })
  }
}
