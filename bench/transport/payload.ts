// The bytes every path of the transport bench carries: a keystream both processes derive from one
// seed, so the client can compare every transfer byte for byte without the payload crossing any pipe.
import { createCipheriv, createHash } from 'node:crypto'

/** The key (bulk channel) and path (HTTP) the server serves the payload under. */
export const PAYLOAD_KEY = 'bench-payload'

const PAYLOAD_CIPHER = 'aes-256-ctr'
const PAYLOAD_IV = Buffer.alloc(16) // fixed: the seed alone picks the stream

/** `bytes` pseudo-random bytes determined by `seedHex` (32 bytes in hex). */
export function makePayload (seedHex: string, bytes: number): Buffer {
  const cipher = createCipheriv(PAYLOAD_CIPHER, Buffer.from(seedHex, 'hex'), PAYLOAD_IV)
  return Buffer.concat([cipher.update(Buffer.alloc(bytes)), cipher.final()])
}

export function sha256Hex (bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}
