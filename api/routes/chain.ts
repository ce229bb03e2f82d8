// Read-only chain routes for operators, plus recording a sale on a dev chain. The node registers this
// plugin with the Chain it uses (its DevChain, or a RemoteChain to the host) and a guard for writes.
import { Type } from '@sinclair/typebox'
import type { TypedApp } from '../typed-app.ts'
import { ChainHeadWire, WeightsRecordWire, SaleWire, Hotkey } from '../../protocol/index.ts'
import { ChainError, type Chain, type ChainErrorCode } from '../../actors/chain/ports.ts'
import { GUARDED_ERROR_STATUSES, STATUS_DESCRIPTIONS, problemResponse } from '../responses.ts'
import type { RouteAuth } from '../plugins/auth.ts'
import {
  ChainNotRegistered, ChainNotValidator, ChainBadWeights, ChainBadBlock, ChainBadAmount, ChainInsufficientAlpha, ChainForbidden,
  ChainUnavailable, ChainTimeout, ChainRejected
} from '../errors.ts'

/** Epochs looked back for the latest vectors when no epoch is given. */
const WEIGHTS_LOOKBACK_EPOCHS = 5

export interface ChainRoutesOptions {
  chain: Chain
  /** Dev chains: registers (and stakes) a hotkey for the operator (POST /chain/registrations). */
  enroll?: (hotkey: string, role: 'orchestrator' | 'worker' | 'validator', stakeRao: bigint) => Promise<unknown>
  /** True for a dev chain: enables POST /chain/sales. */
  dev: boolean
  /**
   * Who may write (POST /chain/registrations, POST /chain/sales): the node passes the operator's admin
   * key. It becomes the routes' `config.auth`, so the auth plugin checks the key on request, before the
   * body is read or validated: a request without a good key is answered 401 whatever its body.
   */
  writeAuth?: RouteAuth
}

const HTTP_ERROR: Record<ChainErrorCode, new (message: string) => Error> = {
  BWN_ERR_CHAIN_NOT_REGISTERED: ChainNotRegistered,
  BWN_ERR_CHAIN_NOT_VALIDATOR: ChainNotValidator,
  BWN_ERR_CHAIN_BAD_WEIGHTS: ChainBadWeights,
  BWN_ERR_CHAIN_BAD_BLOCK: ChainBadBlock,
  BWN_ERR_CHAIN_BAD_AMOUNT: ChainBadAmount,
  BWN_ERR_CHAIN_INSUFFICIENT_ALPHA: ChainInsufficientAlpha,
  BWN_ERR_CHAIN_FORBIDDEN: ChainForbidden,
  BWN_ERR_CHAIN_UNAVAILABLE: ChainUnavailable,
  BWN_ERR_CHAIN_TIMEOUT: ChainTimeout,
  BWN_ERR_CHAIN_REJECTED: ChainRejected
}

/** A chain error as its coded HTTP error; anything else is left to the problem handler (500). */
export function chainHttpError (err: unknown): unknown {
  if (err instanceof ChainError) return new HTTP_ERROR[err.code](err.message)
  return err
}

/** What any chain call can fail with when the chain itself does not answer well (502, 503, 504). */
const CHAIN_DOWN: ChainErrorCode[] = ['BWN_ERR_CHAIN_REJECTED', 'BWN_ERR_CHAIN_UNAVAILABLE', 'BWN_ERR_CHAIN_TIMEOUT']

/**
 * A chain route's response map: its success entries, 400 when it validates input, the key guard's
 * 401/403/429 when `guarded`, and one problem entry per status of the chain error codes it can raise
 * (derived from HTTP_ERROR), each entry naming all its causes.
 */
