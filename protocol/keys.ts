// Hotkeys: sr25519 key pairs named by their SS58 address, as on Substrate chains.
import { createRequire } from 'node:module'

// The @polkadot libraries are loaded as CommonJS, and only the util-crypto modules used here. Node's ESM loader reads
// a module's package.json again for every module it loads, parsing its `exports` each time, and the
// @polkadot packages list every file there (50-190 KB): through ESM, loading this module cost about
// 0.55 s of CPU in every process and thread that starts; as CommonJS about 0.2 s (docs/node.md#start-up). node/adapters/subtensor/polkadot.ts loads the chain's libraries the same way,
// so a process holds one copy of each.
const require = createRequire(import.meta.url)
const { cryptoWaitReady } = require('@polkadot/util-crypto/crypto') as typeof import('@polkadot/util-crypto/crypto')
const { sr25519PairFromSeed } = require('@polkadot/util-crypto/sr25519/pair/fromSeed') as typeof import('@polkadot/util-crypto/sr25519/pair/fromSeed')
const { sr25519Sign } = require('@polkadot/util-crypto/sr25519/sign') as typeof import('@polkadot/util-crypto/sr25519/sign')
const { sr25519Verify } = require('@polkadot/util-crypto/sr25519/verify') as typeof import('@polkadot/util-crypto/sr25519/verify')
const { encodeAddress } = require('@polkadot/util-crypto/address/encode') as typeof import('@polkadot/util-crypto/address/encode')
const { decodeAddress } = require('@polkadot/util-crypto/address/decode') as typeof import('@polkadot/util-crypto/address/decode')
const { checkAddress } = require('@polkadot/util-crypto/address/check') as typeof import('@polkadot/util-crypto/address/check')
const { randomAsU8a } = require('@polkadot/util-crypto/random/asU8a') as typeof import('@polkadot/util-crypto/random/asU8a')
// The index, not the subpaths: under Node the subpaths resolve to Buffer-based variants that treat
// malformed hex differently, and the util-crypto files above load the index anyway.
const { u8aToHex, hexToU8a } = require('@polkadot/util') as typeof import('@polkadot/util')

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

/**
 * Addresses already decoded, with their public key and whether they are valid bwnet hotkeys (prefix 42):
 * every frame names its sender, and decoding an SS58 address (base58 and a blake2b checksum) twice per
 * frame was a few percent of a busy node's CPU. A pure function of the string, so remembering it is safe;
 * only addresses that decode are kept, at most MAX_DECODED of them (the oldest go first: a peer naming
 * fresh addresses can only push others out, which costs a decode later, never a wrong answer).
 */
interface DecodedAddress { publicKey: Uint8Array, hotkey: boolean, reason: string }
const decoded = new Map<string, DecodedAddress>()
const MAX_DECODED = 4096

/** The address's public key, and whether (else why not) it is a bwnet hotkey; throws on one that does not decode. */
function decodedAddress (address: string): DecodedAddress {
  const known = decoded.get(address)
  if (known !== undefined) return known
  let hotkey = false
  let reason = 'invalid address'
  try {
    const [ok, why] = checkAddress(address, SS58_PREFIX)
    hotkey = ok
    if (!ok && why !== null) reason = why
  } catch (err) { reason = (err as Error).message }
  let publicKey: Uint8Array
  try { publicKey = decodeAddress(address) } catch (err) { throw new Error(hotkey ? (err as Error).message : reason) }
  const entry = { publicKey, hotkey, reason }
  if (decoded.size >= MAX_DECODED) {
    const oldest = decoded.keys().next()
    if (oldest.done !== true) decoded.delete(oldest.value)
  }
  decoded.set(address, entry)
  return entry
}

/** How many decoded addresses are remembered, and forgetting them (tests). */
export const decodedAddresses = { get size (): number { return decoded.size }, clear: (): void => decoded.clear(), max: MAX_DECODED }

/** True when `signature` is `address`'s signature over `message`; false on any malformed input. */
export function verify (address: string | Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    const publicKey = typeof address === 'string' ? decodedAddress(address).publicKey : address
    return signature.length === 64 && sr25519Verify(message, signature, publicKey)
  } catch {
    return false
  }
}

/** Checks an SS58 address including its checksum; returns the reason when it is not valid. */
export function checkHotkey (address: string): { ok: true } | { ok: false, reason: string } {
  try {
    const entry = decodedAddress(address)
    return entry.hotkey ? { ok: true } : { ok: false, reason: entry.reason }
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
