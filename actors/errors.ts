// Every error the actor layer and its ports define: one module, each with a stable `code`
// (documented in docs/errors.md; a test checks every code thrown anywhere). Adapters in node/ and
// the simulator throw these same classes, so actors branch on `err.code` whatever ran underneath.
// Branch on `code`, never on the message.
import type { DestinationErrorCode } from './destination.ts'
import type { MoveFailure } from '../protocol/failure-reasons.ts'

/** Coded chain errors: the API maps each code to a 4xx/5xx problem. */
export type ChainErrorCode =
  | 'BWN_ERR_CHAIN_NOT_REGISTERED'
  | 'BWN_ERR_CHAIN_NOT_VALIDATOR'
  | 'BWN_ERR_CHAIN_BAD_WEIGHTS'
  | 'BWN_ERR_CHAIN_BAD_BLOCK'
  | 'BWN_ERR_CHAIN_BAD_AMOUNT'
  | 'BWN_ERR_CHAIN_INSUFFICIENT_ALPHA'
  | 'BWN_ERR_CHAIN_FORBIDDEN'
  | 'BWN_ERR_CHAIN_UNAVAILABLE'
  | 'BWN_ERR_CHAIN_TIMEOUT'
  | 'BWN_ERR_CHAIN_REJECTED'

export const CHAIN_ERROR_CODES: readonly ChainErrorCode[] = [
  'BWN_ERR_CHAIN_NOT_REGISTERED', 'BWN_ERR_CHAIN_NOT_VALIDATOR', 'BWN_ERR_CHAIN_BAD_WEIGHTS', 'BWN_ERR_CHAIN_BAD_BLOCK',
  'BWN_ERR_CHAIN_BAD_AMOUNT', 'BWN_ERR_CHAIN_INSUFFICIENT_ALPHA', 'BWN_ERR_CHAIN_FORBIDDEN', 'BWN_ERR_CHAIN_UNAVAILABLE',
  'BWN_ERR_CHAIN_TIMEOUT', 'BWN_ERR_CHAIN_REJECTED'
]

/** A refusal or failure of the Chain port (actors/chain/ports.ts). */
export class ChainError extends Error {
  readonly code: ChainErrorCode
  constructor (code: ChainErrorCode, message: string) {
    super(message)
    this.name = 'ChainError'
    this.code = code
  }
}

export const isChainErrorCode = (c: unknown): c is ChainErrorCode => typeof c === 'string' && (CHAIN_ERROR_CODES as readonly string[]).includes(c)

/** An actor did not answer `ask` (actors/runtime.ts) within its timeout. */
export class AskTimeoutError extends Error {
  readonly code = 'BWN_ERR_ACTOR_TIMEOUT'
  constructor (what: string, ms: number) { super(`${what}: no answer within ${ms} ms`) }
}

/** The one error type destination drivers throw (actors/destination.ts), real or simulated. */
export class DestinationError extends Error {
  readonly code: DestinationErrorCode
  /** HTTP status the destination answered, when it answered. */
  readonly status: number | undefined
  /** Chunks that must be delivered again before complete() can succeed (BWN_ERR_DESTINATION_INCOMPLETE). */
  readonly chunks: number[] | undefined
  constructor (code: DestinationErrorCode, message: string, options: { status?: number, cause?: unknown, chunks?: number[] } = {}) {
    super(message, { cause: options.cause })
    this.name = 'DestinationError'
    this.code = code
    this.status = options.status
    this.chunks = options.chunks
  }

  get retryable (): boolean { return this.code === 'BWN_ERR_DESTINATION_UNAVAILABLE' }
}

/**
 * A worker's move of one chunk failed (the ChunkMover port, actors/transfer/worker.ts). Its code is a
 * failure reason (protocol/failure-reasons.ts) and travels to the coordinator as `TaskResult.error`.
 */
export class MoveError extends Error {
  readonly code: MoveFailure
  constructor (code: MoveFailure, message: string) {
    super(message)
    this.code = code
  }
}