export function chainResponses (own: Record<number, unknown>, codes: ChainErrorCode[], validates: boolean, guarded = false): Record<number, unknown> {
  const byStatus = new Map<number, string[]>()
  if (validates) byStatus.set(400, ['BWN_ERR_VALIDATION'])
  if (guarded) for (const status of GUARDED_ERROR_STATUSES) byStatus.set(status, [STATUS_DESCRIPTIONS[status]!])
  for (const code of [...codes, ...CHAIN_DOWN]) {
    const status = (new HTTP_ERROR[code]('') as Error & { statusCode: number }).statusCode
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  const out: Record<number, unknown> = { ...own }
  for (const [status, names] of [...byStatus].sort((a, b) => a[0] - b[0])) out[status] = problemResponse(status, names.join('; '))
  return out
}

const EpochText = Type.String({ pattern: '^[0-9]{1,10}$' })
const Weights = Type.Object({ epoch: Type.Integer(), headEpoch: Type.Integer(), weights: Type.Array(WeightsRecordWire) })
const Registration = Type.Object({ hotkey: Type.String(), uid: Type.Integer(), role: Type.String(), registeredAtBlock: Type.Integer() })
// FORBIDDEN: the node is not on a dev chain; the rest from DevChain.enroll / recordSale.
const REGISTRATION_ERRORS: ChainErrorCode[] = ['BWN_ERR_CHAIN_FORBIDDEN', 'BWN_ERR_CHAIN_BAD_AMOUNT']
const SALE_ERRORS: ChainErrorCode[] = ['BWN_ERR_CHAIN_FORBIDDEN', 'BWN_ERR_CHAIN_BAD_AMOUNT', 'BWN_ERR_CHAIN_BAD_BLOCK', 'BWN_ERR_CHAIN_NOT_REGISTERED', 'BWN_ERR_CHAIN_INSUFFICIENT_ALPHA']
const SaleBody = Type.Object({
  hotkey: Hotkey,
  alphaRao: Type.String({ pattern: '^[1-9][0-9]{0,38}$', description: 'rao (1 α = 10⁹ rao), a positive integer as text' }),
  block: Type.Optional(Type.Integer({ minimum: 0, description: 'block of the sale; the head by default' }))
}, { additionalProperties: false })

export default async function chainRoutes (app: TypedApp, opts: ChainRoutesOptions): Promise<void> {
  const { chain } = opts
  const writeConfig = opts.writeAuth !== undefined ? { config: { auth: opts.writeAuth } } : {}
  const call = async <T> (fn: () => Promise<T>): Promise<T> => {
    try { return await fn() } catch (err) { throw chainHttpError(err) }
  }

  app.get('/chain/head', {
    schema: { tags: ['chain'], summary: 'Latest block, its epoch and time, block time and epoch length', response: chainResponses({ 200: ChainHeadWire }, [], false) }
  }, async () => await call(() => chain.head()))

  app.get('/chain/weights', {
    schema: {
      tags: ['chain'],
      summary: 'Weight vectors set by validators for an epoch (default: the latest epoch with vectors)',
      querystring: Type.Object({ epoch: Type.Optional(EpochText) }, { additionalProperties: false }),
      response: chainResponses({ 200: Weights }, [], true)
    }
  }, async (req) => await call(async () => {
    const query = req.query
    const head = await chain.head()
    if (query.epoch !== undefined) {
      const epoch = Number(query.epoch)
      return { epoch, headEpoch: head.epoch, weights: await chain.weightsOf(epoch) }
    }
    for (let epoch = head.epoch; epoch >= 0 && epoch > head.epoch - WEIGHTS_LOOKBACK_EPOCHS; epoch--) {
      const weights = await chain.weightsOf(epoch)
      if (weights.length > 0) return { epoch, headEpoch: head.epoch, weights }
    }
    return { epoch: head.epoch, headEpoch: head.epoch, weights: [] }
  }))

  app.get('/chain/registrations/:hotkey', {
    schema: {
      tags: ['chain'],
      summary: 'UID, role and registration block of a hotkey (404 BWN_ERR_CHAIN_NOT_REGISTERED when it has none)',
      params: Type.Object({ hotkey: Hotkey }),
      response: chainResponses({ 200: Registration }, ['BWN_ERR_CHAIN_NOT_REGISTERED'], true)
    }
  }, async (req) => await call(async () => {
    const { hotkey } = req.params
    const found = (await chain.registrations()).find(r => r.hotkey === hotkey)
    if (found === undefined) throw new ChainError('BWN_ERR_CHAIN_NOT_REGISTERED', `hotkey ${hotkey} has no UID on this chain`)
    return found
  }))

  app.post('/chain/registrations', {
    schema: {
      tags: ['chain'],
      summary: 'Register a node\'s hotkey in a role on a dev chain (the operator enrolls the nodes of a test network)',
      body: Type.Object({
        hotkey: Hotkey,
        role: Type.Union([Type.Literal('orchestrator'), Type.Literal('worker'), Type.Literal('validator')]),
        stakeRao: Type.Optional(Type.String({ pattern: '^[0-9]{1,39}$', description: 'stake for a validator permit, rao as text' }))
      }, { additionalProperties: false }),
      ...(opts.writeAuth !== undefined
        ? { security: [{ bearerAuth: [] }, { apiKey: [] }], response: chainResponses({ 201: Registration }, REGISTRATION_ERRORS, true, true) }
        : { response: chainResponses({ 201: Registration }, REGISTRATION_ERRORS, true) })
    },
    ...writeConfig
  }, async (req, reply) => {
    if (!opts.dev || opts.enroll === undefined) throw new ChainForbidden('registrations happen on the chain itself; this node is not on a dev chain')
    const body = req.body
    await call(() => opts.enroll!(body.hotkey, body.role, BigInt(body.stakeRao ?? '0')))
    const found = (await call(() => chain.registrations())).find(r => r.hotkey === body.hotkey)
    reply.code(201)
    return found
  })

  app.post('/chain/sales', {
    schema: {
      tags: ['chain'],
      summary: 'Record an alpha sale by a hotkey (dev chains only; an admin key)',
      body: SaleBody,
      ...(opts.writeAuth !== undefined
        ? { security: [{ bearerAuth: [] }, { apiKey: [] }], response: chainResponses({ 201: SaleWire }, SALE_ERRORS, true, true) }
        : { response: chainResponses({ 201: SaleWire }, SALE_ERRORS, true) })
    },
    ...writeConfig
  }, async (req, reply) => {
    if (!opts.dev) throw new ChainForbidden('sales are recorded on the chain itself; this node is not on a dev chain')
    const body = req.body
    const sale = await call(() => chain.recordSale(body.hotkey, BigInt(body.alphaRao), body.block))
    reply.code(201)
    return { ...sale, alphaRao: sale.alphaRao.toString() }
  })
}
