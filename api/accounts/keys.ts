// Key material: `bwn_<id>_<secret>`, the id public (16 hex), the secret 32 random bytes in
// base64url. Only sha256(key) is stored; 32 random bytes make a plain hash enough (no guessing
// to slow down). The id lets a lookup go straight to one row, then the hash is compared in
// constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

export const KEY_PREFIX = 'bwn_'
export const KEY_SECRET_BYTES = 32
const KEY_ID_BYTES = 8
const KEY_SHAPE = /^bwn_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/

export interface NewKeyMaterial { id: string, key: string, hash: string }

export function generateKey (): NewKeyMaterial {
  const id = randomBytes(KEY_ID_BYTES).toString('hex')
  const key = `${KEY_PREFIX}${id}_${randomBytes(KEY_SECRET_BYTES).toString('base64url')}`
  return { id, key, hash: hashKey(key) }
}

export function hashKey (key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

/** The id inside a well-formed key, or null. */
export function keyIdOf (key: string): string | null {
  const m = KEY_SHAPE.exec(key)
  return m === null ? null : m[1]!
}

export function hashMatches (key: string, storedHash: string): boolean {
  const a = Buffer.from(hashKey(key), 'hex')
  const b = Buffer.from(storedHash, 'hex')
  return a.length === b.length && timingSafeEqual(a, b)
}

/** What listings show of a key: the prefix and the public id, never the secret. */
export const visiblePrefix = (id: string): string => `${KEY_PREFIX}${id}_`
