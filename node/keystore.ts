// Hotkey keystore: one JSON file per identity, readable only by its owner (mode 0600), like an
// unencrypted Substrate hotkey file. A node keeps its identity across restarts through it.
import { readFile, writeFile, mkdir, rename } from 'node:fs/promises'
import { dirname } from 'node:path'
import { randomBytes } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import { hotkeyFromSeed, newHotkey, toHex, fromHex, assertValid, type KeyPair } from '../protocol/index.ts'
import { fsyncDir } from './adapters/blob-store.ts'
import { KeystoreError } from './errors.ts'
export { KeystoreError }

const KeystoreFile = Type.Object({
  version: Type.Literal(1),
  type: Type.Literal('sr25519'),
  address: Type.String(),
  publicKey: Type.String({ pattern: '^[0-9a-f]{64}$' }),
  seed: Type.String({ pattern: '^[0-9a-f]{64}$' })
})

export async function readKeystore (path: string): Promise<KeyPair> {
  let raw: string
  try { raw = await readFile(path, 'utf8') } catch (err) {
    throw new KeystoreError(`cannot read keystore ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  let parsed: unknown
  try { parsed = JSON.parse(raw) } catch { throw new KeystoreError(`keystore ${path} is not JSON`) }
  const file = assertValid(KeystoreFile, parsed, `keystore ${path}`)
  const key = hotkeyFromSeed(fromHex(file.seed))
  if (key.address !== file.address) throw new KeystoreError(`keystore ${path}: address does not match its seed`)
  return key
}

export async function writeKeystore (path: string, key: KeyPair): Promise<void> {
  await mkdir(dirname(path), { recursive: true })
  const body = JSON.stringify({ version: 1, type: 'sr25519', address: key.address, publicKey: toHex(key.publicKey), seed: toHex(key.seed) }, null, 2) + '\n'
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`
  await writeFile(tmp, body, { mode: 0o600, flush: true })
  await rename(tmp, path)
  await fsyncDir(dirname(path))
}

/** The identity stored at `path`, created on first use. */
export async function loadOrCreateKeystore (path: string): Promise<{ key: KeyPair, created: boolean }> {
  try {
    return { key: await readKeystore(path), created: false }
  } catch (err) {
    if (!(err instanceof KeystoreError) || !/ENOENT/.test(err.message)) throw err
  }
  const key = newHotkey()
  await writeKeystore(path, key)
  return { key, created: true }
}
