// Every error the node layer (adapters, configuration, CLI) defines: one module, each with a stable
// `code` documented in docs/errors.md (a test checks every code thrown anywhere). The errors of the
// actors' ports (chain, destinations, chunk moves, asks) live in actors/errors.ts; the HTTP API's in
// api/errors.ts. Branch on `code`, never on the message.
import type { PutSummary } from './transfers/put-summary.ts'

// Configuration, keys and the command line.
export class ConfigError extends Error {
  readonly code = 'BWN_ERR_CONFIG'
}

export class KeystoreError extends Error {
  readonly code = 'BWN_ERR_KEYSTORE'
}

/** A data directory another process holds: its database is locked, or a running devnet's pid file names it. */
export class DataDirInUse extends Error {
  readonly data: string
  readonly code = 'BWN_ERR_DATA_IN_USE'
  constructor (data: string, message = `the database in ${data} is in use by another process (a node or devnet running on this data directory): stop it, or give this one another --data (BWN_DATA)`) {
    super(message)
    this.data = data
  }
}

/** The devnet's API port is taken by another program. */
export class PortInUse extends Error {
  readonly port: number
  readonly code = 'BWN_ERR_PORT_IN_USE'
  constructor (port: number) {
    super(`port ${port} on 127.0.0.1 is taken (another devnet or program listens there): start the devnet on another port with --port N or BWN_PORT=N (0 picks a free one)`)
    this.port = port
  }
}

/** An error the CLI prints as one line and exits non-zero for. */
export class CliError extends Error {
  readonly code = 'BWN_ERR_CLI'
}

/** A bad command line (unknown or invalid option, missing key, missing argument): exit 2. */
export class UsageError extends Error {
  readonly code = 'BWN_ERR_USAGE'
}

/** Stdin ended before the --size it was declared with: the stdin put's transfer is cancelled. */
export class InputShort extends Error {
  readonly code = 'BWN_ERR_CLI_INPUT_SHORT'
}

/** A local file differs from what a transfer holds (`bwnet transfer verify`). */
export class VerifyMismatch extends Error {
  readonly code = 'BWN_ERR_CLI_VERIFY_MISMATCH'
  constructor (detail: string) { super(`BWN_ERR_CLI_VERIFY_MISMATCH: ${detail}`) }
}

/** Stopped by Ctrl-C (SIGINT): exit 130. */
export class Interrupted extends Error {
  readonly code = 'BWN_ERR_INTERRUPTED'
}

/** A refused request: the problem+json answer (or the status when the body is not one). */
export class ApiProblem extends Error {
  readonly status: number
  readonly code: string
  readonly body: Record<string, unknown>
  constructor (status: number, code: string, detail: string, body: Record<string, unknown> = {}) {
    super(`${code}: ${detail}`)
    this.status = status
    this.code = code
    this.body = body
  }
}

/** A request that kept failing transiently until the retry budget ran out. */
export class ApiUnavailable extends Error {
  readonly code = 'BWN_ERR_CLI_API_UNAVAILABLE'
  constructor (detail: string) { super(`BWN_ERR_CLI_API_UNAVAILABLE: ${detail}`) }
}

/**
 * Nothing answers at the API's address (connection refused, no such host, no route) and nothing has
 * answered there in this run: waiting will not make it appear, so the command stops at once.
 */
export class ApiUnreachable extends Error {
  readonly address: string
  readonly reason: string
  readonly code = 'BWN_ERR_CLI_API_UNREACHABLE'
  constructor (address: string, reason: string) {
    super(`BWN_ERR_CLI_API_UNREACHABLE: cannot reach the API at ${address} (${reason}); is it running? The address comes from --api, BWN_API or the profile (bwnet login)`)
    this.address = address
    this.reason = reason
  }
}

/** `put` stopped on an error after the transfer id was printed: the error and the summary so far. */
export class GaveUp extends Error {
  readonly summary: PutSummary
  readonly code: string
  readonly detail: string
  constructor (reason: unknown, summary: PutSummary) {
    const code = (reason as { code?: unknown })?.code
    const c = typeof code === 'string' && code.startsWith('BWN_ERR_') ? code : 'BWN_ERR_CLI'
    const message = (reason as Error)?.message ?? String(reason)
    const detail = message.startsWith(`${c}: `) ? message.slice(c.length + 2) : message
    super(`${c}: ${detail}`, { cause: reason })
    this.summary = summary
    this.code = c
    this.detail = detail
  }
}

/** A transfer that ended failed or cancelled: the message starts with the problem's code. */
export class TransferEnded extends Error {
  readonly code: string
  constructor (code: string, message: string) {
    super(`${code}: ${message}`)
    this.code = code
  }
}

// Swarm bulk channel.
export class BulkError extends Error {
  readonly code = 'BWN_ERR_BULK'
}

// File responses (node/adapters/file-response.ts).
/** A file response ended early: the client left or stalled (`client`), or the file could not give the bytes (`file`). */
export class SendCut extends Error {
  readonly side: 'client' | 'file'
  readonly code = 'BWN_ERR_SEND_CUT'
  constructor (message: string, side: 'client' | 'file') {
    super(message)
    this.side = side
  }
}

// Blob store.
export class DigestMismatchError extends Error {
  readonly expected: string
  readonly actual: string
  readonly code = 'BWN_ERR_DIGEST_MISMATCH'
  constructor (expected: string, actual: string) {
    super(`sha256 is ${actual}, expected ${expected}`)
    this.expected = expected
    this.actual = actual
  }
}

/** The body went past its expected length; thrown as soon as the first excess byte is seen. */
export class BodyTooLongError extends Error {
  readonly expected: number
  readonly code = 'BWN_ERR_BODY_TOO_LONG'
  constructor (expected: number) {
    super(`body longer than ${expected} bytes`)
    this.expected = expected
  }
}

/** The body ended before its expected length. */
export class BodyTooShortError extends Error {
  readonly expected: number
  readonly received: number
  readonly code = 'BWN_ERR_BODY_TOO_SHORT'
  constructor (expected: number, received: number) {
    super(`body of ${received} bytes, expected ${expected}`)
    this.expected = expected
    this.received = received
  }
}

// Destination policy.
/** What kind of address a destination policy refuses (url-policy.ts classifies). */
export type AddressClass = 'loopback' | 'private' | 'link_local' | 'multicast' | 'unspecified' | 'reserved' | 'own'

/** An address class in words: 'a loopback address', 'this node's own address'. */
export function describeClass (cls: AddressClass): string {
  return cls === 'own' ? 'an address of this node\'s own host' : `a ${cls.replace('_', '-')} address`
}

/** A destination URL or header the policy refuses; `reason` is stable. */
export class DestinationPolicyError extends Error {
  readonly kind: 'url' | 'header'
  readonly reason: string
  constructor (kind: 'url' | 'header', reason: string, message: string) {
    super(message)
    this.kind = kind
    this.reason = reason
  }
}

/** Error a guarded connection fails with. */
export class AddressRefused extends Error {
  readonly code = 'BWN_ERR_ADDRESS_REFUSED'
  constructor (host: string, address: string, cls: AddressClass) { super(`connection to ${host} refused: ${address} is ${describeClass(cls)}`) }
}
