// Hotkeys: sr25519 key pairs named by their SS58 address, as on Substrate chains.
import { cryptoWaitReady, sr25519PairFromSeed, sr25519Sign, sr25519Verify, encodeAddress, decodeAddress, checkAddress, randomAsU8a } from '@polkadot/util-crypto'
import { u8aToHex, hexToU8a } from '@polkadot/util'

/** Generic Substrate SS58 prefix; every bwnet address uses it. */
export const SS58_PREFIX = 42

export interface KeyPair {
  /** SS58 address of the public key: the identity every message and row carries. */
  readonly address: string
  readonly publicKey: Uint8Array
  readonly secretKey: Uint8Array
  readonly seed: Uint8Array
}

let ready: Promise<boolean> | undefined
/** The sr25519 code is WebAssembly; it must be loaded once before any key operation. */
export function cryptoReady (): Promise<boolean> {
  ready ??= cryptoWaitReady()
  return ready
}

export function hotkeyFromSeed (seed: Uint8Array): KeyPair {
  if (seed.length !== 32) throw new TypeError('a hotkey seed is 32 bytes')
  const pair = sr25519PairFromSeed(seed)
  return { address: encodeAddress(pair.publicKey, SS58_PREFIX), publicKey: pair.publicKey, secretKey: pair.secretKey, seed }
}

export function newHotkey (): KeyPair {
  return hotkeyFromSeed(randomAsU8a(32))
}

export function sign (key: KeyPair, message: Uint8Array): Uint8Array {
  return sr25519Sign(message, { publicKey: key.publicKey, secretKey: key.secretKey })
}

/** True when `signature` is `address`'s signature over `message`; false on any malformed input. */
export function verify (address: string | Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    const publicKey = typeof address === 'string' ? decodeAddress(address) : address
    return signature.length === 64 && sr25519Verify(message, signature, publicKey)
  } catch {
    return false
  }
}

/** Checks an SS58 address including its checksum; returns the reason when it is not valid. */
export function checkHotkey (address: string): { ok: true } | { ok: false, reason: string } {
  try {
    const [ok, reason] = checkAddress(address, SS58_PREFIX)
    return ok ? { ok: true } : { ok: false, reason: reason ?? 'invalid address' }
  } catch (err) {
    return { ok: false, reason: (err as Error).message }
  }
}

export function addressOf (publicKey: Uint8Array): string {
  return encodeAddress(publicKey, SS58_PREFIX)
}

export function publicKeyOf (address: string): Uint8Array {
  return decodeAddress(address)
}

export const toHex = (u: Uint8Array): string => u8aToHex(u, -1, false)
export const fromHex = (h: string): Uint8Array => hexToU8a(h.startsWith('0x') ? h : '0x' + h)
